// bench/peersReport.ts: per round each side's median step, the ratio TRL / workbench per round and the
// median ratio with its spread; pass@1 means; the targets' verdicts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeRounds, median, peersTargets, type PeerRun } from '../../../bench/peersReport';

const run = (side: PeerRun['side'], round: number, seconds: number[], generate: number, pass: number): PeerRun => ({
  side,
  round,
  steps: seconds.map((s) => ({ seconds: s, generateSeconds: generate, rewardMean: 0 })),
  greedyPassAt1: pass,
  ...(side === 'workbench' ? { warmStartPassAt1: 0.1 } : {}),
});

describe('bench/peersReport', () => {
  it('takes medians of odd and even counts', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });

  it('pairs each round, then gives the median ratio and its spread', () => {
    const runs = [
      run('workbench', 0, [1, 1, 9], 0.5, 0.2),
      run('trl', 0, [4, 4, 4], 2, 0.1),
      run('trl', 1, [3, 3, 3], 1, 0.3),
      run('workbench', 1, [1, 1, 1], 0.5, 0.2),
      run('workbench', 2, [2, 2, 2], 1, 0.2),
      run('trl', 2, [2, 2, 2], 1, 0.2),
    ];
    const { summary, lines } = describeRounds(runs, 3);
    // per round: 4/1, 3/1, 2/2 (the workbench's slow step is not its median)
    assert.deepEqual(summary.ratio.step, { median: 3, min: 1, max: 4 });
    // generation: 2/0.5, 1/0.5, 1/1; the rest: 2/0.5, 2/0.5, 1/1
    assert.deepEqual(summary.ratio.generate, { median: 2, min: 1, max: 4 });
    assert.deepEqual(summary.ratio.rest, { median: 4, min: 1, max: 4 });
    assert.ok(Math.abs(summary.passAt1.trl.mean - 0.2) < 1e-12);
    assert.deepEqual(summary.passAt1.workbench.rounds, [0.2, 0.2, 0.2]);
    assert.equal(summary.warmStartPassAt1, 0.1);
    assert.match(lines[1]!, /3\.00× \(1\.00–4\.00\) over 3 rounds/);
    assert.deepEqual(peersTargets({ summary }, [{ ok: true }]).met, true);
    assert.deepEqual(peersTargets({ summary }, [{ ok: true }, { ok: false }]).met, false);
    assert.deepEqual(peersTargets({ summary }, []).met, false);
  });

  it('misses the targets when TRL is faster or better held out, and names a round without a side', () => {
    const slower = describeRounds([run('workbench', 0, [2], 1, 0.5), run('trl', 0, [1], 0.5, 0.5)], 1);
    assert.equal(peersTargets(slower, [{ ok: true }]).met, false);
    const worse = describeRounds([run('workbench', 0, [1], 0.5, 0.1), run('trl', 0, [2], 1, 0.2)], 1);
    assert.match(peersTargets(worse, [{ ok: true }]).lines[1]!, /NOT met/);
    assert.throws(() => describeRounds([run('workbench', 0, [1], 0.5, 0.1)], 1), /round 1: no trl run/);
  });
});
