// The page's module shared worker: posts to every page connected to it its
// setInterval(..., 100) tick count with Date.now() (minus pagereel's epoch) at the tick.
import { epoch } from './epoch.js';

const ports = [];
let ticks = 0;
setInterval(() => {
  ticks += 1;
  for (const port of ports) port.postMessage({ ticks, date: Date.now() - epoch });
}, 100);
onconnect = (e) => { ports.push(e.ports[0]); };
