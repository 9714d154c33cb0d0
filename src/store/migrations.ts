// Numbered schema migrations, tracked by SQLite's `user_version`. Migration N moves the schema from
// version N-1 to N inside one transaction; a database newer than the code is refused, never touched.
import type Database from 'better-sqlite3';

export interface Migration {
  readonly version: number;
  readonly description: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'runs, iterations, trajectories, turns, evaluations',
    sql: `
      CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
        env TEXT NOT NULL,
        policy TEXT NOT NULL,
        method TEXT NOT NULL,
        seed INTEGER NOT NULL,
        iterations_planned INTEGER NOT NULL,
        config_json TEXT NOT NULL,
        runtime_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        error TEXT,
        pid INTEGER,
        host TEXT
      );
      CREATE TABLE iterations (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        iteration INTEGER NOT NULL,
        reward_mean REAL NOT NULL,
        success_rate REAL NOT NULL,
        metrics_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (run_id, iteration)
      ) WITHOUT ROWID;
      CREATE TABLE trajectories (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL,
        iteration INTEGER NOT NULL,
        group_index INTEGER NOT NULL,
        index_in_group INTEGER NOT NULL,
        task_id TEXT NOT NULL,
        reward REAL NOT NULL,
        advantage REAL NOT NULL,
        success INTEGER NOT NULL,
        public_pass INTEGER NOT NULL,
        private_pass INTEGER NOT NULL,
        termination TEXT NOT NULL,
        policy_version INTEGER NOT NULL,
        num_turns INTEGER NOT NULL,
        outcome_json TEXT NOT NULL,
        FOREIGN KEY (run_id, iteration) REFERENCES iterations(run_id, iteration) ON DELETE CASCADE
      );
      CREATE INDEX trajectories_by_iteration ON trajectories(run_id, iteration, group_index, index_in_group);
      CREATE TABLE turns (
        trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
        turn_index INTEGER NOT NULL,
        action_text TEXT NOT NULL,
        action_json TEXT NOT NULL,
        observation_text TEXT NOT NULL,
        observation_json TEXT NOT NULL,
        behaviour_logprob REAL NOT NULL,
        policy_json TEXT NOT NULL,
        PRIMARY KEY (trajectory_id, turn_index)
      ) WITHOUT ROWID;
      CREATE TABLE evaluations (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        iteration INTEGER NOT NULL,
        episodes INTEGER NOT NULL,
        successes INTEGER NOT NULL,
        success_rate REAL NOT NULL,
        mean_actions REAL NOT NULL,
        public_pass_rate REAL NOT NULL,
        private_pass_rate REAL NOT NULL,
        reward_mean REAL NOT NULL,
        seed INTEGER NOT NULL,
        policy_version INTEGER NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (run_id, iteration)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    description: 'run heartbeats (to tell a live run from one whose process died), run wall time, a runs-by-time index',
    sql: `
      ALTER TABLE runs ADD COLUMN heartbeat_at TEXT;
      ALTER TABLE runs ADD COLUMN wall_ms REAL;
      CREATE INDEX runs_by_created ON runs(created_at);
    `,
  },
  {
    version: 3,
    description: 'greedy-decoding success rate of language-model evaluations',
    sql: `
      ALTER TABLE evaluations ADD COLUMN greedy_success_rate REAL;
    `,
  },
  {
    version: 4,
    description: 'imported runs: where a run came from, and how far each imported file has been read',
    sql: `
      ALTER TABLE runs ADD COLUMN source TEXT;
      CREATE INDEX runs_by_source ON runs(source) WHERE source IS NOT NULL;
      CREATE TABLE import_files (
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        kind TEXT NOT NULL CHECK (kind IN ('rollout', 'validation')),
        file TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        lines INTEGER NOT NULL,
        malformed INTEGER NOT NULL,
        state_json TEXT NOT NULL,
        PRIMARY KEY (run_id, kind, file)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 5,
    description: 'evaluation extras (pass@k, tool calls, greedy episodes) and why a trajectory was left out of its update',
    sql: `
      ALTER TABLE evaluations ADD COLUMN metrics_json TEXT;
      ALTER TABLE trajectories ADD COLUMN excluded TEXT;
    `,
  },
  {
    version: 6,
    description: "each trained trajectory's per-token numbers (tokenStatsCodec.ts) and its largest values, for the worst-token lists",
    sql: `
      CREATE TABLE token_stats (
        trajectory_id INTEGER PRIMARY KEY REFERENCES trajectories(id) ON DELETE CASCADE,
        positions INTEGER NOT NULL,
        max_abs_mismatch REAL,
        max_abs_log_ratio REAL,
        max_kl REAL,
        data BLOB NOT NULL
      );
    `,
  },
  {
    version: 7,
    description: 're-scores of stored trajectories with a reward file, their per-trajectory results, and scored edits of final answers',
    // Stored trajectories are never rewritten: a re-score or an edit is a row of its own beside them.
    sql: `
      CREATE TABLE rescores (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        reward_file TEXT,
        reward_sha256 TEXT,
        reward_label TEXT NOT NULL,
        iteration_from INTEGER NOT NULL,
        iteration_to INTEGER NOT NULL,
        trajectory_id INTEGER,
        created_at TEXT NOT NULL,
        wall_ms REAL NOT NULL,
        summary_json TEXT NOT NULL
      );
      CREATE INDEX rescores_by_run ON rescores(run_id);
      CREATE TABLE rescore_results (
        rescore_id INTEGER NOT NULL REFERENCES rescores(id) ON DELETE CASCADE,
        trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
        reward REAL,
        success INTEGER,
        public_pass INTEGER,
        private_pass INTEGER,
        details_json TEXT,
        error TEXT,
        PRIMARY KEY (rescore_id, trajectory_id)
      ) WITHOUT ROWID;
      CREATE INDEX rescore_results_by_trajectory ON rescore_results(trajectory_id);
      CREATE TABLE trajectory_edits (
        id INTEGER PRIMARY KEY,
        trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
        turn_index INTEGER NOT NULL,
        action_text TEXT NOT NULL,
        reward_file TEXT,
        reward_sha256 TEXT,
        reward_label TEXT NOT NULL,
        reward REAL,
        success INTEGER,
        public_pass INTEGER,
        private_pass INTEGER,
        details_json TEXT,
        error TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX trajectory_edits_by_trajectory ON trajectory_edits(trajectory_id);
    `,
  },
  {
    version: 8,
    description: "forked runs: the run and iteration a run was forked from (its own iterations start after that one; the parent's stay the parent's)",
    sql: `
      ALTER TABLE runs ADD COLUMN parent_run_id INTEGER REFERENCES runs(id) ON DELETE SET NULL;
      ALTER TABLE runs ADD COLUMN fork_iteration INTEGER;
      CREATE INDEX runs_by_parent ON runs(parent_run_id) WHERE parent_run_id IS NOT NULL;
    `,
  },
  {
    version: 9,
    description:
      "a distillation teacher's per-token numbers: token_stats BLOBs may carry its log-prob and student − teacher (flag 8), and a trajectory's largest |student − teacher| for the worst-token lists",
    // NULL for a trajectory without a teacher, and for every row written before this version
    sql: `
      ALTER TABLE token_stats ADD COLUMN max_abs_reverse_kl REAL;
    `,
  },
  {
    version: 10,
    description:
      "a judge's reward (reward.judge): each group's exchange with the judge — the request sent (no key: that is a header), the answer body received, the error, the scores — keyed by sha256(model, rubric, messages) for the cache",
    sql: `
      CREATE TABLE judge_exchanges (
        run_id INTEGER NOT NULL,
        iteration INTEGER NOT NULL,
        group_index INTEGER NOT NULL,
        cache_key TEXT NOT NULL,
        request_json TEXT NOT NULL,
        answer_text TEXT,
        error TEXT,
        scores_json TEXT,
        latency_ms REAL NOT NULL,
        tokens INTEGER NOT NULL,
        tries INTEGER NOT NULL,
        cached INTEGER NOT NULL,
        PRIMARY KEY (run_id, iteration, group_index),
        FOREIGN KEY (run_id, iteration) REFERENCES iterations(run_id, iteration) ON DELETE CASCADE
      );
      CREATE INDEX judge_exchanges_by_key ON judge_exchanges(cache_key) WHERE error IS NULL;
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export class SchemaTooNewError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  constructor(
    readonly path: string,
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      `The database ${path} has schema version ${found}, but this version of Agent RL Workbench understands up to ${supported}. ` +
        'It was written by a newer release and was left untouched. Fix: upgrade agent-rl-workbench, or pass --db with another file.',
    );
    this.name = 'SchemaTooNewError';
  }
}

/** Applies pending migrations up to `target` (default: all). Returns the versions applied. */
export function migrate(db: Database.Database, path: string, target = SCHEMA_VERSION, migrations: readonly Migration[] = MIGRATIONS): number[] {
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  if (current > latest) throw new SchemaTooNewError(path, current, latest);
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version <= current || m.version > target) continue;
    // The version is read again under the write lock: processes that open a new database at the same
    // moment (the extension's workers, the CLI) all saw it unmigrated, and only the first may apply it.
    const done = db
      .transaction(() => {
        if ((db.pragma('user_version', { simple: true }) as number) >= m.version) return false;
        db.exec(m.sql);
        db.pragma(`user_version = ${m.version}`);
        return true;
      })
      .immediate();
    if (done) applied.push(m.version);
  }
  return applied;
}
