// One fresh interpreter per execution, at a given isolation level: a new work directory, the
// launcher applies rlimits / uid / environment, output streamed through tail buffers with the cap
// enforced as it arrives, the process group killed at the wall-clock timeout, every leftover process
// of the sandbox uid swept, the work directory removed.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
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
    const uid = allocateUid();
    const hostDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-sbx-'));
    fs.chmodSync(hostDir, 0o755);
    fs.writeFileSync(path.join(hostDir, 'main.py'), code);
    const strict = this.level === 'strict';
    const cfg = {
      ...pythonLimitConfig(limits, uid, this.level),
      cwd: strict ? '/work' : hostDir,
      file: strict ? '/task/main.py' : path.join(hostDir, 'main.py'),
    };
    const argv = wrapPython(this.level, ['-c', LAUNCHER_PY, JSON.stringify(cfg)], {
      python: this.python,
      ...(strict ? { taskDir: hostDir } : { workDir: hostDir }),
    });
    const start = performance.now();
    const out = new TailBuffer(limits.tailBytes);
    const err = new TailBuffer(limits.tailBytes);
    let total = 0;
    let timedOut = false;
    let capped = false;
    try {
      const child = spawn(argv[0]!, argv.slice(1), { cwd: hostDir, env: { ...SCRUBBED_ENV }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
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
        level: this.level,
        ...(exit.error ? { sandboxError: `could not start the sandbox: ${exit.error.message}` } : {}),
      };
    } finally {
      fs.rmSync(hostDir, { recursive: true, force: true });
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
