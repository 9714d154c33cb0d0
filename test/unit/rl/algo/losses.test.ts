import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clippedSurrogate, dLogpDLogits, entropy, exactKl, logSoftmax } from '../../../../src/rl/algo/losses';

const close = (a: number, b: number, tol = 1e-9): void => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

describe('clippedSurrogate (ε = 0.2)', () => {
  const at = (ratio: number, adv: number) => clippedSurrogate(Math.log(ratio), 0, adv, 0.2);

  it('ratio 1 (first epoch): objective A, gradient A, nothing clipped', () => {
    const t = clippedSurrogate(-1.3, -1.3, 0.7, 0.2);
    assert.equal(t.ratio, 1);
    close(t.objective, 0.7);
    close(t.dLogp, 0.7);
    assert.equal(t.clippedHigh || t.clippedLow, false);
  });

  it('A > 0, ratio 1.5 above 1+ε: objective 1.2·A, no gradient (clipped high)', () => {
    const t = at(1.5, 2);
    close(t.objective, 2.4);
    assert.equal(t.dLogp, 0);
    assert.equal(t.clippedHigh, true);
  });

  it('A > 0, ratio 0.5 below 1−ε: min picks ratio·A = 0.5·A, gradient flows', () => {
    const t = at(0.5, 2);
    close(t.objective, 1.0);
    close(t.dLogp, 1.0);
    assert.equal(t.clippedHigh || t.clippedLow, false);
  });

  it('A < 0, ratio 0.5 below 1−ε: objective 0.8·A, no gradient (clipped low)', () => {
    const t = at(0.5, -1);
    close(t.objective, -0.8);
    assert.equal(t.dLogp, 0);
    assert.equal(t.clippedLow, true);
  });

  it('A < 0, ratio 1.5 above 1+ε: min picks ratio·A = −1.5, gradient flows', () => {
    const t = at(1.5, -1);
    close(t.objective, -1.5);
    close(t.dLogp, -1.5);
    assert.equal(t.clippedHigh || t.clippedLow, false);
  });

  it('inside the clip range the gradient is ratio·A; separate low/high ε are honoured', () => {
    close(at(1.1, 3).dLogp, 3.3);
    const t = clippedSurrogate(Math.log(1.25), 0, 1, 0.2, 0.28); // 1.25 < 1 + 0.28: not clipped
    assert.equal(t.clippedHigh, false);
    close(t.objective, 1.25);
  });
});

describe('exact KL over a categorical distribution', () => {
  it('KL([½, ½] ‖ [¼, ¾]) = ½ ln 2 + ½ ln(2/3) = 0.1438410362', () => {
    const k = exactKl([Math.log(0.5), Math.log(0.5)], [Math.log(0.25), Math.log(0.75)]);
    close(k.kl, 0.5 * Math.log(2) + 0.5 * Math.log(2 / 3));
    close(k.kl, 0.14384103622589045);
  });

  it('is 0 with zero gradient for identical distributions', () => {
    const l = logSoftmax([0.3, -1, 2]);
    const k = exactKl(l, l);
    close(k.kl, 0);
    for (const g of k.dLogits) close(g, 0);
  });

  it('gradient w.r.t. logits matches central finite differences', () => {
    const logits = [0.4, -0.7, 1.1, 0.05];
    const ref = logSoftmax([0, 0, 0, 0]);
    const { dLogits } = exactKl(logSoftmax(logits), ref);
    const h = 1e-6;
    logits.forEach((_, i) => {
      const up = [...logits];
      const down = [...logits];
      up[i]! += h;
      down[i]! -= h;
      const fd = (exactKl(logSoftmax(up), ref).kl - exactKl(logSoftmax(down), ref).kl) / (2 * h);
      close(dLogits[i]!, fd, 1e-8);
    });
  });
});

describe('softmax helpers', () => {
  it('logSoftmax of equal logits is ln(1/A); entropy of uniform over 6 is ln 6', () => {
    const l = logSoftmax([0, 0, 0, 0, 0, 0]);
    for (const x of l) close(x, -Math.log(6));
    close(entropy(l), Math.log(6));
  });

  it('∂ log π(a)/∂ logits = onehot(a) − π', () => {
    const d = dLogpDLogits(logSoftmax([0, 0, 0, 0]), 2);
    assert.deepEqual(Array.from(d, (x) => Math.round(x * 1e12) / 1e12), [-0.25, -0.25, 0.75, -0.25]);
  });
});
