// Queries over the run database, shared by the CLI and (later) the backend process.
import type Database from 'better-sqlite3';
import { methodLabel, storedAlgorithm } from '../shared/algorithm';
import type { RunConfig } from '../shared/runConfig';
import type { HealthFinding } from '../shared/health/findings';
import { runFindings } from './healthEpisodes';
import type { JudgeExchangeRecord, Page, SharedTask, TrajectoryDetail, TrajectorySummary } from '../shared/protocol/backendProtocol';
import {
  EVALUATION_EXTRAS,
  taskEvaluations,
  type TaskEvaluation,
  type EvaluationResult,
  type IterationMetrics,
  type RunStatus,
  type RunSummary,
  type RuntimeInfo,
} from '../shared/types';

interface RunRow {
  id: number;
  name: string;
  status: RunStatus;
  env: string;
  policy: string;
  method: string;
  seed: number;
  iterations_planned: number;
  iterations_done: number;
  latest_reward: number | null;
  created_at: string;
  finished_at: string | null;
  error: string | null;
  config_json: string;
  parent_run_id: number | null;
  fork_iteration: number | null;
}

const RUN_COLUMNS = `r.id, r.name, r.status, r.env, r.policy, r.method, r.seed, r.iterations_planned, r.created_at, r.finished_at, r.error, r.config_json, r.parent_run_id, r.fork_iteration,
  coalesce((SELECT max(iteration) FROM iterations i WHERE i.run_id = r.id), r.fork_iteration, 0) AS iterations_done,
  (SELECT reward_mean FROM iterations i WHERE i.run_id = r.id ORDER BY iteration DESC LIMIT 1) AS latest_reward`;

interface TrajRow {
  id: number;
  iteration: number;
  group_index: number;
  index_in_group: number;
  task_id: string;
  reward: number;
  advantage: number;
  success: number;
  public_pass: number;
  private_pass: number;
  termination: string;
  num_turns: number;
  excluded: string | null;
}

const TRAJ_COLUMNS =
  'id, iteration, group_index, index_in_group, task_id, reward, advantage, success, public_pass, private_pass, termination, num_turns, excluded';

// SQLite keeps whatever a column is given (a hand-edited or imported database may hold text in a
// number column): the records that leave the reader have the types they declare.
type Cell = string | number | bigint | null;
const num = (x: Cell): number => Number(x);
const str = (x: Cell): string => String(x);
const optStr = (x: Cell | undefined): string | null => (x === null || x === undefined ? null : String(x));

/** The stored extras of an evaluation: known keys with finite numbers only (the column may hold anything). */
function evaluationExtras(json: Cell | undefined): Partial<Record<(typeof EVALUATION_EXTRAS)[number], number>> & { perTask?: TaskEvaluation[] } {
  if (typeof json !== 'string') return {};
  try {
    const o = JSON.parse(json) as Record<string, unknown>;
    const perTask = taskEvaluations(o.perTask);
    return {
      ...Object.fromEntries(EVALUATION_EXTRAS.filter((k) => typeof o[k] === 'number' && Number.isFinite(o[k])).map((k) => [k, o[k] as number])),
      ...(perTask ? { perTask } : {}),
    };
  } catch {
    return {};
  }
}

function toTrajectorySummary(r: TrajRow): TrajectorySummary {
  return {
    id: r.id,
    iteration: num(r.iteration),
    group: num(r.group_index),
    indexInGroup: num(r.index_in_group),
    taskId: str(r.task_id),
    reward: num(r.reward),
    advantage: num(r.advantage),
    success: r.success === 1,
    publicPass: r.public_pass === 1,
    privatePass: r.private_pass === 1,
    termination: str(r.termination),
    turns: num(r.num_turns),
    ...(r.excluded !== null && r.excluded !== undefined ? { excluded: str(r.excluded) } : {}),
  };
}

/** The honest method name from a stored config (any release's shape; a corrupt one gives the bare method). */
function labelOf(method: string, configJson: Cell): string {
  try {
    return methodLabel(method, storedAlgorithm(JSON.parse(str(configJson))));
  } catch {
    return method;
  }
}

function toSummary(r: RunRow): RunSummary {
  return {
    id: r.id,
    name: str(r.name),
    status: str(r.status) as RunStatus,
    env: str(r.env),
    policy: str(r.policy),
    method: str(r.method),
    methodLabel: labelOf(str(r.method), r.config_json),
    seed: num(r.seed),
    iterationsPlanned: num(r.iterations_planned),
    iterationsDone: num(r.iterations_done),
    latestRewardMean: r.latest_reward === null ? null : num(r.latest_reward),
    createdAt: str(r.created_at),
    finishedAt: optStr(r.finished_at),
    error: optStr(r.error),
    ...(r.fork_iteration !== null && r.fork_iteration !== undefined
      ? { forkedFrom: { runId: r.parent_run_id === null ? null : num(r.parent_run_id), iteration: num(r.fork_iteration) } }
      : {}),
  };
}

export interface RunDetail {
  readonly summary: RunSummary;
  readonly config: RunConfig;
  readonly runtime: RuntimeInfo;
  readonly iterations: IterationMetrics[];
  readonly evaluations: EvaluationResult[];
  readonly trajectories: number;
  readonly turns: number;
  readonly wallMs: number | null;
}

export class RunReader {
  constructor(private readonly db: Database.Database) {}

  listRuns(limit = 1000): RunSummary[] {
    return (this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs r ORDER BY r.id DESC LIMIT ?`).all(limit) as RunRow[]).map(toSummary);
  }

  /** A run by numeric id, or the newest run with that name. */
  findRun(ref: string): RunSummary | undefined {
    const row = /^\d+$/.test(ref)
      ? this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.id = ?`).get(Number(ref))
      : this.db.prepare(`SELECT ${RUN_COLUMNS} FROM runs r WHERE r.name = ? ORDER BY r.id DESC LIMIT 1`).get(ref);
    return row ? toSummary(row as RunRow) : undefined;
  }

  iterations(runId: number): IterationMetrics[] {
    return (this.db.prepare('SELECT metrics_json FROM iterations WHERE run_id = ? ORDER BY iteration').all(runId) as { metrics_json: string }[]).map(
      (r) => JSON.parse(r.metrics_json) as IterationMetrics,
    );
  }

  evaluations(runId: number): EvaluationResult[] {
    const rows = this.db
      .prepare(
        `SELECT iteration, episodes, successes, success_rate, mean_actions, public_pass_rate, private_pass_rate, reward_mean, seed, policy_version, greedy_success_rate,
           metrics_json FROM evaluations WHERE run_id = ? ORDER BY iteration`,
      )
      .all(runId) as Record<string, Cell>[];
    const n = (x: Cell | undefined): number => num(x ?? 0);
    return rows.map((r) => ({
      iteration: n(r.iteration),
      episodes: n(r.episodes),
      successes: n(r.successes),
      successRate: n(r.success_rate),
      meanActions: n(r.mean_actions),
      publicPassRate: n(r.public_pass_rate),
      privatePassRate: n(r.private_pass_rate),
      rewardMean: n(r.reward_mean),
      seed: n(r.seed),
      policyVersion: n(r.policy_version),
      ...(r.greedy_success_rate !== null && r.greedy_success_rate !== undefined ? { greedySuccessRate: n(r.greedy_success_rate) } : {}),
      ...evaluationExtras(r.metrics_json),
    }));
  }

  /**
   * Iterations in order, one page at a time (the tree and the dashboard page through long runs).
   * Iterations are stored consecutively (one transaction each, in order) from 1, or from N + 1 for a run
   * forked after N, so the page seeks by key (`offset`: the iteration the page follows) and the total is
   * max - min + 1: both through the primary-key index, whatever the size.
   */
  iterationsPage(runId: number, offset: number, limit: number): Page<IterationMetrics> {
    const total = (this.db.prepare('SELECT coalesce(max(iteration) - min(iteration) + 1, 0) AS n FROM iterations WHERE run_id = ?').get(runId) as { n: number })
      .n;
    const items = (
      this.db.prepare('SELECT metrics_json FROM iterations WHERE run_id = ? AND iteration > ? ORDER BY iteration LIMIT ?').all(runId, offset, limit) as {
        metrics_json: string;
      }[]
    ).map((r) => JSON.parse(r.metrics_json) as IterationMetrics);
    return { items, total, offset };
  }

  /** Trajectories of one iteration by group and index (uses the trajectories_by_iteration index). */
  trajectoriesPage(runId: number, iteration: number, offset: number, limit: number): Page<TrajectorySummary> {
    const total = (this.db.prepare('SELECT count(*) AS n FROM trajectories WHERE run_id = ? AND iteration = ?').get(runId, iteration) as { n: number }).n;
    const rows = this.db
      .prepare(`SELECT ${TRAJ_COLUMNS} FROM trajectories WHERE run_id = ? AND iteration = ? ORDER BY group_index, index_in_group LIMIT ? OFFSET ?`)
      .all(runId, iteration, limit, offset) as TrajRow[];
    return { items: rows.map(toTrajectorySummary), total, offset };
  }

  trajectory(id: number): TrajectoryDetail | undefined {
    const row = this.db.prepare(`SELECT ${TRAJ_COLUMNS}, run_id, outcome_json FROM trajectories WHERE id = ?`).get(id) as
      (TrajRow & { run_id: number; outcome_json: string }) | undefined;
    if (!row) return undefined;
    const turns = this.db
      .prepare(
        'SELECT turn_index, action_text, action_json, observation_text, observation_json, policy_json FROM turns WHERE trajectory_id = ? ORDER BY turn_index',
      )
      .all(id) as { turn_index: number; action_text: string; action_json: string; observation_text: string; observation_json: string; policy_json: string }[];
    const judge = this.judgeExchange(row.run_id, num(row.iteration), num(row.group_index));
    return {
      ...toTrajectorySummary(row),
      ...(judge ? { judge } : {}),
      runId: row.run_id,
      outcome: JSON.parse(row.outcome_json) as Record<string, unknown>,
      turnList: turns.map((t) => ({
        index: num(t.turn_index),
        actionText: str(t.action_text),
        action: JSON.parse(t.action_json) as unknown,
        observationText: str(t.observation_text),
        observation: JSON.parse(t.observation_json) as Record<string, unknown>,
        policy: JSON.parse(t.policy_json) as Record<string, unknown>,
      })),
    };
  }

  /** A group's exchange with the judge (reward.judge), if it had one. */
  judgeExchange(runId: number, iteration: number, group: number): JudgeExchangeRecord | undefined {
    const r = this.db
      .prepare(
        'SELECT request_json, answer_text, error, scores_json, latency_ms, tokens, tries, cached FROM judge_exchanges WHERE run_id = ? AND iteration = ? AND group_index = ?',
      )
      .get(runId, iteration, group) as Record<string, Cell> | undefined;
    if (!r) return undefined;
    return {
      request: str(r.request_json ?? ''),
      ...(r.answer_text !== null && r.answer_text !== undefined ? { answer: str(r.answer_text) } : {}),
      ...(r.error !== null && r.error !== undefined ? { error: str(r.error) } : {}),
      ...(r.scores_json !== null && r.scores_json !== undefined ? { scores: str(r.scores_json) } : {}),
      latencyMs: num(r.latency_ms ?? 0),
      tokens: num(r.tokens ?? 0),
      tries: num(r.tries ?? 0),
      cached: num(r.cached ?? 0) === 1,
    };
  }

  /**
   * The newest trajectory of a run that failed (success not 1) and ran code in a turn (an action
   * {kind: "tool", args: {code: string}}, what linking.codeOf reads): what Replay Episode opens when no
   * tree row is given. Newest first by id, so the scan stops at the first match; a turn whose action
   * is not JSON (a hand-edited database) counts as no code.
   */
  latestFailedWithCode(runId: number): TrajectorySummary | undefined {
    const row = this.db
      .prepare(
        `SELECT ${TRAJ_COLUMNS} FROM trajectories t WHERE t.run_id = ? AND t.success IS NOT 1 AND EXISTS (
           SELECT 1 FROM turns u WHERE u.trajectory_id = t.id
             AND CASE WHEN json_valid(u.action_json) THEN json_extract(u.action_json, '$.kind') = 'tool' AND json_type(u.action_json, '$.args.code') = 'text' ELSE 0 END
         ) ORDER BY t.id DESC LIMIT 1`,
      )
      .get(runId) as TrajRow | undefined;
    return row ? toTrajectorySummary(row) : undefined;
  }

  /** A run's stored config as data (undefined: no such run or unreadable JSON). */
  config(runId: number): unknown {
    const row = this.db.prepare('SELECT config_json FROM runs WHERE id = ?').get(runId) as { config_json: string } | undefined;
    try {
      return row ? (JSON.parse(row.config_json) as unknown) : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Tasks every run of `runIds` sampled in training (Compare Runs), with each run's episodes, mean
   * reward, success rate and latest trajectory of the task; the tasks whose mean rewards differ most
   * first (then by task id), at most `limit`. One grouped scan of the runs' trajectories (run_id leads
   * the trajectories_by_iteration index).
   */
  sharedTasks(runIds: readonly number[], limit: number): SharedTask[] {
    const ids = [...new Set(runIds)];
    if (ids.length < 2) return [];
    const rows = this.db
      .prepare(
        `SELECT task_id, run_id, count(*) AS n, avg(reward) AS reward, avg(success) AS success, max(id) AS last_id
         FROM trajectories WHERE run_id IN (${ids.map(() => '?').join(', ')}) GROUP BY task_id, run_id`,
      )
      .all(...ids) as { task_id: Cell; run_id: number; n: number; reward: number; success: number; last_id: number }[];
    const byTask = new Map<string, Map<number, SharedTask['runs'][number]>>();
    for (const r of rows) {
      const task = str(r.task_id);
      const runs = byTask.get(task) ?? new Map<number, SharedTask['runs'][number]>();
      runs.set(num(r.run_id), {
        runId: num(r.run_id),
        episodes: num(r.n),
        rewardMean: num(r.reward),
        successRate: num(r.success),
        trajectoryId: num(r.last_id),
      });
      byTask.set(task, runs);
    }
    const shared: SharedTask[] = [];
    for (const [taskId, runs] of byTask) if (ids.every((id) => runs.has(id))) shared.push({ taskId, runs: ids.map((id) => runs.get(id)!) });
    const spread = (t: SharedTask): number => Math.max(...t.runs.map((r) => r.rewardMean)) - Math.min(...t.runs.map((r) => r.rewardMean));
    return shared.sort((a, b) => spread(b) - spread(a) || (a.taskId < b.taskId ? -1 : a.taskId > b.taskId ? 1 : 0)).slice(0, limit);
  }

  /** Mean of each per-trajectory metric (an imported reward's extras, in outcome.details.metrics) over a run. */
  metricMeans(runId: number): Record<string, number> {
    const rows = this.db
      .prepare(
        `SELECT m.key AS key, avg(m.value) AS mean FROM trajectories t, json_each(t.outcome_json, '$.details.metrics') m
                WHERE t.run_id = ? AND m.type IN ('integer', 'real') GROUP BY m.key ORDER BY m.key`,
      )
      .all(runId) as { key: string; mean: number }[];
    return Object.fromEntries(rows.map((r) => [r.key, r.mean]));
  }

  /** Files an imported run was read from, with the malformed lines skipped in them. */
  importedFiles(runId: number): { kind: string; file: string; lines: number; malformed: number }[] {
    return this.db.prepare('SELECT kind, file, lines, malformed FROM import_files WHERE run_id = ? ORDER BY kind, CAST(file AS INTEGER)').all(runId) as {
      kind: string;
      file: string;
      lines: number;
      malformed: number;
    }[];
  }

  /** What the run's stored iterations show going wrong (issue 52), each with the episodes that show it best. */
  findings(runId: number): HealthFinding[] {
    return runFindings(this.db, runId, this.iterations(runId), this.config(runId));
  }

  detail(runId: number): RunDetail | undefined {
    const summary = this.findRun(String(runId));
    if (!summary) return undefined;
    const row = this.db.prepare('SELECT config_json, runtime_json, wall_ms FROM runs WHERE id = ?').get(runId) as {
      config_json: string;
      runtime_json: string;
      wall_ms: number | null;
    };
    const count = (sql: string): number => (this.db.prepare(sql).get(runId) as { n: number }).n;
    return {
      summary,
      config: JSON.parse(row.config_json) as RunConfig,
      runtime: JSON.parse(row.runtime_json) as RuntimeInfo,
      iterations: this.iterations(runId),
      evaluations: this.evaluations(runId),
      trajectories: count('SELECT count(*) AS n FROM trajectories WHERE run_id = ?'),
      turns: count('SELECT count(*) AS n FROM turns t JOIN trajectories j ON j.id = t.trajectory_id WHERE j.run_id = ?'),
      wallMs: row.wall_ms,
    };
  }
}
