// One fresh process per execution, at a given isolation level: a new work directory, the launcher
// applies rlimits / uid / environment (and confines itself at the landlock level), output streamed
// through tail buffers with the cap enforced as it arrives, the process group killed at the
// wall-clock timeout, every leftover process of the sandbox uid swept, the work directory removed.
// runLaunched also runs commands (a compiler, a compiled program): SandboxFusion's other languages.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { wrapPython, type IsolationLevel } from './isolation';
import { allocateUid, pythonLimitConfig, sweep, TailBuffer, type ExecutionResult, type SandboxLimits } from './limits';
import { LAUNCHER_PY } from './pythonSources.generated';

export interface Executor {
  readonly level: IsolationLevel;
  execute(code: string, limits: SandboxLimits): Promise<ExecutionResult>;
  close(): Promise<void>;
}

/** Environment of the wrapper process itself (bwrap/unshare/python): nothing inherited but PATH. */
export const SCRUBBED_ENV: Readonly<Record<string, string>> = Object.freeze({ PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' });

export class FreshExecutor implements Executor {
  constructor(
    readonly level: IsolationLevel,
    private readonly python: string,
  ) {}

  async execute(code: string, limits: SandboxLimits): Promise<ExecutionResult> {
    const hostDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-sbx-'));
    try {
      fs.chmodSync(hostDir, 0o755);
      fs.writeFileSync(path.join(hostDir, 'main.py'), code);
      const strict = this.level === 'strict';
      return await runLaunched(this.level, this.python, hostDir, { file: strict ? '/task/main.py' : path.join(hostDir, 'main.py') }, limits, allocateUid());
    } finally {
      fs.rmSync(hostDir, { recursive: true, force: true });
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** What the launcher runs: Python code from a file, or a command (a compiler, another language's interpreter, a compiled program). */
export type LaunchTarget =
  | { readonly file: string }
  | {
      readonly argv: readonly string[];
      /** Environment variables beyond the scrubbed ones (a compiler's cache folder). */
      readonly env?: Readonly<Record<string, string>>;
      /** The toolchain's folders outside the system ones, readable and executable at every level. */
      readonly roots?: readonly string[];
      /** The code's standard input. */
      readonly stdin?: string;
    };

/**
 * One launcher process at `level` in `hostDir`: the limits applied, the output streamed through tail
 * buffers with the cap enforced as it arrives, the process group killed at the wall-clock timeout,
 * every leftover process of the sandbox uid swept. A command runs with `hostDir` as its work folder
 * (at the strict level bound read-write at /work, so that a compile step's output reaches the run);
 * Python from a file runs in a fresh /work there, the file shown read-only at /task.
 */
export async function runLaunched(
  level: IsolationLevel,
  python: string,
  hostDir: string,
  target: LaunchTarget,
  limits: SandboxLimits,
  uid: number | undefined,
): Promise<ExecutionResult> {
  const strict = level === 'strict';
  const command = 'argv' in target;
  const roots = command ? (target.roots ?? []) : [];
  const cfg = {
    ...pythonLimitConfig(limits, uid, level),
    cwd: strict ? '/work' : hostDir,
    ...(command ? { argv: target.argv, env: target.env ?? {}, roots } : { file: target.file }),
  };
  const argv = wrapPython(level, ['-c', LAUNCHER_PY, JSON.stringify(cfg)], {
    python,
    workDir: hostDir,
    ...(strict && !command ? { taskDir: hostDir } : {}),
    ...(command ? { bindWork: true, roots } : {}),
  });
  const stdin = command ? target.stdin : undefined;
  const start = performance.now();
  const out = new TailBuffer(limits.tailBytes);
  const err = new TailBuffer(limits.tailBytes);
  let total = 0;
  let timedOut = false;
  let capped = false;
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: hostDir,
    env: { ...SCRUBBED_ENV },
    detached: true,
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
  if (child.stdin) {
    child.stdin.on('error', () => undefined); // the code may exit without reading it
    child.stdin.end(stdin);
  }
  const kill = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
  };
  const onData =
    (buf: TailBuffer) =>
    (chunk: Buffer): void => {
      if (capped) return;
      total += chunk.length;
      buf.push(chunk);
      if (total > limits.outputCapBytes) {
        capped = true;
        kill();
        child.stdout.destroy();
        child.stderr.destroy();
      }
    };
  child.stdout.on('data', onData(out));
  child.stderr.on('data', onData(err));
  const closed = Promise.all([new Promise((r) => child.stdout.once('close', r)), new Promise((r) => child.stderr.once('close', r))]);
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, limits.timeoutMs);
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  clearTimeout(timer);
  // Background children may still hold the pipes: kill the group and the uid, then stop reading.
  await sweep(child.pid, uid);
  let guard: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise((r) => (guard = setTimeout(r, 500)))]);
  clearTimeout(guard);
  child.stdout.destroy();
  child.stderr.destroy();
  return {
    stdout: out.text(),
    stderr: err.text(),
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    outputCapped: capped,
    outputBytes: Math.min(total, limits.outputCapBytes),
    durationMs: performance.now() - start,
    level,
    ...(exit.error ? { sandboxError: `could not start the sandbox: ${exit.error.message}` } : {}),
  };
}
