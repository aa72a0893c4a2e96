// The page's shared worker: answers every message with its count of connections.
let connections = 0;
onconnect = (e) => {
  connections += 1;
  const port = e.ports[0];
  port.onmessage = () => port.postMessage({ connections });
};
