// The stored form of a trajectory's per-token numbers: a round trip keeps every column to the float32
// bit, the largest values the worst-token lists sort by are right, and a BLOB of another shape is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeTokenStats, encodeTokenStats, TokenStatsFormatError, tokenStatsJson } from '../../../src/store/tokenStatsCodec';
import { histogram, tokenRows, worstRows } from '../../../src/shared/tokenStatsRows';
import type { TokenStats } from '../../../src/shared/types';

const f = (xs: number[]): Float32Array => Float32Array.from(xs);
// two turns: the first generated 2 tokens, the second 3 (the demonstration's mistake in between is not trained)
const turns = [
  { policy: { behaviourLogprob: -1, policyVersion: 0, tokens: { context: [1], sampled: [5, 6], logprobs: [-0.5, -1.5] } } },
  { policy: { behaviourLogprob: -1, policyVersion: 0, tokens: { context: [2], sampled: [9], logprobs: [-3], imitate: false } } },
  { policy: { behaviourLogprob: -1, policyVersion: 0, tokens: { context: [3], sampled: [7, 8, 4], logprobs: [-0.1, -0.2, -2] } } },
];
const stats: TokenStats = {
  stepsBefore: 0,
  old: 'behaviour',
  lag: 0,
  before: f([-0.5, -1.4, -0.1, -0.9, NaN]),
  logp: f([-0.5, -1.4, -0.1, -0.9, -2]),
  ratio: f([1, 1.2, 1, 3, 0.5]),
  clipSide: Uint8Array.from([0, 0, 0, 2, 1]),
  entropy: f([0.3, 0.4, 0.1, 1.2, 2]),
  kl: f([0, 0.01, 0, 0.7, 0.2]),
};

describe('tokenStatsCodec', () => {
  it('round-trips every column (NaN included) and records the largest |mismatch|, |log ratio| and KL', () => {
    const e = encodeTokenStats(stats, turns);
    assert.equal(e.positions, 5);
    assert.equal(e.data.byteLength, 16 + 5 * 4 * 5 + 5);
    const back = decodeTokenStats(e.data);
    for (const k of ['before', 'logp', 'ratio', 'entropy', 'kl'] as const) assert.deepEqual(Array.from(back[k]!), Array.from(stats[k]!), k);
    assert.deepEqual(Array.from(back.clipSide), [0, 0, 0, 2, 1]);
    assert.equal(back.old, 'behaviour');
    // mismatch: |−1.4 − (−1.5)| = 0.1 and |−0.9 − (−0.2)| = 0.7; the last token's is unknown
    assert.ok(Math.abs(e.maxAbsMismatch! - 0.7) < 1e-6, String(e.maxAbsMismatch));
    assert.ok(Math.abs(e.maxAbsLogRatio! - Math.log(3)) < 1e-6);
    assert.ok(Math.abs(e.maxKl! - 0.7) < 1e-6);
    const lean = encodeTokenStats({ ...stats, before: undefined, kl: undefined, stepsBefore: 3, old: 'recomputed', lag: 2 }, turns);
    assert.equal(lean.maxAbsMismatch, undefined);
    assert.equal(lean.maxKl, undefined);
    const b2 = decodeTokenStats(lean.data);
    assert.equal(b2.before, undefined);
    assert.equal(b2.stepsBefore, 3);
    assert.equal(b2.old, 'recomputed');
    assert.equal(b2.lag, 2);
  });

  it('refuses a BLOB of another shape with an error that says so', () => {
    const e = encodeTokenStats(stats, turns).data;
    assert.throws(() => decodeTokenStats(e.subarray(0, e.byteLength - 1)), TokenStatsFormatError);
    assert.throws(() => decodeTokenStats(Uint8Array.from([9, 0, 0, 0])), TokenStatsFormatError);
    const other = Buffer.from(e);
    other[0] = 2;
    assert.throws(() => decodeTokenStats(other), /format 2/);
    const flags = Buffer.from(e);
    flags[1] = flags[1]! | 16;
    assert.throws(() => decodeTokenStats(flags), /unknown flags/);
    // the teacher's flag without its two columns' bytes is a BLOB of another shape, never a wrong column
    const claimsTeacher = Buffer.from(e);
    claimsTeacher[1] = claimsTeacher[1]! | 8;
    assert.throws(() => decodeTokenStats(claimsTeacher), /bytes for 5 positions × 7 columns/);
    assert.throws(() => decodeTokenStats(e, 6), /5 positions where the row says 6/, 'the BLOB must hold what its row says');
    assert.throws(() => encodeTokenStats({ ...stats, ratio: f([1]) }, turns), /ratio has 1 positions, logp 5/);
  });

  it('places the columns on the generated tokens of trained turns, skipping a demonstration mistake', () => {
    const rows = tokenRows(turns, tokenStatsJson(stats));
    assert.deepEqual(
      rows.map((r) => [r.turn, r.token, r.id, r.trained]),
      [
        [0, 0, 5, true],
        [0, 1, 6, true],
        [1, 0, 9, false],
        [2, 0, 7, true],
        [2, 1, 8, true],
        [2, 2, 4, true],
      ],
    );
    assert.equal(rows[5]!.before, undefined, 'NaN travels as null and is shown as unknown');
    assert.equal(rows[4]!.clip, 'high');
    assert.deepEqual(
      worstRows(rows, 'mismatch', 2).map((r) => r.id),
      [8, 6],
    );
    assert.deepEqual(
      worstRows(rows, 'kl', 1).map((r) => r.id),
      [8],
    );
    // a sequence cut at the context window: tokens past the stored columns carry none
    const cut = tokenRows(
      turns,
      tokenStatsJson({ ...stats, before: f([1, 2]), logp: f([1, 2]), ratio: f([1, 1]), clipSide: Uint8Array.from([0, 0]), entropy: f([0, 0]), kl: f([0, 0]) }),
    );
    assert.deepEqual(
      cut.map((r) => r.trained),
      [true, true, false, false, false, false],
    );
  });

  it("round-trips a distillation teacher's two columns, places them on the tokens and records the largest |student − teacher|", () => {
    // student − teacher at each trained token: behaviour (−0.5, −1.5, −0.1, −0.2, −2) minus the teacher's log-prob
    const teacher = f([-0.25, -3, -0.1, -0.05, NaN]);
    const reverseKl = f([-0.25, 1.5, 0, -0.15, NaN]);
    const withTeacher: TokenStats = { ...stats, teacher, reverseKl };
    const e = encodeTokenStats(withTeacher, turns);
    assert.equal(e.data.byteLength, 16 + 5 * 4 * 7 + 5, 'two more float32 columns');
    const back = decodeTokenStats(e.data, 5);
    for (const k of ['before', 'logp', 'ratio', 'entropy', 'kl', 'teacher', 'reverseKl'] as const) {
      assert.deepEqual(Array.from(back[k]!), Array.from(withTeacher[k]!), k);
    }
    assert.ok(Math.abs(e.maxAbsReverseKl! - 1.5) < 1e-6, String(e.maxAbsReverseKl));
    // the learner's columns are where they were: the teacher's come after them
    assert.ok(Math.abs(e.maxKl! - 0.7) < 1e-6);
    const rows = tokenRows(turns, tokenStatsJson(back));
    assert.deepEqual(
      rows.map((r) => [r.id, r.teacher, r.reverseKl]),
      [
        [5, -0.25, -0.25],
        [6, -3, 1.5],
        [9, undefined, undefined],
        [7, Math.fround(-0.1), 0],
        [8, Math.fround(-0.05), Math.fround(-0.15)],
        [4, undefined, undefined],
      ],
    );
    assert.deepEqual(
      worstRows(rows, 'reverseKl', 2).map((r) => r.id),
      [6, 5],
    );
    // a trajectory without a teacher stores neither column and no maximum
    const plain = encodeTokenStats(stats, turns);
    assert.equal(plain.maxAbsReverseKl, undefined);
    assert.equal(decodeTokenStats(plain.data).teacher, undefined);
    assert.throws(() => encodeTokenStats({ ...stats, teacher }, turns), /teacher and reverseKl come together/);
    assert.throws(() => encodeTokenStats({ ...withTeacher, reverseKl: f([0]) }, turns), /reverseKl has 1 positions, logp 5/);
  });

  it('with lag (an async group sampled by an older policy) the difference is not reported as a mismatch', () => {
    const lagged = tokenRows(turns, tokenStatsJson({ ...stats, lag: 1 }));
    assert.ok(lagged.every((r) => r.mismatch === undefined));
    assert.equal(lagged[0]!.before, -0.5, 'the training log-prob before the update is still shown');
    assert.equal(encodeTokenStats({ ...stats, lag: 1 }, turns).maxAbsMismatch, undefined);
  });

  it('a turn with a chosen action index (the table, a scored candidate) is one trained position, whatever tokens it stores', () => {
    const scored = [
      { policy: { behaviourLogprob: -0.7, actionIndex: 2, tokens: { context: [1], sampled: [11, 12, 13], logprobs: [-0.7, 0, 0] } } },
      { policy: { behaviourLogprob: -1.2, actionIndex: 0, tokens: { context: [2], sampled: [14, 15], logprobs: [-1.2, 0] } } },
    ];
    const two: TokenStats = {
      stepsBefore: 0,
      old: 'behaviour',
      lag: 0,
      before: f([-0.6, -1.2]),
      logp: f([-0.6, -1.2]),
      ratio: f([1, 1]),
      clipSide: Uint8Array.from([0, 0]),
      entropy: f([1, 1]),
    };
    const rows = tokenRows(scored, tokenStatsJson(two));
    assert.deepEqual(
      rows.map((r) => [r.turn, r.token, r.id, r.trained, r.action]),
      [
        [0, 0, 2, true, true],
        [1, 0, 0, true, true],
      ],
    );
    assert.ok(Math.abs(rows[0]!.mismatch! - 0.1) < 1e-6, "before − the action's behaviour log-prob, not the candidate's first token");
  });

  it('histogram: equal bins over [0, max], the maximum in the last', () => {
    assert.deepEqual(histogram([0, 0.1, 0.5, 1], 2), { edges: [0, 0.5, 1], counts: [2, 2] });
    assert.deepEqual(histogram([], 3).counts, [0, 0, 0]);
  });
});
