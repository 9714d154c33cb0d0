// How fast does a verl run come into the store, and how big does the store get? Writes a dump of
// 1,000 steps × 256 lines (verl's _dump_generations format; 64 prompts × rollout.n = 4 per step, half
// single-turn answers and half three-turn code-tool episodes, about 1.3 KB a line) and imports it with
// `importVerl` into a fresh database. Target (issue 16): the whole import under 60 s; exits non-zero on
// a miss. Also prints trajectories and rows per second and bytes per trajectory (file growth), the
// figures docs/scale-out.md extrapolates to 1M trajectories.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importVerl } from '../src/importers/verl/verlImporter';
import { openStore } from '../src/store/openStore';

const STEPS = Number(process.env.VERL_BENCH_STEPS ?? 1000);
const LINES = 256;
const N = 4;
const TARGET_S = 60;

const question = (p: number): string =>
  `system\nYou are a careful Python programmer. You can run Python with the code_interpreter tool and read its output.\nuser\nWrite a Python function f that should return ${(p % 9) + 1}*x+${p % 7} for an integer x. For example, print(f(2)) prints ${2 * ((p % 9) + 1) + (p % 7)}.\nassistant\n`;

function output(p: number, k: number): string {
  if ((p + k) % 2 === 0) return `The function multiplies and adds.\n\`\`\`python\ndef f(x):\n    return ${(p % 9) + 1} * x + ${p % 7}\n\`\`\``;
  const call = (code: string): string => `<tool_call>\n${JSON.stringify({ name: 'code_interpreter', arguments: { code } })}\n</tool_call>`;
  return [
    `Let me try it.\n${call(`def f(x):\n    return ${(p % 9) + 1} * x + y\nprint(f(2))\n`)}user\n<tool_response>\nTraceback (most recent call last):\n  File "main.py", line 3, in <module>\n  File "main.py", line 2, in f\nNameError: name 'y' is not defined\n\n</tool_response>\nassistant\n`,
    `I used an undefined name; fixing it.\n${call(`def f(x):\n    return ${(p % 9) + 1} * x + ${p % 7}\nprint(f(2))\n`)}user\n<tool_response>\n${2 * ((p % 9) + 1) + (p % 7)}\n\n</tool_response>\nassistant\n`,
    `It prints the example.\n\`\`\`python\ndef f(x):\n    return ${(p % 9) + 1} * x + ${p % 7}\n\`\`\``,
  ].join('');
}

function writeDump(dir: string): { bytes: number; turns: number } {
  fs.mkdirSync(dir, { recursive: true });
  let bytes = 0;
  let turns = 0;
  for (let step = 1; step <= STEPS; step++) {
    const lines: string[] = [];
    for (let i = 0; i < LINES; i++) {
      const p = step * 64 + Math.floor(i / N);
      const k = i % N;
      const score = (p + k) % 3 === 0 ? 0 : 1;
      turns += (p + k) % 2 === 0 ? 1 : 3;
      lines.push(
        JSON.stringify({ input: question(p), output: output(p, k), gts: String(p), score, step, acc: score > 0, public_pass: true, private_pass: score > 0 }),
      );
    }
    const text = `${lines.join('\n')}\n`;
    bytes += Buffer.byteLength(text);
    fs.writeFileSync(path.join(dir, `${step}.jsonl`), text);
  }
  return { bytes, turns };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-bench-verl-'));
  try {
    const dump = writeDump(path.join(dir, 'rollout'));
    const dbFile = path.join(dir, 'runs.sqlite');
    const db = openStore(dbFile);
    const t0 = performance.now();
    const s = await importVerl(db, {
      rolloutDir: path.join(dir, 'rollout'),
      runtime: { workbench: 'bench', node: process.version, platform: '', arch: '', cpu: '', compute: 'bench' },
    });
    const seconds = (performance.now() - t0) / 1000;
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const dbBytes = fs.statSync(dbFile).size;
    const trajectories = s.trajectories;
    const rows = trajectories + dump.turns + s.steps;
    console.log(
      `verl import: ${STEPS.toLocaleString('en')} steps × ${LINES} lines (${(dump.bytes / 2 ** 20).toFixed(0)} MiB of JSONL, ${dump.turns.toLocaleString('en')} turns)`,
    );
    console.log(
      `  ${seconds.toFixed(1)} s: ${Math.round(trajectories / seconds).toLocaleString('en')} trajectories/s, ${Math.round(rows / seconds).toLocaleString('en')} rows/s (trajectories + turns + iterations), ${(dump.bytes / 2 ** 20 / seconds).toFixed(1)} MiB/s of dump`,
    );
    console.log(
      `  database ${(dbBytes / 2 ** 20).toFixed(0)} MiB = ${Math.round(dbBytes / trajectories).toLocaleString('en')} bytes per trajectory (${(dbBytes / dump.bytes).toFixed(2)}× the dump) → about ${(((dbBytes / trajectories) * 1e6) / 2 ** 30).toFixed(1)} GiB at 1M trajectories`,
    );
    const met = seconds < TARGET_S && trajectories === STEPS * LINES;
    console.log(`  target: under ${TARGET_S} s for 1,000 × 256 — ${STEPS !== 1000 ? `not checked (VERL_BENCH_STEPS=${STEPS})` : met ? 'met' : 'NOT met'}`);
    if (!met) process.exitCode = 1;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

void main();
