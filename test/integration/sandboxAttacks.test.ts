// Hostile code against every available isolation level, with both executors (a fresh interpreter per
// execution, and the warm pool). Prints a level × attack × outcome table at the end.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { FreshExecutor, type Executor } from '../../src/rl/sandbox/freshExecutor';
import { detectIsolation, isRoot, resolvePython, type IsolationLevel } from '../../src/rl/sandbox/isolation';
import { DEFAULT_LIMITS, pidsOfUid, type SandboxLimits } from '../../src/rl/sandbox/limits';
import { WarmPool } from '../../src/rl/sandbox/warmPool';
import { kernelLandlockAbi } from '../helpers/landlock';

const SECRET = `planted-${crypto.randomBytes(6).toString('hex')}`;
process.env.AGENT_RL_PLANTED_SECRET = SECRET; // must never be visible inside a sandbox

const python = resolvePython();
const statuses = detectIsolation(python);
const levels = statuses.filter((s) => s.available).map((s) => s.level);
/** The levels that keep the code's file system to its work folder and the system read-only. */
const confinesFiles = (level: IsolationLevel): boolean => level === 'strict' || level === 'landlock';
/** Whether code at `level` cannot signal or read the /proc of this process: its own PID namespace, Landlock's signal scope (ABI 6+), or a uid of its own (root). */
const cutOffFromUs = (level: IsolationLevel): boolean =>
  level === 'strict' || (level === 'landlock' && (statuses.find((s) => s.level === 'landlock')?.landlockAbi ?? 0) >= 6) || isRoot();
const limits: SandboxLimits = { ...DEFAULT_LIMITS, timeoutMs: 1500, cpuSeconds: 5 };
const outcomes: string[] = [];

/**
 * Live processes under the sandbox uids. Only root gives each execution a uid of its own: not root,
 * there is none and this returns 0, so the attacks below also count the processes carrying their mark.
 * Zombies are not counted: they run nothing, and the ones orphaned by a killed fresh interpreter are
 * reaped by the system's init (the pool server and bubblewrap reap their own).
 */
function sandboxProcesses(): number {
  if (!isRoot()) return 0;
  let n = 0;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const status = fs.readFileSync(`/proc/${d}/status`, 'utf8');
      const m = /^Uid:\s+(\d+)/m.exec(status);
      if (m && Number(m[1]) >= 3_000_000 && !/^State:\s+Z/m.test(status)) n++;
    } catch {
      // gone
    }
  }
  return n;
}

/**
 * Each attack that must leave nothing behind first names itself (and so every process it forks) with a
 * mark of its own through prctl(PR_SET_NAME): the count below then finds its processes under any uid,
 * so "nothing left" is checked when not root too, where the sandbox has no uid of its own and
 * sandboxProcesses() above counts nothing. The count is seen to be at least 1 while the attack runs
 * (the mark works, the scan sees the sandbox's processes) before it is required to be 0.
 */
const newMark = (): string => `arl${crypto.randomBytes(6).toString('hex')}`; // 15 characters: the kernel's limit for a name
const markedAs = (mark: string): string => `import ctypes\nctypes.CDLL(None).prctl(15, b"${mark}", 0, 0, 0)  # PR_SET_NAME\n`;

/** Live processes named `mark` (zombies not counted, as above). */
function markedProcesses(mark: string): number {
  let n = 0;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const status = fs.readFileSync(`/proc/${d}/status`, 'utf8');
      if (/^Name:\s+(.*)$/m.exec(status)?.[1] === mark && !/^State:\s+Z/m.test(status)) n++;
    } catch {
      // gone
    }
  }
  return n;
}

/** The most processes named `mark` seen at once while `run` goes (a scan every 100 ms). */
async function markedWhile<T>(mark: string, run: () => Promise<T>): Promise<{ value: T; seen: number }> {
  let seen = 0;
  const timer = setInterval(() => {
    seen = Math.max(seen, markedProcesses(mark));
  }, 100);
  try {
    const value = await run();
    return { value, seen };
  } finally {
    clearInterval(timer);
  }
}

/** Processes named `mark` still alive after up to `ms` (a SIGKILLed process takes a moment to exit). */
async function markedLeft(mark: string, ms = 500): Promise<number> {
  const until = Date.now() + ms;
  for (;;) {
    const n = markedProcesses(mark);
    if (n === 0 || Date.now() >= until) return n;
    await new Promise((res) => setTimeout(res, 10));
  }
}

/** Largest event-loop delay (ms) while `fn` runs: the test process must stay responsive. */
async function withLag<T>(fn: () => Promise<T>): Promise<{ value: T; lagMs: number; rssGrowth: number }> {
  let last = performance.now();
  let lag = 0;
  const rss0 = process.memoryUsage().rss;
  let rssMax = rss0;
  const timer = setInterval(() => {
    const now = performance.now();
    lag = Math.max(lag, now - last - 20);
    last = now;
    rssMax = Math.max(rssMax, process.memoryUsage().rss);
  }, 20);
  try {
    const value = await fn();
    return { value, lagMs: lag, rssGrowth: rssMax - rss0 };
  } finally {
    clearInterval(timer);
  }
}

for (const level of levels) {
  for (const kind of ['fresh', 'pool'] as const) {
    describe(`sandbox ${level} / ${kind}`, () => {
      const ex: Executor = kind === 'fresh' ? new FreshExecutor(level, python) : new WarmPool(level, python, 1);
      const note = (attack: string, outcome: string): void => {
        outcomes.push(`| ${level} | ${kind} | ${attack} | ${outcome} |`);
      };
      after(() => ex.close());

      it('runs ordinary code and reports a traceback with the user line number', async () => {
        const r = await ex.execute('print("hello")\ndef f():\n    return 1 / 0\nf()\n', limits);
        assert.equal(r.stdout, 'hello\n');
        assert.equal(r.exitCode, 1);
        assert.match(r.stderr, /File "main\.py", line 3, in f\n/);
        assert.match(r.stderr, /ZeroDivisionError/);
      });

      it('while True: pass ends within timeout + 1 s with no process left behind', async () => {
        const mark = newMark();
        const {
          value: { value: r },
          seen,
        } = await markedWhile(mark, () => withLag(() => ex.execute(`${markedAs(mark)}while True:\n    pass\n`, limits)));
        assert.equal(r.timedOut, true);
        assert.ok(r.durationMs < limits.timeoutMs + 1000, `took ${r.durationMs} ms`);
        assert.equal(sandboxProcesses(), 0);
        assert.ok(seen >= 1, `the marked loop was never seen running (stderr: ${r.stderr.slice(0, 300)})`);
        assert.equal(await markedLeft(mark), 0);
        note('`while True: pass`', `killed at ${Math.round(r.durationMs)} ms (timeout ${limits.timeoutMs}), 0 processes left`);
      });

      it('a fork bomb is contained; this process stays responsive; nothing survives', async () => {
        const mark = newMark();
        const code = `${markedAs(mark)}import os\nn = 0\nwhile True:\n    try:\n        os.fork()\n        n += 1\n    except OSError:\n        pass\n`;
        const {
          value: { value: r, lagMs },
          seen,
        } = await markedWhile(mark, () => withLag(() => ex.execute(code, limits)));
        assert.ok(r.timedOut || r.exitCode !== 0);
        assert.ok(lagMs < 1000, `event loop stalled ${lagMs} ms`);
        await new Promise((res) => setTimeout(res, 50));
        assert.equal(sandboxProcesses(), 0);
        assert.ok(seen >= 2, `the marked fork bomb was never seen with a fork (most seen at once: ${seen}; stderr: ${r.stderr.slice(0, 300)})`);
        assert.equal(await markedLeft(mark), 0);
        note(
          'fork bomb',
          `contained (RLIMIT_NPROC ${limits.maxProcesses}, up to ${seen} processes seen at once), ended ${r.timedOut ? 'by timeout' : `exit ${r.exitCode}`}, max event-loop lag ${Math.round(lagMs)} ms, 0 processes left`,
        );
      });

      it('printing 1 GB is cut at the cap; the parent keeps only the tail', async () => {
        const code = 'import sys\nb = "x" * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(b)\n';
        const { value: r, rssGrowth } = await withLag(() => ex.execute(code, limits));
        assert.equal(r.outputCapped, true);
        assert.ok(r.stdout.length <= limits.tailBytes);
        assert.ok(rssGrowth < 50 * 1024 * 1024, `parent RSS grew ${rssGrowth} bytes`);
        note('print 1 GB', `cut at ${limits.outputCapBytes} B cap after ${Math.round(r.durationMs)} ms; parent RSS growth ${(rssGrowth / 1e6).toFixed(1)} MB`);
      });

      it('connecting to a listener on 127.0.0.1 fails at strict and network', async () => {
        const server = net.createServer((s) => s.end());
        await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
        const port = (server.address() as net.AddressInfo).port;
        try {
          const code = `import socket\ntry:\n    socket.create_connection(("127.0.0.1", ${port}), timeout=1).close()\n    print("connected")\nexcept OSError as e:\n    print("blocked", e)\n`;
          const r = await ex.execute(code, limits);
          if (level === 'process') assert.match(r.stdout, /connected|blocked/);
          else assert.match(r.stdout, /^blocked/);
          note('connect to 127.0.0.1 listener', r.stdout.trim().slice(0, 60));
        } finally {
          server.close();
        }
      });

      it('a file written outside the work directory does not persist at strict', async () => {
        const target = `${os.tmpdir()}/agent-rl-escape-${crypto.randomBytes(4).toString('hex')}`;
        const r = await ex.execute(
          `try:\n    open(${JSON.stringify(target)}, "w").write("x")\n    print("written")\nexcept OSError as e:\n    print("refused", e)\n`,
          limits,
        );
        const persisted = fs.existsSync(target);
        fs.rmSync(target, { force: true });
        if (confinesFiles(level)) assert.equal(persisted, false);
        note('write outside work dir', `${r.stdout.trim().slice(0, 40)}; on host afterwards: ${persisted ? 'present' : 'absent'}`);
      });

      it('killing the parent process id from inside does not touch this process', async (t) => {
        if (!cutOffFromUs(level)) {
          t.skip(`at ${level}, not root: the code runs as our uid with no signal scope, and could really signal us`);
          return;
        }
        const code = `import os, signal\nfor pid in (${process.pid}, os.getppid()):\n    try:\n        os.kill(pid, signal.SIGKILL)\n        print("killed", pid)\n    except OSError as e:\n        print("denied", pid, e.errno)\n`;
        const r = await ex.execute(code, limits);
        assert.ok(!r.stdout.includes(`killed ${process.pid}`));
        note('kill parent pid', r.stdout.trim().replace(/\n/g, '; ').slice(0, 80));
      });

      it('a symbolic link to a file outside the work folder reads nothing of it at strict and landlock', async () => {
        const secretFile = path.join(os.tmpdir(), `agent-rl-secret-${crypto.randomBytes(4).toString('hex')}`);
        fs.writeFileSync(secretFile, SECRET);
        try {
          const code = `import os\nos.symlink(${JSON.stringify(secretFile)}, "link")\ntry:\n    print("read", open("link").read())\nexcept OSError as e:\n    print("refused", e.errno)\n`;
          const r = await ex.execute(code, limits);
          if (confinesFiles(level)) {
            assert.ok(!r.stdout.includes(SECRET), r.stdout);
            assert.match(r.stdout, /^refused/);
          }
          note('symlink to a host file', r.stdout.includes(SECRET) ? 'read the file' : r.stdout.trim().slice(0, 40));
        } finally {
          fs.rmSync(secretFile, { force: true });
        }
      });

      it('a named Unix socket of ours (a session bus, a container engine) is out of reach at strict and landlock', async () => {
        const sock = path.join(os.tmpdir(), `agent-rl-sock-${crypto.randomBytes(4).toString('hex')}`);
        let reached = 0;
        const server = net.createServer((s) => {
          reached++;
          s.end('hello from the host\n');
        });
        await new Promise<void>((res) => server.listen(sock, res));
        try {
          const code = `import socket\ntry:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect(${JSON.stringify(sock)})\n    print("connected", s.recv(100))\nexcept OSError as e:\n    print("refused", e.errno)\n`;
          const r = await ex.execute(code, limits);
          if (confinesFiles(level)) {
            assert.match(r.stdout, /^refused/, r.stdout + r.stderr);
            assert.equal(reached, 0);
          }
          note('connect to a Unix socket of ours', r.stdout.trim().slice(0, 50));
        } finally {
          server.close();
        }
      });

      it('a file of ours outside the work folder keeps its mode and contents at strict and landlock (chmod, truncate)', async () => {
        const file = path.join(os.tmpdir(), `agent-rl-keep-${crypto.randomBytes(4).toString('hex')}`);
        fs.writeFileSync(file, 'keep me');
        fs.chmodSync(file, 0o644);
        try {
          const code = `import os\nfor name, f in (("chmod", lambda: os.chmod(${JSON.stringify(file)}, 0o777)), ("truncate", lambda: os.truncate(${JSON.stringify(file)}, 0))):\n    try:\n        f()\n        print(name, "done")\n    except OSError as e:\n        print(name, "refused", e.errno)\n`;
          const r = await ex.execute(code, limits);
          const st = fs.statSync(file);
          if (confinesFiles(level)) {
            assert.equal(st.mode & 0o777, 0o644, r.stdout);
            assert.equal(fs.readFileSync(file, 'utf8'), 'keep me', r.stdout);
          }
          note('chmod / truncate a host file', r.stdout.trim().replace(/\n/g, '; '));
        } finally {
          fs.rmSync(file, { force: true });
        }
      });

      // the landlock level's own filter: a test of it at the other levels would be a skip that hides nothing
      if (level === 'landlock')
        it('the landlock level refuses new namespaces, ptrace (even PTRACE_TRACEME, which nothing else refuses) and io_uring (seccomp)', async () => {
          const code = `import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\nfor name, call in (("unshare", lambda: libc.unshare(0x10000000)), ("ptrace", lambda: libc.ptrace(0, 0, 0, 0)), ("io_uring_setup", lambda: libc.syscall(425, 8, ctypes.create_string_buffer(120)))):\n    r = call()\n    print(name, r, ctypes.get_errno())\n`;
          const r = await ex.execute(code, limits);
          assert.match(r.stdout, /^unshare -1 1$/m, r.stdout + r.stderr);
          assert.match(r.stdout, /^ptrace -1 1$/m);
          assert.match(r.stdout, /^io_uring_setup -1 1$/m);
          note('unshare, ptrace, io_uring_setup', 'EPERM');
        });

      it('/proc/PID/environ of a process of ours shows none of its variables where the code is cut off from us', async () => {
        // a process started with the secret in its environment (what /proc shows is the environment a
        // process started with, so this one's own later process.env change would prove nothing)
        const holder = spawn('sleep', ['30'], { env: { PATH: '/usr/bin:/bin', AGENT_RL_PLANTED_SECRET: SECRET }, stdio: 'ignore' });
        try {
          const pid = holder.pid!;
          const code = `try:\n    print(open("/proc/${pid}/environ", "rb").read().decode("utf-8", "replace"))\nexcept OSError as e:\n    print("refused", e.errno)\n`;
          const r = await ex.execute(code, limits);
          if (confinesFiles(level) || isRoot()) assert.ok(!r.stdout.includes(SECRET), r.stdout.slice(0, 300));
          else assert.ok(r.stdout.includes(SECRET), `the check reaches the planted variable where nothing stops it: ${r.stdout.slice(0, 300)}`);
          note('/proc/PID/environ of a process of ours', r.stdout.includes(SECRET) ? 'read the planted variable' : r.stdout.trim().slice(0, 40));
        } finally {
          holder.kill('SIGKILL');
        }
      });

      it('a file past the size limit is refused, and a huge argv fails in the code, not in the sandbox', async () => {
        const code = `import subprocess\ntry:\n    with open("big", "wb") as f:\n        for _ in range(64):\n            f.write(b"x" * (1 << 20))\n    print("wrote 64 MiB")\nexcept OSError as e:\n    print("refused", e.errno)\ntry:\n    subprocess.run(["/bin/true"] + ["y" * (1 << 20)] * 64)\n    print("argv ran")\nexcept OSError as e:\n    print("argv refused", e.errno)\n`;
        const r = await ex.execute(code, limits);
        assert.equal(r.sandboxError, undefined);
        assert.match(r.stdout, /^refused 27$/m, `RLIMIT_FSIZE (${limits.maxFileBytes} bytes) refuses with EFBIG: ${r.stdout}${r.stderr}`);
        assert.match(r.stdout, /^argv refused 7$/m, `E2BIG: ${r.stdout}${r.stderr}`);
        note('64 MiB file; 64 MiB argv', r.stdout.trim().replace(/\n/g, '; '));
      });

      it('a process that leaves the group (setsid) and outlives its parent is killed with the execution', async (t) => {
        if (kind === 'fresh' && level !== 'strict' && !isRoot()) {
          // the pool's server is a subreaper and kills what comes back to it; a fresh interpreter at
          // this level has neither a PID namespace nor a uid of its own to find the orphan by
          t.skip(`fresh interpreter at ${level}, not root: an orphan that calls setsid is not found (known gap; the warm pool finds it)`);
          return;
        }
        const mark = newMark();
        const code = `${markedAs(mark)}import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(30)\n    os._exit(0)\ntime.sleep(0.3)\nprint("parent done")\n`;
        const { value: r, seen } = await markedWhile(mark, () => ex.execute(code, limits));
        assert.match(r.stdout, /parent done/);
        assert.ok(seen >= 2, `the orphan was never seen (most marked processes at once: ${seen})`);
        assert.equal(await markedLeft(mark, 1000), 0, 'the orphan survived the execution');
        note('setsid orphan', `seen ${seen} marked processes; 0 left`);
      });

      it('the environment shows no variable planted in the parent', async () => {
        const r = await ex.execute('import os\nprint(sorted(os.environ.items()))\n', limits);
        assert.ok(!r.stdout.includes(SECRET));
        assert.ok(!r.stdout.includes('AGENT_RL_PLANTED_SECRET'));
        note('read environment', `keys: ${[...r.stdout.matchAll(/\('([A-Z_]+)'/g)].map((m) => m[1]).join(', ')}`);
      });
    });
  }
}

// The landlock level must be there wherever the kernel offers what it needs: a broken confine.py
// would otherwise turn every landlock test above into a skip.
it('the landlock level is available wherever the kernel has Landlock ABI 3 or newer', (t) => {
  if (process.platform !== 'linux') {
    t.skip('Landlock is Linux');
    return;
  }
  const abi = kernelLandlockAbi(python);
  const s = statuses.find((x) => x.level === 'landlock')!;
  if (abi < 3) {
    assert.equal(s.available, false);
    t.skip(`this kernel's Landlock ABI is ${abi}: ${s.reason}`);
    return;
  }
  assert.equal(s.available, true, s.reason);
  assert.equal(s.landlockAbi, abi);
});

// A level this machine does not have is reported as skipped with the reason and the fix (never as
// tests that do not exist): the run's summary counts them.
for (const s of statuses.filter((x) => !x.available)) {
  describe(`sandbox ${s.level}`, () => {
    it(`hostile code at the ${s.level} level, with both executors`, { skip: `${s.level} is not available here: ${s.reason}` }, () => undefined);
  });
}

describe('warm pool resilience', () => {
  it('a killed server is replaced transparently', async () => {
    const pool = new WarmPool(levels[0] as IsolationLevel, python, 1);
    try {
      assert.equal((await pool.execute('print(1)', limits)).stdout, '1\n');
      for (const pid of pool.serverPids()) process.kill(-pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 50));
      const r = await pool.execute('print(2)', limits);
      assert.equal(r.stdout, '2\n');
      assert.equal(r.sandboxError, undefined);
      assert.equal(pool.stats.replaced, 1);
    } finally {
      await pool.close();
    }
  });

  after(() => {
    console.log(['| level | executor | attack | outcome |', '|---|---|---|---|', ...outcomes].join('\n'));
  });
});

// Guard against a helper regression: the uid scan must see at least this process's own uid.
it('pidsOfUid finds this process', () => {
  assert.ok(pidsOfUid(process.getuid!()).includes(process.pid));
});
