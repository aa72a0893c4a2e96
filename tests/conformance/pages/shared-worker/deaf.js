// A shared worker that keeps its pages' ports but never listens on them: their messages
// stay queued, unhandled, for as long as the film runs.
const ports = [];
onconnect = (e) => { ports.push(e.ports[0]); };
