// Writes imported runs (verl dumps) into the store. A run imported from a folder is found again by its
// `source`, so a re-import continues it; `import_files` records how many bytes and lines of each file
// are in, so only what is new is read. Each step (one dump file's new lines) is one transaction:
// its iteration metrics, its trajectories and turns, the group advantages of the members it joined,
// and the file's progress, so a killed import leaves whole steps and the next one resumes exactly.
import type Database from 'better-sqlite3';
import * as os from 'node:os';
import type { EpisodeOutcome, EvaluationResult, IterationMetrics, RunStatus, RuntimeInfo, TerminationReason } from '../shared/types';
import type { SplitTurn } from './verl/chatTurns';

const now = (): string => new Date().toISOString();

export type ImportKind = 'rollout' | 'validation';

export interface FileProgress {
  readonly bytes: number;
  readonly lines: number;
  readonly malformed: number;
  /** Kind-specific running state (validation: the evaluation's sums). */
  readonly state: Record<string, number>;
}

export const NO_PROGRESS: FileProgress = Object.freeze({ bytes: 0, lines: 0, malformed: 0, state: {} });

export interface ImportedRunInfo {
  readonly name: string;
  readonly env: string;
  readonly policy: string;
  readonly method: string;
  readonly seed: number;
  readonly iterationsPlanned: number;
  readonly config: unknown;
  readonly runtime: RuntimeInfo;
  /** e.g. `verl:/abs/rollout/dir`: how a re-import finds the run. */
  readonly source: string;
}

/** A trajectory row to insert; `group`/`indexInGroup` already assigned by the caller. */
export interface ImportedTrajectory {
  readonly taskId: string;
  readonly group: number;
  readonly indexInGroup: number;
  readonly outcome: EpisodeOutcome;
  readonly termination: TerminationReason;
  readonly policyVersion: number;
  readonly turns: readonly SplitTurn[];
}

/** A member of a step already stored (for appended lines that join its groups). */
export interface StoredMember {
  readonly id: number;
  readonly taskId: string;
  readonly group: number;
  readonly indexInGroup: number;
  readonly reward: number;
  readonly success: boolean;
  readonly publicPass: boolean;
  readonly privatePass: boolean;
  readonly turns: number;
}

export class ImportWriter {
  private readonly st;
  constructor(private readonly db: Database.Database) {
    this.st = {
      findRun: db.prepare('SELECT id FROM runs WHERE source = ? ORDER BY id DESC LIMIT 1'),
      progress: db.prepare('SELECT bytes, lines, malformed, state_json FROM import_files WHERE run_id = ? AND kind = ? AND file = ?'),
      saveProgress: db.prepare(
        `INSERT INTO import_files (run_id, kind, file, bytes, lines, malformed, state_json) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id, kind, file) DO UPDATE SET bytes = excluded.bytes, lines = excluded.lines, malformed = excluded.malformed, state_json = excluded.state_json`,
      ),
      members: db.prepare(
        'SELECT id, task_id, group_index, index_in_group, reward, success, public_pass, private_pass, num_turns FROM trajectories WHERE run_id = ? AND iteration = ?',
      ),
      upsertIteration: db.prepare(
        `INSERT INTO iterations (run_id, iteration, reward_mean, success_rate, metrics_json, created_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id, iteration) DO UPDATE SET reward_mean = excluded.reward_mean, success_rate = excluded.success_rate, metrics_json = excluded.metrics_json`,
      ),
      insertTrajectory: db.prepare(
        `INSERT INTO trajectories (run_id, iteration, group_index, index_in_group, task_id, reward, advantage, success, public_pass,
           private_pass, termination, policy_version, num_turns, outcome_json) VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertTurn: db.prepare(
        `INSERT INTO turns (trajectory_id, turn_index, action_text, action_json, observation_text, observation_json, behaviour_logprob, policy_json)
           VALUES (?, ?, ?, ?, ?, ?, 0, ?)`,
      ),
      setAdvantage: db.prepare('UPDATE trajectories SET advantage = ? WHERE id = ?'),
      upsertEvaluation: db.prepare(
        `INSERT INTO evaluations (run_id, iteration, episodes, successes, success_rate, mean_actions, public_pass_rate, private_pass_rate,
           reward_mean, seed, policy_version, greedy_success_rate, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
         ON CONFLICT (run_id, iteration) DO UPDATE SET episodes = excluded.episodes, successes = excluded.successes, success_rate = excluded.success_rate,
           mean_actions = excluded.mean_actions, public_pass_rate = excluded.public_pass_rate, private_pass_rate = excluded.private_pass_rate, reward_mean = excluded.reward_mean`,
      ),
      planned: db.prepare('UPDATE runs SET iterations_planned = max(iterations_planned, ?), heartbeat_at = ? WHERE id = ?'),
    };
  }

  findRun(source: string): number | undefined {
    return (this.st.findRun.get(source) as { id: number } | undefined)?.id;
  }

  createRun(info: ImportedRunInfo, status: RunStatus): number {
    const at = now();
    const { lastInsertRowid } = this.db
      .prepare(
        `INSERT INTO runs (name, status, env, policy, method, seed, iterations_planned, config_json, runtime_json, created_at, pid, host, heartbeat_at, source)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        info.name,
        status,
        info.env,
        info.policy,
        info.method,
        info.seed,
        info.iterationsPlanned,
        JSON.stringify(info.config),
        JSON.stringify(info.runtime),
        at,
        process.pid,
        os.hostname(),
        at,
        info.source,
      );
    return Number(lastInsertRowid);
  }

  /** Marks the run as being imported by this process (a follow), or as done. */
  setStatus(runId: number, status: RunStatus, error: string | null = null): void {
    const done = status !== 'running';
    this.db
      .prepare('UPDATE runs SET status = ?, error = ?, pid = ?, host = ?, heartbeat_at = ?, finished_at = ? WHERE id = ?')
      .run(status, error, process.pid, os.hostname(), now(), done ? now() : null, runId);
  }

  progress(runId: number, kind: ImportKind, file: string): FileProgress {
    const r = this.st.progress.get(runId, kind, file) as { bytes: number; lines: number; malformed: number; state_json: string } | undefined;
    return r ? { bytes: r.bytes, lines: r.lines, malformed: r.malformed, state: JSON.parse(r.state_json) as Record<string, number> } : NO_PROGRESS;
  }

  /** Trajectories already stored for a step. */
  members(runId: number, step: number): StoredMember[] {
    return (this.st.members.all(runId, step) as Record<string, number | string>[]).map((r) => ({
      id: r.id as number,
      taskId: r.task_id as string,
      group: r.group_index as number,
      indexInGroup: r.index_in_group as number,
      reward: r.reward as number,
      success: r.success === 1,
      publicPass: r.public_pass === 1,
      privatePass: r.private_pass === 1,
      turns: r.num_turns as number,
    }));
  }

  /**
   * One step's new lines in one transaction. `advantages(ids)` is called with the new rows' ids after
   * they are inserted and returns every advantage to set (new rows and the old members of their groups).
   */
  writeStep(
    runId: number,
    file: string,
    metrics: IterationMetrics,
    rows: readonly ImportedTrajectory[],
    advantages: (newIds: readonly number[]) => ReadonlyMap<number, number>,
    progress: FileProgress,
  ): void {
    this.db.transaction(() => {
      const at = now();
      this.st.upsertIteration.run(runId, metrics.iteration, metrics.rewardMean, metrics.successRate, JSON.stringify(metrics), at);
      const ids: number[] = [];
      for (const t of rows) {
        const o = t.outcome;
        const { lastInsertRowid } = this.st.insertTrajectory.run(
          runId,
          metrics.iteration,
          t.group,
          t.indexInGroup,
          t.taskId,
          o.reward,
          o.success ? 1 : 0,
          o.publicPass ? 1 : 0,
          o.privatePass ? 1 : 0,
          t.termination,
          t.policyVersion,
          t.turns.length,
          JSON.stringify(o),
        );
        const id = Number(lastInsertRowid);
        ids.push(id);
        const policy = JSON.stringify({ behaviourLogprob: 0, policyVersion: t.policyVersion, imported: 'verl' });
        t.turns.forEach((turn, i) => {
          this.st.insertTurn.run(id, i, turn.actionText, JSON.stringify(turn.action), turn.observationText, JSON.stringify(turn.observation), policy);
        });
      }
      for (const [id, a] of advantages(ids)) this.st.setAdvantage.run(a, id);
      this.saveProgress(runId, 'rollout', file, progress);
      this.st.planned.run(metrics.iteration, at, runId);
    })();
  }

  /** A validation file's evaluation (its running sums are in `progress.state`), with the file's progress. */
  writeEvaluation(runId: number, file: string, e: EvaluationResult, progress: FileProgress): void {
    this.db.transaction(() => {
      this.st.upsertEvaluation.run(
        runId,
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
        now(),
      );
      this.saveProgress(runId, 'validation', file, progress);
    })();
  }

  /** Progress alone (a chunk of malformed lines only). */
  saveProgress(runId: number, kind: ImportKind, file: string, p: FileProgress): void {
    this.st.saveProgress.run(runId, kind, file, p.bytes, p.lines, p.malformed, JSON.stringify(p.state));
  }

  /** Malformed lines recorded over every file of the run. */
  malformedTotal(runId: number): number {
    return (this.db.prepare('SELECT coalesce(sum(malformed), 0) AS n FROM import_files WHERE run_id = ?').get(runId) as { n: number }).n;
  }
}
