// The run's scorer of reasoning-gym answers: one Python process (the harness in mode "score") that
// imports reasoning-gym once and calls each dataset's own score_answer(answer, entry). Many of those
// scorers evaluate the answer's text (sympy's parse_expr, eval: countdown, puzzle24, basic_arithmetic …),
// and the answer is the model's, so the process runs in the workbench's sandbox at the run's level
// (confinedScorer.ts): the venv read-only, no network, no writable home, rlimits. Answers that arrive
// in the same turn of the event loop — a group's episodes verified together — go as one line, a JSON
// array; the harness answers each on its own line, in order, so a hang is pinned to one answer. An
// answer that takes longer than the per-answer timeout scores 0 with the reason recorded, and the
// process is killed and restarted for the answers after it (as is one that ended the process: the
// memory or CPU limit). A score is a number 0–1 (what the dataset's scorer returns: 1 right, 0 wrong or
// malformed, some datasets partial credit between).
import * as readline from 'node:readline';
import type { IsolationLevel } from '../../sandbox/isolation';
import { WorkspaceEnvError } from '../workspace/workspaceEnvError';
import { startConfinedScorer, type ConfinedScorer } from './confinedScorer';
import type { GymEntry } from './reasoningGymTasks';

/** One answer's score, and why it is 0 when the scorer did not decide it (a timeout, a limit reached). */
export interface AnswerScore {
  readonly score: number;
  readonly failure?: string;
}

interface Pending {
  readonly item: { readonly dataset: string; readonly entry: GymEntry; readonly answer: string | null };
  resolve(s: AnswerScore): void;
  reject(e: Error): void;
}

/** How the scorer is confined and how long it may take (ms). */
export interface ScorerOptions {
  readonly level: IsolationLevel;
  /** Per answer, from when it is written (or from ready, for the first after a start). */
  readonly answerTimeoutMs: number;
  /** From the start until reasoning-gym is imported (120 s when absent). */
  readonly startTimeoutMs?: number;
  /** The datasets whose scorers are made before the process says it is ready (the run's), so their making is not counted in an answer's time. */
  readonly datasets?: readonly string[];
}

export class AnswerScorer {
  private proc: ConfinedScorer | undefined;
  private ready = false;
  /** Items written to the current process, unanswered, in order. */
  private sent: Pending[] = [];
  private queued: Pending[] = [];
  private fatal: Error | undefined;
  private timer: NodeJS.Timeout | undefined;
  private flushing = false;

  constructor(
    private readonly python: string,
    private readonly options: ScorerOptions,
  ) {}

  /** The dataset's score_answer of `answer` (null: no answer given, scored as reasoning-gym scores None) for `entry`. */
  score(dataset: string, entry: GymEntry, answer: string | null): Promise<AnswerScore> {
    return new Promise((resolve, reject) => {
      if (this.fatal) return reject(this.fatal);
      this.queued.push({ item: { dataset, entry, answer }, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => {
          this.flushing = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    if (this.fatal) {
      for (const p of this.queued.splice(0)) p.reject(this.fatal);
      return;
    }
    if (this.queued.length === 0) return;
    if (!this.proc) {
      this.start();
      return; // written once it says it is ready
    }
    if (!this.ready) return;
    const batch = this.queued.splice(0);
    if (this.sent.length === 0) this.arm(this.options.answerTimeoutMs, 'answer');
    this.sent.push(...batch);
    this.proc.child.stdin.write(`${JSON.stringify(batch.map((p) => p.item))}\n`);
  }

  private start(): void {
    let proc: ConfinedScorer;
    try {
      proc = startConfinedScorer(this.python, this.options.level, this.options.datasets);
    } catch (e) {
      this.fail(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    this.proc = proc;
    this.ready = false;
    readline.createInterface({ input: proc.child.stdout }).on('line', (line) => {
      if (this.proc === proc) this.answer(line);
    });
    void proc.ended.then((why) => {
      if (this.proc === proc) this.ended(why);
    });
    this.arm(this.options.startTimeoutMs ?? 120_000, 'start');
  }

  /** One timer: the start's, or the head answer's (reset as each answer comes back). */
  private arm(ms: number, what: 'start' | 'answer'): void {
    clearTimeout(this.timer);
    const proc = this.proc;
    this.timer = setTimeout(() => {
      if (this.proc !== proc || !proc) return;
      if (what === 'start') return this.fail(this.failure(proc, `it did not import reasoning-gym within ${ms} ms`));
      const head = this.sent.shift();
      head?.resolve({ score: 0, failure: `score_answer did not finish within ${ms} ms (the per-answer timeout); the scorer was restarted` });
      this.restart();
    }, ms);
  }

  /** Kills the process; what it had not answered goes to a fresh one. */
  private restart(): void {
    const proc = this.proc;
    this.proc = undefined;
    this.ready = false;
    clearTimeout(this.timer);
    this.queued = [...this.sent.splice(0), ...this.queued];
    void proc?.stop();
    this.flush();
  }

  private answer(line: string): void {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      v = line;
    }
    if (!this.ready) {
      if (typeof v === 'object' && v !== null && 'ready' in v) {
        this.ready = true;
        clearTimeout(this.timer);
        this.flush();
      }
      return; // anything a dataset's import printed before
    }
    const p = this.sent.shift();
    if (!p) return;
    if (this.sent.length > 0) this.arm(this.options.answerTimeoutMs, 'answer');
    else clearTimeout(this.timer);
    const o = typeof v === 'object' && v !== null ? (v as { zero?: unknown; error?: unknown }) : {};
    if (typeof v === 'number' && Number.isFinite(v)) p.resolve({ score: v });
    else if (typeof o.zero === 'string') p.resolve({ score: 0, failure: o.zero });
    else {
      const why = typeof o.error === 'string' ? o.error : `reasoning-gym scorer: an answer line was not a score (${line.slice(0, 200)})`;
      p.reject(new WorkspaceEnvError(`${why}. Fix: see the dataset's score_answer; the answer was ${JSON.stringify(p.item.answer?.slice(0, 200) ?? null)}`));
    }
  }

  /** The process ended by itself: before it was ready, the run cannot score (fatal); on an answer, that answer scores 0 and a fresh process takes the rest. */
  private ended(why: string): void {
    const proc = this.proc!;
    if (!this.ready) return this.fail(this.failure(proc, why));
    const head = this.sent.shift();
    head?.resolve({
      score: 0,
      failure: `the scorer ended (${why}) while scoring this answer (a sandbox limit: memory ${proc.memoryMiB} MiB, CPU); it was restarted`,
    });
    this.restart();
  }

  private failure(proc: ConfinedScorer, why: string): Error {
    const last = proc.stderr().trim().split('\n').pop() ?? '';
    return new WorkspaceEnvError(
      last.startsWith('reasoning-gym')
        ? last
        : `reasoning-gym scorer: ${this.python} in the sandbox (level ${this.options.level}) ended (${why})${last ? `; its stderr ends: ${last.slice(0, 500)}` : ''}. Fix: name a Python 3 with reasoning-gym in $AGENT_RL_REASONING_GYM_PYTHON, in a folder the sandbox may read (not under a home folder others cannot enter when the workbench runs as root)`,
    );
  }

  private fail(e: Error): void {
    this.fatal ??= e;
    clearTimeout(this.timer);
    for (const p of [...this.sent.splice(0), ...this.queued.splice(0)]) p.reject(this.fatal);
    const proc = this.proc;
    this.proc = undefined;
    void proc?.stop();
  }

  /** Ends the process (its stdin closed; killed if it lingers). Safe to call twice. */
  async close(): Promise<void> {
    this.fatal ??= new WorkspaceEnvError('reasoning-gym scorer: closed');
    clearTimeout(this.timer);
    const proc = this.proc;
    this.proc = undefined;
    for (const p of [...this.sent.splice(0), ...this.queued.splice(0)]) p.reject(this.fatal);
    await proc?.stop(3000);
  }
}
