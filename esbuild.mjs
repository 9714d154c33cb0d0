// Bundles every entry point. Native and heavy packages stay external: better-sqlite3 is a native addon
// that must be loaded by the Node that runs the bundle (never by VS Code's Electron host).
import * as esbuild from 'esbuild';

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
  external: ['better-sqlite3', 'vscode', '@tensorflow/*'],
};

const builds = [
  { ...nodeCommon, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  { ...nodeCommon, entryPoints: ['src/worker/runWorker.ts'], outfile: 'dist/worker.js' },
  { ...nodeCommon, entryPoints: ['src/backend/backendMain.ts'], outfile: 'dist/backend.js' },
];

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
