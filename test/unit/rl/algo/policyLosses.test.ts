// The policy-loss table's entries against hand-computed numbers (tfjs cpu backend, float32): each
// entry's loss, its gradient with respect to log π (tf.grad), its clip sides and its own metrics; the
// clip entry against losses.ts's policyGradientLoss, number for number.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ADAM_DEFAULTS } from '../../../../src/rl/algo/adamw';
import type { TrainSequence } from '../../../../src/rl/algo/trainSequence';
import { shardGradients } from '../../../../src/rl/algo/gradients';
import { policyGradientLoss } from '../../../../src/rl/algo/losses';
import { TablePolicy } from '../../../../src/rl/policies/table/tablePolicy';
import { objectiveLoss, type LossSpec, type ObjectiveParts } from '../../../../src/rl/algo/objective';
import { GSPO_CLIP_HIGH, GSPO_CLIP_LOW, policyLoss, type PolicyLossOptions } from '../../../../src/rl/algo/policyLosses';
import type { PolicyLossName } from '../../../../src/shared/algorithm';

before(async () => {
  await tf.setBackend('cpu');
});

const close = (a: number, b: number, tol = 1e-5): void => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);
const closeAll = (a: ArrayLike<number>, b: readonly number[], tol = 1e-5): void => {
  assert.equal(a.length, b.length);
  b.forEach((v, i) => close(a[i]!, v, tol));
};
const t2 = (rows: number[][]): tf.Tensor2D => tf.tensor2d(rows);
const value = (x: tf.Tensor): number => x.dataSync()[0]!;
const L = Math.log;
const E = Math.exp;

/** The loss and its gradient with respect to log π, flattened [B·T]. */
function lossAndGrad(name: PolicyLossName, logp: tf.Tensor2D, old: tf.Tensor2D, adv: tf.Tensor2D, mask: tf.Tensor2D, o: PolicyLossOptions) {
  const g = tf.grad((lp: tf.Tensor) => policyLoss(name, lp as tf.Tensor2D, old, adv, mask, o).loss)(logp);
  const r = policyLoss(name, logp, old, adv, mask, o);
  const metrics = Object.fromEntries(Object.entries(r.metrics).map(([k, v]) => [k, value(v)]));
  return { loss: value(r.loss), grad: Array.from(g.dataSync()), clipSide: Array.from(r.clipSide.dataSync()), ratio: Array.from(r.ratio.dataSync()), metrics };
}

const seqMean = { clipLow: 0.2, clipHigh: 0.28, dualClip: 0, aggregation: 'seq-mean-token-mean' as const };

describe('clip: the PPO/GRPO clipped surrogate, as policyGradientLoss computes it', () => {
  // two sequences: ratios 1.25, 1.5 (A = +1: the second above 1.28 is held), and 0.5, 4 (A = −1: 0.5 is held low, 4 by the dual clip c = 3)
  const logp = t2([
    [L(0.5), L(0.6), 0],
    [L(0.2), L(0.8), -Infinity],
  ]);
  const old = t2([
    [L(0.4), L(0.4), 0],
    [L(0.4), L(0.2), 0],
  ]);
  const adv = t2([[1], [-1]]);
  const mask = t2([
    [1, 1, 0],
    [1, 1, 0],
  ]);
  it('by hand: loss, gradient (0 where a clip holds), clip sides and metrics', () => {
    const r = lossAndGrad('clip', logp, old, adv, mask, { ...seqMean, dualClip: 3 });
    // seq 0: (−1.25 − 1.28)/2; seq 1: (0.8 + 3)/2 (−A·clip(0.5) = 0.8; the dual clip bounds −A·4 at 3)
    close(r.loss, ((-1.25 - 1.28) / 2 + (0.8 + 3) / 2) / 2);
    closeAll(r.grad, [-1.25 / 4, 0, 0, 0, 0, 0]);
    assert.deepEqual(r.clipSide, [0, 2, 0, 1, 3, 0]);
    close(r.metrics.clipFractionHigh!, 1 / 4);
    close(r.metrics.clipFractionLow!, 1 / 4);
    close(r.metrics.dualClipFraction!, 1 / 4);
    close(r.metrics.approxKl!, -(L(1.25) + L(1.5) + L(0.5) + L(4)) / 4);
    close(r.metrics.absLogRatio!, (L(1.25) + L(1.5) + L(2) + L(4)) / 4);
  });
  it('the same numbers as policyGradientLoss, with and without the dual clip (which it reports only when on)', () => {
    for (const dualClip of [0, 3]) {
      const o = { ...seqMean, dualClip };
      const mine = lossAndGrad('clip', logp, old, adv, mask, o);
      const theirs = policyGradientLoss(logp, old, adv, mask, o);
      const grad = Array.from(
        tf
          .grad((lp: tf.Tensor) => policyGradientLoss(lp as tf.Tensor2D, old, adv, mask, o).loss)(logp)
          .dataSync(),
      );
      assert.equal(mine.loss, value(theirs.loss));
      assert.deepEqual(mine.grad, grad);
      assert.deepEqual(mine.clipSide, Array.from(theirs.clipSide.dataSync()));
      assert.deepEqual(mine.ratio, Array.from(theirs.ratio.dataSync()));
      assert.equal(mine.metrics.clipFractionLow, value(theirs.clipFractionLow));
      assert.equal(mine.metrics.clipFractionHigh, value(theirs.clipFractionHigh));
      assert.equal(mine.metrics.approxKl, value(theirs.approxKl));
      assert.equal(mine.metrics.absLogRatio, value(theirs.absLogRatio));
      assert.equal(mine.metrics.dualClipFraction, dualClip > 0 ? value(theirs.dualClipFraction) : undefined);
    }
  });
});

describe('gspo: the sequence ratio, clipped per sequence to [1 − 3e-4, 1 + 4e-4]', () => {
  // log π − log π_old per token; old log π = ln 0.3 everywhere; the masked position of sequence 1 holds −∞
  const d = [
    [-0.4, -0.6, 0],
    [0.1, 0, 0],
    [-0.3, -0.3, -0.3],
    [0.2, 0.4, 0],
  ];
  const mask = t2([
    [1, 1, 0],
    [1, 0, 0],
    [1, 1, 1],
    [1, 1, 0],
  ]);
  const old = t2(d.map((row) => row.map(() => L(0.3))));
  const logp = t2(d.map((row, b) => row.map((x, t) => (b === 1 && t === 1 ? -Infinity : L(0.3) + x))));
  const adv = t2([[1], [1], [-1], [-0.5]]);
  const [s0, s1, s2, s3] = [E(-0.5), E(0.1), E(-0.3), E(0.3)];

  it('the clip range is GSPO paper’s', () => {
    assert.equal(GSPO_CLIP_LOW, 3e-4);
    assert.equal(GSPO_CLIP_HIGH, 4e-4);
  });
  it('by hand: each token carries its sequence ratio s_i; a sequence on the clipped branch gives no gradient, the others s_i·A/n_i per token', () => {
    const r = lossAndGrad('gspo', logp, old, adv, mask, seqMean);
    // s0 = e^−0.5 with A > 0 and s3 = e^0.3 with A < 0 are on the unclipped branch; s1 = e^0.1 (A > 0) is held high, s2 = e^−0.3 (A < 0) low
    close(r.loss, (-s0 - (1 + GSPO_CLIP_HIGH) + (1 - GSPO_CLIP_LOW) + 0.5 * s3) / 4);
    // sequence 0's tokens have token ratios e^−0.4 and e^−0.6 but one gradient: −A·s0 / (2 tokens · 4 sequences)
    closeAll(r.grad, [-s0 / 8, -s0 / 8, 0, 0, 0, 0, 0, 0, 0, (0.5 * s3) / 8, (0.5 * s3) / 8, 0]);
    assert.deepEqual(r.clipSide, [0, 0, 0, 2, 0, 0, 1, 1, 1, 0, 0, 0]);
    closeAll(r.ratio, [s0, s0, 1, s1, 1, 1, s2, s2, s2, s3, s3, 1]);
    close(r.metrics.sequenceClipFraction!, 2 / 4);
    close(r.metrics.approxKl!, 1.2 / 8);
    close(r.metrics.absLogRatio!, 2.6 / 8);
    assert.ok(Number.isFinite(r.loss) && r.grad.every(Number.isFinite), 'the masked −∞ makes no NaN');
  });
  it('inside the clip range the ratio is the geometric mean of the token ratios', () => {
    // token log-ratios 2e-4 and 0: s = e^1e-4, between 1 − 3e-4 and 1 + 4e-4 whatever the advantage's sign
    const r = lossAndGrad('gspo', t2([[2e-4, 0]]), t2([[0, 0]]), t2([[1]]), t2([[1, 1]]), seqMean);
    close(r.loss, -E(1e-4));
    closeAll(r.ratio, [E(1e-4), E(1e-4)]);
    assert.deepEqual(r.clipSide, [0, 0]);
    close(r.metrics.sequenceClipFraction!, 0);
  });
});

describe('cispo: the truncated ratio as a constant weight of −A·log π', () => {
  // sequence 0 (A = +1): ratios 1.5, 1, 0.5 (π_old ½); sequence 1 (A = −2): ratio 2 (π_old 0.4)
  const logp = t2([
    [L(0.75), L(0.5), L(0.25), NaN],
    [L(0.8), 0, 0, 0],
  ]);
  const old = t2([
    [L(0.5), L(0.5), L(0.5), 0],
    [L(0.4), 0, 0, 0],
  ]);
  const mask = t2([
    [1, 1, 1, 0],
    [1, 0, 0, 0],
  ]);
  const adv = t2([[1], [-2]]);
  it('by hand: weights min(r, 1.28), no lower bound; every token keeps a gradient −w·A / n, the truncated ones too', () => {
    const r = lossAndGrad('cispo', logp, old, adv, mask, seqMean);
    const seq0 = (-1.28 * L(0.75) - L(0.5) - 0.5 * L(0.25)) / 3;
    const seq1 = -1.28 * -2 * L(0.8);
    close(r.loss, (seq0 + seq1) / 2);
    closeAll(r.grad, [-1.28 / 6, -1 / 6, -0.5 / 6, 0, 2.56 / 2, 0, 0, 0]);
    assert.deepEqual(r.clipSide, [2, 0, 0, 0, 2, 0, 0, 0]);
    closeAll(r.ratio, [1.5, 1, 0.5, 1, 2, 1, 1, 1]);
    close(r.metrics.truncatedFraction!, 2 / 4);
    close(r.metrics.approxKl!, -(L(1.5) + 0 + L(0.5) + L(2)) / 4);
  });
  it('at ratio 1 its gradient is the clipped surrogate’s, −A·∇log π', () => {
    const at1 = t2([[L(0.5), L(0.3)]]);
    const o = { ...seqMean, aggregation: 'token-mean' as const };
    // π_old a tensor of its own: the gradient is taken with respect to log π alone
    const mine = lossAndGrad('cispo', at1, at1.clone(), t2([[0.7]]), t2([[1, 1]]), o);
    const clipped = lossAndGrad('clip', at1, at1.clone(), t2([[0.7]]), t2([[1, 1]]), o);
    closeAll(mine.grad, clipped.grad);
    closeAll(mine.grad, [-0.35, -0.35]);
  });
});

describe('objectiveLoss with a policy loss by name', () => {
  const base = { logp: t2([[L(0.75), L(0.5)]]), mask: t2([[1, 1]]), oldLogp: t2([[L(0.5), L(0.5)]]), advantages: t2([[1]]), argmaxHit: t2([[1, 0]]) };
  const spec = (policyLoss?: PolicyLossName): LossSpec => ({
    kind: 'policy-gradient',
    ...(policyLoss ? { policyLoss } : {}),
    clipLow: 0.2,
    clipHigh: 0.28,
    dualClip: 0,
    klCoef: 0,
    klEstimator: 'k3',
    aggregation: 'seq-mean-token-mean',
    normTokens: 1,
    temperature: 1,
  });
  const partsOf = (s: LossSpec): ObjectiveParts => {
    let got: ObjectiveParts | undefined;
    objectiveLoss(s, base, (p) => (got = p));
    return got!;
  };
  it("hands on the entry's own metrics and the share of positions a clip held", () => {
    const clip = partsOf(spec());
    assert.deepEqual(Object.keys(clip.metrics).sort(), ['absLogRatio', 'approxKl', 'clipFractionHigh', 'clipFractionLow']);
    close(value(clip.clipFraction), 0.5); // ratio 1.5 > 1.28 with A > 0
    const cispo = partsOf(spec('cispo'));
    assert.deepEqual(Object.keys(cispo.metrics).sort(), ['absLogRatio', 'approxKl', 'truncatedFraction']);
    close(value(cispo.clipFraction), 0.5);
    close(value(cispo.policyLoss), (-1.28 * L(0.75) - L(0.5)) / 2);
    const gspo = partsOf(spec('gspo'));
    assert.deepEqual(Object.keys(gspo.metrics).sort(), ['absLogRatio', 'approxKl', 'sequenceClipFraction']);
    close(value(gspo.clipFraction), 1); // s = √1.5 > 1 + 4e-4 with A > 0: both tokens held
    close(value(gspo.ratioMax), Math.sqrt(1.5));
  });
  it('nll reports no loss metrics', () => {
    let got: ObjectiveParts | undefined;
    objectiveLoss({ kind: 'nll', aggregation: 'token-mean', normTokens: 1 }, base, (p) => (got = p));
    assert.deepEqual(got!.metrics, {});
    close(value(got!.clipFraction), 0);
  });
});

describe('micro-batches combine each metric over what it is a mean of', () => {
  // a uniform table (π = ⅓): behaviour 0.3 with A > 0 (s ≈ 1.11, held high), 0.4 with A < 0 (s ≈ 0.83, held
  // low), ⅓ (s = 1, unclipped); 3, 1 and 2 positions, so a share of sequences (2/3) is not a share of tokens (4/6)
  const seq = (n: number, p: number, advantage: number): TrainSequence => ({
    inputs: Array.from({ length: n }, () => 0),
    targets: Array.from({ length: n }, () => 1),
    mask: Array.from({ length: n }, () => 1),
    behaviour: Array.from({ length: n }, () => L(p)),
    advantage,
  });
  const inputs = [seq(3, 0.3, 1), seq(1, 0.4, -1), seq(2, 1 / 3, 1)].map((s) => ({ seq: s }));
  const spec: LossSpec = { kind: 'policy-gradient', policyLoss: 'gspo', ...seqMean, klCoef: 0, klEstimator: 'k3', normTokens: 1, temperature: 1 };
  it("gspo's sequence clip fraction: 2 of 3 sequences whether one pass or one per sequence; the clip fraction 4 of 6 tokens", async () => {
    const table = new TablePolicy({ stateCount: 2, actions: ['a', 'b', 'c'], stateOf: () => 0 }, ADAM_DEFAULTS, 'cpu');
    for (const budget of [Number.POSITIVE_INFINITY, 1]) {
      const { grads, stats } = await shardGradients(table, inputs, spec, budget);
      close(stats.metrics.sequenceClipFraction!, 2 / 3);
      close(stats.clipFraction, 4 / 6);
      tf.dispose(grads);
    }
    table.dispose();
  });
});
