// The host's runtime resolution with real runtimes and the real probe (dist/probe.js): the order
// (agentRl.nodePath, VS Code's own, `node` on PATH), a setting that is passed over with the reason and
// the fix, a probe that dies attributed to its stage, which llama.cpp build loads there, and a Node
// older than the floor refused in one sentence by every entry point, never a crash.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  describeLlamaCppReport,
  describeRuntime,
  probeCandidate,
  probeLlamaCpp,
  resolveRuntime,
  runtimeCandidates,
  type HostFacts,
} from '../../src/host/processes/runtime';
import { runtimeTooOld } from '../../src/shared/nodeFloor';
import { ROOT, tempDir } from '../helpers/cli';

const probe = path.join(ROOT, 'dist', 'probe.js');
const host = (over: Partial<HostFacts> = {}): HostFacts => ({
  configured: '',
  execPath: process.execPath,
  versions: process.versions,
  pathEnv: '',
  platform: process.platform,
  ...over,
});

/** A Node older than the floor on this machine (Debian's is 20), or undefined: the tests that need one say so when they skip. */
function oldNode(): string | undefined {
  for (const p of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!fs.existsSync(p)) continue;
    const r = spawnSync(p, ['-p', 'JSON.stringify({node: process.versions.node, napi: process.versions.napi})'], { encoding: 'utf8' });
    if (r.status !== 0) continue;
    const v = JSON.parse(r.stdout) as { node: string; napi: string };
    if (runtimeTooOld(v)) return p;
  }
  return undefined;
}
const OLD = oldNode();
const needsOld = OLD ? {} : { skip: 'no Node older than 22.14 on this machine (/usr/bin/node): the refusal of an old Node is not tested here' };

function script(body: string): string {
  const f = path.join(tempDir(), 'fake-node');
  fs.writeFileSync(f, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return f;
}

describe('runtime resolution', () => {
  it('without agentRl.nodePath takes VS Code’s own runtime, forked with ELECTRON_RUN_AS_NODE=1, and its probe passes every stage', async () => {
    const r = await resolveRuntime(host(), probe);
    assert.deepEqual(r.rejected, []);
    assert.ok(r.runtime);
    assert.equal(r.runtime.source, 'vscode');
    assert.equal(r.runtime.execPath, process.execPath);
    assert.deepEqual(r.runtime.env, { ELECTRON_RUN_AS_NODE: '1' });
    assert.equal(r.runtime.report.failed, undefined);
    assert.equal(r.runtime.report.node, process.versions.node);
    assert.match(r.runtime.report.sqlite ?? '', /^3\.\d+\.\d+$/);
    assert.equal(typeof r.runtime.report.wasmSimd, 'boolean');
    const line = describeRuntime(r.runtime);
    assert.match(line, new RegExp(`^VS Code’s own runtime: Node ${process.versions.node.replace(/\./g, '\\.')} at `));
    assert.match(line, /SQLite 3\.\d+\.\d+ with WAL, tfjs wasm/);
  });

  it('agentRl.nodePath comes first when it passes', async () => {
    const r = await resolveRuntime(host({ configured: process.execPath, pathEnv: path.dirname(process.execPath) }), probe);
    assert.equal(r.runtime?.source, 'setting');
    assert.deepEqual(r.runtime?.env, {});
  });

  it('a setting that is not an executable is passed over with the setting named and the fix', async () => {
    const r = await resolveRuntime(host({ configured: '/nonexistent/node' }), probe);
    assert.equal(r.runtime?.source, 'vscode');
    assert.equal(r.rejected.length, 1);
    assert.match(
      r.rejected[0]!,
      /^agentRl\.nodePath is "\/nonexistent\/node", which is not an executable file\. Fix: point agentRl\.nodePath at Node\.js 22\.14 or newer.*or clear it/,
    );
  });

  it('agentRl.nodePath at a Node older than the floor is passed over, saying its version and why', needsOld, async () => {
    const r = await resolveRuntime(host({ configured: OLD! }), probe);
    assert.equal(r.runtime?.source, 'vscode', 'the next candidate is used');
    assert.equal(r.rejected.length, 1);
    assert.match(
      r.rejected[0]!,
      /^agentRl\.nodePath at \/\S+ cannot be used: Node 20\.\d+\.\d+ \(Node-API 9\) is older than Agent RL Workbench's floor, Node 22\.14 with Node-API 10, which its SQLite engine \(better-sqlite3 13\) needs\. Fix: point agentRl\.nodePath/,
    );
    assert.doesNotMatch(r.rejected[0]!, /SIGSEGV|NODE_MODULE_VERSION|\n {4}at /);
  });

  it('VS Code’s own runtime below the floor is ruled out without starting it; `node` on PATH is next', async () => {
    const c = runtimeCandidates(host({ versions: { node: '20.18.1', napi: '9', electron: '32.2.6' }, pathEnv: path.dirname(process.execPath) }));
    assert.deepEqual(
      c.candidates.map((x) => x.source),
      ['path'],
    );
    assert.match(
      c.rejected[0]!,
      /^VS Code’s own runtime cannot be used: Node 20\.18\.1 \(Electron 32\.2\.6\) \(Node-API 9\) is older .* Fix: update VS Code to 1\.101 or newer, or set agentRl\.nodePath/,
    );
    const r = await resolveRuntime(host({ versions: { node: '20.18.1', napi: '9' }, pathEnv: path.dirname(process.execPath) }), probe);
    assert.equal(r.runtime?.source, 'path');
  });

  it('a runtime whose check dies says how, and nothing usable leaves the reasons of every candidate', async () => {
    const dead = script('exit 3');
    const o = await probeCandidate({ source: 'setting', execPath: dead, env: {} }, probe);
    assert.ok('problem' in o);
    assert.match(o.problem, /^agentRl\.nodePath at .*fake-node cannot be used: its check exited with code 3\. Fix: /);
    const crash = script('kill -SEGV $$');
    const r = await resolveRuntime(host({ configured: crash, versions: { node: '20.18.1', napi: '9' } }), probe);
    assert.equal(r.runtime, undefined);
    assert.equal(r.rejected.length, 2);
    assert.match(r.rejected.join('\n'), /crashed \(SIGSEGV\)/);
    assert.match(r.rejected.join('\n'), /VS Code’s own runtime cannot be used/);
  });

  it('the probe names the stage it died in (a Node-API addon that cannot load here)', async () => {
    // A runtime that loads a better-sqlite3 replacement which kills the process, as an addon for the
    // wrong ABI does: the crash is attributed to the SQLite stage.
    const dir = tempDir();
    const preload = path.join(dir, 'crash.cjs');
    fs.writeFileSync(
      preload,
      `const M = require('module'); const load = M._load; M._load = function (r, ...a) { if (r === 'better-sqlite3') process.kill(process.pid, 'SIGSEGV'); return load.call(this, r, ...a); };\n`,
    );
    const wrapper = script(`exec "${process.execPath}" --require "${preload}" "$@"`);
    const o = await probeCandidate({ source: 'path', execPath: wrapper, env: {} }, probe);
    assert.ok('problem' in o);
    assert.match(o.problem, /crashed \(SIGSEGV\) while loading better-sqlite3 \(the SQLite engine\)\. Fix: install Node\.js 24/);
  });
});

describe('which llama.cpp loads on a runtime (Show Runtime)', () => {
  it('names the build a checkout’s node-llama-cpp loads, and a runtime that dies while loading it says so', async () => {
    const r = await probeLlamaCpp({ execPath: process.execPath, env: {} }, probe);
    assert.ok('build' in r, `node-llama-cpp is a dependency of the checkout, yet: ${JSON.stringify(r)}`);
    assert.match(describeLlamaCppReport(r), /^llama\.cpp: CPU build \(prebuilt, ggml v?[\d.]+\), \d+ math cores$/);
    const dead = await probeLlamaCpp({ execPath: script('kill -SEGV $$'), env: {} }, probe);
    assert.deepEqual(dead, { problem: 'loading llama.cpp crashed (SIGSEGV)' });
    assert.match(describeLlamaCppReport(dead), /^llama\.cpp not usable here, the wasm engine samples: /);
  });
});

describe('a Node older than the floor', () => {
  for (const entry of ['cli.js', 'worker.js', 'backend.js', 'importWorker.js']) {
    it(`dist/${entry} refuses it in one sentence, exit code 1, no crash and no stack`, needsOld, () => {
      const r = spawnSync(OLD!, [path.join(ROOT, 'dist', entry), 'runs'], { encoding: 'utf8', cwd: tempDir() });
      assert.equal(r.signal, null, 'not killed by a signal');
      assert.equal(r.status, 1);
      const lines = r.stderr.trim().split('\n');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(
        lines[0]!,
        /^agent-rl: Node 20\.\d+\.\d+ \(Node-API 9\) is older than Agent RL Workbench's floor, Node 22\.14 with Node-API 10.*Fix: install Node\.js 24 \(LTS\)/,
      );
    });
  }
});

describe('compute backends on VS Code’s own runtime (Electron’s Node)', () => {
  // process.versions.electron is what Electron's Node reports; it is planted here in a child process
  // of this Node, since no Electron can be started on this machine.
  const run = (choice: string): { stdout: string; stderr: string; status: number | null } => {
    const backend = path.join(ROOT, 'out', 'src', 'rl', 'policies', 'lm', 'models', 'tfjsBackend.js');
    const code = `Object.defineProperty(process.versions, 'electron', { value: '42.3.0', enumerable: true });
      require(${JSON.stringify(backend)}).initBackend(${JSON.stringify(choice)}).then(
        (b) => console.log(JSON.stringify(b)), (e) => { console.log(JSON.stringify({ error: e.name + ': ' + e.message })); });`;
    const r = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8' });
    return { stdout: r.stdout, stderr: r.stderr, status: r.status };
  };

  it('auto takes wasm and says why tfjs-node and WebGPU were not offered', () => {
    const b = JSON.parse(run('auto').stdout) as { name: string; notes: string[] };
    assert.equal(b.name, 'wasm');
    for (const what of ['tfjs-node-gpu', 'WebGPU', 'tfjs-node '])
      assert.ok(
        b.notes.some((n) => n.includes(what) && /VS Code's own runtime.*agentRl\.nodePath/.test(n)),
        b.notes.join('\n'),
      );
  });

  it('a forced webgpu is refused with the setting that gives a system Node', () => {
    const b = JSON.parse(run('webgpu').stdout) as { error: string };
    assert.match(
      b.error,
      /^BackendUnavailableError: compute backend "webgpu" is not available: WebGPU \(Dawn\) does not run on VS Code's own runtime \(Node [\d.]+ \(Electron 42\.3\.0\).*Fix: set agentRl\.nodePath to a system Node\.js 22\.14 or newer.*here it would take wasm/,
    );
  });
});
