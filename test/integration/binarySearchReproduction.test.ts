// Seed 002's experiment, end to end through the CLI: the published thresholds must hold for all six runs.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { EvaluationResult } from '../../src/shared/types';
import { ROOT, runCli, tempDir } from '../helpers/cli';

interface Row {
  method: string;
  seed: number;
  runId: number;
  before: EvaluationResult;
  after: EvaluationResult;
}

describe('binary-search reproduction (seed 002)', () => {
  it('GRPO and RS-SFT for seeds 7, 19, 42 reach the published results', () => {
    const out = tempDir('agent-rl-repro-');
    const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'reproduceBinarySearch.mjs'), '--out', out], { encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, r.stderr);
    console.log(r.stdout);
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'summary.json'), 'utf8')) as { db: string; rows: Row[] };
    assert.equal(summary.rows.length, 6);
    const db = new Database(summary.db, { readonly: true });
    try {
      for (const row of summary.rows) {
        const label = `${row.method} seed ${row.seed}`;
        assert.equal(row.before.iteration, 0);
        assert.equal(row.after.iteration, 100);
        assert.equal(row.before.episodes, 500);
        assert.ok(row.before.successRate >= 0.03 && row.before.successRate <= 0.09, `${label}: initial ${row.before.successRate}`);
        assert.ok(row.after.successRate >= (row.method === 'grpo' ? 0.99 : 0.98), `${label}: final ${row.after.successRate}`);
        const n = (sql: string) => (db.prepare(sql).get(row.runId) as { n: number }).n;
        assert.equal(n('SELECT count(*) AS n FROM trajectories WHERE run_id = ?'), 3200, label);
        assert.equal(
          n('SELECT count(*) AS n FROM turns t JOIN trajectories j ON j.id = t.trajectory_id WHERE j.run_id = ?'),
          n('SELECT sum(num_turns) AS n FROM trajectories WHERE run_id = ?'),
        );
        assert.equal(n("SELECT count(*) AS n FROM runs WHERE id = ? AND status = 'completed'"), 1);
        // What `show` prints equals the JSON record's figures.
        const shown = runCli(['show', String(row.runId), '--db', summary.db], out);
        assert.ok(shown.stdout.includes(`${row.after.successes}/${row.after.episodes}`), label);
        assert.ok(shown.stdout.includes(row.after.meanActions.toFixed(3)), label);
      }
    } finally {
      db.close();
    }
  });
});
