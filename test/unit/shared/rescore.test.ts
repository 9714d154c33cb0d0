import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIterationRange, rewardOutliers, summarizeRescore, type RescoreItem, type Score } from '../../../src/shared/rescore';

const score = (reward: number, success = reward >= 1, publicPass = success, privatePass = success): Score => ({ reward, success, publicPass, privatePass });

function item(id: number, old: Score, now: Score | null, iteration = 1, error: string | null = null): RescoreItem {
  return { trajectoryId: id, iteration, group: 0, indexInGroup: id, taskId: `t${id}`, old, new: now, error };
}

describe('re-score arithmetic', () => {
  it('parses iteration ranges and refuses the rest with the flag named', () => {
    assert.deepEqual(parseIterationRange('3..7'), { from: 3, to: 7 });
    assert.deepEqual(parseIterationRange('3..'), { from: 3, to: null });
    assert.deepEqual(parseIterationRange('..7'), { from: null, to: 7 });
    assert.deepEqual(parseIterationRange('4'), { from: 4, to: 4 });
    for (const bad of ['', '..', 'a..b', '1-3', '1...3', '-1..2']) assert.throws(() => parseIterationRange(bad), /--iterations .*write A\.\.B/, bad);
    assert.throws(() => parseIterationRange('7..3'), /ends \(3\) before it starts \(7\)\. Fix: write 3\.\.7/);
  });

  it('counts changes, means over the scored set, success flips, the largest differences first, errors apart', () => {
    const items = [
      item(1, score(1), score(1)),
      item(2, score(1), score(0.25)), // Δ −0.75, to failure
      item(3, score(0), score(1)), // Δ +1, to success
      item(4, score(0.5, false), score(0.5 + 1e-12, false)), // noise: unchanged
      item(5, score(1), null, 1, 'reward.py: reward() raised'),
      item(6, score(0, false), score(0, true)), // same reward, success flipped: changed
    ];
    const s = summarizeRescore(items);
    assert.equal(s.trajectories, 6);
    assert.equal(s.scored, 5);
    assert.equal(s.errors, 1);
    assert.equal(s.changed, 3);
    assert.equal(s.oldMean, (1 + 1 + 0 + 0.5 + 0) / 5);
    assert.ok(Math.abs(s.newMean - (1 + 0.25 + 1 + 0.5 + 0) / 5) < 1e-9);
    assert.equal(s.toSuccess, 2);
    assert.equal(s.toFailure, 1);
    assert.deepEqual(
      s.largest.map((d) => [d.trajectoryId, d.delta, d.successFlip]),
      [
        [3, 1, 'to success'],
        [2, -0.75, 'to failure'],
        [6, 0, 'to success'],
      ],
    );
    assert.deepEqual(s.firstErrors, [{ trajectoryId: 5, error: 'reward.py: reward() raised' }]);
  });

  it('flags rewards above mean + 3 sd of their own iteration, and public-pass/private-fail episodes', () => {
    // iteration 1: nineteen 0s and one 10 (mean 0.5, sd ≈ 2.18: 10 > 7.04); iteration 2: constant, no outlier
    const items = [
      ...Array.from({ length: 19 }, (_, i) => item(i + 1, score(0), score(0), 1)),
      item(20, score(0), score(10, true, true, false), 1),
      ...Array.from({ length: 5 }, (_, i) => item(30 + i, score(1), score(1), 2)),
    ];
    const out = rewardOutliers(items);
    assert.equal(out.length, 1);
    assert.equal(out[0]!.trajectoryId, 20);
    assert.equal(out[0]!.mean, 0.5);
    assert.ok(Math.abs(out[0]!.sd - Math.sqrt((19 * 0.25 + 9.5 ** 2) / 20)) < 1e-12);
    assert.deepEqual(summarizeRescore(items).publicPassPrivateFail, [20]);
    // four values can never sit 3 sd above their mean (at most (n−1)/√n sd)
    assert.deepEqual(rewardOutliers([0, 0, 0, 100].map((r, i) => item(i, score(0), score(r)))), []);
  });
});
