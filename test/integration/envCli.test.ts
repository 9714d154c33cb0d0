import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { resolvePython } from '../../src/rl/sandbox/isolation';
import { runCli, tempDir } from '../helpers/cli';
import { kernelLandlockAbi } from '../helpers/landlock';

describe('agent-rl env', () => {
  it('env check lists every level with a reason and the one auto picks', () => {
    const r = runCli(['env', 'check'], tempDir());
    assert.equal(r.code, 0, r.stderr);
    for (const level of ['strict', 'landlock', 'network', 'process']) assert.match(r.stdout, new RegExp(`^${level}\\s+(yes|no)\\s+\\S`, 'm'));
    assert.match(r.stdout, /^auto selects: (strict|landlock|network|process)$/m);
    // the languages sandbox serve answers: Python, and each toolchain found (C++ when g++ is installed)
    const languages = /^sandbox serve languages: python \(.+$/m.exec(r.stdout)?.[0];
    assert.ok(languages, r.stdout);
    assert.equal(/, cpp \(/.test(languages), fs.existsSync('/usr/bin/g++') || fs.existsSync('/usr/local/bin/g++'));
    assert.match(r.stdout, /^ {2}not here \(no toolchain in \/usr\/local\/bin:.*\): /m);
  });

  it('without bubblewrap, auto takes the landlock level where the kernel has Landlock, and env check says what it holds', (t) => {
    // a PATH with python3 and unshare but no bwrap: a fresh machine where nobody installed bubblewrap
    const bin = tempDir();
    for (const tool of ['python3', 'unshare']) {
      const found = (process.env.PATH ?? '')
        .split(path.delimiter)
        .map((d) => path.join(d, tool))
        .find((p) => fs.existsSync(p));
      if (found) fs.symlinkSync(found, path.join(bin, tool));
    }
    const r = runCli(['env', 'check'], tempDir(), { PATH: bin });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^strict\s+no\s+bubblewrap \(bwrap\) is not installed/m);
    const landlock = /^landlock\s+(yes|no)\s+(.*)$/m.exec(r.stdout);
    assert.ok(landlock, r.stdout);
    const abi = kernelLandlockAbi(resolvePython());
    if (abi < 3) {
      // the reason and the fix, then skipped (not passed): this kernel's Landlock is missing or too old
      assert.equal(landlock[1], 'no');
      t.skip(`this kernel's Landlock ABI is ${abi}: ${landlock[2]}`);
      return;
    }
    assert.equal(landlock[1], 'yes', landlock[2]);
    assert.match(landlock[2]!, /^Landlock ABI \d+ \+ seccomp: read-only system, writes only in the work folder/);
    assert.match(r.stdout, /^auto selects: landlock$/m);
  });

  it('env check names the fix for a missing interpreter', () => {
    const r = runCli(['env', 'check', '--python', '/nonexistent/python3'], tempDir());
    assert.equal(r.code, 2);
    assert.match(r.stderr, /No Python 3 interpreter found .*Fix: install python3/);
  });

  it("env check --env calculator (or a calculator config) prints each task split's depth mix", () => {
    const dir = tempDir();
    const r = runCli(['env', 'check', '--env', 'calculator'], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^auto selects: /m);
    assert.match(r.stdout, /^calculator tasks: 2000 training, 200 held out \(depth 1–2, operands 0–9\)$/m);
    assert.match(r.stdout, /^depth +generator +training +held out$/m);
    assert.match(r.stdout, /^1 +\d+\.\d% +243 \(12\.2%\) +24 \(12\.0%\)$/m);
    assert.match(r.stdout, /^calculator environment: ok$/m);
    const config = path.join(dir, 'calc.json');
    fs.writeFileSync(config, JSON.stringify({ env: 'calculator', envOptions: { maxDepth: 3, trainTasks: 300, heldOutTasks: 50 } }));
    const c = runCli(['env', 'check', '--config', config], dir);
    assert.equal(c.code, 0, c.stderr);
    assert.match(c.stdout, /^calculator tasks: 300 training, 50 held out \(depth 1–3, operands 0–9\)$/m);
    fs.writeFileSync(config, JSON.stringify({ env: 'calculator', envOptions: { minDepth: 3, maxDepth: 2 } }));
    const bad = runCli(['env', 'check', '--config', config], dir);
    assert.equal(bad.code, 2, bad.stdout);
    assert.match(bad.stderr, /envOptions\.minDepth \(3\) is greater than envOptions\.maxDepth \(2\)/);
  });

  it('env run replays calculator actions as JSON lines, then the outcome', () => {
    const dir = tempDir();
    const file = path.join(dir, 'actions.json');
    fs.writeFileSync(file, JSON.stringify(['<call>add(3,4)</call>', '<call>pow(7,5)</call>', '<call>mul(7,5)</call>', '<answer>\\boxed{35}</answer>']));
    const r = runCli(['env', 'run', '--env', 'calculator', '--task', 'calc:(3+4)*5', '--actions', file], dir);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 6);
    assert.equal((lines[2]!.observation as { text: string }).text, '<obs>error: unknown op pow; use add, sub, mul or div</obs>');
    assert.deepEqual(lines[5], {
      outcome: { reward: 1, success: true, publicPass: true, privatePass: true, details: { gold: 35, answer: 35, calls: 3, formatErrors: 0 } },
    });
  });

  it('env run on binary-search reads one action per line; unknown tasks are named', () => {
    const dir = tempDir();
    const file = path.join(dir, 'actions.txt');
    fs.writeFileSync(file, 'fix_low\ntest\nfinish\n');
    const r = runCli(['env', 'run', '--env', 'binary-search', '--actions', file], dir);
    assert.equal(r.code, 0, r.stderr);
    const outcome = JSON.parse(r.stdout.trim().split('\n').pop()!) as { outcome: { reward: number; publicPass: boolean; privatePass: boolean } };
    assert.deepEqual([outcome.outcome.reward, outcome.outcome.publicPass, outcome.outcome.privatePass], [0, true, false]);
    const bad = runCli(['env', 'run', '--env', 'binary-search', '--task', 'nope', '--actions', file], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /no task "nope" in env binary-search\. Fix: use an id such as binary-search-repair/);
  });
});
