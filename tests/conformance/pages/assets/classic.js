// A classic script: runs in order while the page parses.
window.assetBits = (window.assetBits || 0) | (1 << 4);
