import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { logSoftmax } from '../../../../src/rl/algo/losses';
import type { TabularSpec } from '../../../../src/rl/envs/environment';
import type { Objective } from '../../../../src/rl/policies/policy';
import { TablePolicy } from '../../../../src/rl/policies/table/tablePolicy';
import { Rng } from '../../../../src/rl/random';
import type { Trajectory } from '../../../../src/shared/types';

const spec: TabularSpec = { stateCount: 3, actions: ['a', 'b', 'c'], stateOf: (o) => o.data.s as number };

function traj(steps: [number, number, number][], advantage: number): Trajectory {
  // steps: [state, action, behaviour logprob]
  return {
    taskId: 't', group: 0, indexInGroup: 0, termination: 'finished', policyVersion: 0, advantage,
    outcome: { reward: 0, success: false, publicPass: false, privatePass: false },
    turns: steps.map(([s, a, lp], index) => ({
      index, actionText: spec.actions[a]!, action: { kind: 'tool', name: spec.actions[a]!, args: {} },
      observation: { text: '', data: {} }, policy: { behaviourLogprob: lp, policyVersion: 0, stateIndex: s, actionIndex: a },
    })),
  };
}

describe('TablePolicy', () => {
  it('starts uniform; samples record the behaviour log-prob ln(1/A) and version 0', async () => {
    const p = new TablePolicy(spec, 0.1);
    const [s] = await p.sample([{ task: { id: 't', prompt: '', data: {} }, observation: { text: '', data: { s: 1 } }, turns: [] }], new Rng(5));
    assert.ok(Math.abs(s!.step.behaviourLogprob - Math.log(1 / 3)) < 1e-15);
    assert.equal(s!.step.stateIndex, 1);
    assert.equal(s!.step.policyVersion, 0);
  });

  it('exact KL to the frozen initial table: hand-computed after setting the logits', () => {
    const p = new TablePolicy(spec, 0.1);
    p.logits.set([Math.log(0.5), Math.log(0.25), Math.log(0.25)], 0); // state 0 → π = [½, ¼, ¼], ref uniform
    const loss = p.lossAndGradient([traj([[0, 0, Math.log(0.5)]], 0)], { kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 1 });
    const expected = 0.5 * Math.log(0.5 * 3) + 2 * 0.25 * Math.log(0.25 * 3); // Σ π (ln π − ln ⅓)
    assert.ok(Math.abs(loss.kl - expected) < 1e-12, `${loss.kl} vs ${expected}`);
    assert.ok(Math.abs(loss.loss - expected) < 1e-12); // A = 0 and ratio 1: only β·KL remains
  });

  for (const objective of [
    { kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 0.05 },
    { kind: 'nll' },
  ] satisfies Objective[]) {
    it(`${objective.kind}: gradient matches central finite differences`, () => {
      const p = new TablePolicy(spec, 0.1);
      p.logits.set([0.3, -0.2, 0.1, 0.9, 0, -0.4, 0.05, 0.5, -1]);
      // Behaviour log-probs chosen so some ratios sit inside and some outside the clip range.
      const batch = [
        traj([[0, 1, logSoftmax([0.3, -0.2, 0.1])[1]! + 0.05], [1, 0, -1.5]], 1.2),
        traj([[2, 2, -0.5], [0, 0, -1.1], [1, 2, -2]], -0.8),
      ];
      const { grad } = p.lossAndGradient(batch, objective);
      const h = 1e-6;
      for (let i = 0; i < p.logits.length; i++) {
        const orig = p.logits[i]!;
        p.logits[i] = orig + h;
        const up = p.lossAndGradient(batch, objective).loss;
        p.logits[i] = orig - h;
        const down = p.lossAndGradient(batch, objective).loss;
        p.logits[i] = orig;
        const fd = (up - down) / (2 * h);
        assert.ok(Math.abs(grad[i]! - fd) < 1e-7, `param ${i}: ${grad[i]} vs ${fd}`);
      }
    });
  }

  it('per-trajectory mean then batch mean: a long trajectory weighs as much as a short one', () => {
    const p = new TablePolicy(spec, 0.1);
    const lp = Math.log(1 / 3);
    const obj = { kind: 'nll' } as const;
    const short = traj([[0, 0, lp]], 0);
    const long = traj([[1, 0, lp], [1, 0, lp], [1, 0, lp], [1, 0, lp]], 0);
    const { grad } = p.lossAndGradient([short, long], obj);
    // each trajectory contributes total weight ½ to its state's row: −½ · (onehot − ⅓)
    assert.ok(Math.abs(grad[0]! - -0.5 * (2 / 3)) < 1e-12);
    assert.ok(Math.abs(grad[3]! - -0.5 * (2 / 3)) < 1e-12);
  });

  it('on-policy first epoch: every ratio is exactly 1; a large learning rate makes the next epoch clip', async () => {
    const p = new TablePolicy(spec, 5);
    const rng = new Rng(11);
    const ctx = (s: number) => ({ task: { id: 't', prompt: '', data: {} }, observation: { text: '', data: { s } }, turns: [] });
    const samples = await p.sample([ctx(0), ctx(0), ctx(1), ctx(2)], rng);
    const batch = samples.map((s, i) => traj([[s.step.stateIndex!, s.step.actionIndex!, s.step.behaviourLogprob]], i % 2 === 0 ? 1 : -1));
    const first = p.update(batch, { kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 0 }, 1);
    assert.equal(first.ratioMin, 1);
    assert.equal(first.ratioMax, 1);
    assert.equal(first.clipFraction, 0);
    const second = p.update(batch, { kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 0 }, 1);
    assert.ok(second.clipFraction > 0, `clip fraction ${second.clipFraction}`);
    assert.ok(second.ratioMax > 1.2 || second.ratioMin < 0.8);
    assert.equal(p.version, 2);
  });
});
