// A deferred script: runs after parsing, before DOMContentLoaded.
window.assetBits = (window.assetBits || 0) | (1 << 5);
