// SandboxFusion's languages other than Python, run by `agent-rl sandbox serve` with the toolchains this
// machine has: each request gets a fresh work folder; a compiled language's compile step and the
// program's run are two launcher processes in it (python/launcher.py, at the server's isolation level,
// with the same limits), each with its own time limit, status, stdout and stderr, answered as
// SandboxFusion answers (compile_result and run_result; a compile that fails or times out is Failed
// with no run_result). A language whose toolchain is not here answers SandboxError naming what is
// missing. Python itself runs on the warm pool (fusionServer.ts).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runLaunched } from '../freshExecutor';
import type { IsolationLevel } from '../isolation';
import { allocateUid, type ExecutionResult, type SandboxLimits } from '../limits';
import { runOutcome, toCommandResult, type CommandRunResult, type FusionLanguage, type RunCodeRequest, type RunCodeResponse } from './fusionProtocol';

/** Where a toolchain is looked for: the sandbox's PATH, then the usual homes of a package manager's. */
export const TOOLCHAIN_DIRS: readonly string[] = ['/usr/local/bin', '/usr/bin', '/bin', '/opt/homebrew/bin'];

const MB = 1024 * 1024;

interface Phase {
  readonly argv: string[];
  readonly env?: Record<string, string>;
}

interface Toolchain {
  readonly language: FusionLanguage;
  /** The programs it needs, first the one named in env check. */
  readonly tools: readonly string[];
  /** The file the code is written to. */
  readonly source: (code: string) => string;
  readonly compile?: (bin: Readonly<Record<string, string>>, file: string, memoryMB: number) => Phase;
  readonly run: (bin: Readonly<Record<string, string>>, file: string, memoryMB: number) => Phase;
  /** Address space its runtime reserves beyond the memory it is given (RLIMIT_AS counts reservations). */
  readonly reserveMB?: number;
  /** Threads count as processes under RLIMIT_NPROC: a JVM or Go's toolchain starts dozens. */
  readonly processes?: number;
  /**
   * Its runtime or compiler computes on several threads (a JVM's compiler and GC, V8's, Go's build):
   * RLIMIT_CPU, which sums them, gets the wall-clock limit times the cores, so the wall clock decides
   * (a TimeLimitExceeded), not a CPU-limit kill that would read as a crash.
   */
  readonly threaded?: boolean;
}

// The JVM sized to the request: heap half the memory, small code cache and class space, one GC thread,
// no performance-data file in /tmp.
const jvm = (memoryMB: number): string[] => [
  `-Xmx${Math.max(16, Math.floor(memoryMB / 2))}m`,
  '-Xss8m',
  '-XX:ReservedCodeCacheSize=32m',
  '-XX:CompressedClassSpaceSize=32m',
  '-XX:MaxMetaspaceSize=128m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:-UsePerfData',
];

/** Java's file is named after its public class, as javac demands. */
export function javaMainClass(code: string): string {
  return /\bpublic\s+(?:(?:final|abstract|strictfp)\s+)*class\s+([A-Za-z_$][\w$]*)/.exec(code)?.[1] ?? 'Main';
}

const interpreted = (language: FusionLanguage, tool: string, ext: string): Toolchain => ({
  language,
  tools: [tool],
  source: () => `main.${ext}`,
  run: (b, f) => ({ argv: [b[tool]!, f] }),
});

export const TOOLCHAINS: readonly Toolchain[] = [
  {
    language: 'cpp',
    tools: ['g++'],
    source: () => 'main.cpp',
    compile: (b, f) => ({ argv: [b['g++']!, '-std=c++17', '-O2', f, '-o', 'main'] }),
    run: () => ({ argv: ['./main'] }),
  },
  {
    language: 'go',
    tools: ['go'],
    source: () => 'main.go',
    // the build cache goes under HOME (the work folder); nothing is fetched: no toolchain switch, no module proxy
    compile: (b, f) => ({ argv: [b.go!, 'build', '-o', 'main', f], env: { GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '-mod=mod', CGO_ENABLED: '0' } }),
    run: () => ({ argv: ['./main'] }),
    processes: 256,
    threaded: true,
  },
  {
    language: 'java',
    tools: ['javac', 'java'],
    source: (code) => `${javaMainClass(code)}.java`,
    // -proc:none: no annotation processor found among the request's files runs in the compile step
    compile: (b, f, mb) => ({ argv: [b.javac!, ...jvm(mb).map((o) => `-J${o}`), '-proc:none', '-encoding', 'UTF-8', f] }),
    run: (b, f, mb) => ({ argv: [b.java!, ...jvm(mb), '-cp', '.', path.basename(f, '.java')] }),
    reserveMB: 1024,
    processes: 128,
    threaded: true,
  },
  {
    language: 'nodejs',
    tools: ['node'],
    source: () => 'main.js',
    // V8 reserves its pointer cage up front: the heap is capped by the flag, the address space given room
    run: (b, f, mb) => ({ argv: [b.node!, `--max-old-space-size=${Math.max(16, mb)}`, f] }),
    reserveMB: 2048,
    processes: 64,
    threaded: true,
  },
  {
    language: 'rust',
    tools: ['rustc'],
    source: () => 'main.rs',
    compile: (b, f) => ({ argv: [b.rustc!, '--edition', '2021', '-O', f, '-o', 'main'] }),
    run: () => ({ argv: ['./main'] }),
    processes: 64,
    threaded: true,
  },
  interpreted('bash', 'bash', 'sh'),
  interpreted('perl', 'perl', 'pl'),
  interpreted('ruby', 'ruby', 'rb'),
  interpreted('php', 'php', 'php'),
  interpreted('lua', 'lua', 'lua'),
];

const SYSTEM_ROOTS = ['/usr/', '/bin/', '/lib/', '/lib64/', '/etc/', '/sbin/'];

export interface FoundToolchain {
  readonly language: FusionLanguage;
  readonly available: boolean;
  /** The programs' real paths, or what is missing. */
  readonly detail: string;
  readonly bin: Readonly<Record<string, string>>;
  /** Folders outside the system ones the toolchain lives in (readable at every level). */
  readonly roots: readonly string[];
}

function findTool(name: string, dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    try {
      const real = fs.realpathSync(path.join(dir, name));
      fs.accessSync(real, fs.constants.X_OK);
      if (fs.statSync(real).isFile()) return real;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The installation a program outside the system folders belongs to (the folder above its bin/), or undefined when that would show too much: `/`, a home folder, anything holding or inside one. */
export function installationOf(program: string, home = os.homedir()): string | undefined {
  if (path.basename(path.dirname(program)) !== 'bin') return undefined;
  const root = path.dirname(path.dirname(program));
  const homes = ['/root', '/home', '/Users', home];
  const inside = (a: string, b: string): boolean => a === b || a.startsWith(b.endsWith(path.sep) ? b : b + path.sep);
  if (root === path.parse(root).root || homes.some((h) => inside(root, h) || inside(h, root))) return undefined;
  return root;
}

let found: FoundToolchain[] | undefined;

/** Which of SandboxFusion's languages this machine can run, besides Python (cached; `dirs` for tests). */
export function detectLanguages(dirs: readonly string[] = TOOLCHAIN_DIRS): FoundToolchain[] {
  if (dirs === TOOLCHAIN_DIRS && found) return found;
  const out = TOOLCHAINS.map((t): FoundToolchain => {
    const bin: Record<string, string> = {};
    const missing: string[] = [];
    for (const tool of t.tools) {
      const p = findTool(tool, dirs);
      if (p) bin[tool] = p;
      else missing.push(tool);
    }
    if (missing.length) return { language: t.language, available: false, detail: `${missing.join(', ')} not found in ${dirs.join(':')}`, bin, roots: [] };
    // a toolchain outside the system folders (Homebrew, /opt): its installation, the folder above bin/,
    // made readable to the code — never a home folder or what holds one (~/.cargo keeps credentials)
    const roots: string[] = [];
    for (const p of Object.values(bin).filter((x) => !SYSTEM_ROOTS.some((r) => x.startsWith(r)))) {
      const root = installationOf(p);
      if (!root) {
        return {
          language: t.language,
          available: false,
          detail: `${p} is not in an installation folder the sandbox can show (a bin/ folder outside any home folder). Fix: install the toolchain system-wide`,
          bin,
          roots: [],
        };
      }
      roots.push(root);
    }
    return { language: t.language, available: true, detail: Object.values(bin).join(', '), bin, roots: [...new Set(roots)] };
  });
  if (dirs === TOOLCHAIN_DIRS) found = out;
  return out;
}

/** The languages `sandbox serve` answers here, Python first. */
export function servedLanguages(): FusionLanguage[] {
  return [
    'python',
    ...detectLanguages()
      .filter((t) => t.available)
      .map((t) => t.language),
  ];
}

/**
 * The launcher's own failures (it could not confine itself: exit 70; it could not start the toolchain:
 * 127), each with a `sandbox:` line on stderr, as sandbox errors: the machine's fault, not the code's
 * (verl reads them as −1, not as a wrong answer). Before the program runs, so no program wrote them.
 */
function launcherFailure(r: ExecutionResult): ExecutionResult {
  if ((r.exitCode === 70 || r.exitCode === 127) && r.stderr.startsWith('sandbox: ') && !r.timedOut) {
    return { ...r, sandboxError: r.stderr.trim().replace(/^sandbox: /, 'the sandbox failed: ') };
  }
  return r;
}

export interface LanguageRunOptions {
  readonly level: IsolationLevel;
  readonly python: string;
  /** The run's limits (its timeout is the request's run_timeout). */
  readonly limits: SandboxLimits;
  /** The compile step's timeout (ms): the request's compile_timeout. */
  readonly compileTimeoutMs: number;
}

const sandboxError = (message: string): RunCodeResponse => ({
  status: 'SandboxError',
  message,
  compile_result: null,
  run_result: null,
  executor_pod_name: null,
  files: {},
});

/** Runs a request of a language other than Python: write the files and the code, compile, run, fetch. */
export async function runLanguage(req: RunCodeRequest, o: LanguageRunOptions): Promise<RunCodeResponse> {
  const chain = TOOLCHAINS.find((t) => t.language === req.language);
  const have = detectLanguages().find((t) => t.language === req.language);
  if (!chain || !have?.available) {
    return sandboxError(
      `language ${req.language} is not run here: ${have ? have.detail : 'agent-rl sandbox serve has no runner for it'}. ` +
        `This server runs ${servedLanguages().join(', ')} (agent-rl env check lists them); install the toolchain or send the request to SandboxFusion itself`,
    );
  }
  // the work folder inside a folder of ours (0711): the code owns its work folder but cannot rename or
  // replace it, so what this process and the second phase open by its path is always that folder
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-lang-'));
  const work = path.join(base, 'work');
  // one uid for both phases when we are root: the run reads what the compile step wrote
  const uid = allocateUid();
  try {
    fs.chmodSync(base, 0o711);
    fs.mkdirSync(work, 0o700);
    for (const [rel, b64] of Object.entries(req.files)) {
      if (b64 === null) continue;
      const p = path.join(work, rel);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      fs.writeFileSync(p, Buffer.from(b64, 'base64'));
      // the request's files and folders belong to the code, as the pool's server makes them
      for (let q = p; uid !== undefined && q !== work; q = path.dirname(q)) fs.chownSync(q, uid, uid);
    }
    const file = chain.source(req.code);
    fs.writeFileSync(path.join(work, file), req.code);
    const memoryMB = Math.floor(o.limits.memoryBytes / MB);
    const cpuFor = (seconds: number): number => Math.ceil(seconds * (chain.threaded ? os.availableParallelism() : 1)) + 1;
    const limits: SandboxLimits = {
      ...o.limits,
      cpuSeconds: cpuFor(o.limits.timeoutMs / 1000),
      memoryBytes: o.limits.memoryBytes + (chain.reserveMB ?? 0) * MB,
      maxProcesses: Math.max(o.limits.maxProcesses, chain.processes ?? 0),
    };
    const phase = async (p: Phase, phaseLimits: SandboxLimits, stdin?: string): Promise<ExecutionResult> =>
      launcherFailure(
        await runLaunched(
          o.level,
          o.python,
          work,
          { argv: p.argv, env: p.env ?? {}, roots: have.roots, ...(stdin !== undefined ? { stdin } : {}) },
          phaseLimits,
          uid,
        ),
      );
    let compile: CommandRunResult | null = null;
    if (chain.compile) {
      const c = await phase(chain.compile(have.bin, file, memoryMB), {
        ...limits,
        timeoutMs: o.compileTimeoutMs,
        cpuSeconds: cpuFor(o.compileTimeoutMs / 1000),
        maxFileBytes: Math.max(limits.maxFileBytes, 256 * MB),
      });
      compile = toCommandResult(c);
      if (c.sandboxError !== undefined) return { ...sandboxError(c.sandboxError), compile_result: compile };
      if (compile.status !== 'Finished' || compile.return_code !== 0) {
        return { status: 'Failed', message: '', compile_result: compile, run_result: null, executor_pod_name: null, files: {} };
      }
    }
    const run = chain.run(have.bin, file, memoryMB);
    if (run.argv[0]!.startsWith('./')) markExecutable(path.join(work, run.argv[0]!));
    const r = await phase(run, limits, req.stdin ?? undefined);
    const result = toCommandResult(r);
    if (r.sandboxError !== undefined) return { ...sandboxError(r.sandboxError), compile_result: compile, run_result: result };
    return {
      ...runOutcome(result, r, limits.outputCapBytes),
      compile_result: compile,
      run_result: result,
      executor_pod_name: null,
      files: fetchFiles(work, req.fetch_files, limits.outputCapBytes),
    };
  } finally {
    fs.rmSync(base, { recursive: true, force: true });
  }
}

/**
 * The compiled program made executable from here: at the landlock level the linker's own chmod is
 * refused (the seccomp filter refuses every change of mode), so its output stays 0644. Never through
 * a symbolic link, and only a regular file (the compile step wrote it).
 */
function markExecutable(file: string): void {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return; // no program: the run says so
  }
  try {
    if (fs.fstatSync(fd).isFile()) fs.fchmodSync(fd, 0o755);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Regular files under the work folder, never through a symbolic link, at most `cap` bytes in all (as
 * the pool's server does). Where /proc shows what a descriptor opened (Linux), that path is checked
 * after the open, so a folder swapped for a link in between (by a process that outlived the run) is
 * caught; elsewhere the path is checked before.
 */
function fetchFiles(work: string, names: readonly string[], cap: number): Record<string, string> {
  const out: Record<string, string> = {};
  const real = fs.realpathSync(work);
  const under = (p: string): boolean => p.startsWith(real + path.sep);
  let total = 0;
  for (const name of names) {
    const p = path.join(work, name);
    let fd: number;
    try {
      if (!under(fs.realpathSync(p))) continue;
      fd = fs.openSync(p, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    } catch {
      continue;
    }
    try {
      let opened: string | undefined;
      try {
        opened = fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        // no /proc: the check before the open stands
      }
      if ((opened !== undefined && !under(opened)) || !fs.fstatSync(fd).isFile()) continue;
      const buf = Buffer.alloc(Math.max(0, cap - total + 1));
      const n = fs.readSync(fd, buf, 0, buf.length, 0);
      if (total + n > cap) break;
      total += n;
      out[name] = buf.subarray(0, n).toString('base64');
    } finally {
      fs.closeSync(fd);
    }
  }
  return out;
}
