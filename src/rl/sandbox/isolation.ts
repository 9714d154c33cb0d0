// Isolation levels, strongest first, and how to wrap a command in each. What each level is and what it
// guarantees is data below (ISOLATION_LEVEL_INFO, ISOLATION_GUARANTEES): env check prints it, and
// docs/reference/sandbox.md is generated from it (npm run docs:reference).
// Every level adds the same limits (EVERY_LEVEL_LIMITS; python/common.py sets them).
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ISOLATION_LEVELS, type IsolationLevel } from '../../shared/optionSpecs';
import { LAUNCHER_PY } from './pythonSources.generated';

export { ISOLATION_LEVELS, type IsolationLevel };

/** Names of the platforms the levels run on, as the docs and the reasons write them. */
export const PLATFORM_NAMES: Readonly<Partial<Record<NodeJS.Platform, string>>> = { linux: 'Linux', darwin: 'macOS', win32: 'Windows' };

/** One isolation level: where it runs, what makes it, and what it holds when it works. */
export interface LevelInfo {
  /** The one platform it runs on; absent = every platform but Windows (which has no level: WINDOWS_REASON). */
  readonly only?: NodeJS.Platform;
  /** The platforms in words (the guarantee table's column headings). */
  readonly runsOn: string;
  /** What makes it: the tool or kernel feature, and how to get it. */
  readonly how: string;
  /** What it isolates when it works (env check says it after "works:"). */
  readonly holds: string;
  /** Limits known beyond the guarantee table, and what is not known. */
  readonly knownLimits?: string;
}

/** Each level, strongest first (ISOLATION_LEVELS' order). */
export const ISOLATION_LEVEL_INFO: Readonly<Record<IsolationLevel, LevelInfo>> = {
  strict: {
    only: 'linux',
    runsOn: 'Linux',
    how: 'bubblewrap (apt-get install bubblewrap)',
    holds: 'read-only system, private tmpfs /work and /tmp, new network, PID, IPC and UTS namespaces, die-with-parent, new session, cleared environment',
  },
  landlock: {
    only: 'linux',
    runsOn: 'Linux',
    how: 'Linux 6.2+ (Landlock ABI 3), no package: the code confines itself before it runs (src/rl/sandbox/python/confine.py)',
    holds:
      'Landlock: the system and the interpreter read-only, writes and truncation only in the work folder, nothing else readable (no home, /proc or /tmp; a symbolic link does not get round it), no TCP (ABI 4+), signals and abstract Unix sockets scoped to the sandbox (ABI 6+); no new privileges; seccomp: no socket() of any family (so no IP and no named Unix socket such as a session bus or a container engine; socketpair stays), no chmod, chown, utime or xattr changes (anywhere, the work folder included), no new namespaces, no ptrace, mount, bpf, io_uring or kernel-module calls',
  },
  seatbelt: {
    only: 'darwin',
    runsOn: 'macOS',
    how: 'macOS: /usr/bin/sandbox-exec with a generated profile (seatbeltProfile in src/rl/sandbox/isolation.ts)',
    holds:
      "deny by default; the system and the interpreter's installation readable; reads and writes only in the work folder (by its real path); no network; signals and process information only within the sandbox; file metadata (not contents) readable everywhere",
    knownLimits:
      'macOS could not be run where this was written: the profile is checked as text (unit tests) and the level is probed for real on a Mac before auto takes it. The profile is applied to a whole warm-pool server or tool zygote, so the executions of one pool share its writable folder and may signal the server and each other (the signal guarantee holds against everything outside the pool); without /proc the pool cannot find a setsid orphan on macOS; whether a hard link from the work folder to a file of a user-owned interpreter (Homebrew, pyenv) on the same volume can be written through is not known.',
  },
  network: { only: 'linux', runsOn: 'Linux', how: 'unshare -n (util-linux)', holds: 'no network (a new, empty network namespace); the file system is shared' },
  process: {
    runsOn: 'Linux, macOS',
    how: 'a plain subprocess',
    holds: 'limits only (rlimits, timeout and output cap); no file-system or network isolation',
  },
};

/** What every level adds, whatever it isolates (python/common.py and the launcher set them). */
export const EVERY_LEVEL_LIMITS =
  'a wall-clock timeout that kills the whole process group; rlimits for CPU seconds, address space, processes, file size and open files (soft = hard); output streamed through tail buffers with the cap enforced as it arrives (the code is killed past it; the parent keeps only the tails); a scrubbed environment; a fresh work directory, removed afterwards; Python runs with -I -S (standard library only). When the workbench runs as root, the code also runs under a dedicated unprivileged uid per execution: RLIMIT_NPROC then counts (it never applies to root), every capability is dropped, and cleanup finds every process the code left (bubblewrap is started without a user namespace as root for the same reason: inside one, uids map to real root).';

/** How to read ISOLATION_GUARANTEES' cells. */
export const GUARANTEE_LEGEND = '✓ held, ✗ not; "root" = only when the workbench runs as root, which gives the code a uid of its own';

/** What each level guarantees against the code it runs (GUARANTEE_LEGEND; the seatbelt column is what its profile says). */
export const ISOLATION_GUARANTEES: readonly { readonly against: string; readonly held: Readonly<Record<IsolationLevel, string>> }[] = [
  {
    against: 'files outside the work folder (read / write)',
    held: { strict: '✓ / ✓ (not there)', landlock: '✓ / ✓ (system read-only)', seatbelt: '✓ / ✓ (system read-only)', network: '✗ / ✗', process: '✗ / ✗' },
  },
  {
    against: 'network (loopback included)',
    held: { strict: '✓ (own namespace)', landlock: '✓ (no sockets; no TCP)', seatbelt: '✓ (denied)', network: '✓ (own namespace)', process: '✗' },
  },
  {
    against: 'named Unix sockets of ours (session bus, Docker, ssh-agent)',
    held: {
      strict: '✓ (not there)',
      landlock: '✓ (no sockets)',
      seatbelt: '✓ (network-outbound denied, Unix sockets included)',
      network: '✗',
      process: '✗',
    },
  },
  {
    against: 'signals to our processes, their /proc',
    held: {
      strict: '✓ (own PID namespace)',
      landlock: '✓ with Landlock ABI 6+ (Linux 6.12), else root',
      seatbelt: '✓ outside its pool (same-sandbox only)',
      network: 'root',
      process: 'root',
    },
  },
  {
    against: 'processes left behind (setsid orphans)',
    held: {
      strict: '✓',
      landlock: 'warm pool ✓; fresh interpreter: root',
      seatbelt: 'root',
      network: 'warm pool ✓; fresh: root',
      process: 'warm pool ✓ (Linux); fresh: root',
    },
  },
  {
    against: 'CPU time, memory, processes, file size, open files, output, wall clock',
    held: { strict: '✓', landlock: '✓', seatbelt: '✓', network: '✓', process: '✓' },
  },
];

/** Why a level tied to one platform is not available on another ("Linux only (this is darwin)"). */
function elsewhere(level: IsolationLevel, platform: NodeJS.Platform): LevelStatus | undefined {
  const only = ISOLATION_LEVEL_INFO[level].only;
  if (only === undefined || only === platform) return undefined;
  return { level, available: false, reason: `${PLATFORM_NAMES[only] ?? only} only (this is ${platform})` };
}

export interface LevelStatus {
  readonly level: IsolationLevel;
  readonly available: boolean;
  /** Why it is (not) available, and the fix when it is not. */
  readonly reason: string;
  /** The landlock level's Landlock ABI version (6 and later scope signals to the sandbox). */
  readonly landlockAbi?: number;
}

/**
 * An executable file on PATH (with PATHEXT's extensions on Windows). Relative entries, "." among them,
 * are skipped: a program is never found in whatever folder a run happens to start in.
 */
export function findOnPath(name: string): string | undefined {
  const exts = process.platform === 'win32' ? ['', ...(process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean)] : [''];
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    for (const ext of exts) {
      const p = path.join(dir, name + ext);
      try {
        fs.accessSync(p, fs.constants.X_OK);
        if (fs.statSync(p).isFile()) return p;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

export class PythonNotFoundError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
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
function systemBinds(python: string, roots: readonly string[]): string[] {
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
    args.push(...parentDirs(prefix), '--ro-bind', prefix, prefix);
  }
  for (const root of roots) args.push(...parentDirs(root), '--ro-bind', root, root);
  return args;
}

/**
 * The folders above a bind, made in the sandbox's root as 0755 (empty but for the bind) when one of them
 * is closed to others on the host: bubblewrap gives them the host folder's mode, and a 0700 home (/root)
 * would keep the sandbox's own uid from an interpreter or venv bound inside it. Nothing otherwise, so an
 * older bubblewrap (no --perms before 0.5) still runs every sandbox it ran before.
 */
function parentDirs(bound: string): string[] {
  const above: string[] = [];
  for (let dir = path.dirname(bound); dir !== path.dirname(dir); dir = path.dirname(dir)) above.unshift(dir);
  const closed = above.some((dir) => {
    try {
      return (fs.statSync(dir).mode & 0o005) !== 0o005;
    } catch {
      return false;
    }
  });
  return closed ? above.flatMap((dir) => ['--perms', '0755', '--dir', dir]) : [];
}

export interface WrapOptions {
  readonly python: string;
  /** Host directory to show read-only at /task (strict) — e.g. the file to run. */
  readonly taskDir?: string;
  /** The folder the code may write in (seatbelt: its profile's only writable folder). */
  readonly workDir?: string;
  /** strict: show `workDir` read-write at /work (not a fresh tmpfs), so that phases share it (a compile step and the run). */
  readonly bindWork?: boolean;
  /** A toolchain's folders outside the system ones (a Node or JDK under /opt): readable and executable. */
  readonly roots?: readonly string[];
}

/** A string literal of Seatbelt's profile language (SBPL): backslashes and quotes escaped, nothing else can end it. */
const sbplString = (s: string): string => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;

/**
 * The seatbelt level's profile (macOS's sandbox-exec): deny by default; read and execute the system
 * and the interpreter's installation; read and write only `workDir` (its real path: Seatbelt matches
 * real paths, and macOS's temporary folders sit behind /var → /private/var); no network; signals and
 * process information only within the sandbox. File metadata (stat) is readable everywhere, which path
 * lookup needs; file contents are not.
 */
export function seatbeltProfile(python: string, workDir: string, roots: readonly string[] = []): string {
  const real = (p: string): string => {
    try {
      return fs.realpathSync(p);
    } catch {
      return p;
    }
  };
  // the interpreter's installation: the folder above its bin/ (a framework, Homebrew's Cellar, a pyenv
  // version), never "/" or a folder of home folders; /usr's own interpreter needs no more than /usr
  const exe = real(python);
  const above = path.dirname(path.dirname(exe));
  const prefix = path.basename(path.dirname(exe)) === 'bin' && !['/', '/Users', '/home', os.homedir()].includes(above) ? above : '/usr';
  const toolchains = roots.map(real);
  const readable = [
    ...new Set([
      '/usr',
      '/bin',
      '/System',
      '/Library/Frameworks',
      '/Library/Developer/CommandLineTools',
      '/private/var/db/dyld',
      '/private/etc',
      prefix,
      ...toolchains,
    ]),
  ];
  const devices = ['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom'];
  return [
    '(version 1)',
    '(deny default)',
    '(allow process-fork)',
    // a compiled program runs from the work folder
    `(allow process-exec ${['/usr/bin', '/bin', prefix, ...toolchains, real(workDir)].map((p) => `(subpath ${sbplString(p)})`).join(' ')})`,
    '(allow signal (target same-sandbox))',
    '(allow process-info* (target same-sandbox))',
    '(allow sysctl-read)',
    '(allow file-read-metadata)',
    // libraries outside the shared cache (libpython, lib-dynload's modules) are mapped executable
    `(allow file-map-executable ${readable.map((p) => `(subpath ${sbplString(p)})`).join(' ')})`,
    `(allow file-read* ${readable.map((p) => `(subpath ${sbplString(p)})`).join(' ')} ${devices.map((p) => `(literal ${sbplString(p)})`).join(' ')})`,
    `(allow file-read* file-write* (subpath ${sbplString(real(workDir))}))`,
    `(allow file-write-data ${devices
      .slice(0, 2)
      .map((p) => `(literal ${sbplString(p)})`)
      .join(' ')})`,
    '(deny network*)',
    '',
  ].join('\n');
}

/** Where macOS keeps sandbox-exec. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** argv that runs `python -I <args...>` at the given level. */
export function wrapPython(level: IsolationLevel, pyArgs: readonly string[], options: WrapOptions): string[] {
  // -I: ignore PYTHON* variables and the user's site; -S: no site-packages import (stdlib only),
  // which also halves the interpreter's memory and so the cost of every fork in the warm pool.
  const py = [options.python, '-I', '-S', ...pyArgs];
  switch (level) {
    case 'process':
    case 'landlock': // the launcher confines itself (its config's `confine`), so no wrapper
      return py;
    case 'seatbelt':
      if (!options.workDir) throw new Error('the seatbelt level needs the work folder to write its profile');
      return [SANDBOX_EXEC, '-p', seatbeltProfile(options.python, options.workDir, options.roots), ...py];
    case 'network':
      // As root, a plain new network namespace; otherwise inside a user namespace that allows it.
      return ['unshare', ...(isRoot() ? [] : ['-r']), '-n', '--', ...py];
    case 'strict':
      return [
        'bwrap',
        ...systemBinds(options.python, options.roots ?? []),
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        ...(options.bindWork && options.workDir ? ['--bind', options.workDir, '/work'] : ['--tmpfs', '/work']),
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

/** On Windows nothing runs the sandbox yet: what is missing, and the ways out. */
export const WINDOWS_REASON =
  "Windows has no sandbox level yet: the sandbox's limits need Python's resource module and a job object with a restricted token, which the workbench does not set up. Fix: open the folder in WSL (VS Code's WSL extension) and run there, or run `agent-rl sandbox serve` on a Linux machine and execute code through it";

/**
 * Which levels work here, each tried with a real interpreter run, strongest first. Cached per
 * interpreter and platform; `platform` is a parameter so that the other platforms' answers can be
 * checked here (nothing is run for a level of another platform).
 */
export function detectIsolation(python: string, platform: NodeJS.Platform = process.platform): LevelStatus[] {
  cached ??= new Map();
  const key = `${platform}\0${python}`;
  const hit = cached.get(key);
  if (hit) return hit;
  const trial = (level: IsolationLevel, workDir?: string): { ok: boolean; detail: string } => {
    const argv = wrapPython(level, ['-c', 'print("ok")'], { python, ...(workDir ? { workDir } : {}) });
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    if (r.error) return { ok: false, detail: r.error.message };
    return r.status === 0 && r.stdout.trim() === 'ok'
      ? { ok: true, detail: '' }
      : { ok: false, detail: (r.stderr || `exit ${r.status}`).trim().split('\n')[0] ?? '' };
  };
  const probes: Readonly<Record<IsolationLevel, () => LevelStatus>> = {
    strict: () => strictStatus(trial),
    landlock: () => landlockStatus(python),
    seatbelt: () => seatbeltStatus(trial),
    network: () => networkStatus(trial),
    process: () =>
      platform === 'win32'
        ? { level: 'process', available: false, reason: WINDOWS_REASON }
        : { level: 'process', available: true, reason: ISOLATION_LEVEL_INFO.process.holds },
  };
  const statuses = ISOLATION_LEVELS.map((level) => elsewhere(level, platform) ?? probes[level]());
  cached.set(key, statuses);
  return statuses;
}

type Trial = (level: IsolationLevel, workDir?: string) => { ok: boolean; detail: string };

/** A level made by wrapping the interpreter in a tool on PATH: missing, working, or failing as tried. */
function wrapperStatus(
  trial: Trial,
  level: IsolationLevel,
  tool: string,
  said: { readonly missing: string; readonly works: string; readonly fails: (detail: string) => string },
): LevelStatus {
  if (!findOnPath(tool)) return { level, available: false, reason: said.missing };
  const t = trial(level);
  return { level, available: t.ok, reason: t.ok ? said.works : said.fails(t.detail) };
}

const strictStatus = (trial: Trial): LevelStatus =>
  wrapperStatus(trial, 'strict', 'bwrap', {
    missing: 'bubblewrap (bwrap) is not installed. Fix: apt-get install bubblewrap',
    works: `bubblewrap works: ${ISOLATION_LEVEL_INFO.strict.holds}`,
    fails: (d) =>
      `bwrap is installed but could not start a sandbox (${d}). Fix: allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run as root`,
  });

const networkStatus = (trial: Trial): LevelStatus =>
  wrapperStatus(trial, 'network', 'unshare', {
    missing: 'unshare (util-linux) is not installed. Fix: apt-get install util-linux',
    works: `unshare -n works: ${ISOLATION_LEVEL_INFO.network.holds}`,
    fails: (d) => `unshare -n is not permitted here (${d}). Fix: run as root or allow user namespaces`,
  });

/** The seatbelt level, tried for real with its generated profile (macOS). */
function seatbeltStatus(trial: Trial): LevelStatus {
  if (!fs.existsSync(SANDBOX_EXEC)) return { level: 'seatbelt', available: false, reason: `${SANDBOX_EXEC} is missing (it ships with macOS)` };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-seatbelt-'));
  try {
    const t = trial('seatbelt', dir);
    return {
      level: 'seatbelt',
      available: t.ok,
      reason: t.ok
        ? `sandbox-exec works: ${ISOLATION_LEVEL_INFO.seatbelt.holds}`
        : `sandbox-exec could not start the interpreter (${t.detail}). Fix: an interpreter under /usr, /Library/Frameworks or its own prefix, or run in a Linux VM`,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The landlock level, tried for real: the launcher confines itself and runs code that reports Landlock's ABI version. */
function landlockStatus(python: string): LevelStatus {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-landlock-'));
  try {
    fs.writeFileSync(path.join(dir, 'main.py'), 'import ctypes\nprint("ok", ctypes.CDLL(None).syscall(444, None, 0, 1))\n');
    const cfg = { cpu: 10, mem: 1 << 30, nproc: 4096, fsize: 1 << 20, nofile: 64, confine: 1, cwd: dir, file: path.join(dir, 'main.py') };
    const argv = wrapPython('landlock', ['-c', LAUNCHER_PY, JSON.stringify(cfg)], { python });
    const r = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    if (r.error) return { level: 'landlock', available: false, reason: `the interpreter did not start (${r.error.message})` };
    const abi = Number(/^ok (\d+)$/.exec(r.stdout.trim())?.[1] ?? 0);
    if (r.status === 0 && abi >= 1) return { level: 'landlock', available: true, reason: landlockReason(abi), landlockAbi: abi };
    const detail = (r.stderr.trim().split('\n').at(-1) ?? '') || `exit ${r.status}`; // a traceback's last line says what failed
    return {
      level: 'landlock',
      available: false,
      reason: `${detail.replace(/^sandbox: /, '')}. Fix: a kernel with Landlock ABI 3 or newer (Linux 6.2 or newer with landlock in its lsm= list), or install bubblewrap for the strict level`,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What the landlock level holds at a given Landlock ABI version. */
export function landlockReason(abi: number): string {
  return (
    `Landlock ABI ${abi} + seccomp: read-only system, writes only in the work folder, no /proc, home or /tmp; no sockets (socketpair only); no chmod, chown, utime or xattr changes` +
    (abi >= 6 ? '; signals and abstract Unix sockets scoped to the sandbox' : `; signals not scoped (Landlock ABI 6, Linux 6.12, scopes them)`)
  );
}

/** What `level` holds on this machine, in env check's words (for the run record). */
export function levelHolds(level: IsolationLevel, python: string): string {
  return detectIsolation(python).find((s) => s.level === level)?.reason ?? level;
}

export class IsolationUnavailableError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  constructor(level: IsolationLevel | 'auto', reason: string) {
    super(level === 'auto' ? `No sandbox level works on this machine: ${reason}` : `Sandbox level "${level}" was demanded but is not available: ${reason}`);
    this.name = 'IsolationUnavailableError';
  }
}

/** 'auto' → the strongest available level; a named level → that level, or an error naming the fix. */
export function chooseLevel(wanted: IsolationLevel | 'auto', python: string, platform: NodeJS.Platform = process.platform): IsolationLevel {
  const statuses = detectIsolation(python, platform);
  if (wanted === 'auto') {
    const best = statuses.find((s) => s.available);
    if (!best) throw new IsolationUnavailableError('auto', statuses.at(-1)!.reason);
    return best.level;
  }
  const s = statuses.find((x) => x.level === wanted)!;
  if (!s.available) throw new IsolationUnavailableError(wanted, s.reason);
  return wanted;
}

export { isRoot };
