#!/usr/bin/env node
// @ts-check
// Reproduces seed 002's binary-search table: GRPO and RS-SFT for seeds 7, 19, 42 with the default
// config, through the real CLI and a real database. Prints a Markdown table beside the published
// numbers and writes summary.json. Usage: node scripts/reproduceBinarySearch.mjs [--out DIR]
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyFolder } from './agentRl.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'dist', 'cli.js');
const outFlag = process.argv.indexOf('--out');
const out = outFlag > 0 ? path.resolve(process.argv[outFlag + 1] ?? '.') : verifyFolder('binary-search', root);
fs.mkdirSync(out, { recursive: true });
process.stderr.write(`runs and records: ${out}\n`);
const db = path.join(out, 'runs.sqlite');

// Seed 002's published results (success rate before → after; mean actions after, seed 7 only).
/** @type {Record<string, Record<number, [number, number]>>} */
const published = {
  grpo: { 7: [5.8, 99.6], 19: [6.4, 100], 42: [5.8, 99.6] },
  'rs-sft': { 7: [5.8, 99.8], 19: [6.4, 99.2], 42: [5.8, 100] },
};

/** @type {{ method: string; seed: number; runId: number; output: string; before: any; after: any; wallMs: number; published: [number, number] }[]} */
const rows = [];
const t0 = Date.now();
for (const method of ['grpo', 'rs-sft']) {
  for (const seed of [7, 19, 42]) {
    const output = path.join(out, `${method}-${seed}.json`);
    const t = Date.now();
    const r = spawnSync(
      process.execPath,
      [cli, 'train', '--env', 'binary-search', '--policy', 'table', '--method', method, '--seed', String(seed), '--db', db, '--output', output],
      { encoding: 'utf8' },
    );
    if (r.status !== 0) {
      process.stderr.write(r.stdout + r.stderr);
      process.exit(1);
    }
    const rec = JSON.parse(fs.readFileSync(output, 'utf8'));
    const first = rec.evaluations[0];
    const last = rec.evaluations[rec.evaluations.length - 1];
    rows.push({ method, seed, runId: rec.runId, output, before: first, after: last, wallMs: Date.now() - t, published: published[method]?.[seed] ?? [0, 0] });
  }
}
const totalMs = Date.now() - t0;

const pct = (/** @type {{ successRate: number; successes: number; episodes: number }} */ e) =>
  `${(100 * e.successRate).toFixed(1)}% (${e.successes}/${e.episodes})`;
const lines = [
  '| method | seed | before | after | mean actions after | seed 002 before → after | wall |',
  '|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.method} | ${r.seed} | ${pct(r.before)} | ${pct(r.after)} | ${r.after.meanActions.toFixed(3)} | ${r.published[0]}% → ${r.published[1]}% | ${(r.wallMs / 1000).toFixed(2)} s |`,
  ),
  '',
  `six runs, each a separate \`agent-rl train\` process: ${(totalMs / 1000).toFixed(1)} s in total on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}`,
  `database: ${db}`,
];
process.stdout.write(`${lines.join('\n')}\n\nruns (store runs.sqlite) and records: ${out}\n`);
fs.writeFileSync(path.join(out, 'summary.json'), `${JSON.stringify({ db, totalMs, rows }, null, 2)}\n`);
