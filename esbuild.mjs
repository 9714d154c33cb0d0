// Bundles every entry point. Development builds (`npm run build`: tests, the CLI in a checkout) keep the
// heavy packages external, loaded from node_modules, so the optional native backends (tfjs-node,
// WebGPU through Dawn) register with the same tfjs they were installed beside. The production build
// (`--production`, what `npm run package` puts in the .vsix) bundles every pure-JS package into dist/
// and carries only what cannot be bundled: tfjs-backend-wasm's .wasm files (dist/wasm) and
// better-sqlite3's JS with its eight Node-API prebuilds (dist/node_modules/better-sqlite3, found by
// Node's resolution from dist/*.js). The .vsix then ships no node_modules at all; WebGPU and tfjs-node
// stay options of a checkout on a system Node. VS Code's host only gets dist/extension.js, which never
// imports any of them.
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
const require = createRequire(import.meta.url);

/** Never bundled: native addons, the optional native backends, and transformers (onnxruntime-node). */
const alwaysExternal = [
  'better-sqlite3',
  'vscode',
  'webgpu',
  '@tensorflow/tfjs-node',
  '@tensorflow/tfjs-node-gpu',
  '@tensorflow/tfjs-backend-webgpu',
  '@huggingface/transformers',
  // an ES module with top-level await and native addons per platform (the llama.cpp rollout engine)
  'node-llama-cpp',
];

/** @type {import('esbuild').BuildOptions} */
const nodeCommon = {
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  external: production ? alwaysExternal : [...alwaysExternal, '@tensorflow/*', '@huggingface/*'],
};

const builds = [
  { ...nodeCommon, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  { ...nodeCommon, entryPoints: ['src/worker/runWorker.ts'], outfile: 'dist/worker.js' },
  { ...nodeCommon, entryPoints: ['src/backend/backendMain.ts'], outfile: 'dist/backend.js' },
  { ...nodeCommon, entryPoints: ['src/worker/importWorker.ts'], outfile: 'dist/importWorker.js' },
  // the runtime probe the host forks on a candidate runtime before starting anything there
  { ...nodeCommon, entryPoints: ['src/worker/probeMain.ts'], outfile: 'dist/probe.js' },
  // the Hugging Face engine's worker threads (its kernels on the shared memory), started by its bundles
  { ...nodeCommon, entryPoints: ['src/rl/policies/lm/models/engine/engineThread.ts'], outfile: 'dist/engineThread.js' },
  { ...nodeCommon, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js' },
  ...['dashboard', 'inspector'].map((page) => ({
    entryPoints: [`webview-ui/${page}.ts`],
    outfile: `dist/webview/${page}.js`,
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    sourcemap: !production,
    minify: production,
    logLevel: 'warning',
  })),
];

/** What the production bundles load from disk, copied beside them. */
function copyRuntimeFiles() {
  const wasmDist = path.join(path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist');
  fs.mkdirSync('dist/wasm', { recursive: true });
  for (const f of fs.readdirSync(wasmDist).filter((f) => f.endsWith('.wasm'))) fs.copyFileSync(path.join(wasmDist, f), path.join('dist/wasm', f));
  const sqlite = path.dirname(require.resolve('better-sqlite3/package.json'));
  const to = 'dist/node_modules/better-sqlite3';
  for (const part of ['package.json', 'LICENSE', 'lib', 'prebuilds']) fs.cpSync(path.join(sqlite, part), path.join(to, part), { recursive: true });
}

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  // a development build must not find a production build's copies first
  fs.rmSync('dist/node_modules', { recursive: true, force: true });
  fs.rmSync('dist/wasm', { recursive: true, force: true });
  await Promise.all(builds.map((b) => esbuild.build(b)));
  if (production) copyRuntimeFiles();
  // The *.agentrl.json schema, from the validator's own field tables.
  await esbuild.build({ ...nodeCommon, entryPoints: ['src/shared/runConfigSchema.ts'], outfile: 'dist/.schema-gen.js', sourcemap: false });
  const { runConfigSchema } = require('./dist/.schema-gen.js');
  fs.writeFileSync('dist/runConfig.schema.json', `${JSON.stringify(runConfigSchema(), null, 2)}\n`);
  fs.rmSync('dist/.schema-gen.js');
}
