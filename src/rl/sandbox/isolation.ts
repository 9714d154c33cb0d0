// Isolation levels, strongest first, and how to wrap a command in each.
//   strict  — bubblewrap: read-only system, private tmpfs /work and /tmp, new network, PID, IPC and UTS
//             namespaces, die-with-parent, new session, cleared environment.
//   landlock — Linux with no package: the code confines itself before it runs (python/confine.py):
//             Landlock (the system read-only, writes only in its work folder, nothing else readable;
//             no TCP; signals scoped to the sandbox), no new privileges, and a seccomp filter (Unix
//             sockets only, no namespaces, no ptrace or mount).
//   network — `unshare -n`: a new, empty network namespace; the file system is shared.
//   process — a plain subprocess.
// Every level adds the same limits (see python/common.py): rlimits, a dedicated uid when we are root,
// a scrubbed environment, a wall-clock timeout that kills the whole process group, an output cap.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ISOLATION_LEVELS, type IsolationLevel } from '../../shared/optionSpecs';
import { LAUNCHER_PY } from './pythonSources.generated';

export { ISOLATION_LEVELS, type IsolationLevel };

export interface LevelStatus {
  readonly level: IsolationLevel;
  readonly available: boolean;
  /** Why it is (not) available, and the fix when it is not. */
  readonly reason: string;
  /** The landlock level's Landlock ABI version (6 and later scope signals to the sandbox). */
  readonly landlockAbi?: number;
}

export function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

export class PythonNotFoundError extends Error {
  constructor(tried: string) {
    super(
      `No Python 3 interpreter found (tried ${tried}). Fix: install python3 (Debian: apt-get install python3) or set the interpreter path (envOptions.python, or agentRl.pythonPath in VS Code).`,
    );
    this.name = 'PythonNotFoundError';
  }
}

/** The interpreter to use: the configured one, else /usr/bin/python3, else python3 on PATH. Resolved to a real file. */
export function resolvePython(configured?: string): string {
  const candidates = configured ? [configured] : ['/usr/bin/python3', findOnPath('python3')].filter((x): x is string => !!x);
  for (const c of candidates) {
    try {
      const real = fs.realpathSync(c);
      fs.accessSync(real, fs.constants.X_OK);
      return real;
    } catch {
      // try the next
    }
  }
  throw new PythonNotFoundError(candidates.join(', ') || 'python3 on PATH');
}

const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

/** System directories the strict sandbox sees read-only (when they exist and are not symlinks into /usr). */
function systemBinds(python: string): string[] {
  const args: string[] = [];
  for (const dir of ['/usr', '/etc', '/lib', '/lib64', '/bin', '/sbin']) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(dir);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(dir), dir);
    else args.push('--ro-bind', dir, dir);
  }
  // An interpreter outside /usr (pyenv, conda): bind its installation prefix read-only too.
  if (!python.startsWith('/usr/')) {
    const prefix = path.dirname(path.dirname(python));
    args.push('--ro-bind', prefix, prefix);
  }
  return args;
}

export interface WrapOptions {
  readonly python: string;
  /** Host directory to show read-only at /task (strict) — e.g. the file to run. */
  readonly taskDir?: string;
}

/** argv that runs `python -I <args...>` at the given level. */
export function wrapPython(level: IsolationLevel, pyArgs: readonly string[], options: WrapOptions): string[] {
  // -I: ignore PYTHON* variables and the user's site; -S: no site-packages import (stdlib only),
  // which also halves the interpreter's memory and so the cost of every fork in the warm pool.
  const py = [options.python, '-I', '-S', ...pyArgs];
  switch (level) {
    case 'process':
    case 'landlock': // the launcher confines itself (its config's `confine`), so no wrapper
      return py;
    case 'network':
      // As root, a plain new network namespace; otherwise inside a user namespace that allows it.
      return ['unshare', ...(isRoot() ? [] : ['-r']), '-n', '--', ...py];
    case 'strict':
      return [
        'bwrap',
        ...systemBinds(options.python),
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        '--tmpfs',
        '/work',
        ...(options.taskDir ? ['--ro-bind', options.taskDir, '/task'] : []),
        '--chdir',
        '/work',
        // No user namespace when root: uids stay real, so RLIMIT_NPROC counts (it never applies to
        // real root) and the launcher's switch to an unprivileged uid drops every capability.
        ...(isRoot() ? [] : ['--unshare-user']),
        '--unshare-net',
        '--unshare-pid',
        '--unshare-ipc',
        '--unshare-uts',
        '--unshare-cgroup-try',
        '--die-with-parent',
        '--new-session',
        '--clearenv',
        '--setenv',
        'PATH',
        '/usr/local/bin:/usr/bin:/bin',
        '--setenv',
        'LANG',
        'C.UTF-8',
        '--',
        ...py,
      ];
  }
}

let cached: Map<string, LevelStatus[]> | undefined;

/** Which levels work here, each tried with a real interpreter run. Cached per interpreter. */
export function detectIsolation(python: string): LevelStatus[] {
  cached ??= new Map();
  const hit = cached.get(python);
  if (hit) return hit;
  const trial = (level: IsolationLevel): { ok: boolean; detail: string } => {
    const argv = wrapPython(level, ['-c', 'print("ok")'], { python });
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    if (r.error) return { ok: false, detail: r.error.message };
    return r.status === 0 && r.stdout.trim() === 'ok'
      ? { ok: true, detail: '' }
      : { ok: false, detail: (r.stderr || `exit ${r.status}`).trim().split('\n')[0] ?? '' };
  };
  const statuses: LevelStatus[] = [];
  if (process.platform !== 'linux') {
    const why = `not on ${process.platform}: bubblewrap, Landlock and unshare are Linux's`;
    statuses.push(
      { level: 'strict', available: false, reason: why },
      { level: 'landlock', available: false, reason: why },
      { level: 'network', available: false, reason: why },
    );
  } else if (!findOnPath('bwrap')) {
    statuses.push({ level: 'strict', available: false, reason: 'bubblewrap (bwrap) is not installed. Fix: apt-get install bubblewrap' });
  } else {
    const t = trial('strict');
    statuses.push({
      level: 'strict',
      available: t.ok,
      reason: t.ok
        ? 'bubblewrap works: read-only system, private /work, new network/PID/IPC/UTS namespaces'
        : `bwrap is installed but could not start a sandbox (${t.detail}). Fix: allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run as root`,
    });
  }
  if (process.platform === 'linux') statuses.push(landlockStatus(python));
  if (process.platform !== 'linux') {
    // said above
  } else if (!findOnPath('unshare')) {
    statuses.push({ level: 'network', available: false, reason: 'unshare (util-linux) is not installed. Fix: apt-get install util-linux' });
  } else {
    const t = trial('network');
    statuses.push({
      level: 'network',
      available: t.ok,
      reason: t.ok
        ? 'unshare -n works: no network; the file system is shared'
        : `unshare -n is not permitted here (${t.detail}). Fix: run as root or allow user namespaces`,
    });
  }
  statuses.push({ level: 'process', available: true, reason: 'plain subprocess with rlimits, timeout and output cap; no file-system or network isolation' });
  cached.set(python, statuses);
  return statuses;
}

/** The landlock level, tried for real: the launcher confines itself and runs code that reports Landlock's ABI version. */
function landlockStatus(python: string): LevelStatus {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-landlock-'));
  try {
    fs.writeFileSync(path.join(dir, 'main.py'), 'import ctypes\nprint("ok", ctypes.CDLL(None).syscall(444, None, 0, 1))\n');
    const cfg = { cpu: 10, mem: 1 << 30, nproc: 4096, fsize: 1 << 20, nofile: 64, confine: 1, cwd: dir, file: path.join(dir, 'main.py') };
    const argv = wrapPython('landlock', ['-c', LAUNCHER_PY, JSON.stringify(cfg)], { python });
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    const abi = Number(/^ok (\d+)$/.exec(r.stdout.trim())?.[1] ?? 0);
    if (r.status === 0 && abi >= 1) return { level: 'landlock', available: true, reason: landlockReason(abi), landlockAbi: abi };
    const detail = (r.error?.message ?? r.stderr.trim().split('\n').at(-1) ?? '') || `exit ${r.status}`; // a traceback's last line says what failed
    return {
      level: 'landlock',
      available: false,
      reason: `${detail.replace(/^sandbox: /, '')}. Fix: a kernel with Landlock (Linux 5.13 or newer with landlock in its lsm= list, as most distributions since 2022), or install bubblewrap for the strict level`,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What the landlock level holds at a given Landlock ABI version. */
export function landlockReason(abi: number): string {
  return (
    `Landlock ABI ${abi} + seccomp: read-only system, writes only in the work folder, no /proc, home or /tmp; no IP sockets` +
    (abi >= 6 ? '; signals and abstract Unix sockets scoped to the sandbox' : `; signals not scoped (Landlock ABI 6, Linux 6.12, scopes them)`)
  );
}

export class IsolationUnavailableError extends Error {
  constructor(level: IsolationLevel, reason: string) {
    super(`Sandbox level "${level}" was demanded but is not available: ${reason}`);
    this.name = 'IsolationUnavailableError';
  }
}

/** 'auto' → the strongest available level; a named level → that level, or an error naming the fix. */
export function chooseLevel(wanted: IsolationLevel | 'auto', python: string): IsolationLevel {
  const statuses = detectIsolation(python);
  if (wanted === 'auto') return statuses.find((s) => s.available)!.level;
  const s = statuses.find((x) => x.level === wanted)!;
  if (!s.available) throw new IsolationUnavailableError(wanted, s.reason);
  return wanted;
}

export { isRoot };
