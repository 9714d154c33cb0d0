// The reasoning-gym scorer's process, started in the workbench's sandbox at the run's isolation level
// (docs/sandbox.md): the sandbox's launcher applies the limits (and confines itself at the landlock
// level), scrubs the environment, then replaces itself with the venv's interpreter running the harness
// in mode "score" — the same path as a code environment's commands (freshExecutor.ts runLaunched), but
// with its pipes kept open, so reasoning-gym is imported once per process rather than once per answer.
// What it sees: the system read-only, the venv (its folder and the interpreter it links to) read-only,
// a fresh work folder (a private tmpfs at the strict level) as home and TMPDIR; no network at every
// level but "process"; under a uid of its own when the workbench runs as root.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SCRUBBED_ENV } from '../../sandbox/freshExecutor';
import { wrapPython, type IsolationLevel } from '../../sandbox/isolation';
import { allocateUid, DEFAULT_LIMITS, pythonLimitConfig, sweep, type SandboxLimits } from '../../sandbox/limits';
import { LAUNCHER_PY } from '../../sandbox/pythonSources.generated';
import { WorkspaceEnvError } from '../workspace/workspaceEnvError';
import { REASONING_GYM_HARNESS_PY } from './reasoningGymHarnessPy.generated';

/**
 * The scorer process's rlimits. Address space 4 GiB: importing reasoning-gym (numpy, sympy, …) maps
 * about 1 GiB, and an answer that asks for more gets a MemoryError (it scores 0). CPU 3,600 s over the
 * process's life (rlimits count per process, and it scores many answers; each answer is bounded by the
 * per-answer wall-clock timeout instead). Processes, file size and open files as a code execution.
 */
export const SCORER_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  ...DEFAULT_LIMITS,
  cpuSeconds: 3600,
  memoryBytes: 4 * 1024 * 1024 * 1024,
  maxOpenFiles: 256,
});

export interface ConfinedScorer {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves once the process has ended, with how ("exit code 3", "stopped by SIGKILL"). */
  readonly ended: Promise<string>;
  /** The last 16 KiB of its stderr. */
  stderr(): string;
  /** Closes its stdin, waits up to `graceMs`, then kills its process group (and its uid's processes), and removes its work folder. */
  stop(graceMs?: number): Promise<void>;
  readonly memoryMiB: number;
}

/** The folder above an interpreter's bin/ (a venv, a pyenv version), refused when that is a home folder or the root. */
function prefixOf(python: string, what: string): string | undefined {
  if (path.basename(path.dirname(python)) !== 'bin') return undefined;
  const above = path.dirname(path.dirname(python));
  if (above.startsWith('/usr/')) return undefined; // the system's: visible already
  if (['/', '/usr', '/home', '/Users', os.homedir()].includes(above))
    throw new WorkspaceEnvError(
      `reasoning-gym scorer: ${what} ${python} sits in ${above}, which the sandbox would have to show whole. Fix: install reasoning-gym in a virtual environment (node scripts/pythonVenv.mjs reasoning-gym-0.1.25) and name its bin/python in $AGENT_RL_REASONING_GYM_PYTHON`,
    );
  return above;
}

/** Starts the harness in mode "score" inside the sandbox at `level`, `datasets`' scorers made up front; its first line is {"ready": version}. */
export function startConfinedScorer(python: string, level: IsolationLevel, datasets: readonly string[] = []): ConfinedScorer {
  const abs = path.resolve(python);
  let real: string;
  try {
    real = fs.realpathSync(abs);
  } catch {
    throw new WorkspaceEnvError(`reasoning-gym scorer: the Python ${python} does not exist. Fix: name the interpreter you installed reasoning-gym into`);
  }
  // the venv's folder (its pyvenv.cfg and site-packages) and the installation its interpreter links to
  const roots = [...new Set([prefixOf(abs, 'the interpreter'), prefixOf(real, 'the interpreter behind')].filter((x): x is string => !!x))];
  const hostDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-rg-scorer-'));
  fs.chmodSync(hostDir, 0o755);
  const uid = allocateUid();
  const strict = level === 'strict';
  const cwd = strict ? '/work' : hostDir;
  const cfg = {
    ...pythonLimitConfig(SCORER_LIMITS, uid, level),
    cwd,
    // -I: no PYTHON* variables, no user site; the venv's own site-packages stay (argv[0] is the venv's python)
    argv: [abs, '-I', '-c', REASONING_GYM_HARNESS_PY, JSON.stringify({ mode: 'score', datasets })],
    // one thread each: RLIMIT_NPROC counts threads, and an answer gets no more CPUs than a code execution
    env: { OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1', MPLCONFIGDIR: cwd },
    roots,
  };
  const argv = wrapPython(level, ['-c', LAUNCHER_PY, JSON.stringify(cfg)], { python: real, workDir: hostDir, roots });
  const child = spawn(argv[0]!, argv.slice(1), { cwd: hostDir, env: { ...SCRUBBED_ENV }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => undefined); // it ended: `ended` says how
  let err = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => (err = (err + d).slice(-16_384)));
  const ended = new Promise<string>((resolve) => {
    child.once('error', (e) => resolve(`it could not be started: ${e.message}`));
    child.once('close', (code, signal) => resolve(signal ? `stopped by ${signal}` : `exit code ${code}`));
  });
  let stopped: Promise<void> | undefined;
  const stop = (graceMs = 0): Promise<void> =>
    (stopped ??= (async () => {
      child.stdin.end();
      let t: NodeJS.Timeout | undefined;
      if (graceMs > 0) await Promise.race([ended, new Promise((r) => (t = setTimeout(r, graceMs)))]);
      clearTimeout(t);
      await sweep(child.pid, uid);
      fs.rmSync(hostDir, { recursive: true, force: true });
    })());
  return { child, ended, stderr: () => err, stop, memoryMiB: SCORER_LIMITS.memoryBytes / 1024 / 1024 };
}
