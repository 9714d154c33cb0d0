// The run's scorer of reasoning-gym answers: one Python process (the harness in mode "score", started on
// the first answer) that imports reasoning-gym once and calls each dataset's own score_answer(answer,
// entry). Answers that arrive in the same turn of the event loop — a group's episodes verified together —
// go as one line, a JSON array, and come back as one: a batch per write instead of a round trip per
// episode. A score is a number 0–1 (what the dataset's scorer returns: 1 right, 0 wrong or malformed,
// some datasets partial credit between).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as readline from 'node:readline';
import { WorkspaceEnvError } from '../workspace/workspaceEnvError';
import type { GymEntry } from './reasoningGymTasks';
import { REASONING_GYM_HARNESS_PY } from './reasoningGymHarnessPy.generated';

interface Pending {
  readonly item: { readonly dataset: string; readonly entry: GymEntry; readonly answer: string | null };
  resolve(score: number): void;
  reject(e: Error): void;
}

export class AnswerScorer {
  private child: ChildProcessWithoutNullStreams | undefined;
  /** Batches written, answered in order (one line each). */
  private readonly inFlight: Pending[][] = [];
  private queued: Pending[] = [];
  private ended: string | undefined;
  private stderr = '';

  constructor(private readonly python: string) {}

  /** The dataset's score_answer of `answer` (null: no answer given, scored as reasoning-gym scores None) for `entry`. */
  score(dataset: string, entry: GymEntry, answer: string | null): Promise<number> {
    return new Promise((resolve, reject) => {
      if (this.ended) return reject(this.failure());
      this.queued.push({ item: { dataset, entry, answer }, resolve, reject });
      if (this.queued.length === 1) setImmediate(() => this.flush());
    });
  }

  private failure(): Error {
    const last = this.stderr.trim().split('\n').pop() ?? '';
    return new WorkspaceEnvError(
      last.startsWith('reasoning-gym')
        ? last
        : `reasoning-gym scorer: ${this.python} ended (${this.ended})${last ? `; its stderr ends: ${last.slice(0, 500)}` : ''}. Fix: name a Python 3 with reasoning-gym in $AGENT_RL_REASONING_GYM_PYTHON`,
    );
  }

  private start(): ChildProcessWithoutNullStreams {
    const child = spawn(this.python, ['-c', REASONING_GYM_HARNESS_PY, JSON.stringify({ mode: 'score' })], {
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    child.stdin.on('error', () => undefined); // it ended: 'close' fails what waits
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (this.stderr = (this.stderr + d).slice(-16_384)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => this.answer(line));
    child.on('error', (e) => this.end(`it could not be started: ${e.message}`));
    child.on('close', (code, signal) => this.end(signal ? `stopped by ${signal}` : `exit code ${code}`));
    return child;
  }

  private flush(): void {
    const batch = this.queued;
    this.queued = [];
    if (batch.length === 0) return;
    if (this.ended) {
      for (const p of batch) p.reject(this.failure());
      return;
    }
    this.child ??= this.start();
    this.inFlight.push(batch);
    this.child.stdin.write(`${JSON.stringify(batch.map((p) => p.item))}\n`);
  }

  private answer(line: string): void {
    const batch = this.inFlight.shift();
    if (!batch) return;
    let scores: unknown;
    try {
      scores = JSON.parse(line);
    } catch {
      scores = undefined;
    }
    if (!Array.isArray(scores) || scores.length !== batch.length) {
      const e = new WorkspaceEnvError(`reasoning-gym scorer: an answer line was not ${batch.length} scores (${line.slice(0, 200)})`);
      for (const p of batch) p.reject(e);
      return;
    }
    batch.forEach((p, i) => {
      const s: unknown = scores[i];
      if (typeof s === 'number' && Number.isFinite(s)) p.resolve(s);
      else {
        const why =
          typeof s === 'object' && s !== null && typeof (s as { error?: unknown }).error === 'string' ? (s as { error: string }).error : JSON.stringify(s);
        p.reject(new WorkspaceEnvError(`${why}. Fix: see the dataset's score_answer; the answer was ${JSON.stringify(p.item.answer?.slice(0, 200) ?? null)}`));
      }
    });
  }

  private end(why: string): void {
    if (this.ended) return;
    this.ended = why;
    const e = this.failure();
    for (const batch of this.inFlight.splice(0)) for (const p of batch) p.reject(e);
  }

  /** Ends the process (its stdin closed; killed if it lingers). Safe to call twice. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.ended) {
      this.ended ??= 'closed';
      return;
    }
    child.stdin.end();
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        resolve();
      }, 3000);
      child.once('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
    this.ended ??= 'closed';
  }
}
