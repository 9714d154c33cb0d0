#!/usr/bin/env node
// @ts-check
// What fits the engine (4 GiB on wasm32, 16 GiB on a 64-bit memory where the runtime has one) at
// bfloat16 and at q8 (Q8_0 blocks), from the memory plan
// alone: shape-only configs (config.json, no weights) of the Qwen sizes people fine-tune, planned at
// seed 000's settings (LoRA rank 8, 1,024-token contexts, 12 rows sampled at once, 2 threads) by
// fittingEnginePlan, as `agent-rl model list` plans a real folder; then, where 12 rows do not fit, the
// most rows that do; each plan says its address mode (wasm32 or memory64). Reads the compiled code: `npm run compile-tests && node scripts/q8Plans.mjs`.
// Output: docs/runs/q8-engine/plans.txt (docs/models.md quotes it).
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
/** @param {string} p a path under out/src/rl/policies/lm/models */
const out = (p) => path.join(root, 'out', 'src', 'rl', 'policies', 'lm', 'models', ...p.split('/'));
const { fittingEnginePlan } = require(out('engine/enginePlan.js'));
const { memory64Support } = require(out('engine/engineAddress.js'));
const { readHfConfig } = require(out('hfConfig.js'));
const { parameterCount } = require(out('families/familyOf.js'));

// the published configs' shapes: the scale checkpoints' configs (test/helpers/scaleCheckpoint.ts), written alone
const { SCALE_CONFIGS } = require(path.join(root, 'out', 'test', 'helpers', 'scaleCheckpoint.js'));
const shapes = {
  'Qwen2.5-0.5B': SCALE_CONFIGS['qwen2.5-0.5b'],
  'Qwen2.5-1.5B': SCALE_CONFIGS['qwen2.5-1.5b'],
  'Qwen3-1.7B': SCALE_CONFIGS['qwen3-1.7b'],
  'Qwen2.5-3B': SCALE_CONFIGS['qwen2.5-3b'],
  'Qwen3-4B': SCALE_CONFIGS['qwen3-4b'],
};
const lora = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
/** @param {number} b bytes */
const GiB = (b) => `${(b / 2 ** 30).toFixed(2)} GiB`;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'q8-plans-'));
const header =
  'model | parameters | weights held as | 12 rows: fits? total (weights; largest pass, positions per pass) | address mode | most rows sampled at once that fit';
const lines = [
  `Memory plans of the engine (fittingEnginePlan), shape-only configs, LoRA rank 8, context 1024, 2 threads; limit 4.00 GiB (wasm32), 16.00 GiB (memory64: ${memory64Support().ok ? 'this runtime has it' : 'NOT on this runtime'}, Node ${process.version})`,
];
// this runtime's plans, then a runtime without 64-bit memories (VS Code's Electron where its V8 lacks them)
const runtimes = [
  { title: 'On this runtime', memory64: memory64Support() },
  { title: 'On wasm32 alone (a runtime without 64-bit memories)', memory64: { ok: false, why: 'none' } },
];
try {
  for (const [name, cfg] of Object.entries(shapes)) {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(cfg));
  }
  for (const rt of runtimes) {
    lines.push('', `${rt.title}:`, header);
    for (const name of Object.keys(shapes)) {
      const a = readHfConfig(path.join(tmp, name));
      for (const dtype of ['bf16', 'q8']) {
        /** @param {number} rows */
        const plan = (rows) => fittingEnginePlan(a, { lora, contextLength: 1024, sampleRows: rows, threads: 2, dtype, memory64: rt.memory64 });
        const p = plan(12);
        let most = 0;
        for (let rows = 12; rows >= 1 && most === 0; rows--) if (plan(rows).fits) most = rows;
        lines.push(
          `${name} | ${(parameterCount(a) / 1e9).toFixed(2)}B | ${dtype} | ${p.fits ? 'fits' : 'does not fit'} ${GiB(p.total)} (weights ${GiB(p.lines[0].bytes)}; pass ${GiB(p.total - p.parts.persistent)}, ${p.positionsPerPass} positions) | ${p.address.mode} | ${most}`,
        );
      }
    }
  }
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
const file = path.join(root, 'docs', 'runs', 'q8-engine', 'plans.txt');
fs.mkdirSync(path.dirname(file), { recursive: true });
fs.writeFileSync(file, `${lines.join('\n')}\n`);
process.stdout.write(`${lines.join('\n')}\n`);
