#!/usr/bin/env node
// @ts-check
// `npm run package`: the universal .vsix (agent-rl-workbench.vsix: every JavaScript package bundled into
// dist/, better-sqlite3's eight prebuilt binaries beside it; sampling on the wasm engine).
// `npm run package -- --target linux-x64` (or `--target host`; `--target universal --target host` makes both): a platform .vsix
// (agent-rl-workbench-linux-x64.vsix, `vsce package --target`) that also carries llama.cpp, the native
// rollout engine: node-llama-cpp with its file structure and its JavaScript dependencies as
// dist/node_modules (its author asks that it never be bundled: it forks its own files to test a binary
// before loading it), less what only building llama.cpp from source needs (the 34 MiB llama.cpp git
// bundle, the addon's C++ sources, the templates), and the prebuilt llama.cpp package of that platform
// (@node-llama-cpp/*: the CPU build; on Apple silicon the Metal one). CUDA and Vulkan builds are not
// carried (181–358 MiB and 71 MiB on Linux x64): a checkout with them installed uses them.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** VS Code's platform targets with a prebuilt llama.cpp, and node-llama-cpp's package for each. */
/** @type {Readonly<Record<string, string>>} */
export const LLAMA_TARGETS = {
  'linux-x64': 'linux-x64',
  'linux-arm64': 'linux-arm64',
  'linux-armhf': 'linux-armv7l',
  'darwin-x64': 'mac-x64',
  'darwin-arm64': 'mac-arm64-metal',
  'win32-x64': 'win-x64',
  'win32-arm64': 'win-arm64',
};

/** This machine's VS Code target. */
export function hostTarget() {
  const arch = process.arch === 'arm' ? 'armhf' : process.arch;
  return `${process.platform}-${arch}`;
}

/** What of node-llama-cpp's own folder a platform package leaves out (needed only to build from source). */
const LEAVE_OUT = new Set([
  'llama/gitRelease.bundle',
  'llama/addon',
  'llama/cmake',
  'llama/toolchains',
  'llama/xpack',
  'llama/patches',
  'llama/profiles',
  'llama/CMakeLists.txt',
  'templates',
  'node_modules',
]);
/** Files no package needs at run time. */
const NOT_RUNTIME = /\.(d\.ts|d\.cts|d\.mts|map|md|markdown)$/i;

/**
 * node-llama-cpp and its dependencies (not the optional ones), each folder as Node resolves it from its dependant.
 * @param {string} name @param {string} from @param {Map<string, { dependencies?: Record<string, string> }>} seen
 * @returns {Map<string, { dependencies?: Record<string, string> }>}
 */
function dependencyClosure(name, from, seen = new Map()) {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) {
      if (seen.has(candidate)) return seen;
      const pkg = JSON.parse(fs.readFileSync(path.join(candidate, 'package.json'), 'utf8'));
      seen.set(candidate, pkg);
      for (const dep of Object.keys(pkg.dependencies ?? {})) dependencyClosure(dep, candidate, seen);
      return seen;
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`${name}, a dependency of a package under ${from}, is not installed. Fix: npm ci`);
    dir = up;
  }
}

/** @param {string} from @param {string} to @param {(p: string) => boolean} skip */
function copyTree(from, to, skip = () => false) {
  for (const e of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, e.name);
    if (skip(src)) continue;
    if (e.isDirectory()) copyTree(src, path.join(to, e.name), skip);
    else if (e.isFile() && !NOT_RUNTIME.test(e.name)) {
      fs.mkdirSync(to, { recursive: true });
      fs.copyFileSync(src, path.join(to, e.name));
      fs.chmodSync(path.join(to, e.name), fs.statSync(src).mode);
    }
  }
}

/** Copies node-llama-cpp, its JavaScript dependencies and the target's llama.cpp build into dist/node_modules. */
/** @param {string} target */
function carryLlamaCpp(target) {
  const pkgName = `@node-llama-cpp/${LLAMA_TARGETS[target]}`;
  const modules = path.join(root, 'node_modules');
  const version = JSON.parse(fs.readFileSync(path.join(modules, 'node-llama-cpp', 'package.json'), 'utf8')).version;
  const platformDir = path.join(modules, pkgName);
  if (!fs.existsSync(path.join(platformDir, 'package.json')))
    throw new Error(
      `${pkgName} (llama.cpp for ${target}) is not installed here: npm installs only this machine's. ` +
        `Fix: npm install --no-save --force ${pkgName}@${version}, then package again (or package on a ${target} machine)`,
    );
  const platformVersion = JSON.parse(fs.readFileSync(path.join(platformDir, 'package.json'), 'utf8')).version;
  if (platformVersion !== version)
    throw new Error(`${pkgName} is ${platformVersion}, node-llama-cpp is ${version}. Fix: npm install --no-save --force ${pkgName}@${version}`);
  const into = path.join(root, 'dist', 'node_modules');
  const llamaDir = path.join(modules, 'node-llama-cpp');
  for (const dir of dependencyClosure('node-llama-cpp', root).keys()) {
    const rel = path.relative(modules, dir);
    const skip =
      dir === llamaDir
        ? (/** @type {string} */ p) => LEAVE_OUT.has(path.relative(llamaDir, p).split(path.sep).join('/'))
        : (/** @type {string} */ p) => path.basename(p) === 'node_modules';
    copyTree(dir, path.join(into, rel), skip);
  }
  copyTree(platformDir, path.join(into, pkgName));
}

/** @param {string} cmd @param {string[]} args */
function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  // `--target T` any number of times (`universal`, `host` or a VS Code target); one production build for all
  const targets = process.argv.flatMap((a, i) => (process.argv[i - 1] === '--target' ? [a === 'host' ? hostTarget() : a] : []));
  if (targets.length === 0) targets.push('universal');
  for (const t of targets)
    if (t !== 'universal' && !(t in LLAMA_TARGETS)) {
      console.error(
        `--target ${t}: llama.cpp has no prebuilt build for it. Fix: one of ${Object.keys(LLAMA_TARGETS).join(', ')}, or universal (sampling on the wasm engine)`,
      );
      process.exit(2);
    }
  run(process.execPath, ['esbuild.mjs', '--production']);
  run('bash', ['test/e2e/setup.sh']);
  for (const t of new Set(targets)) {
    const modules = path.join(root, 'dist', 'node_modules');
    // each package from the production build's own files: a platform's llama.cpp goes into its package alone
    for (const e of fs.readdirSync(modules)) if (e !== 'better-sqlite3') fs.rmSync(path.join(modules, e), { recursive: true, force: true });
    if (t !== 'universal') {
      try {
        carryLlamaCpp(t);
      } catch (e) {
        console.error(/** @type {Error} */ (e).message);
        process.exit(1);
      }
    }
    run(path.join('test', 'e2e', 'node_modules', '.bin', 'vsce'), [
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      '--skip-license',
      '--no-rewrite-relative-links',
      ...(t === 'universal' ? [] : ['--target', t]),
      '-o',
      t === 'universal' ? 'agent-rl-workbench.vsix' : `agent-rl-workbench-${t}.vsix`,
    ]);
  }
}
