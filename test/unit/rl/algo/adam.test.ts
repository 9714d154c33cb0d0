import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Adam } from '../../../../src/rl/algo/adam';

describe('Adam', () => {
  it('first step moves each parameter by lr · g / (|g| + eps) (bias-corrected)', () => {
    const p = new Float64Array([0, 1, -2]);
    const adam = new Adam(3, { lr: 0.08 });
    adam.apply(p, [2, -0.5, 0]);
    assert.ok(Math.abs(p[0]! - -0.08 * (2 / (2 + 1e-8))) < 1e-15);
    assert.ok(Math.abs(p[1]! - (1 + 0.08 * (0.5 / (0.5 + 1e-8)))) < 1e-15);
    assert.equal(p[2], -2); // zero gradient, zero moments: unchanged
  });

  it('second step uses both moments: hand-computed', () => {
    const p = new Float64Array([0]);
    const adam = new Adam(1, { lr: 0.1 });
    adam.apply(p, [1]);
    adam.apply(p, [3]);
    // m2 = 0.9·0.1 + 0.1·3 = 0.39, v2 = 0.999·0.001 + 0.001·9 = 0.009999
    const mHat = 0.39 / (1 - 0.81);
    const vHat = 0.009999 / (1 - 0.999 ** 2);
    const expected = -0.1 * (1 / (1 + 1e-8)) - (0.1 * mHat) / (Math.sqrt(vHat) + 1e-8);
    assert.ok(Math.abs(p[0]! - expected) < 1e-12, `${p[0]} vs ${expected}`);
  });
});
