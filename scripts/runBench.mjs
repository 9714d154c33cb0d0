#!/usr/bin/env node
// @ts-check
// `npm run bench`: every benchmark in turn (each prints ratios measured in the same run), then a
// summary; exits non-zero when any benchmark missed its target or failed, after running them all.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BENCHES = [
  'sandboxPool',
  'sandboxService',
  'treeQueries',
  'verlImport',
  'rollout',
  'agentEndpoint',
  'enginePath',
  'hfModel',
  'q8Kernels',
  'memory64',
  'seed000Scale',
  'seed000Iteration',
  'peers',
];
const only = process.argv.slice(2);

/** @type {{ name: string; status: number | null }[]} */
const results = [];
for (const name of BENCHES.filter((b) => only.length === 0 || only.includes(b))) {
  process.stdout.write(`\n== bench ${name}\n`);
  const r = spawnSync(process.execPath, [path.join(root, 'out', 'bench', `${name}.js`)], { stdio: 'inherit' });
  results.push({ name, status: r.status });
}
process.stdout.write(`\n${results.map((r) => `${r.name}: ${r.status === 0 ? 'targets met' : `MISSED or failed (exit ${r.status})`}`).join('\n')}\n`);
process.exit(results.every((r) => r.status === 0) ? 0 : 1);
