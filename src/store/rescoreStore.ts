// The rows of re-scores and trajectory edits (migration 7): written in one transaction each, read back
// for the CLI, the host's report and the inspector. The trajectories and turns tables are only read.
import type Database from 'better-sqlite3';
import type { RescoreItem, RescoreRecord, RescoreReport, RescoreSummary, RewardSource, Score, TrajectoryEdit, TrajectoryRescores } from '../shared/rescore';

/** A trajectory's stored row as a re-score reads it, with its turns' texts. */
export interface StoredEpisode {
  readonly id: number;
  readonly runId: number;
  readonly iteration: number;
  readonly group: number;
  readonly indexInGroup: number;
  readonly taskId: string;
  readonly old: Score;
  readonly turns: readonly { readonly actionText: string; readonly observationText: string }[];
}

type Cell = string | number | bigint | null;
const flag = (x: Cell | undefined): boolean => Number(x) === 1;

const EPISODE_COLUMNS = 'id, run_id, iteration, group_index, index_in_group, task_id, reward, success, public_pass, private_pass';

function episodeOf(db: Database.Database, r: Record<string, Cell>): StoredEpisode {
  const turns = db.prepare('SELECT action_text, observation_text FROM turns WHERE trajectory_id = ? ORDER BY turn_index').all(r.id) as {
    action_text: Cell;
    observation_text: Cell;
  }[];
  return {
    id: Number(r.id),
    runId: Number(r.run_id),
    iteration: Number(r.iteration),
    group: Number(r.group_index),
    indexInGroup: Number(r.index_in_group),
    taskId: String(r.task_id),
    old: { reward: Number(r.reward), success: flag(r.success), publicPass: flag(r.public_pass), privatePass: flag(r.private_pass) },
    turns: turns.map((t) => ({ actionText: String(t.action_text), observationText: String(t.observation_text) })),
  };
}

/** A run's trajectories in iterations [from, to], in stored order. */
export function storedEpisodes(db: Database.Database, runId: number, from: number, to: number): StoredEpisode[] {
  const rows = db
    .prepare(`SELECT ${EPISODE_COLUMNS} FROM trajectories WHERE run_id = ? AND iteration BETWEEN ? AND ? ORDER BY iteration, group_index, index_in_group`)
    .all(runId, from, to) as Record<string, Cell>[];
  return rows.map((r) => episodeOf(db, r));
}

export function storedEpisode(db: Database.Database, trajectoryId: number): StoredEpisode | undefined {
  const r = db.prepare(`SELECT ${EPISODE_COLUMNS} FROM trajectories WHERE id = ?`).get(trajectoryId) as Record<string, Cell> | undefined;
  return r ? episodeOf(db, r) : undefined;
}

/** The first and last iteration with stored trajectories (null when the run has none). */
export function iterationBounds(db: Database.Database, runId: number): { from: number; to: number } | null {
  const r = db.prepare('SELECT min(iteration) AS lo, max(iteration) AS hi FROM trajectories WHERE run_id = ?').get(runId) as {
    lo: number | null;
    hi: number | null;
  };
  return r.lo === null || r.hi === null ? null : { from: r.lo, to: r.hi };
}

/** One trajectory's new score (null with an error when it could not be scored), with the verifier's details. */
export interface ScoredItem extends RescoreItem {
  readonly details: Readonly<Record<string, unknown>> | null;
}

const scoreCells = (s: Score | null): [number | null, number | null, number | null, number | null] =>
  s ? [s.reward, s.success ? 1 : 0, s.publicPass ? 1 : 0, s.privatePass ? 1 : 0] : [null, null, null, null];

/** Stores a finished re-score and its results in one transaction; returns its id. */
export function insertRescore(
  db: Database.Database,
  r: Omit<RescoreRecord, 'id' | 'summary' | 'createdAt'> & { readonly summary: RescoreSummary; readonly items: readonly ScoredItem[] },
): number {
  return db
    .transaction(() => {
      const id = Number(
        db
          .prepare(
            `INSERT INTO rescores (run_id, reward_file, reward_sha256, reward_label, iteration_from, iteration_to, trajectory_id, created_at, wall_ms, summary_json)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            r.runId,
            r.reward.file,
            r.reward.sha256,
            r.reward.label,
            r.iterationFrom,
            r.iterationTo,
            r.trajectoryId,
            new Date().toISOString(),
            r.wallMs,
            JSON.stringify(r.summary),
          ).lastInsertRowid,
      );
      const row = db.prepare(
        'INSERT INTO rescore_results (rescore_id, trajectory_id, reward, success, public_pass, private_pass, details_json, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      );
      for (const it of r.items) row.run(id, it.trajectoryId, ...scoreCells(it.new), it.details ? JSON.stringify(it.details) : null, it.error);
      return id;
    })
    .immediate();
}

const scoreOf = (r: Record<string, Cell>): Score | null =>
  r.reward === null ? null : { reward: Number(r.reward), success: flag(r.success), publicPass: flag(r.public_pass), privatePass: flag(r.private_pass) };

const sourceOf = (r: Record<string, Cell>): RewardSource => ({
  file: r.reward_file === null ? null : String(r.reward_file),
  sha256: r.reward_sha256 === null ? null : String(r.reward_sha256),
  label: String(r.reward_label),
});

/** A stored re-score with every trajectory's old and new score; undefined when there is none with that id. */
export function rescoreReport(db: Database.Database, rescoreId: number): RescoreReport | undefined {
  const r = db.prepare('SELECT * FROM rescores WHERE id = ?').get(rescoreId) as Record<string, Cell> | undefined;
  if (!r) return undefined;
  const rows = db
    .prepare(
      `SELECT x.trajectory_id, x.reward, x.success, x.public_pass, x.private_pass, x.error,
              t.iteration, t.group_index, t.index_in_group, t.task_id, t.reward AS old_reward, t.success AS old_success,
              t.public_pass AS old_public, t.private_pass AS old_private
       FROM rescore_results x JOIN trajectories t ON t.id = x.trajectory_id WHERE x.rescore_id = ? ORDER BY t.iteration, t.group_index, t.index_in_group`,
    )
    .all(rescoreId) as Record<string, Cell>[];
  const items: RescoreItem[] = rows.map((x) => ({
    trajectoryId: Number(x.trajectory_id),
    iteration: Number(x.iteration),
    group: Number(x.group_index),
    indexInGroup: Number(x.index_in_group),
    taskId: String(x.task_id),
    old: { reward: Number(x.old_reward), success: flag(x.old_success), publicPass: flag(x.old_public), privatePass: flag(x.old_private) },
    new: scoreOf(x),
    error: x.error === null ? null : String(x.error),
  }));
  return {
    id: Number(r.id),
    runId: Number(r.run_id),
    reward: sourceOf(r),
    iterationFrom: Number(r.iteration_from),
    iterationTo: Number(r.iteration_to),
    trajectoryId: r.trajectory_id === null ? null : Number(r.trajectory_id),
    createdAt: String(r.created_at),
    wallMs: Number(r.wall_ms),
    summary: JSON.parse(String(r.summary_json)) as RescoreSummary,
    items,
  };
}

/** Stores an edited final answer with its score; returns the edit. */
export function insertEdit(
  db: Database.Database,
  e: Omit<TrajectoryEdit, 'id' | 'createdAt'> & { readonly details: Readonly<Record<string, unknown>> | null },
): TrajectoryEdit {
  const createdAt = new Date().toISOString();
  const id = Number(
    db
      .prepare(
        `INSERT INTO trajectory_edits (trajectory_id, turn_index, action_text, reward_file, reward_sha256, reward_label, reward, success, public_pass, private_pass,
           details_json, error, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        e.trajectoryId,
        e.turnIndex,
        e.actionText,
        e.reward.file,
        e.reward.sha256,
        e.reward.label,
        ...scoreCells(e.score),
        e.details ? JSON.stringify(e.details) : null,
        e.error,
        createdAt,
      ).lastInsertRowid,
  );
  return { id, trajectoryId: e.trajectoryId, turnIndex: e.turnIndex, actionText: e.actionText, reward: e.reward, score: e.score, error: e.error, createdAt };
}

/** A trajectory's re-scores (newest first) and edits, for the inspector. */
export function trajectoryRescores(db: Database.Database, trajectoryId: number): TrajectoryRescores {
  const rescores = (
    db
      .prepare(
        `SELECT r.id, r.reward_file, r.reward_sha256, r.reward_label, r.created_at, x.reward, x.success, x.public_pass, x.private_pass, x.error
         FROM rescore_results x JOIN rescores r ON r.id = x.rescore_id WHERE x.trajectory_id = ? ORDER BY r.id DESC LIMIT 50`,
      )
      .all(trajectoryId) as Record<string, Cell>[]
  ).map((r) => ({
    rescoreId: Number(r.id),
    reward: sourceOf(r),
    createdAt: String(r.created_at),
    score: scoreOf(r),
    error: r.error === null ? null : String(r.error),
  }));
  const edits = (
    db.prepare('SELECT * FROM trajectory_edits WHERE trajectory_id = ? ORDER BY id DESC LIMIT 50').all(trajectoryId) as Record<string, Cell>[]
  ).map((r): TrajectoryEdit => ({
    id: Number(r.id),
    trajectoryId: Number(r.trajectory_id),
    turnIndex: Number(r.turn_index),
    actionText: String(r.action_text),
    reward: sourceOf(r),
    score: scoreOf(r),
    error: r.error === null ? null : String(r.error),
    createdAt: String(r.created_at),
  }));
  return { rescores, edits };
}
