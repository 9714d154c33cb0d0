#!/usr/bin/env node
// @ts-check
// `npm run gpu-check:bundle`: packs what `npm run gpu-check` runs into `.gpu-check/` (git-ignored),
// for a GPU machine that reaches no package registry: the compiled engine, probe and benchmarks, the
// qwen2 fixture, the PyTorch sides, and the node_modules they load (tfjs's Node entry files, wasm
// binaries, tfjs-backend-webgpu, Dawn for linux-x64, the tokenizer libraries). There:
//   node .gpu-check/scripts/gpuCheck.mjs
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, '.gpu-check');
fs.rmSync(out, { recursive: true, force: true });

/** @param {string} rel @param {(src: string) => boolean} [keep] */
function copy(rel, keep = () => true) {
  const from = path.join(root, rel);
  if (!fs.existsSync(from)) throw new Error(`${rel} is missing: run npm ci, npm run build and npm run compile-tests first`);
  fs.cpSync(from, path.join(out, rel), { recursive: true, filter: (src) => keep(src) });
}

for (const rel of [
  'out/src',
  'out/bench',
  'out/test/helpers',
  'scripts/gpuCheck.mjs',
  'bench/torch_baseline.py',
  'test/fixtures/hf/qwen2',
  'test/fixtures/hf/qwen3',
])
  copy(rel);
const tf = [
  'tfjs',
  'tfjs-core',
  'tfjs-backend-cpu',
  'tfjs-backend-webgl',
  'tfjs-layers',
  'tfjs-converter',
  'tfjs-data',
  'tfjs-backend-wasm',
  'tfjs-backend-webgpu',
];
for (const p of tf) {
  const dir = `node_modules/@tensorflow/${p}`;
  const main = JSON.parse(fs.readFileSync(path.join(root, dir, 'package.json'), 'utf8')).main;
  copy(`${dir}/package.json`);
  copy(`${dir}/${main}`);
  if (p === 'tfjs-backend-wasm') for (const f of fs.readdirSync(path.join(root, dir, 'dist')).filter((f) => f.endsWith('.wasm'))) copy(`${dir}/dist/${f}`);
}
copy('node_modules/webgpu', (src) => !/[\\/]dist[\\/](darwin|win32|linux-arm64)/.test(src));
for (const p of [
  'long',
  'seedrandom',
  'node-fetch',
  'whatwg-url',
  'tr46',
  'webidl-conversions',
  'string_decoder',
  'safe-buffer',
  '@huggingface/tokenizers',
  '@huggingface/jinja',
])
  copy(`node_modules/${p}`);

let bytes = 0;
const walk = (/** @type {string} */ d) => {
  for (const e of fs.readdirSync(d, { withFileTypes: true })) {
    const f = path.join(d, e.name);
    if (e.isDirectory()) walk(f);
    else bytes += fs.statSync(f).size;
  }
};
walk(out);
process.stdout.write(`.gpu-check: ${(bytes / 2 ** 20).toFixed(1)} MiB; on the GPU machine: node .gpu-check/scripts/gpuCheck.mjs\n`);
if (bytes > 60 * 2 ** 20) {
  process.stderr.write('the bundle is over 60 MiB\n');
  process.exit(1);
}
