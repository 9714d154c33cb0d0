// One Python process per run that reads a verifiers environment's datasets and plays its episodes (the
// harness, python/verifiersHarness.py): it imports verifiers and loads the environment once — ~3
// CPU-seconds that a process per episode would pay every episode — writes the datasets' rows, says it is
// ready, then runs each episode as an asyncio task, the way verifiers runs its own rollouts. Each episode is an EpisodeProcess (agent/episodeProcess.ts) to the
// agent environment's episode: its output and exit come back as JSON lines tagged with its id, and
// stopping it cancels its task. When the process ends, every episode still open ends with it, its
// stderr's last lines as theirs.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as readline from 'node:readline';
import type { EpisodeListener, EpisodeProcess, EpisodeStart } from '../agent/episodeProcess';
import { killGroup, programGroups } from '../agent/programGroups';

/** A line of the harness: an episode's output or exit, or (first) that it is ready. */
type Answer = { readonly id: number; readonly stdout?: string; readonly stderr?: string; readonly exit?: number | null } | { readonly ready: true };

const STDERR_TAIL = 16_384;
/** How long an episode's stop may go unanswered before the harness counts as blocked. */
const STOP_WAIT_MS = 5000;
/**
 * How long the harness may take to exit once its stdin closes: it awaits its cancelled episodes (verifiers
 * 0.4 stops each one's chat program and tool servers, each given seconds to end), its serving resources'
 * teardown, then kills what is left below it, before its group is killed.
 */
const EXIT_WAIT_MS = 15_000;

export class VerifiersServer {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly open = new Map<number, EpisodeListener>();
  private next = 0;
  private ended: string | undefined;
  private stderr = '';
  private readyWaiter: { resolve: () => void; reject: (e: Error) => void } | undefined;
  private isReady = false;

  /** Starts `python -c HARNESS config` in `root` (its own process group on POSIX). */
  constructor(
    python: string,
    harness: string,
    config: string,
    root: string,
    /** Makes the error of a process that ended before it was ready, from its stderr's last line. */
    private readonly failed: (why: string, lastLine: string) => Error,
  ) {
    this.child = spawn(python, ['-c', harness, config], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      windowsHide: true,
    });
    const child = this.child;
    if (child.pid !== undefined) programGroups.add(child.pid);
    child.stdin.on('error', () => undefined); // it ended: its episodes hear it from 'close'
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (this.stderr = (this.stderr + d).slice(-STDERR_TAIL)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => this.answer(line));
    child.on('error', (e) => this.end(`it could not be started: ${e.message}`));
    child.on('close', (code, signal) => this.end(signal ? `stopped by ${signal}` : `exit code ${code}`));
  }

  private answer(line: string): void {
    let a: Answer;
    try {
      const parsed: unknown = JSON.parse(line);
      if (typeof parsed !== 'object' || parsed === null) return; // a number, a string, null: not one of the harness's lines
      a = parsed as Answer;
    } catch {
      return; // not one of the harness's lines (its stdout is its own: the environment's prints go to stderr)
    }
    if (!('id' in a)) {
      this.isReady = true;
      this.readyWaiter?.resolve();
      return;
    }
    const on = this.open.get(a.id);
    if (!on) return;
    if (typeof a.stdout === 'string') on.stdout(a.stdout);
    if (typeof a.stderr === 'string') on.stderr(a.stderr);
    if (a.exit !== undefined) {
      this.open.delete(a.id);
      on.exit(a.exit === null ? { code: null, signal: 'SIGTERM' } : { code: a.exit, signal: null });
    }
  }

  /** The process ended: every open episode ends with it, the end of its stderr as theirs. */
  private end(why: string): void {
    if (this.ended) return;
    this.ended = why;
    if (this.child.pid !== undefined) programGroups.delete(this.child.pid);
    if (!this.isReady) this.readyWaiter?.reject(this.failed(why, this.stderr.trim().split('\n').pop() ?? ''));
    const tail = this.stderr.trim().split('\n').slice(-20).join('\n');
    for (const on of this.open.values()) {
      if (tail) on.stderr(`${tail}\n`);
      on.exit({ code: null, signal: null, error: `the verifiers harness process ended (${why})` });
    }
    this.open.clear();
  }

  private send(m: Record<string, unknown>): void {
    if (!this.ended) this.child.stdin.write(`${JSON.stringify(m)}\n`);
  }

  /**
   * Resolves once the environment is loaded and its rows written; rejects with `failed`'s error when the
   * process ends first, or stops it after `timeoutMs`.
   */
  ready(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.readyWaiter = undefined;
        reject(this.failed(`it was not ready within ${timeoutMs} ms`, ''));
        void this.stop();
      }, timeoutMs);
      this.readyWaiter = {
        resolve: () => {
          clearTimeout(t);
          resolve();
        },
        reject: (e) => {
          clearTimeout(t);
          reject(e);
        },
      };
      if (this.isReady) this.readyWaiter.resolve();
      else if (this.ended) this.readyWaiter.reject(this.failed(this.ended, this.stderr.trim().split('\n').pop() ?? ''));
    });
  }

  /** One episode as a task of the server. */
  start(s: EpisodeStart, on: EpisodeListener): EpisodeProcess {
    const id = this.next++;
    if (this.ended) {
      const tail = this.stderr.trim().split('\n').slice(-20).join('\n');
      queueMicrotask(() => {
        if (tail) on.stderr(`${tail}\n`);
        on.exit({ code: null, signal: null, error: `the verifiers harness process ended (${this.ended})` });
      });
    } else {
      this.open.set(id, on);
      this.send({ op: 'start', id, baseUrl: s.baseUrl, key: s.key, task: JSON.parse(s.taskJson) as unknown });
    }
    return {
      stop: () => {
        if (this.open.has(id)) this.send({ op: 'stop', id });
      },
      release: async () => {
        if (!this.open.has(id)) return;
        this.send({ op: 'stop', id });
        // its cancellation answered, or a moment. An unanswered stop means the harness's event loop is blocked
        // (verifiers calls synchronous tools and reward functions on it: one that hangs stops every episode),
        // so the process is ended, saying why: later episodes fail at once with that reason instead of each
        // waiting out its timeout for a reward of 0.
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            this.kill(
              `an episode's stop went unanswered for ${STOP_WAIT_MS / 1000} s: its event loop is blocked, likely by a synchronous tool or reward function that does not return`,
            );
            resolve();
          }, STOP_WAIT_MS);
          const wrapped = this.open.get(id)!;
          this.open.set(id, {
            ...wrapped,
            exit: (e) => {
              clearTimeout(t);
              wrapped.exit(e);
              resolve();
            },
          });
        });
        this.open.delete(id);
      },
    };
  }

  /** Ends a process that no longer answers, at once (its group killed), with `why` for its episodes. */
  private kill(why: string): void {
    if (this.ended) return;
    if (this.child.pid !== undefined) killGroup(this.child.pid);
    this.end(why);
  }

  /** Ends the process: its stdin closed (it cancels what runs and exits), then its group stopped. */
  async stop(): Promise<void> {
    if (this.ended) return;
    this.child.stdin.end();
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, EXIT_WAIT_MS);
      this.child.once('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
    if (this.child.pid !== undefined) killGroup(this.child.pid);
    this.end('the run ended');
  }
}
