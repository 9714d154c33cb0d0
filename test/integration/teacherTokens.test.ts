// A distillation teacher's per-token numbers through a real database file (issue 51): the run writer
// stores them in the trajectory's token_stats row (flag 8 of the BLOB, and its largest |student −
// teacher| in max_abs_reverse_kl, schema version 9), the readers give them back on the generated tokens
// and in the worst-token lists; a database of schema version 8 opens, migrates, and reads as before.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { validateRunConfig } from '../../src/shared/runConfig';
import type { TokenStats, Trajectory } from '../../src/shared/types';
import { SCHEMA_VERSION } from '../../src/store/migrations';
import { openStore } from '../../src/store/openStore';
import { RunWriter } from '../../src/store/runWriter';
import { TokenStatsReader } from '../../src/store/tokenStatsReader';
import { tempDir } from '../helpers/cli';

const runtime = { workbench: 't', node: 't', platform: 't', arch: 't', cpu: 't', compute: 't' };
const f = (xs: number[]): Float32Array => Float32Array.from(xs);

const metrics = {
  iteration: 1,
  rewardMean: 0.5,
  rewardMax: 1,
  rewardMin: 0,
  successRate: 0.5,
  publicPassRate: 1,
  privatePassRate: 0.5,
  meanTurns: 1,
  zeroVarianceGroups: 0,
  trajectories: 2,
  loss: 0,
  policyLoss: 0,
  kl: 0,
  clipFraction: 0,
  entropy: 0,
  gradNorm: 0,
  ratioMin: 1,
  ratioMax: 1,
  updated: 1,
  trainedTrajectories: 2,
  policyVersion: 1,
  wallMs: 1,
};

/** One turn that generated tokens 5, 6, 7 with these sampling log-probs, and the learner's numbers on them. */
function episode(indexInGroup: number, behaviour: number[], stats: TokenStats): Trajectory {
  return {
    taskId: 't',
    group: 0,
    indexInGroup,
    termination: 'finished',
    policyVersion: 0,
    advantage: 0,
    outcome: { reward: 1, success: true, publicPass: true, privatePass: true },
    turns: [
      {
        index: 0,
        actionText: 'abc',
        action: { kind: 'tool', name: 'finish', args: {} },
        observation: { text: 'ok', data: {} },
        policy: {
          behaviourLogprob: behaviour.reduce((a, b) => a + b, 0),
          policyVersion: 0,
          tokens: { context: [1, 2], sampled: [5, 6, 7], logprobs: behaviour },
        },
      },
    ],
    tokenStats: stats,
  };
}

const learner = (logp: number[]): TokenStats => ({
  stepsBefore: 0,
  old: 'behaviour',
  lag: 0,
  before: f(logp),
  logp: f(logp),
  ratio: f([1, 1, 1]),
  clipSide: Uint8Array.from([0, 0, 0]),
  entropy: f([0.5, 0.5, 0.5]),
  kl: f([0.01, 0.02, 0.03]),
});

/** student − teacher from the sampling log-probs and the teacher's, as the learner computes it. */
const withTeacher = (behaviour: number[], teacher: number[]): TokenStats => ({
  ...learner(behaviour),
  teacher: f(teacher),
  reverseKl: f(behaviour.map((b, i) => b - teacher[i]!)),
});

describe("store: a distillation teacher's per-token numbers", () => {
  it('are written with the trajectory and read back on its tokens and in the worst-token lists', () => {
    const db = openStore(path.join(tempDir(), 'runs.sqlite'));
    try {
      const writer = new RunWriter(db);
      writer.begin(validateRunConfig({}), runtime);
      const a = [-0.5, -1, -0.25];
      const b = [-2, -0.1, -0.3];
      writer.iteration({
        metrics,
        trajectories: [episode(0, a, withTeacher(a, [-0.5, -3, -1])), episode(1, b, withTeacher(b, [-0.2, -0.1, -0.3])), episode(2, a, learner(a))],
      });
      const ids = (db.prepare('SELECT id FROM trajectories ORDER BY index_in_group').all() as { id: number }[]).map((r) => r.id);
      const maxima = db.prepare('SELECT max_abs_reverse_kl AS m FROM token_stats ORDER BY trajectory_id').all() as { m: number | null }[];
      // |−1 − (−3)| = 2 for the first, |−2 − (−0.2)| = 1.8 for the second, none for the one without a teacher
      assert.deepEqual(
        maxima.map((r) => (r.m === null ? null : Math.round(r.m * 1e6) / 1e6)),
        [2, 1.8, null],
      );
      const reader = new TokenStatsReader(db);
      const stats = reader.stats(ids[0]!)!;
      assert.deepEqual(stats.teacher, [-0.5, -3, -1]);
      assert.deepEqual(stats.reverseKl, [0, 2, 0.75]);
      const rows = reader.rows(ids[0]!);
      assert.deepEqual(
        rows.map((r) => [r.id, r.behaviour, r.teacher, r.reverseKl]),
        [
          [5, -0.5, -0.5, 0],
          [6, -1, -3, 2],
          [7, -0.25, -1, 0.75],
        ],
      );
      assert.equal(reader.stats(ids[2]!)!.teacher, undefined, 'a trajectory no teacher scored has no teacher columns');
      assert.ok(
        reader.rows(ids[2]!).every((r) => r.teacher === undefined && r.reverseKl === undefined),
        'and its tokens none',
      );
      // the run's worst by |student − teacher|: the largest of all tokens, from both scored trajectories
      const worst = reader.worst({ runId: writer.runId, by: 'reverseKl', limit: 3 });
      assert.deepEqual(
        worst.map((w) => [w.trajectoryId, w.id, Math.round(w.value * 1e6) / 1e6]),
        [
          [ids[0], 6, 2],
          [ids[1], 5, 1.8],
          [ids[0], 7, 0.75],
        ],
      );
      assert.ok(worst.every((w) => w.by === 'reverseKl' && w.iteration === 1));
    } finally {
      db.close();
    }
  });

  it('a database of schema version 8 opens: the column is added, its rows read as before, none has a teacher', () => {
    const file = path.join(tempDir(), 'runs.sqlite');
    const db = openStore(file);
    const writer = new RunWriter(db);
    writer.begin(validateRunConfig({}), runtime);
    const a = [-0.5, -1, -0.25];
    writer.iteration({ metrics, trajectories: [episode(0, a, learner(a))] });
    // back to what version 8 wrote: no column for the teacher's maximum
    db.exec('ALTER TABLE token_stats DROP COLUMN max_abs_reverse_kl');
    db.exec('DROP TABLE judge_exchanges'); // migration 10's (issue 51's judge), after version 8 too
    db.pragma('user_version = 8');
    db.close();
    const reopened = openStore(file);
    try {
      assert.equal(reopened.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      const reader = new TokenStatsReader(reopened);
      const id = (reopened.prepare('SELECT id FROM trajectories').get() as { id: number }).id;
      assert.deepEqual(reader.stats(id)!.logp, a);
      assert.deepEqual(reader.worst({ runId: writer.runId, by: 'reverseKl', limit: 5 }), []);
      assert.equal(reader.worst({ runId: writer.runId, by: 'kl', limit: 5 }).length, 3, 'the lists it had still work');
    } finally {
      reopened.close();
    }
  });
});
