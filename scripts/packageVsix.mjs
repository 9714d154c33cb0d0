#!/usr/bin/env node
// @ts-check
// `npm run package`: the universal .vsix (agent-rl-workbench.vsix: every JavaScript package bundled into
// dist/, better-sqlite3's eight prebuilt binaries beside it; sampling on the wasm engine).
// `npm run package -- --target linux-x64` (or `--target host`; `--target universal --target host` makes both): a platform .vsix
// (agent-rl-workbench-linux-x64.vsix, `vsce package --target`) that also carries llama.cpp, the native
// rollout engine: node-llama-cpp as dist/node_modules/node-llama-cpp, its files where they were (it reads
// them, and forks one of its own files to test a binary before loading it) but its JavaScript bundled
// with its dependencies into the two files it loads by path (LLAMA_ENTRIES), less what only building
// llama.cpp from source needs (the 34 MiB llama.cpp git bundle, the addon's C++ sources, the
// templates), and the prebuilt llama.cpp package of that platform (@node-llama-cpp/*: the CPU build; on
// Apple silicon the Metal one). CUDA and Vulkan builds are not carried (181–358 MiB and 71 MiB on Linux
// x64): a checkout with them installed uses them.
// Both are packed by vsce with no flag that skips a check (the manifest has its repository and licence;
// media/icon.png is rendered from media/icon.svg first), and vsce warns about nothing.
import { spawnSync } from 'node:child_process';
import * as esbuild from 'esbuild';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderIcon } from './renderIcon.mjs';

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

/** What of node-llama-cpp's own folder a platform package leaves out: what only building llama.cpp from source needs, and its JavaScript (bundled instead). */
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
  'dist',
]);
/** Files no package needs at run time. */
const NOT_RUNTIME = /\.(d\.ts|d\.cts|d\.mts|map|md|markdown)$/i;

/**
 * node-llama-cpp's JavaScript as the platform .vsix carries it: one bundle, its dependencies inside, per
 * file that is imported or started by path, each where that file was (2 JavaScript files where the
 * package and its dependencies had 915; vsce warns past 100, since an extension's files load one by
 * one). Its index, which `import('node-llama-cpp')` loads; and the file it forks to test a llama.cpp
 * binary in a child process before loading it (it must stay a file of its own named testBindingBinary:
 * otherwise node-llama-cpp skips the test and risks a crash).
 */
export const LLAMA_ENTRIES = ['dist/index.js', 'dist/bindings/utils/testBindingBinary.js'];
/**
 * What the bundles leave to Node at run time: the platform's prebuilt llama.cpp (carried beside as its
 * own package, found by node-llama-cpp's dynamic import), ipull's optional native copy-on-write (never
 * carried: ipull catches the failed import and copies instead), Electron (imported only inside
 * Electron, where it is built in) and TypeScript (a peer only `node-llama-cpp inspect` uses).
 */
const LLAMA_EXTERNAL = ['@node-llama-cpp/*', '@reflink/*', 'electron', 'typescript'];

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

/**
 * The package a file belongs to: its folder and manifest (the nearest package.json with a name).
 * @param {string} file @returns {{ dir: string, pkg: { name: string, version?: string, license?: string } }}
 */
function packageOf(file) {
  for (let dir = path.dirname(file); ;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8'));
      if (typeof pkg.name === 'string') return { dir, pkg };
    }
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`${file} belongs to no package`);
    dir = up;
  }
}

/**
 * Bundles node-llama-cpp's entry points into `into` (its copy). A bundled module still finds its
 * package's files (package.json, llama/, bins/) and forks testBindingBinary.js by the path it had:
 * each `import.meta.url` of node-llama-cpp's own modules becomes its original file's URL, resolved from
 * the bundle's. Returns every package that went into the bundles.
 * @param {string} llamaDir @param {string} into @returns {Promise<Map<string, { name: string, version?: string, license?: string }>>}
 */
async function bundleLlamaCpp(llamaDir, into) {
  /** @type {Map<string, { name: string, version?: string, license?: string }>} */
  const packages = new Map();
  for (const entry of LLAMA_ENTRIES) {
    const outfile = path.join(into, entry);
    /** @type {import('esbuild').Plugin} */
    const originalUrls = {
      name: 'node-llama-cpp-original-urls',
      setup(build) {
        build.onLoad({ filter: /\.js$/ }, (args) => {
          if (!args.path.startsWith(path.join(llamaDir, 'dist') + path.sep)) return undefined;
          const contents = fs.readFileSync(args.path, 'utf8');
          if (!contents.includes('import.meta.url')) return { contents, loader: 'js' };
          const original = path.join(into, path.relative(llamaDir, args.path));
          const rel = `./${path.relative(path.dirname(outfile), original).split(path.sep).join('/')}`;
          return { contents: contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(rel)}, import.meta.url).href`), loader: 'js' };
        });
      },
    };
    const result = await esbuild.build({
      entryPoints: [path.join(llamaDir, entry)],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      external: LLAMA_EXTERNAL,
      // the CommonJS dependencies' require() of Node's modules, inside an ES module
      banner: { js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);" },
      plugins: [originalUrls],
      metafile: true,
      absWorkingDir: root,
      logLevel: 'warning',
    });
    for (const input of Object.keys(result.metafile.inputs)) {
      const { dir, pkg } = packageOf(path.resolve(root, input));
      packages.set(dir, pkg);
    }
  }
  return packages;
}

/**
 * The licence texts of the packages bundled into node-llama-cpp's files (their own folders are not carried).
 * @param {Map<string, { name: string, version?: string, license?: string }>} packages @param {string} llamaDir
 */
function thirdPartyLicenses(packages, llamaDir) {
  const parts = [
    "node-llama-cpp's JavaScript in this folder (dist/) is bundled with the packages it imports, by Agent RL Workbench's\n" +
      'scripts/packageVsix.mjs. Their licences follow, one per package.\n',
  ];
  const sorted = [...packages].filter(([dir]) => dir !== llamaDir).sort(([, a], [, b]) => `${a.name}@${a.version}`.localeCompare(`${b.name}@${b.version}`));
  for (const [dir, pkg] of sorted) {
    const file = fs.readdirSync(dir).find((f) => /^(licen[cs]e|copying)(\.[a-z]+)?$/i.test(f));
    const text = file
      ? fs.readFileSync(path.join(dir, file), 'utf8').trim()
      : `License: ${pkg.license ?? 'see the package'} (the package carries no licence file)`;
    parts.push(`${'-'.repeat(78)}\n${pkg.name} ${pkg.version ?? ''}\n\n${text}\n`);
  }
  return parts.join('\n');
}

/** Copies node-llama-cpp (its files, its JavaScript bundled) and the target's llama.cpp build into dist/node_modules. */
/** @param {string} target */
async function carryLlamaCpp(target) {
  const pkgName = `@node-llama-cpp/${LLAMA_TARGETS[target]}`;
  const modules = path.join(root, 'node_modules');
  if (!fs.existsSync(path.join(modules, 'node-llama-cpp', 'package.json'))) throw new Error('node-llama-cpp is not installed here. Fix: npm ci');
  const llamaDir = fs.realpathSync(path.join(modules, 'node-llama-cpp'));
  const manifest = JSON.parse(fs.readFileSync(path.join(llamaDir, 'package.json'), 'utf8'));
  const version = manifest.version;
  const platformDir = path.join(modules, pkgName);
  if (!fs.existsSync(path.join(platformDir, 'package.json')))
    throw new Error(
      `${pkgName} (llama.cpp for ${target}) is not installed here: npm installs only this machine's. ` +
        `Fix: npm install --no-save --force ${pkgName}@${version}, then package again (or package on a ${target} machine)`,
    );
  const platformVersion = JSON.parse(fs.readFileSync(path.join(platformDir, 'package.json'), 'utf8')).version;
  if (platformVersion !== version)
    throw new Error(`${pkgName} is ${platformVersion}, node-llama-cpp is ${version}. Fix: npm install --no-save --force ${pkgName}@${version}`);
  const into = path.join(root, 'dist', 'node_modules', 'node-llama-cpp');
  copyTree(llamaDir, into, (p) => LEAVE_OUT.has(path.relative(llamaDir, p).split(path.sep).join('/')));
  const packages = await bundleLlamaCpp(llamaDir, into);
  fs.writeFileSync(path.join(into, 'THIRD_PARTY_LICENSES.txt'), thirdPartyLicenses(packages, llamaDir));
  // its manifest as the bundles make it: no dependencies to install (they are inside), no scripts, no CLI,
  // one entry point; the platform builds stay optional dependencies
  for (const field of ['dependencies', 'devDependencies', 'scripts', 'bin']) delete manifest[field];
  manifest.exports = { '.': manifest.exports['.'] };
  fs.writeFileSync(path.join(into, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  copyTree(platformDir, path.join(root, 'dist', 'node_modules', pkgName));
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
  try {
    renderIcon();
  } catch (e) {
    console.error(/** @type {Error} */ (e).message);
    process.exit(1);
  }
  for (const t of new Set(targets)) {
    const modules = path.join(root, 'dist', 'node_modules');
    // each package from the production build's own files: a platform's llama.cpp goes into its package alone
    for (const e of fs.readdirSync(modules)) if (e !== 'better-sqlite3') fs.rmSync(path.join(modules, e), { recursive: true, force: true });
    if (t !== 'universal') {
      try {
        await carryLlamaCpp(t);
      } catch (e) {
        console.error(/** @type {Error} */ (e).message);
        process.exit(1);
      }
    }
    run(path.join('test', 'e2e', 'node_modules', '.bin', 'vsce'), [
      'package',
      '--no-dependencies',
      ...(t === 'universal' ? [] : ['--target', t]),
      '-o',
      t === 'universal' ? 'agent-rl-workbench.vsix' : `agent-rl-workbench-${t}.vsix`,
    ]);
  }
}
