export function post(message) { postMessage(message); }
