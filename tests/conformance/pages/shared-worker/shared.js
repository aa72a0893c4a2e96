// The page's classic shared worker: posts to every page connected to it its clock in a
// setTimeout(..., 500).
const ports = [];
setTimeout(() => { for (const port of ports) port.postMessage({ timeout: performance.now() }); }, 500);
onconnect = (e) => { ports.push(e.ports[0]); };
