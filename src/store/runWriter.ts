// The SQLite RunSink: one run row, then one synchronous transaction per iteration (iteration metrics,
// every trajectory and turn, each group's judge exchange, and the evaluation when one ran), so a run killed at any moment leaves
// whole iterations only. The initial evaluation and the final status are their own small writes.
import type Database from 'better-sqlite3';
import { encodeTokenStats } from './tokenStatsCodec';
import * as fs from 'node:fs';
import * as os from 'node:os';
import type { RunConfig } from '../shared/runConfig';
import { EVALUATION_EXTRAS, type EvaluationResult, type RunStatus, type RuntimeInfo } from '../shared/types';
import type { JudgeCache } from '../rl/train/judge/judgeStage';
import type { IterationRecord, RunEnd, RunFolders, RunSink, RunStart } from '../rl/train/sink';
import { checkpointDirFor, resumeDirFor } from './openStore';
import { runtimeInfo } from './runtimeInfo';

const now = (): string => new Date().toISOString();

/** The evaluation fields without a column of their own, as a JSON object of numbers (NULL when none). */
function evaluationExtras(e: EvaluationResult): string | null {
  const extras: Record<string, unknown> = Object.fromEntries(EVALUATION_EXTRAS.filter((k) => typeof e[k] === 'number').map((k) => [k, e[k]]));
  if (e.perTask) extras.perTask = e.perTask;
  return Object.keys(extras).length > 0 ? JSON.stringify(extras) : null;
}

export class RunWriter implements RunSink {
  private id: number | undefined;
  /** The runtime record stored with the run (after begin or resume). */
  runtime: RuntimeInfo | undefined;
  private readonly insertIteration;
  private readonly insertTrajectory;
  private readonly insertTurn;
  private readonly insertEvaluation;
  private readonly insertTokenStats;
  private readonly heartbeat;
  private readonly insertJudge;
  /** Earlier judge answers of any run in this database, by cache key (reward.judge). */
  readonly judgeCache: JudgeCache;
  private readonly writeIteration: (record: IterationRecord) => void;

  /** `file`: the database's path, next to which the run's checkpoints go (none when absent). */
  constructor(
    private readonly db: Database.Database,
    private readonly file?: string,
  ) {
    this.insertIteration = db.prepare(
      'INSERT INTO iterations (run_id, iteration, reward_mean, success_rate, metrics_json, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.insertTrajectory = db.prepare(
      `INSERT INTO trajectories (run_id, iteration, group_index, index_in_group, task_id, reward, advantage, success, public_pass,
         private_pass, termination, policy_version, num_turns, outcome_json, excluded) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertTurn = db.prepare(
      `INSERT INTO turns (trajectory_id, turn_index, action_text, action_json, observation_text, observation_json, behaviour_logprob, policy_json)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertEvaluation = db.prepare(
      `INSERT INTO evaluations (run_id, iteration, episodes, successes, success_rate, mean_actions, public_pass_rate, private_pass_rate,
         reward_mean, seed, policy_version, greedy_success_rate, metrics_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertTokenStats = db.prepare(
      'INSERT INTO token_stats (trajectory_id, positions, max_abs_mismatch, max_abs_log_ratio, max_kl, max_abs_reverse_kl, data) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.heartbeat = db.prepare('UPDATE runs SET heartbeat_at = ? WHERE id = ?');
    this.insertJudge = db.prepare(
      `INSERT INTO judge_exchanges (run_id, iteration, group_index, cache_key, request_json, answer_text, error, scores_json, latency_ms, tokens, tries, cached)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const cached = db.prepare('SELECT answer_text AS answer FROM judge_exchanges WHERE cache_key = ? AND error IS NULL AND answer_text IS NOT NULL LIMIT 1');
    this.judgeCache = { get: (key) => (cached.get(key) as { answer: string } | undefined)?.answer };
    this.writeIteration = db.transaction((record: IterationRecord) => {
      const runId = this.runId;
      const m = record.metrics;
      const at = now();
      this.insertIteration.run(runId, m.iteration, m.rewardMean, m.successRate, JSON.stringify(m), at);
      for (const t of record.trajectories) {
        const { lastInsertRowid } = this.insertTrajectory.run(
          runId,
          m.iteration,
          t.group,
          t.indexInGroup,
          t.taskId,
          t.outcome.reward,
          t.advantage,
          t.outcome.success ? 1 : 0,
          t.outcome.publicPass ? 1 : 0,
          t.outcome.privatePass ? 1 : 0,
          t.termination,
          t.policyVersion,
          t.turns.length,
          JSON.stringify(t.outcome),
          t.excluded ?? null,
        );
        for (const turn of t.turns) {
          this.insertTurn.run(
            lastInsertRowid,
            turn.index,
            turn.actionText,
            JSON.stringify(turn.action),
            turn.observation.text,
            JSON.stringify(turn.observation.data),
            turn.policy.behaviourLogprob,
            JSON.stringify(turn.policy),
          );
        }
        if (t.tokenStats) {
          const e = encodeTokenStats(t.tokenStats, t.turns);
          this.insertTokenStats.run(
            lastInsertRowid,
            e.positions,
            e.maxAbsMismatch ?? null,
            e.maxAbsLogRatio ?? null,
            e.maxKl ?? null,
            e.maxAbsReverseKl ?? null,
            e.data,
          );
        }
      }
      for (const x of record.judge ?? []) {
        this.insertJudge.run(
          runId,
          m.iteration,
          x.group,
          x.key,
          x.request,
          x.answer ?? null,
          x.error ?? null,
          x.scores ? JSON.stringify(x.scores) : null,
          x.latencyMs,
          x.tokens,
          x.tries,
          x.cached ? 1 : 0,
        );
      }
      if (record.evaluation) this.addEvaluation(record.evaluation, at);
      this.heartbeat.run(at, runId);
    });
  }

  get runId(): number {
    if (this.id === undefined) throw new Error('RunWriter: begin() was not called');
    return this.id;
  }

  /** Continues stored run `runId` (prepareResume has dropped what followed its resume point). */
  attach(runId: number): this {
    this.id = runId;
    return this;
  }

  /** The software and machine behind the run, with what it computes on. */
  private runtimeOf(start: RunStart): RuntimeInfo {
    this.runtime = {
      ...runtimeInfo(this.db, start.compute),
      ...(start.computeReason ? { computeReason: start.computeReason } : {}),
      ...(start.baseWeights ? { baseWeights: start.baseWeights } : {}),
      ...(start.environment ? { environment: start.environment } : {}),
      ...(start.teacher ? { teacher: start.teacher } : {}),
    };
    return this.runtime;
  }

  folders(): RunFolders {
    return this.file ? { checkpoint: checkpointDirFor(this.file, this.runId), resume: resumeDirFor(this.file, this.runId) } : {};
  }

  resume(start: RunStart): void {
    const runtime = this.runtimeOf(start);
    const at = now();
    this.db
      .prepare("UPDATE runs SET status = 'running', error = NULL, finished_at = NULL, runtime_json = ?, pid = ?, host = ?, heartbeat_at = ? WHERE id = ?")
      .run(JSON.stringify(runtime), process.pid, os.hostname(), at, this.runId);
  }

  /** Stores a new run; `fork`: the run and iteration it was forked from (its iterations follow that one). */
  begin(config: RunConfig, start: RunStart, fork?: { readonly parentId: number; readonly at: number }): void {
    const runtime = this.runtimeOf(start);
    const at = now();
    const { lastInsertRowid } = this.db
      .prepare(
        `INSERT INTO runs (name, status, env, policy, method, seed, iterations_planned, config_json, runtime_json, created_at, pid, host, heartbeat_at,
           parent_run_id, fork_iteration)
         VALUES (?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        config.name,
        config.env,
        config.policy,
        config.method,
        config.seed,
        config.iterations,
        JSON.stringify(config),
        JSON.stringify(runtime),
        at,
        process.pid,
        os.hostname(),
        at,
        fork?.parentId ?? null,
        fork?.at ?? null,
      );
    this.id = Number(lastInsertRowid);
    // run ids are reused after the newest run is deleted: resume points left by a deleted run of this id
    // are not this run's (a resume or a fork must never continue from them)
    if (this.file) fs.rmSync(resumeDirFor(this.file, this.id), { recursive: true, force: true });
  }

  private addEvaluation(e: EvaluationResult, at: string): void {
    this.insertEvaluation.run(
      this.runId,
      e.iteration,
      e.episodes,
      e.successes,
      e.successRate,
      e.meanActions,
      e.publicPassRate,
      e.privatePassRate,
      e.rewardMean,
      e.seed,
      e.policyVersion,
      e.greedySuccessRate ?? null,
      evaluationExtras(e),
      at,
    );
  }

  evaluation(result: EvaluationResult): void {
    this.addEvaluation(result, now());
  }

  iteration(record: IterationRecord): void {
    this.writeIteration(record);
  }

  end(status: RunStatus, info: RunEnd): void {
    if (this.id === undefined) return;
    this.db
      .prepare('UPDATE runs SET status = ?, error = ?, finished_at = ?, wall_ms = ? WHERE id = ?')
      .run(status, info.error ?? null, now(), info.wallMs, this.id);
  }
}

/** Records a run as failed with the reason, if it is still marked running. Returns whether it changed. */
export function markRunFailed(db: Database.Database, runId: number, reason: string): boolean {
  return db.prepare("UPDATE runs SET status = 'failed', error = ?, finished_at = ? WHERE id = ? AND status = 'running'").run(reason, now(), runId).changes > 0;
}

/** Deletes a run and everything stored under it, in one transaction. */
export function deleteRun(db: Database.Database, runId: number): boolean {
  const deleted = db.transaction(() => {
    db.prepare('DELETE FROM turns WHERE trajectory_id IN (SELECT id FROM trajectories WHERE run_id = ?)').run(runId);
    db.prepare('DELETE FROM trajectories WHERE run_id = ?').run(runId);
    db.prepare('DELETE FROM evaluations WHERE run_id = ?').run(runId);
    db.prepare('DELETE FROM iterations WHERE run_id = ?').run(runId);
    return db.prepare('DELETE FROM runs WHERE id = ?').run(runId).changes > 0;
  })();
  // its kept resume points (one per checkpointEvery iterations, a model's weights each) go with it; its
  // final checkpoint stays: other runs may start from it (--init)
  if (deleted && db.name && db.name !== ':memory:') fs.rmSync(resumeDirFor(db.name, runId), { recursive: true, force: true });
  return deleted;
}

/**
 * Marks runs of this host whose process is gone as failed: a run killed with SIGKILL cannot record its
 * own end. Returns how many were marked.
 */
export function markOrphanedRuns(db: Database.Database, isAlive: (pid: number) => boolean = pidAlive): number {
  const rows = db.prepare("SELECT id, pid FROM runs WHERE status = 'running' AND host = ?").all(os.hostname()) as { id: number; pid: number | null }[];
  const mark = db.prepare("UPDATE runs SET status = 'failed', error = ?, finished_at = ? WHERE id = ? AND status = 'running'");
  let n = 0;
  for (const r of rows) {
    if (r.pid !== null && r.pid !== process.pid && !isAlive(r.pid)) {
      mark.run(
        `the process that ran it (pid ${r.pid}) exited without finishing the run (killed or crashed); iterations stored before that are complete`,
        now(),
        r.id,
      );
      n++;
    }
  }
  return n;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  // A killed process whose parent has not reaped it yet (a zombie) still answers signal 0.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (macOS): trust the signal
  }
}
