// Bundles every entry point. Native and heavy packages stay external: better-sqlite3 is a native addon
// and tfjs loads wasm files next to its package; both must be loaded by the Node that runs the bundle
// (never by VS Code's Electron host, which only gets dist/extension.js and never imports them).
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';

const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');

/** @type {import('esbuild').BuildOptions} */
const nodeCommon = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  external: ['better-sqlite3', 'vscode', '@tensorflow/*', '@huggingface/*', 'webgpu'],
};

const builds = [
  { ...nodeCommon, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  { ...nodeCommon, entryPoints: ['src/worker/runWorker.ts'], outfile: 'dist/worker.js' },
  { ...nodeCommon, entryPoints: ['src/backend/backendMain.ts'], outfile: 'dist/backend.js' },
  { ...nodeCommon, entryPoints: ['src/worker/importWorker.ts'], outfile: 'dist/importWorker.js' },
  // helper replica threads of the transformer policy (data parallelism), started by its bundles
  { ...nodeCommon, entryPoints: ['src/rl/policies/transformer/replicaWorker.ts'], outfile: 'dist/replica.js' },
  { ...nodeCommon, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js' },
  ...['dashboard', 'inspector'].map((page) => ({
    entryPoints: [`webview-ui/${page}.ts`], outfile: `dist/webview/${page}.js`, bundle: true, platform: 'browser', format: 'iife',
    target: 'es2022', sourcemap: !production, minify: production, logLevel: 'warning',
  })),
];

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
  // The *.agentrl.json schema, from the validator's own field tables.
  await esbuild.build({ ...nodeCommon, entryPoints: ['src/shared/runConfigSchema.ts'], outfile: 'dist/.schema-gen.js', sourcemap: false });
  const { runConfigSchema } = createRequire(import.meta.url)('./dist/.schema-gen.js');
  fs.writeFileSync('dist/runConfig.schema.json', `${JSON.stringify(runConfigSchema(), null, 2)}\n`);
  fs.rmSync('dist/.schema-gen.js');
}
