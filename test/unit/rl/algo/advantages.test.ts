import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { groupAdvantages } from '../../../../src/rl/algo/advantages';

const close = (a: number, b: number, tol = 1e-9): void => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

describe('groupAdvantages', () => {
  it('population std: rewards [1,0,0,0] → mean 0.25, std √0.1875', () => {
    const r = groupAdvantages([1, 0, 0, 0], 'population');
    close(r.mean, 0.25);
    close(r.std, Math.sqrt(0.1875)); // ((0.75)² + 3·(0.25)²) / 4 = 0.1875
    close(r.advantages[0]!, 0.75 / Math.sqrt(0.1875)); // 1.7320508…
    close(r.advantages[0]!, 1.7320508075688772);
    for (const a of r.advantages.slice(1)) close(a, -0.5773502691896258);
    assert.equal(r.zeroVariance, false);
  });

  it('sample std (n − 1): rewards [1,0,0,0] → std 0.5, advantages [1.5, −0.5, −0.5, −0.5]', () => {
    const r = groupAdvantages([1, 0, 0, 0], 'sample');
    close(r.std, 0.5); // 0.75 / 3 = 0.25
    assert.deepEqual(r.advantages.map((a) => Math.round(a * 1e12) / 1e12), [1.5, -0.5, -0.5, -0.5]);
  });

  it('non-binary rewards [0.1, 1.1, 0.6]: population std √(1/6)', () => {
    const r = groupAdvantages([0.1, 1.1, 0.6], 'population');
    close(r.mean, 0.6);
    close(r.std, Math.sqrt(0.5 / 3));
    close(r.advantages[0]!, -0.5 / Math.sqrt(0.5 / 3));
    close(r.advantages[2]!, 0);
  });

  it('a group whose rewards are all equal gets advantage 0 and is flagged', () => {
    for (const rewards of [[1, 1, 1, 1], [0, 0], [0.3, 0.3, 0.3]]) {
      for (const std of ['population', 'sample'] as const) {
        const r = groupAdvantages(rewards, std);
        assert.equal(r.zeroVariance, true);
        assert.deepEqual(r.advantages, rewards.map(() => 0));
      }
    }
  });

  it('rejects empty groups, and groups of one for the sample std', () => {
    assert.throws(() => groupAdvantages([], 'population'), /empty group/);
    assert.throws(() => groupAdvantages([1], 'sample'), /at least 2/);
  });
});
