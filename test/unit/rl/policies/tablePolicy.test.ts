// The table policy on tfjs, trained through the learner like every policy.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ADAM_DEFAULTS } from '../../../../src/rl/algo/adamw';
import type { LossSpec } from '../../../../src/rl/algo/objective';
import type { TabularSpec } from '../../../../src/rl/envs/environment';
import { TablePolicy } from '../../../../src/rl/policies/table/tablePolicy';
import { Rng } from '../../../../src/rl/random';
import { shardGradients } from '../../../../src/rl/algo/gradients';
import { Learner } from '../../../../src/rl/train/learner';
import { algorithmDefaults, type AlgorithmSettings } from '../../../../src/shared/algorithm';
import type { Trajectory } from '../../../../src/shared/types';
import { policyLogprobs } from '../../../../src/rl/train/passes';

before(async () => {
  await tf.setBackend('cpu');
});

const spec: TabularSpec = { stateCount: 3, actions: ['a', 'b', 'c'], stateOf: (o) => o.data.s as number };
const seed002 = (o: Partial<AlgorithmSettings> = {}): AlgorithmSettings => ({ ...algorithmDefaults('binary-search', 'table', 'grpo'), ...o });

function traj(steps: [number, number, number][], advantage: number, reward = 0): Trajectory {
  // steps: [state, action, behaviour logprob]
  return {
    taskId: 't',
    group: 0,
    indexInGroup: 0,
    termination: 'finished',
    policyVersion: 0,
    advantage,
    outcome: { reward, success: reward > 0, publicPass: false, privatePass: false },
    turns: steps.map(([s, a, lp], index) => ({
      index,
      actionText: spec.actions[a]!,
      action: { kind: 'tool', name: spec.actions[a]!, args: {} },
      observation: { text: '', data: {} },
      policy: { behaviourLogprob: lp, policyVersion: 0, stateIndex: s, actionIndex: a },
    })),
  };
}

const policy = (): TablePolicy => new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');

describe('TablePolicy', () => {
  it('starts uniform; samples record the behaviour log-prob ln(1/A) and version 0', async () => {
    const p = policy();
    const [s] = await p.sample([{ task: { id: 't', prompt: '', data: {} }, observation: { text: '', data: { s: 1 } }, turns: [] }], new Rng(5));
    assert.ok(Math.abs(s!.step.behaviourLogprob - Math.log(1 / 3)) < 1e-6);
    assert.equal(s!.step.stateIndex, 1);
    assert.equal(s!.step.policyVersion, 0);
  });

  it('exact KL to the frozen initial table, hand-computed after setting the logits', async () => {
    const p = policy();
    p.table.assign(
      tf.tensor2d([
        [Math.log(0.5), Math.log(0.25), Math.log(0.25)],
        [0, 0, 0],
        [0, 0, 0],
      ]),
    ); // state 0 → π = [½, ¼, ¼], ref uniform
    const learner = new Learner(p, { method: 'grpo', settings: seed002({ klCoef: 1, epochs: 1 }), imitate: 'all', totalSteps: 1, seed: 1 });
    const r = await learner.train([p.sequence(traj([[0, 0, Math.log(0.5)]], 0))!]);
    const expected = 0.5 * Math.log(0.5 * 3) + 2 * 0.25 * Math.log(0.25 * 3); // Σ π (ln π − ln ⅓)
    assert.ok(Math.abs(r.kl - expected) < 1e-6, `${r.kl} vs ${expected}`);
    assert.ok(Math.abs(r.loss - expected) < 1e-6); // A = 0 and ratio 1: only β·KL remains
  });

  const specs: LossSpec[] = [
    {
      kind: 'policy-gradient',
      clipLow: 0.2,
      clipHigh: 0.2,
      dualClip: 0,
      klCoef: 0.05,
      klEstimator: 'exact',
      aggregation: 'seq-mean-token-mean',
      normTokens: 1,
      temperature: 1,
    },
    { kind: 'nll', aggregation: 'seq-mean-token-mean', normTokens: 1 },
  ];
  for (const lossSpec of specs) {
    it(`${lossSpec.kind}: the gradient matches central finite differences`, async () => {
      const p = policy();
      const values = [0.3, -0.2, 0.1, 0.9, 0, -0.4, 0.05, 0.5, -1];
      p.table.assign(tf.tensor2d(values, [3, 3]));
      // Behaviour log-probs chosen so some ratios sit inside and some outside the clip range.
      const row0 = tf.logSoftmax(tf.tensor1d([0.3, -0.2, 0.1])).dataSync();
      const seqs = [
        traj(
          [
            [0, 1, row0[1]! + 0.05],
            [1, 0, -1.5],
          ],
          1.2,
        ),
        traj(
          [
            [2, 2, -0.5],
            [0, 0, -1.1],
            [1, 2, -2],
          ],
          -0.8,
        ),
      ].map((t) => ({ seq: { ...p.sequence(t)!, advantage: t.advantage } }));
      const ref = await policyLogprobs(
        p,
        seqs.map((x) => x.seq),
        { model: 'reference', temperature: 1, rows: true },
      );
      const inputs = seqs.map((x, i) => ({ ...x, ref: ref.logp[i]!, refRows: ref.rows![i]! }));
      const loss = async (): Promise<number> => {
        const r = await shardGradients(p, inputs, lossSpec);
        tf.dispose(r.grads);
        return r.stats.loss;
      };
      const { grads } = await shardGradients(p, inputs, lossSpec);
      const g = grads[0]!.dataSync();
      const h = 1e-2;
      for (let i = 0; i < values.length; i++) {
        const at = async (delta: number): Promise<number> => {
          const x = values.slice();
          x[i] = x[i]! + delta;
          p.table.assign(tf.tensor2d(x, [3, 3]));
          return loss();
        };
        const fd = ((await at(h)) - (await at(-h))) / (2 * h);
        assert.ok(Math.abs(g[i]! - fd) < 2e-3 + 0.02 * Math.abs(fd), `param ${i}: ${g[i]} vs ${fd}`);
      }
    });
  }

  it('per-trajectory mean then batch mean: a long trajectory weighs as much as a short one', async () => {
    const p = policy();
    const lp = Math.log(1 / 3);
    const short = { seq: p.sequence(traj([[0, 0, lp]], 0))! };
    const long = {
      seq: p.sequence(
        traj(
          [
            [1, 0, lp],
            [1, 0, lp],
            [1, 0, lp],
            [1, 0, lp],
          ],
          0,
        ),
      )!,
    };
    const { grads } = await shardGradients(p, [short, long], { kind: 'nll', aggregation: 'seq-mean-token-mean', normTokens: 1 });
    const g = grads[0]!.dataSync();
    // each trajectory contributes total weight ½ to its state's row: −½ · (onehot − ⅓)
    assert.ok(Math.abs(g[0]! - -0.5 * (2 / 3)) < 1e-6);
    assert.ok(Math.abs(g[3]! - -0.5 * (2 / 3)) < 1e-6);
  });

  it('on-policy first epoch: every ratio is exactly 1; a large learning rate makes the next update clip', async () => {
    const p = policy();
    const rng = new Rng(11);
    const ctx = (s: number) => ({ task: { id: 't', prompt: '', data: {} }, observation: { text: '', data: { s } }, turns: [] });
    const samples = await p.sample([ctx(0), ctx(0), ctx(1), ctx(2)], rng);
    const batch = samples.map((s, i) => traj([[s.step.stateIndex!, s.step.actionIndex!, s.step.behaviourLogprob]], i % 2 === 0 ? 1 : -1));
    const learner = new Learner(p, { method: 'grpo', settings: seed002({ learningRate: 5, klCoef: 0, epochs: 1 }), imitate: 'all', totalSteps: 2, seed: 1 });
    const first = await learner.update(batch);
    assert.ok(Math.abs(first.ratioMin - 1) < 1e-6 && Math.abs(first.ratioMax - 1) < 1e-6, `${first.ratioMin} ${first.ratioMax}`);
    assert.equal(first.clipFraction, 0);
    const second = await learner.update(batch);
    assert.ok(second.clipFraction > 0, `clip fraction ${second.clipFraction}`);
    assert.ok(second.ratioMax > 1.2 || second.ratioMin < 0.8);
    assert.equal(p.version, 2);
  });
});
