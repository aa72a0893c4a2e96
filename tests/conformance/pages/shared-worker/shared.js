// The page's shared worker: posts to every page connected to it its clock in a
// setTimeout(..., 500), its setInterval(..., 100) tick count with Date.now() (minus
// pagereel's epoch, 2026-01-01T00:00:00Z) at the tick, and echoes what a page sends it.
const epoch = Date.UTC(2026, 0, 1);
const ports = [];
let ticks = 0;
const post = (data) => { for (const port of ports) port.postMessage(data); };
setTimeout(() => post({ timeout: performance.now() }), 500);
setInterval(() => { ticks += 1; post({ ticks, date: Date.now() - epoch }); }, 100);
onconnect = (e) => {
  const port = e.ports[0];
  ports.push(port);
  port.onmessage = (m) => port.postMessage({ echo: m.data.echo });
};
