// The .vsix as a user installs it, read from the zip itself: one package for every platform. It must
// carry better-sqlite3's Node-API binary for each of win32, darwin and linux on x64 and arm64 (plus musl
// Linux), each one really a binary of its platform and CPU (ELF, Mach-O or PE header), no other native
// file, no node_modules beside dist/, no config file of the checkout, the wasm binaries the bundles load,
// the galleries' 128×128 PNG icon, and at most 100 JavaScript files (past that, vsce warns). Prints the file count and
// size. The platform .vsix of this machine (agent-rl-workbench-linux-x64.vsix here, `npm run package --
// --target host`) also carries llama.cpp: node-llama-cpp with its JavaScript and its dependencies bundled
// into its two entry points, and the platform's prebuilt llama.cpp, each binary of that platform. Both are unpacked and
// their own probe asked which llama.cpp loads: the platform one loads it, the universal one says why not
// and names the platform .vsix. Run: npm run test:e2e (which packages first), or E2E_VSIX=path node --test test/e2e/package.test.mjs.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import { hostTarget, LLAMA_ENTRIES, LLAMA_TARGETS } from '../../scripts/packageVsix.mjs';
import { ICON_SIZE } from '../../scripts/renderIcon.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const VSIX = process.env.E2E_VSIX || path.join(HERE, '..', '..', 'agent-rl-workbench.vsix');
const TARGET = hostTarget();
const PLATFORM_VSIX = path.join(HERE, '..', '..', `agent-rl-workbench-${TARGET}.vsix`);

/** The zip's entries from its central directory: name, sizes, and a reader of the contents. */
function readZip(file) {
  const buf = fs.readFileSync(file);
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65_557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  assert.ok(eocd >= 0, `${file} is not a zip (no end of central directory)`);
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries = [];
  for (let k = 0; k < count; k++) {
    assert.equal(buf.readUInt32LE(p), 0x02014b50, 'central directory entry');
    const method = buf.readUInt16LE(p + 10);
    const compressed = buf.readUInt32LE(p + 20);
    const size = buf.readUInt32LE(p + 24);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    entries.push({
      name,
      size,
      read() {
        const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
        const data = buf.subarray(start, start + compressed);
        return method === 0 ? data : zlib.inflateRawSync(data);
      },
    });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return { entries, bytes: buf.length };
}

/** What a native binary's header says it is: "linux-x64", "darwin-arm64", "win32-x64", … */
function binaryTarget(b) {
  if (b.readUInt32BE(0) === 0x7f454c46) {
    const machine = b.readUInt16LE(18);
    return `linux-${machine === 62 ? 'x64' : machine === 183 ? 'arm64' : `machine${machine}`}`;
  }
  if (b.readUInt32LE(0) === 0xfeedfacf) {
    const cpu = b.readUInt32LE(4);
    return `darwin-${cpu === 0x01000007 ? 'x64' : cpu === 0x0100000c ? 'arm64' : `cpu${cpu.toString(16)}`}`;
  }
  if (b.toString('latin1', 0, 2) === 'MZ') {
    const pe = b.readUInt32LE(0x3c);
    assert.equal(b.readUInt32LE(pe), 0x00004550, 'PE signature');
    const machine = b.readUInt16LE(pe + 4);
    return `win32-${machine === 0x8664 ? 'x64' : machine === 0xaa64 ? 'arm64' : `machine${machine.toString(16)}`}`;
  }
  return 'unknown';
}

/** Unpacks a zip's entries under a fresh folder (the .vsix as VS Code installs it). */
function unpack(zip) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-vsix-'));
  for (const e of zip.entries) {
    if (e.name.endsWith('/')) continue;
    const to = path.join(dir, e.name);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.writeFileSync(to, e.read());
  }
  return dir;
}

/** What the unpacked extension's own probe says about llama.cpp, run on this Node. */
function llamaCppThere(dir) {
  return JSON.parse(execFileSync(process.execPath, [path.join(dir, 'extension', 'dist', 'probe.js'), '--llama-cpp'], { encoding: 'utf8', timeout: 120_000 }));
}

describe('the packaged .vsix', () => {
  it('carries better-sqlite3 for every platform VS Code runs on, each a binary of its platform, and nothing native besides', () => {
    assert.ok(fs.existsSync(VSIX), `no ${VSIX}: run npm run package first`);
    const { entries, bytes } = readZip(VSIX);
    const unpacked = entries.reduce((s, e) => s + e.size, 0);
    console.log(`${path.basename(VSIX)}: ${entries.length} files, ${(bytes / 2 ** 20).toFixed(2)} MiB packed, ${(unpacked / 2 ** 20).toFixed(2)} MiB unpacked`);
    const prefix = 'extension/dist/node_modules/better-sqlite3/prebuilds/';
    const expected = ['darwin-arm64', 'darwin-x64', 'linux-arm64', 'linux-x64', 'linuxmusl-arm64', 'linuxmusl-x64', 'win32-arm64', 'win32-x64'];
    for (const target of expected) {
      const e = entries.find((x) => x.name === `${prefix}${target}.node`);
      assert.ok(e, `the .vsix has no better-sqlite3 binary for ${target}`);
      assert.equal(binaryTarget(e.read()), target.replace('linuxmusl', 'linux'), `${e.name} is not a ${target} binary`);
      assert.ok(
        entries.some((x) => x.name === `extension/dist/node_modules/better-sqlite3/lib/${target}.js`),
        `the loader for ${target}`,
      );
    }
    const natives = entries
      .filter((e) => /\.(node|so|dylib|dll|exe)$/.test(e.name))
      .map((e) => e.name)
      .sort();
    assert.deepEqual(natives, expected.map((t) => `${prefix}${t}.node`).sort(), 'no other native file (each is usable by the runtime of its platform)');
    assert.deepEqual(
      entries.filter((e) => e.name.startsWith('extension/node_modules/')).map((e) => e.name),
      [],
      'no node_modules beside dist/: everything else is bundled',
    );
    for (const f of ['tfjs-backend-wasm.wasm', 'tfjs-backend-wasm-simd.wasm'])
      assert.ok(
        entries.some((e) => e.name === `extension/dist/wasm/${f}`),
        f,
      );
    for (const f of ['extension.js', 'worker.js', 'backend.js', 'probe.js', 'importWorker.js', 'engineThread.js', 'cli.js'])
      assert.ok(
        entries.some((e) => e.name === `extension/dist/${f}`),
        f,
      );
    const topLevel = [...new Set(entries.filter((e) => e.name.startsWith('extension/')).map((e) => e.name.split('/')[1]))].sort();
    assert.deepEqual(
      topLevel,
      ['LICENSE.txt', 'changelog.md', 'dist', 'media', 'package.json', 'readme.md'],
      'the extension folder holds the manifest, its documents, dist/ and media/ only (no config files of the checkout)',
    );
    // the galleries' icon: the manifest's, a PNG of ICON_SIZE × ICON_SIZE (width and height from its IHDR chunk)
    const packageJson = JSON.parse(
      entries
        .find((e) => e.name === 'extension/package.json')
        .read()
        .toString(),
    );
    assert.equal(packageJson.icon, 'media/icon.png');
    const icon = entries.find((e) => e.name === 'extension/media/icon.png');
    assert.ok(icon, 'the icon is in the .vsix');
    const png = icon.read();
    assert.equal(png.toString('latin1', 1, 4), 'PNG');
    assert.deepEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [ICON_SIZE, ICON_SIZE]);
    const js = entries.filter((e) => /\.js$/i.test(e.name)).length;
    assert.ok(js <= 100, `${js} JavaScript files: vsce asks to bundle an extension with more than 100`);
    assert.deepEqual(
      entries.filter((e) => /\.(map|ts)$/.test(e.name) && !e.name.endsWith('.d.ts')).map((e) => e.name),
      [],
      'no sources or source maps',
    );
  });
  it('leaves llama.cpp out and its probe says so, naming the platform .vsix', () => {
    const dir = unpack(readZip(VSIX));
    try {
      const r = llamaCppThere(dir);
      assert.ok(r.problem, `the universal .vsix has no llama.cpp, yet its probe says ${JSON.stringify(r)}`);
      assert.match(r.problem, /node-llama-cpp is not installed here .*this platform's \.vsix/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    `has a platform .vsix for ${TARGET} that carries llama.cpp, which loads from it`,
    { skip: !(TARGET in LLAMA_TARGETS) && `no llama.cpp build for ${TARGET}` },
    () => {
      assert.ok(fs.existsSync(PLATFORM_VSIX), `no ${PLATFORM_VSIX}: run npm run package -- --target host first`);
      const zip = readZip(PLATFORM_VSIX);
      const { entries, bytes } = zip;
      const unpacked = entries.reduce((s, e) => s + e.size, 0);
      console.log(
        `${path.basename(PLATFORM_VSIX)}: ${entries.length} files, ${(bytes / 2 ** 20).toFixed(2)} MiB packed, ${(unpacked / 2 ** 20).toFixed(2)} MiB unpacked`,
      );
      const manifest = entries.find((e) => e.name === 'extension.vsixmanifest');
      assert.match(manifest.read().toString(), new RegExp(`TargetPlatform="${TARGET}"`), 'the manifest names its platform');
      const names = new Set(entries.map((e) => e.name));
      const modules = 'extension/dist/node_modules/';
      // node-llama-cpp's JavaScript is the bundles of its two entry points, its dependencies inside them
      const llamaDir = `${modules}node-llama-cpp/`;
      assert.ok(names.has(`${llamaDir}package.json`), 'node-llama-cpp is in the platform .vsix');
      assert.deepEqual(
        entries
          .filter((e) => e.name.startsWith(llamaDir) && /\.(c|m)?js$/.test(e.name))
          .map((e) => e.name.slice(llamaDir.length))
          .sort(),
        [...LLAMA_ENTRIES].sort(),
        "node-llama-cpp's JavaScript: its index and the file it forks, each one bundle",
      );
      const llamaManifest = JSON.parse(
        entries
          .find((e) => e.name === `${llamaDir}package.json`)
          .read()
          .toString(),
      );
      assert.equal(llamaManifest.dependencies, undefined, 'its dependencies are inside the bundles, none left to install');
      assert.ok(!entries.some((e) => e.name.startsWith(`${llamaDir}node_modules/`)), 'no node_modules inside node-llama-cpp');
      assert.match(
        entries
          .find((e) => e.name === `${llamaDir}THIRD_PARTY_LICENSES.txt`)
          .read()
          .toString(),
        /\nlifecycle-utils [\d.]+\n/,
        "the bundled packages' licences",
      );
      const js = entries.filter((e) => /\.js$/i.test(e.name)).length;
      assert.ok(js <= 100, `${js} JavaScript files: vsce asks to bundle an extension with more than 100`);
      const llamaPkg = `${modules}@node-llama-cpp/${LLAMA_TARGETS[TARGET]}/`;
      const addon = entries.find((e) => e.name.startsWith(llamaPkg) && e.name.endsWith('/llama-addon.node'));
      assert.ok(addon, `llama.cpp's prebuilt addon for ${TARGET}`);
      for (const e of entries.filter((x) => x.name.startsWith(llamaPkg) && /\.(node|so|dylib|dll)$/.test(x.name)))
        assert.equal(binaryTarget(e.read()), TARGET, `${e.name} is a ${TARGET} binary`);
      assert.ok(!names.has(`${modules}node-llama-cpp/llama/gitRelease.bundle`), 'llama.cpp sources (only a build from source needs them) are left out');
      assert.deepEqual(
        entries.filter((e) => /@node-llama-cpp\//.test(e.name) && !e.name.startsWith(llamaPkg)).map((e) => e.name),
        [],
        'no other platform’s or GPU build of llama.cpp',
      );
      const dir = unpack(zip);
      try {
        const r = llamaCppThere(dir);
        assert.ok(r.build, `llama.cpp did not load from the unpacked platform .vsix: ${r.problem}`);
        assert.match(r.build, /^CPU build \(prebuilt, ggml v?[\d.]+\), \d+ math cores$/);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
