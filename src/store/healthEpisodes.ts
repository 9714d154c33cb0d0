// The episodes that show a health finding best (shared/health/findings.ts names which kind): one query
// per kind over the run's stored trajectories within the finding's iterations, at most `limit` ids.
// Read-only, prepared statements; stored JSON may be anything (an imported or hand-edited database),
// so JSON is only read through json_valid guards.
import type Database from 'better-sqlite3';
import { bar } from '../shared/health/healthThresholds';
import { healthContextOf, healthFindings, type EpisodePick, type HealthFinding } from '../shared/health/findings';
import type { IterationMetrics } from '../shared/types';

const IN_RANGE = 'run_id = @run AND iteration BETWEEN @first AND @last';

/** The terminations of an episode that ran out of room or out of steps. */
const CUT = "('context_exhausted', 'turn_cap', 'budget_exhausted')";

/** Per kind: a query of @run, @first, @last and @limit that returns trajectory ids, best first. */
const QUERIES: Readonly<Record<EpisodePick['kind'], string>> = {
  // the latest group whose rewards were all equal, its members in order
  equalGroup: `SELECT t.id FROM trajectories t JOIN (
      SELECT iteration, group_index FROM trajectories WHERE ${IN_RANGE}
      GROUP BY iteration, group_index HAVING count(*) > 1 AND max(reward) - min(reward) < 1e-9
      ORDER BY iteration DESC, group_index LIMIT 1
    ) g ON g.iteration = t.iteration AND g.group_index = t.group_index WHERE t.run_id = @run ORDER BY t.index_in_group LIMIT @limit`,
  longestCut: `SELECT t.id FROM trajectories t LEFT JOIN token_stats s ON s.trajectory_id = t.id
      WHERE ${IN_RANGE} AND t.termination IN ${CUT} ORDER BY coalesce(s.positions, 0) DESC, t.num_turns DESC, t.id DESC LIMIT @limit`,
  longest: `SELECT t.id FROM trajectories t LEFT JOIN token_stats s ON s.trajectory_id = t.id
      WHERE ${IN_RANGE} ORDER BY coalesce(s.positions, 0) DESC, t.num_turns DESC, t.id DESC LIMIT @limit`,
  rewardedPrivateFail: `SELECT id FROM trajectories WHERE ${IN_RANGE} AND private_pass IS NOT 1 ORDER BY reward DESC, public_pass DESC, id DESC LIMIT @limit`,
  highestReward: `SELECT id FROM trajectories WHERE ${IN_RANGE} ORDER BY reward DESC, id DESC LIMIT @limit`,
  worstMismatch: `SELECT t.id FROM trajectories t LEFT JOIN token_stats s ON s.trajectory_id = t.id
      WHERE ${IN_RANGE} ORDER BY coalesce(s.max_abs_mismatch, 0) DESC, t.reward DESC, t.id DESC LIMIT @limit`,
  largestShift: `SELECT t.id FROM trajectories t LEFT JOIN token_stats s ON s.trajectory_id = t.id
      WHERE ${IN_RANGE} ORDER BY coalesce(s.max_abs_log_ratio, s.max_kl, 0) DESC, t.reward DESC, t.id DESC LIMIT @limit`,
  toolFailures: `SELECT t.id FROM trajectories t JOIN turns u ON u.trajectory_id = t.id
      WHERE ${IN_RANGE} AND json_valid(u.observation_json)
        AND (json_extract(u.observation_json, '$.timedOut') = 1 OR json_type(u.observation_json, '$.sandboxError') = 'text'
             OR (json_type(u.observation_json, '$.error') = 'text' AND json_extract(u.observation_json, '$.error') <> 'format'))
      GROUP BY t.id ORDER BY count(*) DESC, t.id DESC LIMIT @limit`,
};

/** The ids of the trajectories that show `pick` best within iterations [first, last] of a run. */
export function pickEpisodes(
  db: Database.Database,
  runId: number,
  pick: EpisodePick,
  iterations: readonly [number, number],
  limit = bar('episodes'),
): number[] {
  const rows = db.prepare(QUERIES[pick.kind]).all({ run: runId, first: iterations[0], last: iterations[1], limit }) as { id: number }[];
  return rows.map((r) => Number(r.id));
}

/** A run's findings with their episodes picked from its stored trajectories. */
export function runFindings(db: Database.Database, runId: number, iterations: readonly IterationMetrics[], config: unknown): HealthFinding[] {
  return healthFindings(iterations, healthContextOf(config)).map((f) => ({ ...f, episodes: pickEpisodes(db, runId, f.pick, f.iterations) }));
}
