// Started by the page: starts its own worker and forwards what it posts.
const child = new Worker('child.js');
child.onmessage = (e) => postMessage(e.data);
