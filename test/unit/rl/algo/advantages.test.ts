import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { groupAdvantages, type AdvantageOptions } from '../../../../src/rl/algo/advantages';

const close = (a: number, b: number, tol = 1e-9): void => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);
const grpo = (std: 'population' | 'sample', epsilon = 0): AdvantageOptions => ({ estimator: 'grpo', std, epsilon });

describe('groupAdvantages', () => {
  it('grpo, population std: rewards [1,0,0,0] → mean 0.25, std √0.1875', () => {
    const r = groupAdvantages([1, 0, 0, 0], grpo('population'));
    close(r.mean, 0.25);
    close(r.std, Math.sqrt(0.1875)); // ((0.75)² + 3·(0.25)²) / 4 = 0.1875
    close(r.advantages[0]!, 1.7320508075688772);
    for (const a of r.advantages.slice(1)) close(a, -0.5773502691896258);
    assert.equal(r.zeroVariance, false);
  });

  it('grpo, sample std (n − 1): rewards [1,0,0,0] → std 0.5, advantages [1.5, −0.5, −0.5, −0.5]', () => {
    const r = groupAdvantages([1, 0, 0, 0], grpo('sample'));
    close(r.std, 0.5);
    assert.deepEqual(
      r.advantages.map((a) => Math.round(a * 1e12) / 1e12),
      [1.5, -0.5, -0.5, -0.5],
    );
  });

  it('grpo with ε = 1e-6 (verl): 0.75 / (0.5 + 1e-6)', () => close(groupAdvantages([1, 0, 0, 0], grpo('sample', 1e-6)).advantages[0]!, 0.75 / 0.500001, 1e-12));

  it('dr-grpo: r − mean, no std: [1, 0, 0, 0] → [0.75, −0.25, −0.25, −0.25]', () => {
    assert.deepEqual(groupAdvantages([1, 0, 0, 0], { estimator: 'dr-grpo', std: 'population', epsilon: 0 }).advantages, [0.75, -0.25, -0.25, -0.25]);
  });

  it('rloo: r_i − mean of the others: [1, 0, 0, 0] → [1, −⅓, −⅓, −⅓] = G/(G−1)·(r − mean)', () => {
    const r = groupAdvantages([1, 0, 0, 0], { estimator: 'rloo', std: 'population', epsilon: 0 });
    close(r.advantages[0]!, 1);
    for (const a of r.advantages.slice(1)) close(a, -1 / 3);
    assert.throws(() => groupAdvantages([1], { estimator: 'rloo', std: 'population', epsilon: 0 }), /at least 2/);
  });

  it('non-binary rewards [0.1, 1.1, 0.6]: population std √(1/6)', () => {
    const r = groupAdvantages([0.1, 1.1, 0.6], grpo('population'));
    close(r.mean, 0.6);
    close(r.std, Math.sqrt(0.5 / 3));
    close(r.advantages[0]!, -0.5 / Math.sqrt(0.5 / 3));
    close(r.advantages[2]!, 0);
  });

  it('a group whose rewards are all equal gets advantage 0 and is flagged, for every estimator', () => {
    for (const rewards of [
      [1, 1, 1, 1],
      [0, 0],
      [0.3, 0.3, 0.3],
    ]) {
      for (const o of [
        grpo('population', 1e-6),
        grpo('sample'),
        { estimator: 'dr-grpo', std: 'population', epsilon: 0 },
        { estimator: 'rloo', std: 'population', epsilon: 0 },
      ] as AdvantageOptions[]) {
        const r = groupAdvantages(rewards, o);
        assert.ok(
          r.advantages.every((a) => a === 0),
          `${o.estimator} ${rewards.join(',')}`,
        );
        assert.equal(r.zeroVariance, true);
      }
    }
  });

  it('the sample std needs two members; an empty group is an error', () => {
    assert.throws(() => groupAdvantages([1], grpo('sample')), /at least 2/);
    assert.throws(() => groupAdvantages([], grpo('population')), /empty/);
  });
});
