// The loss functions against hand-computed values (tfjs cpu backend, float32).
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aggregate, exactKl, K3_CLAMP, klPenalty, LOG_RATIO_CLAMP, nllLoss, policyGradientLoss, rowEntropy } from '../../../../src/rl/algo/losses';
import { objectiveLoss, type LossSpec, type ObjectiveParts } from '../../../../src/rl/algo/objective';

before(async () => {
  await tf.setBackend('cpu');
});

const close = (a: number, b: number, tol = 1e-5): void => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);
const t2 = (rows: number[][]): tf.Tensor2D => tf.tensor2d(rows);
const value = (x: tf.Tensor): number => x.dataSync()[0]!;
const L = Math.log;

describe('aggregate', () => {
  // values [[1, 2, 3], [4, 0, 0], [9, 9, 9]], mask [[1, 1, 0], [1, 0, 0], [0, 0, 0]]: the third sequence has nothing trained
  const v = t2([
    [1, 2, 3],
    [4, 0, 0],
    [9, 9, 9],
  ]);
  const m = t2([
    [1, 1, 0],
    [1, 0, 0],
    [0, 0, 0],
  ]);
  it('token-mean: (1 + 2 + 4) / 3', () => close(value(aggregate(v, m, 'token-mean')), 7 / 3));
  it('seq-mean-token-mean: ((1 + 2)/2 + 4/1) / 2 sequences (the empty one is left out)', () => close(value(aggregate(v, m, 'seq-mean-token-mean')), 2.75));
  it('seq-mean-token-sum: (3 + 4) / 2', () => close(value(aggregate(v, m, 'seq-mean-token-sum')), 3.5));
  it('seq-mean-token-sum-norm: (3 + 4) / 2 / 10 with a constant of 10', () => close(value(aggregate(v, m, 'seq-mean-token-sum-norm', 10)), 0.35));
});

describe('policyGradientLoss (ε_low 0.2, ε_high 0.28)', () => {
  const o = { clipLow: 0.2, clipHigh: 0.28, dualClip: 0, aggregation: 'seq-mean-token-mean' as const };
  it('inside the clip range: loss −A·r per token, gradient −A·r / n', () => {
    // ratios 1.25 and 1, A = +1, two trained tokens
    const logp = tf.variable(t2([[L(0.5), L(0.25), 0]]));
    const old = t2([[L(0.4), L(0.25), 0]]);
    const r = tf.variableGrads(() => policyGradientLoss(logp, old, t2([[1]]), t2([[1, 1, 0]]), o).loss, [logp]);
    close(value(r.value), (-1.25 - 1) / 2);
    const g = r.grads[logp.name]!.dataSync();
    close(g[0]!, -1.25 / 2);
    close(g[1]!, -1 / 2);
    assert.equal(g[2], 0);
  });
  it('above 1 + ε_high with A > 0 the clipped branch holds: loss −1.28, gradient 0, counted as clip-high', () => {
    const logp = tf.variable(t2([[L(0.6), L(0.3)]]));
    const old = t2([[L(0.4), L(0.3)]]); // ratios 1.5 and 1
    const r = tf.variableGrads(() => policyGradientLoss(logp, old, t2([[1]]), t2([[1, 1]]), o).loss, [logp]);
    close(value(r.value), (-1.28 - 1) / 2);
    const g = r.grads[logp.name]!.dataSync();
    assert.equal(g[0], 0);
    close(g[1]!, -0.5);
    const p = policyGradientLoss(logp, old, t2([[1]]), t2([[1, 1]]), o);
    close(value(p.clipFractionHigh), 0.5);
    close(value(p.clipFractionLow), 0);
  });
  it('below 1 − ε_low with A < 0 the clipped branch holds: loss 0.8·|A|, gradient 0, counted as clip-low', () => {
    const logp = tf.variable(t2([[L(0.2)]]));
    const old = t2([[L(0.4)]]); // ratio 0.5
    const r = tf.variableGrads(() => policyGradientLoss(logp, old, t2([[-2]]), t2([[1]]), o).loss, [logp]);
    close(value(r.value), 0.8 * 2);
    assert.equal(r.grads[logp.name]!.dataSync()[0], 0);
    close(value(policyGradientLoss(logp, old, t2([[-2]]), t2([[1]]), o).clipFractionLow), 1);
  });
  it('a ratio of 4 with A < 0: unclipped loss 4·|A|; the dual clip (c = 3) bounds it at 3·|A| with gradient 0', () => {
    const logp = tf.variable(t2([[L(0.8)]]));
    const old = t2([[L(0.2)]]);
    const plain = tf.variableGrads(() => policyGradientLoss(logp, old, t2([[-1]]), t2([[1]]), o).loss, [logp]);
    close(value(plain.value), 4);
    close(plain.grads[logp.name]!.dataSync()[0]!, 4); // −A·r
    const dual = tf.variableGrads(() => policyGradientLoss(logp, old, t2([[-1]]), t2([[1]]), { ...o, dualClip: 3 }).loss, [logp]);
    close(value(dual.value), 3);
    assert.equal(dual.grads[logp.name]!.dataSync()[0], 0);
    close(value(policyGradientLoss(logp, old, t2([[-1]]), t2([[1]]), { ...o, dualClip: 3 }).dualClipFraction), 1);
  });
  it('the log-ratio is clamped to ±20 before exp: a 50-nat jump gives a finite ratio e^20', () => {
    const p = policyGradientLoss(t2([[0]]), t2([[-50]]), t2([[1]]), t2([[1]]), { ...o, clipHigh: 1e9 });
    close(Math.log(p.ratio.dataSync()[0]!), LOG_RATIO_CLAMP, 1e-3);
    assert.ok(Number.isFinite(value(p.loss)));
  });
  it('masked positions add nothing and make no NaN, whatever they hold (−∞, NaN)', () => {
    const logp = tf.variable(t2([[L(0.5), -Infinity, NaN]]));
    const r = tf.variableGrads(() => policyGradientLoss(logp, t2([[L(0.5), 0, 0]]), t2([[1]]), t2([[1, 0, 0]]), o).loss, [logp]);
    close(value(r.value), -1);
    assert.deepEqual(Array.from(r.grads[logp.name]!.dataSync()), [-1, 0, 0]);
  });
  it('approxKl = mean of log π_old − log π over trained positions', () => {
    close(value(policyGradientLoss(t2([[L(0.5), L(0.25)]]), t2([[L(0.4), L(0.5)]]), t2([[1]]), t2([[1, 1]]), o).approxKl), (L(0.4 / 0.5) + L(0.5 / 0.25)) / 2);
  });
});

describe('klPenalty: d = log π − log π_ref = ln 2', () => {
  const logp = (): tf.Variable<tf.Rank.R2> => tf.variable(t2([[L(0.5)]]));
  const ref = t2([[L(0.25)]]);
  const m = t2([[1]]);
  const cases: [string, 'k1' | 'k2' | 'k3', number, number][] = [
    // estimator, value, gradient with respect to log π
    ['k1 = d, gradient 1', 'k1', L(2), 1],
    ['k2 = d²/2, gradient d', 'k2', 0.5 * L(2) ** 2, L(2)],
    ['k3 = e^(−d) + d − 1 = ½ + ln 2 − 1, gradient 1 − e^(−d) = ½', 'k3', 0.5 + L(2) - 1, 0.5],
  ];
  for (const [label, est, v, g] of cases) {
    it(label, () => {
      const x = logp();
      const r = tf.variableGrads(() => tf.sum<tf.Scalar>(klPenalty(x, ref, est, m)), [x]);
      close(value(r.value), v);
      close(r.grads[x.name]!.dataSync()[0]!, g);
    });
  }
  it('k3 is clamped to ±10 and d to ±20: d = 30 gives k1 = 20 and k3 = 10; d = −30 gives k3 = 10', () => {
    close(value(klPenalty(t2([[0]]), t2([[-30]]), 'k1', m)), 20);
    close(value(klPenalty(t2([[0]]), t2([[-30]]), 'k3', m)), K3_CLAMP);
    close(value(klPenalty(t2([[0]]), t2([[30]]), 'k3', m)), K3_CLAMP);
  });
  it('masked positions give 0', () => assert.deepEqual(Array.from(klPenalty(t2([[0, 5]]), t2([[1, -5]]), 'k2', t2([[1, 0]])).dataSync()), [0.5, 0]));
});

describe('exactKl and entropy over whole rows', () => {
  it('KL([½, ½] ‖ [¼, ¾]) = ½ ln 2 + ½ ln ⅔', () => {
    const rows = tf.tensor3d([[[L(0.5), L(0.5)]]]);
    const ref = tf.tensor3d([[[L(0.25), L(0.75)]]]);
    close(value(exactKl(rows, ref, t2([[1]]))), 0.5 * L(2) + 0.5 * L(2 / 3));
  });
  it('its gradient with respect to the logits is π(c)(log π(c) − log π_ref(c) − KL)', () => {
    const logits = tf.variable(tf.tensor3d([[[0.3, -0.4]]]));
    const ref = tf.tensor3d([[[L(0.25), L(0.75)]]]);
    const r = tf.variableGrads(() => tf.sum<tf.Scalar>(exactKl(tf.logSoftmax(logits), ref, t2([[1]]))), [logits]);
    const lp = tf.logSoftmax(logits).dataSync();
    const kl = value(r.value);
    const g = r.grads[logits.name]!.dataSync();
    [0, 1].forEach((c) => close(g[c]!, Math.exp(lp[c]!) * (lp[c]! - [L(0.25), L(0.75)][c]! - kl)));
  });
  it('entropy of [½, ¼, ¼] is 1.5 ln 2', () => close(value(rowEntropy(tf.tensor3d([[[L(0.5), L(0.25), L(0.25)]]]))), 1.5 * L(2)));
  it('nll: −mean log π of the trained positions', () =>
    close(value(nllLoss(t2([[L(0.5), L(0.25), -99]]), t2([[1, 1, 0]]), 'token-mean')), -(L(0.5) + L(0.25)) / 2));
});

describe('objectiveLoss', () => {
  const rows = tf.tensor3d([
    [
      [L(0.5), L(0.25), L(0.25)],
      [L(0.1), L(0.6), L(0.3)],
    ],
  ]); // [1, 2, 3]
  const logp = t2([[L(0.5), L(0.3)]]); // targets 0 and 2
  const base = { logRows: rows, logp, mask: t2([[1, 1]]), oldLogp: logp, advantages: t2([[0.5]]), argmaxHit: t2([[1, 0]]) };
  it('policy gradient + β·k1 at ratio 1: −A + β·mean(d), and its parts', () => {
    const spec: LossSpec = {
      kind: 'policy-gradient',
      clipLow: 0.2,
      clipHigh: 0.2,
      dualClip: 0,
      klCoef: 0.1,
      klEstimator: 'k1',
      aggregation: 'token-mean',
      normTokens: 1,
      temperature: 1,
    };
    const ref = t2([[L(0.25), L(0.3)]]);
    let parts: Partial<ObjectiveParts> = {};
    const loss = objectiveLoss(spec, { ...base, refLogp: ref }, (p) => (parts = { ...p }));
    close(value(loss), -0.5 + (0.1 * (L(2) + 0)) / 2);
    close(value(parts.kl!), L(2) / 2);
    close(value(parts.policyLoss!), -0.5);
    close(value(parts.ratioMin!), 1);
    close(value(parts.tokenAccuracy!), 0.5);
    close(value(parts.entropy!), (1.5 * L(2) - (0.1 * L(0.1) + 0.6 * L(0.6) + 0.3 * L(0.3))) / 2);
  });
  it("token statistics: each position's log-prob, ratio, clip side, entropy and KL, only when asked", () => {
    const spec: LossSpec = {
      kind: 'policy-gradient',
      clipLow: 0.2,
      clipHigh: 0.28,
      dualClip: 0,
      klCoef: 0.1,
      klEstimator: 'k1',
      aggregation: 'token-mean',
      normTokens: 1,
      temperature: 1,
    };
    // π_old: the first token's 0.25 (ratio 2 > 1.28 with A > 0: the high clip), the second's 0.3 (ratio 1)
    const x = { ...base, oldLogp: t2([[L(0.25), L(0.3)]]), refLogp: t2([[L(0.25), L(0.3)]]) };
    let got: ObjectiveParts | undefined;
    objectiveLoss(spec, x, (p) => (got = p));
    assert.equal(got!.perToken, undefined);
    objectiveLoss({ ...spec, tokenStats: true }, x, (p) => (got = p));
    const row = (t: tf.Tensor | undefined): number[] => Array.from(t!.dataSync());
    const tok = got!.perToken!;
    row(tok.logp).forEach((v, i) => close(v, [L(0.5), L(0.3)][i]!));
    row(tok.ratio).forEach((v, i) => close(v, [2, 1][i]!));
    assert.deepEqual(row(tok.clipSide), [2, 0]);
    row(tok.kl).forEach((v, i) => close(v, [L(2), 0][i]!));
    row(tok.entropy).forEach((v, i) => close(v, [1.5 * L(2), -(0.1 * L(0.1) + 0.6 * L(0.6) + 0.3 * L(0.3))][i]!));
    // a negative advantage below 1 − ε_low is the low clip
    objectiveLoss({ ...spec, tokenStats: true }, { ...x, oldLogp: t2([[L(0.9), L(0.3)]]), advantages: t2([[-0.5]]) }, (p) => (got = p));
    assert.deepEqual(row(got!.perToken!.clipSide), [1, 0]);
  });
  it('the exact KL uses the reference rows', () => {
    const spec: LossSpec = {
      kind: 'policy-gradient',
      clipLow: 0.2,
      clipHigh: 0.2,
      dualClip: 0,
      klCoef: 1,
      klEstimator: 'exact',
      aggregation: 'token-mean',
      normTokens: 1,
      temperature: 1,
    };
    let kl = 0;
    objectiveLoss(spec, { ...base, advantages: t2([[0]]), refRows: rows }, (p) => (kl = value(p.kl)));
    close(kl, 0);
  });
});
