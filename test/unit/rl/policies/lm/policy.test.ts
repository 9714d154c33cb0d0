// Properties of the transformer policy's training step on the engine (a fresh model, every weight
// trained), and of the learner's gradient code on the engine's packed passes and the tfjs decoder's
// micro-batches.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { RunEnvironment, Task } from '../../../../../src/rl/envs/environment';
import type { LossSpec } from '../../../../../src/rl/algo/objective';
import { initBackend } from '../../../../../src/rl/policies/lm/models/tfjsBackend';
import { HfModel, hfDifferentiable } from '../../../../../src/rl/policies/lm/models/hfModel';
import type { EngineModel } from '../../../../../src/rl/policies/lm/models/engine/engineModel';
import { HfTokenizer } from '../../../../../src/rl/policies/lm/tokenizer';
import { trajectorySequence, type TransformerPolicy } from '../../../../../src/rl/policies/lm/transformerPolicy';
import { Rng } from '../../../../../src/rl/random';
import { runEpisodes } from '../../../../../src/rl/rollout/agentLoop';
import { microbatches, type LossInput, type LossStats, type TrainSequence } from '../../../../../src/rl/algo/trainSequence';
import { shardGradients, type TokenScorer } from '../../../../../src/rl/algo/gradients';
import { Learner } from '../../../../../src/rl/train/learner';
import { AGGREGATIONS, algorithmDefaults, type AlgorithmSettings } from '../../../../../src/shared/algorithm';
import type { MethodName } from '../../../../../src/shared/runConfig';
import type { Trajectory } from '../../../../../src/shared/types';
import { characterTokenizerDir, freshModel, freshPolicy } from '../../../../helpers/freshPolicy';

before(async () => {
  await initBackend('wasm');
});

/** A four-letter world's vocabulary: the prompt "Q", the letters, the stop "!". */
const LETTERS = ['Q', 'a', 'b', 'c', '!', '\n', ' '];
const letterTokenizer = (): string => characterTokenizerDir(LETTERS);
const tiny = (o: { hidden?: number; heads?: number; seed?: number } = {}): string =>
  freshModel({ hidden: o.hidden ?? 16, heads: o.heads ?? 2, intermediate: 24, maxPositions: 24, tokenizer: letterTokenizer(), seed: o.seed ?? 7 });
const pgSpec: LossSpec = {
  kind: 'policy-gradient',
  clipLow: 0.2,
  clipHigh: 0.28,
  dualClip: 0,
  klCoef: 0.05,
  klEstimator: 'k3',
  aggregation: 'seq-mean-token-mean',
  normTokens: 8,
  temperature: 1,
};

/** A four-letter world: the prompt is "Q", the policy writes up to 4 letters or stops at "!"; reward = share of "a". */
const letters = (): HfTokenizer => HfTokenizer.fromDirectory(letterTokenizer());
const letterEnv: RunEnvironment = {
  name: 'letters',
  description: 'test world',
  stop: { strings: ['!'] },
  tasks: () => ({ train: [{ id: 'q', prompt: 'Q', data: {} }], heldOut: [{ id: 'q', prompt: 'Q', data: {} }] }),
  create: () => {
    let text = '';
    return {
      reset: (task: Task) => Promise.resolve({ text: task.prompt, data: {} }),
      parseAction: (t: string) => ({ kind: 'tool' as const, name: 'say', args: { t } }),
      step: (a) => {
        text = a.kind === 'tool' ? String(a.args.t) : '';
        return Promise.resolve({ observation: { text: '', data: {} }, done: true, termination: 'finished' as const });
      },
      verify: () => {
        const share = text.length === 0 ? 0 : [...text].filter((c) => c === 'a').length / 4;
        return Promise.resolve({ reward: share, success: share >= 0.75, publicPass: true, privatePass: share >= 0.75 });
      },
      close: () => Promise.resolve(),
    };
  },
  dispose: () => Promise.resolve(),
};

function policyFor(model: string): Promise<TransformerPolicy<EngineModel>> {
  return freshPolicy(letterEnv, model, { policyOptions: { maxNewTokens: 4, temperature: 1 } });
}

/** The learner of a test: the transformer's GRPO defaults with `o` on top (no warm-up unless asked). */
function learnerFor(policy: TransformerPolicy, o: Partial<AlgorithmSettings> = {}, method: MethodName = 'grpo'): Learner {
  const settings = { ...algorithmDefaults('calculator', 'transformer', method), warmupSteps: 0, minibatchSize: 0, skipZeroAdvantage: false, ...o };
  return new Learner(policy, { method, settings, imitate: 'all', totalSteps: 1000, seed: 3 });
}

async function rollout(policy: TransformerPolicy, n: number, seed: number, learner = learnerFor(policy)): Promise<Trajectory[]> {
  const task = letterEnv.tasks().train[0]!;
  const trajs = await runEpisodes(
    Array.from({ length: n }, (_, i) => ({ task, group: Math.floor(i / 8), indexInGroup: i % 8 })),
    () => letterEnv.create(),
    policy,
    { maxTurns: 1, sampleRng: new Rng(seed), verifierRng: new Rng(0) },
  );
  learner.assignAdvantages(trajs);
  return trajs;
}

/** Loss inputs for sequences: reference log-probs given as a fixed ramp (any constant works for a gradient check). */
function inputsOf(seqs: readonly TrainSequence[]): LossInput[] {
  return seqs.map((s) => ({ seq: s, ref: Float32Array.from({ length: s.targets.length }, (_, i) => -0.5 - 0.01 * i) }));
}

/** The loss value on the engine's pass, from the same functions the learner uses (its gradients are dropped). */
async function lossValue(scorer: TokenScorer, inputs: readonly LossInput[], spec: LossSpec): Promise<number> {
  const { grads, stats } = await shardGradients(scorer, inputs, spec);
  tf.dispose(grads);
  return stats.loss;
}

const seq = (ids: number[], mask: number[], behaviour: number[], advantage: number): TrainSequence => ({
  inputs: ids.slice(0, -1),
  targets: ids.slice(1),
  mask: mask.slice(1),
  behaviour: behaviour.slice(1),
  advantage,
});

describe('transformer policy training step', () => {
  it("gradients of every weight match central finite differences of the engine's loss", async () => {
    const policy = await policyFor(tiny({ seed: 11 }));
    const model = policy.model;
    const inputs = inputsOf([
      seq([0, 1, 2, 3, 1, 2], [0, 1, 1, 0, 1, 1], [0, -2, -2.1, 0, -1.9, -2.2], 1.1),
      seq([0, 3, 3, 1], [0, 0, 1, 1], [0, 0, -2, -2], -0.7),
    ]);
    const { grads } = await shardGradients(model.scorer(), inputs, pgSpec);
    let checked = 0;
    for (const [wi, w] of model.weights.entries()) {
      const g = grads[wi]!.dataSync();
      // the three largest entries of each weight: their finite differences stand well above float32 noise
      const idx = Array.from(g.keys())
        .sort((a, b) => Math.abs(g[b]!) - Math.abs(g[a]!))
        .slice(0, 3);
      for (const i of idx) {
        if (Math.abs(g[i]!) < 1e-3) continue;
        const orig = w.dataSync().slice();
        const h = 1e-2;
        const at = async (delta: number): Promise<number> => {
          const x = orig.slice();
          x[i] = x[i]! + delta;
          w.assign(tf.tensor(x, w.shape));
          model.weightsChanged();
          return lossValue(model.scorer(), inputs, pgSpec);
        };
        const fd = ((await at(h)) - (await at(-h))) / (2 * h);
        w.assign(tf.tensor(orig, w.shape));
        model.weightsChanged();
        assert.ok(Math.abs(fd - g[i]!) <= 0.05 * Math.abs(g[i]!) + 2e-4, `${w.name}[${i}]: analytic ${g[i]} vs finite difference ${fd}`);
        checked++;
      }
    }
    assert.ok(checked >= 10, `only ${checked} entries checked`);
    tf.dispose(grads);
    await policy.dispose();
  });

  it('tokens with mask 0 contribute exactly zero gradient', async () => {
    const policy = await policyFor(tiny({ seed: 12 }));
    const model = policy.model;
    const base = seq([0, 1, 2, 3, 1, 2, 5], [0, 1, 1, 0, 0, 1, 0], [0, -2, -2.1, 0, 0, -1.9, 0], 0.8);
    // Same generated tokens; masked positions get other behaviour log-probs, and the last (masked,
    // predicting nothing after it) token a different id.
    const other = seq([0, 1, 2, 3, 1, 2, 6], [0, 1, 1, 0, 0, 1, 0], [0, -2, -2.1, -50, 7, -1.9, 123], 0.8);
    const gradsOf = async (s: TrainSequence, spec: LossSpec): Promise<Float32Array[]> => {
      const { grads } = await shardGradients(model.scorer(), [{ seq: s, ref: new Float32Array(s.targets.length) }], spec);
      const out = grads.map((g) => g.dataSync() as Float32Array);
      tf.dispose(grads);
      return out;
    };
    const a = await gradsOf(base, pgSpec);
    const b = await gradsOf(other, pgSpec);
    a.forEach((g, i) => assert.deepEqual(Array.from(g), Array.from(b[i]!), model.weights[i]!.name));
    // and a sequence whose tokens are all masked gives an all-zero gradient
    const silent = await gradsOf({ ...base, mask: base.mask.map(() => 0) }, { kind: 'nll', aggregation: 'token-mean', normTokens: 1 });
    silent.forEach((g, i) =>
      assert.ok(
        g.every((x) => x === 0),
        model.weights[i]!.name,
      ),
    );
    await policy.dispose();
  });

  it('sampling-time and training-time log-probs of the same tokens agree within 1e-4; first-epoch ratios are 1', async () => {
    const policy = await policyFor(tiny());
    const learner = learnerFor(policy, { learningRate: 1e-3 });
    const stats = await learner.update(await rollout(policy, 16, 5, learner));
    assert.ok(stats.logprobMismatch! < 1e-4, `mismatch ${stats.logprobMismatch}`);
    assert.ok(Math.abs(stats.ratioMin - 1) < 1e-4 && Math.abs(stats.ratioMax - 1) < 1e-4, `ratios ${stats.ratioMin}…${stats.ratioMax}`);
    assert.equal(stats.clipFraction, 0);
    await policy.dispose();
  });

  it('with a large learning rate later epochs clip', async () => {
    const policy = await policyFor(tiny());
    const learner = learnerFor(policy, { learningRate: 0.05, minibatchSize: 8, klCoef: 0, epochs: 4 });
    const stats = await learner.update(await rollout(policy, 16, 6, learner));
    assert.ok(stats.clipFraction > 0, `clip fraction ${stats.clipFraction}`);
    assert.ok(stats.ratioMax > 1.28 || stats.ratioMin < 0.8);
    await policy.dispose();
  });

  it('tf.memory().numTensors is the same after every iteration (no leak)', async () => {
    const policy = await policyFor(tiny());
    const learner = learnerFor(policy, { learningRate: 1e-3, minibatchSize: 8, epochs: 2 });
    const counts: number[] = [];
    for (let it = 0; it < 4; it++) {
      await learner.update(await rollout(policy, 16, 10 + it, learner));
      counts.push(tf.memory().numTensors);
    }
    // Adam's moments exist from the first step
    assert.equal(counts[3], counts[2], `tensors per iteration: ${counts.join(', ')}`);
    await policy.dispose();
  });

  it('the training sequence is exactly the prompt ids plus the sampled ids (never re-encoded)', async () => {
    const policy = await policyFor(tiny());
    const [t] = await rollout(policy, 8, 8);
    const s = trajectorySequence(t!)!;
    const turn = t!.turns[0]!;
    const ids = [...letters().encode('Q'), ...turn.policy.tokens!.sampled];
    assert.deepEqual([...s.inputs, s.targets[s.targets.length - 1]], ids);
    assert.deepEqual(s.targets, ids.slice(1));
    assert.deepEqual(
      s.mask,
      turn.policy.tokens!.sampled.map(() => 1),
    );
    assert.deepEqual(s.behaviour, turn.policy.tokens!.logprobs);
    assert.equal(turn.actionText, letters().decode(turn.policy.tokens!.sampled));
    await policy.dispose();
  });

  /** Names of the loss's metrics whose values differ by 1e-5 or more, or that one side lacks. */
  const metricsApart = (x: LossStats, y: LossStats): string[] =>
    [...new Set([...Object.keys(x.metrics), ...Object.keys(y.metrics)])].filter((k) => !(Math.abs(x.metrics[k]! - y.metrics[k]!) < 1e-5));

  it("the engine's packed passes and the tfjs decoder's micro-batches (bounded memory) accumulate exactly the gradient of one pass, for every aggregation", async () => {
    const policy = await policyFor(tiny());
    const trajs = await rollout(policy, 16, 23);
    const seqs = trajs.map((t) => trajectorySequence(t)).filter((s): s is TrainSequence => s !== undefined);
    const inputs = inputsOf(seqs);
    const tfjs = HfModel.load(tiny({ seed: 9 }), { contextLength: 24 });
    const scorer = policy.model.scorer();
    for (const aggregation of AGGREGATIONS) {
      for (const spec of [
        { ...pgSpec, aggregation },
        { kind: 'nll', aggregation, normTokens: 8 },
      ] satisfies LossSpec[]) {
        for (const [label, one, many] of [
          [
            'engine',
            () => shardGradients({ ...scorer, positionsPerPass: 1e9 }, inputs, spec),
            () => shardGradients({ ...scorer, positionsPerPass: 12 }, inputs, spec),
          ],
          ['tfjs decoder', () => shardGradients(hfDifferentiable(tfjs), inputs, spec, 1e9), () => shardGradients(hfDifferentiable(tfjs), inputs, spec, 12)],
        ] as const) {
          const a = await one();
          const b = await many(); // about 2 sequences per pass
          const diff = Math.max(...a.grads.map((g, i) => tf.tidy(() => tf.max(tf.abs(tf.sub(g, b.grads[i]!))).dataSync()[0]!)));
          assert.ok(diff < 1e-6, `${label} ${aggregation} ${spec.kind}: gradients differ by ${diff}`);
          for (const k of ['loss', 'policyLoss', 'kl', 'entropy', 'clipFraction', 'ratioMin', 'ratioMax', 'tokenAccuracy', 'tokens', 'sequences'] as const) {
            assert.ok(Math.abs(a.stats[k] - b.stats[k]) < 1e-5, `${label} ${aggregation} ${spec.kind} ${k}: ${a.stats[k]} vs ${b.stats[k]}`);
          }
          const apart: string[] = metricsApart(a.stats, b.stats);
          assert.deepEqual(apart, [], `${label} ${aggregation}: the loss's metrics`);
          tf.dispose([...a.grads, ...b.grads]);
        }
      }
    }
    assert.equal(microbatches(seqs, 12).length > 4, true);
    tfjs.dispose();
    await policy.dispose();
  });

  it('learning smoke test: a few GRPO iterations raise the reward', async () => {
    const policy = await policyFor(tiny({ hidden: 32, heads: 4 }));
    const learner = learnerFor(policy, { learningRate: 3e-2, minibatchSize: 16, klCoef: 0.01, epochs: 2 });
    const mean = (ts: Trajectory[]): number => ts.reduce((a, t) => a + t.outcome.reward, 0) / ts.length;
    const evalReward = async (seed: number): Promise<number> => mean(await rollout(policy, 128, seed));
    const before = await evalReward(999);
    for (let it = 0; it < 12; it++) await learner.update(await rollout(policy, 32, 100 + it, learner));
    const after = await evalReward(999);
    console.log(`share of "a": ${before.toFixed(3)} → ${after.toFixed(3)}`);
    assert.ok(after > before + 0.15, `reward ${before} → ${after}`);
    await policy.dispose();
  });
});
