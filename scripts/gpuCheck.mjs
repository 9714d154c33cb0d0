#!/usr/bin/env node
// @ts-check
// `npm run gpu-check`: the prepared check of the WebGPU backend on a machine with a GPU. Prints the
// adapter Dawn reports, compares the webgpu backend's numbers with wasm's (the tfjs decoder's on the
// qwen3 and qwen2 fixtures: logits, gradients under full fine-tuning and LoRA, a prefill and a decoding
// step: within 1e-4), then the throughput benchmark bench/hfModel.ts (the largest pretrained fixture
// on wasm, on WebGPU and in PyTorch). Exits non-zero when webgpu is unavailable or disagrees with wasm.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const probe = path.join(root, 'out', 'test', 'helpers', 'webgpuProbe.js');

/** @param {string} backend */
function run(backend) {
  const r = spawnSync(process.execPath, [probe, '--probe', backend], { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) {
    process.stdout.write(`${backend}: ${(r.stderr || '').trim().split('\n').pop()}\n`);
    return undefined;
  }
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}');
}

const gpu = run('webgpu');
const cpu = run('wasm');
let failed = !gpu || !cpu;
if (gpu && cpu) {
  process.stdout.write(`adapter: ${JSON.stringify(gpu.adapter)}\n`);
  for (const k of ['fullLogits', 'fullGrads', 'sampling', 'hfLogits', 'hfGrads']) {
    /** @type {number[]} */ const a = gpu[k];
    /** @type {number[]} */ const b = cpu[k];
    const d = a.reduce((m, x, i) => Math.max(m, Math.abs(x - (b[i] ?? NaN))), 0);
    process.stdout.write(`${k}: max |webgpu − wasm| = ${d.toExponential(2)} ${d < 1e-4 ? 'ok' : 'TOO LARGE'}\n`);
    if (!(d < 1e-4)) failed = true;
  }
}
for (const bench of process.argv.includes('--no-bench') ? [] : ['hfModel']) {
  process.stdout.write(`\n== bench ${bench}\n`);
  spawnSync(process.execPath, [path.join(root, 'out', 'bench', `${bench}.js`)], { stdio: 'inherit', timeout: 1_200_000 });
}
process.exit(failed ? 1 : 0);
