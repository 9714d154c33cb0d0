// The main thread's self time by function from `node --cpu-prof` (the profile of thread 0, the one
// whose file name ends in .0.<n>.cpuprofile): the top functions with their share of the sampled time,
// as docs/runs/agent-endpoint and docs/runs/draw-threads quote it.
// Usage: node bench/mainThreadProfile.mjs DIR [TOP]
import * as fs from 'node:fs';
import * as path from 'node:path';

const dir = process.argv[2];
const top = Number(process.argv[3] ?? 12);
if (!dir) throw new Error('usage: node mainThreadProfile.mjs DIR [TOP] (DIR: the --cpu-prof-dir of the run)');
const main = fs.readdirSync(dir).find((f) => /\.0\.\d+\.cpuprofile$/.test(f));
if (!main) throw new Error(`${dir}: no main-thread profile (CPU.….0.N.cpuprofile); run node --cpu-prof --cpu-prof-dir=${dir}`);
const p = JSON.parse(fs.readFileSync(path.join(dir, main), 'utf8'));
const byId = new Map(p.nodes.map((n) => [n.id, n]));
/** Self time (µs) per function name and script. */
const self = new Map();
let total = 0;
p.samples.forEach((id, i) => {
  const dt = p.timeDeltas[i] ?? 0;
  const f = byId.get(id).callFrame;
  const key = `${f.functionName || '(anonymous)'} ${path.basename(f.url || '')}`.trim();
  self.set(key, (self.get(key) ?? 0) + dt);
  total += dt;
});
console.log(`${main}: ${(total / 1e6).toFixed(1)} s sampled; self time of the main thread's top functions (ms, share)`);
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`${String(Math.round(us / 1000)).padStart(8)} ${((100 * us) / total).toFixed(1).padStart(5)}% ${k}`);
