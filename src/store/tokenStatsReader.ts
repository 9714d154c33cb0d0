// Queries over the learner's per-token numbers (token_stats): one trajectory's, the worst tokens of a
// trajectory, an iteration or a run, and an iteration's histogram of |train − sampling log-prob|. The
// worst N of many trajectories are found from the per-trajectory maxima (an indexed-free sort over one
// row per trajectory), then only those N trajectories' columns are read.
import type Database from 'better-sqlite3';
import type { WorstToken } from '../shared/protocol/backendProtocol';
import { histogram, tokenRows, worstRows, type TokenRow, type TokenStatsJson, type WorstBy } from '../shared/tokenStatsRows';
import { decodeTokenStats, TokenStatsFormatError, tokenStatsJson } from './tokenStatsCodec';

const MAX_COLUMN: Record<WorstBy, string> = { mismatch: 'max_abs_mismatch', logRatio: 'max_abs_log_ratio', kl: 'max_kl', reverseKl: 'max_abs_reverse_kl' };

export class TokenStatsReader {
  constructor(private readonly db: Database.Database) {}

  /** A trajectory's columns, or undefined when none were stored (not trained on, an older run, or an unreadable row). */
  stats(trajectoryId: number): TokenStatsJson | undefined {
    const row = this.db.prepare('SELECT positions, data FROM token_stats WHERE trajectory_id = ?').get(trajectoryId) as
      { positions: unknown; data: unknown } | undefined;
    if (!row || !(row.data instanceof Uint8Array) || typeof row.positions !== 'number') return undefined;
    try {
      return tokenStatsJson(decodeTokenStats(row.data, row.positions));
    } catch (e) {
      if (e instanceof TokenStatsFormatError) return undefined;
      throw e;
    }
  }

  /** Every generated token of a trajectory with its numbers. */
  rows(trajectoryId: number): TokenRow[] {
    return tokenRows(this.policies(trajectoryId), this.stats(trajectoryId));
  }

  /** The `limit` worst tokens by `by` in a run, one of its iterations, or one trajectory, worst first. */
  worst(o: { runId: number; iteration?: number; trajectoryId?: number; by: WorstBy; limit: number }): WorstToken[] {
    const col = MAX_COLUMN[o.by];
    const where = ['t.run_id = ?', `s.${col} IS NOT NULL`];
    const args: number[] = [o.runId];
    if (o.iteration !== undefined) {
      where.push('t.iteration = ?');
      args.push(o.iteration);
    }
    if (o.trajectoryId !== undefined) {
      where.push('t.id = ?');
      args.push(o.trajectoryId);
    }
    const candidates = this.db
      .prepare(
        `SELECT t.id, t.iteration, t.advantage FROM token_stats s JOIN trajectories t ON t.id = s.trajectory_id WHERE ${where.join(' AND ')} ORDER BY s.${col} DESC LIMIT ?`,
      )
      .all(...args, o.limit) as { id: number; iteration: unknown; advantage: unknown }[];
    const out: WorstToken[] = [];
    for (const c of candidates) {
      for (const r of worstRows(this.rows(c.id), o.by, o.limit)) {
        out.push({ ...r, trajectoryId: c.id, iteration: Number(c.iteration), advantage: finite(c.advantage), by: o.by, value: worstValue(r, o.by) });
      }
    }
    return out.sort((a, b) => b.value - a.value).slice(0, o.limit);
  }

  /** |train − sampling log-prob| of every trained token of an iteration whose mismatch is known, in `bins` bins. */
  mismatchHistogram(runId: number, iteration: number, bins: number): { edges: number[]; counts: number[]; tokens: number; unknown: number } {
    const ids = this.db
      .prepare('SELECT t.id FROM token_stats s JOIN trajectories t ON t.id = s.trajectory_id WHERE t.run_id = ? AND t.iteration = ?')
      .all(runId, iteration) as { id: number }[];
    const values: number[] = [];
    let unknown = 0;
    for (const { id } of ids) {
      for (const r of this.rows(id)) {
        if (!r.trained) continue;
        if (r.mismatch === undefined) unknown += 1;
        else values.push(Math.abs(r.mismatch));
      }
    }
    return { ...histogram(values, bins), tokens: values.length, unknown };
  }

  private policies(trajectoryId: number): { policy: unknown }[] {
    return (this.db.prepare('SELECT policy_json FROM turns WHERE trajectory_id = ? ORDER BY turn_index').all(trajectoryId) as { policy_json: string }[]).map(
      (t) => ({ policy: parse(t.policy_json) }),
    );
  }
}

/** A stored REAL as a number the views can print (a hand-edited row may hold text). */
const finite = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : Number.NaN);

function worstValue(r: TokenRow, by: WorstBy): number {
  if (by === 'mismatch') return Math.abs(r.mismatch!);
  if (by === 'logRatio') return Math.abs(Math.log(r.ratio!));
  if (by === 'reverseKl') return Math.abs(r.reverseKl!);
  return r.kl!;
}

/** A stored JSON cell (untrusted: unreadable counts as nothing). */
function parse(text: unknown): unknown {
  try {
    return typeof text === 'string' ? (JSON.parse(text) as unknown) : undefined;
  } catch {
    return undefined;
  }
}
