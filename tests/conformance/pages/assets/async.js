// An async script: runs whenever it arrives, before the load event.
window.assetBits = (window.assetBits || 0) | (1 << 6);
