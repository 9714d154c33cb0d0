// Properties of the transformer policy's training step on the chosen backend.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { EnvironmentFactory, Task } from '../../../../../src/rl/envs/environment';
import { groupAdvantages } from '../../../../../src/rl/algo/advantages';
import { initBackend } from '../../../../../src/rl/policies/transformer/backend';
import { Gpt, type GptConfig } from '../../../../../src/rl/policies/transformer/model';
import { ReplicaPool } from '../../../../../src/rl/policies/transformer/replicas';
import { microbatches, shardGradients } from '../../../../../src/rl/policies/transformer/shardWork';
import { buildTokenBatch, grpoLoss, nllLoss, targetLogprobs, type TokenLossOptions, type TokenSequence } from '../../../../../src/rl/policies/transformer/tokenLoss';
import { CharTokenizer } from '../../../../../src/rl/policies/transformer/tokenizer';
import { TransformerPolicy, trajectoryTokens, type TransformerTrainOptions } from '../../../../../src/rl/policies/transformer/transformerPolicy';
import { Rng } from '../../../../../src/rl/random';
import { runEpisodes } from '../../../../../src/rl/rollout/agentLoop';
import type { Trajectory } from '../../../../../src/shared/types';

before(async () => {
  await initBackend('auto');
});

const tiny: GptConfig = { vocabSize: 8, contextLength: 24, dModel: 16, nLayers: 1, nHeads: 2, mlpRatio: 2, tiedHead: true };
const lossOpts: TokenLossOptions = { clipLow: 0.2, clipHigh: 0.28, klCoef: 0.05, klEstimator: 'k3', aggregation: 'seq-mean-token-mean', temperature: 1 };

/** A four-letter world: the prompt is "Q", the policy writes up to 4 letters or stops at "!"; reward = share of "a". */
const letters = new CharTokenizer(['Q', 'a', 'b', 'c', '!', '\n', ' ']);
const letterEnv: EnvironmentFactory = {
  name: 'letters', description: 'test world',
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
};

function policyFor(config: GptConfig, lr: number, train: Partial<TransformerTrainOptions> = {}): TransformerPolicy {
  return new TransformerPolicy(
    new Gpt(config, 7),
    letters,
    { temperature: 1, topK: 0, topP: 1, maxNewTokens: 4, stop: ['!'] },
    { clipLow: 0.2, clipHigh: 0.28, klEstimator: 'k3', aggregation: 'seq-mean-token-mean', minibatchSize: 0, skipZeroAdvantage: false, optimizer: { lr, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 0 }, ...train },
    'test',
    3,
  );
}

async function rollout(policy: TransformerPolicy, n: number, seed: number): Promise<Trajectory[]> {
  const task = letterEnv.tasks({}).train[0]!;
  const trajs = await runEpisodes(
    Array.from({ length: n }, (_, i) => ({ task, group: Math.floor(i / 8), indexInGroup: i % 8 })),
    () => letterEnv.create({}), policy, { maxTurns: 1, sampleRng: new Rng(seed), verifierRng: new Rng(0) },
  );
  for (let g = 0; g < n / 8; g++) {
    const group = trajs.filter((t) => t.group === g);
    const adv = groupAdvantages(group.map((t) => t.outcome.reward), 'population');
    group.forEach((t, i) => (t.advantage = adv.advantages[i]!));
  }
  return trajs;
}

describe('transformer policy training step', () => {
  it('gradients match central finite differences on a tiny model', () => {
    const model = new Gpt(tiny, 11);
    const batch = buildTokenBatch([
      { ids: [0, 1, 2, 3, 1, 2], mask: [0, 1, 1, 0, 1, 1], behaviour: [0, -2, -2.1, 0, -1.9, -2.2], advantage: 1.1 },
      { ids: [0, 3, 3, 1], mask: [0, 0, 1, 1], behaviour: [0, 0, -2, -2], advantage: -0.7 },
    ]);
    const ref = tf.tidy(() => targetLogprobs(model, batch, 1).logp);
    const f = (): tf.Scalar => grpoLoss(model, batch, ref, lossOpts);
    const { grads } = tf.variableGrads(f, model.weights);
    let checked = 0;
    for (const w of model.weights) {
      const g = grads[w.name]!.dataSync();
      // the three largest entries of each weight: their finite differences stand well above float32 noise
      const idx = Array.from(g.keys()).sort((a, b) => Math.abs(g[b]!) - Math.abs(g[a]!)).slice(0, 3);
      for (const i of idx) {
        if (Math.abs(g[i]!) < 1e-3) continue;
        const orig = w.dataSync().slice();
        const h = 1e-2;
        const at = (delta: number): number => {
          const x = orig.slice();
          x[i] = x[i]! + delta;
          w.assign(tf.tensor(x, w.shape));
          return tf.tidy(() => f().dataSync()[0]!);
        };
        const fd = (at(h) - at(-h)) / (2 * h);
        w.assign(tf.tensor(orig, w.shape));
        assert.ok(Math.abs(fd - g[i]!) <= 0.05 * Math.abs(g[i]!) + 2e-4, `${w.name}[${i}]: analytic ${g[i]} vs finite difference ${fd}`);
        checked++;
      }
    }
    assert.ok(checked >= 10, `only ${checked} entries checked`);
    tf.dispose([ref, ...Object.values(grads)]);
    model.dispose();
  });

  it('tokens with mask 0 contribute exactly zero gradient', () => {
    const model = new Gpt(tiny, 12);
    const base = { ids: [0, 1, 2, 3, 1, 2, 5], mask: [0, 1, 1, 0, 0, 1, 0], behaviour: [0, -2, -2.1, 0, 0, -1.9, 0], advantage: 0.8 };
    // Same generated tokens; masked positions get other behaviour log-probs, and the last (masked,
    // predicting nothing after it) token a different id.
    const other = { ...base, ids: [0, 1, 2, 3, 1, 2, 6], behaviour: [0, -2, -2.1, -50, 7, -1.9, 123] };
    const gradsOf = (s: typeof base): Float32Array[] => {
      const batch = buildTokenBatch([s]);
      const ref = tf.tidy(() => tf.zeros<tf.Rank.R2>([1, batch.T - 1]));
      const { grads } = tf.variableGrads(() => grpoLoss(model, batch, ref, lossOpts), model.weights);
      const out = model.weights.map((w) => grads[w.name]!.dataSync() as Float32Array);
      tf.dispose([ref, ...Object.values(grads)]);
      return out;
    };
    const a = gradsOf(base);
    const b = gradsOf(other);
    a.forEach((g, i) => assert.deepEqual(Array.from(g), Array.from(b[i]!), model.weights[i]!.name));
    // and a sequence whose tokens are all masked gives an all-zero gradient
    const silent = buildTokenBatch([{ ...base, mask: base.mask.map(() => 0) }]);
    const { grads } = tf.variableGrads(() => nllLoss(model, silent, 'token-mean'), model.weights);
    for (const w of model.weights) assert.ok(grads[w.name]!.dataSync().every((x) => x === 0), w.name);
    tf.dispose(Object.values(grads));
    model.dispose();
  });

  it('sampling-time and training-time log-probs of the same tokens agree within 1e-4; first-epoch ratios are 1', async () => {
    const policy = policyFor(tiny, 1e-3);
    const trajs = await rollout(policy, 16, 5);
    const stats = await policy.update(trajs, { kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 0.05 }, 1);
    assert.ok(stats.logprobMismatch! < 1e-4, `mismatch ${stats.logprobMismatch}`);
    assert.ok(Math.abs(stats.ratioMin - 1) < 1e-4 && Math.abs(stats.ratioMax - 1) < 1e-4, `ratios ${stats.ratioMin}…${stats.ratioMax}`);
    assert.equal(stats.clipFraction, 0);
    await policy.dispose();
  });

  it('with a large learning rate later epochs clip', async () => {
    const policy = policyFor(tiny, 0.05, { minibatchSize: 8 });
    const trajs = await rollout(policy, 16, 6);
    const stats = await policy.update(trajs, { kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 0 }, 4);
    assert.ok(stats.clipFraction > 0, `clip fraction ${stats.clipFraction}`);
    assert.ok(stats.ratioMax > 1.28 || stats.ratioMin < 0.8);
    await policy.dispose();
  });

  it('negativeAdvantageScale 0 trains on the successes only: failures alone leave the weights untouched', async () => {
    const weightsOf = (p: TransformerPolicy): number[] => p.model.weights.flatMap((w) => Array.from(w.dataSync()));
    for (const scale of [0, 1]) {
      const policy = policyFor(tiny, 1e-2, { negativeAdvantageScale: scale, skipZeroAdvantage: true });
      const failures = (await rollout(policy, 16, 7)).filter((t) => t.advantage < 0);
      assert.ok(failures.length > 0, 'the rollout has failures');
      const before = weightsOf(policy);
      const stats = await policy.update(failures, { kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 0 }, 1);
      const moved = weightsOf(policy).some((x, i) => x !== before[i]);
      assert.equal(stats.optimizerSteps > 0, scale > 0, `scale ${scale}: ${stats.optimizerSteps} steps`);
      assert.equal(moved, scale > 0, `scale ${scale}: weights moved = ${moved}`);
      await policy.dispose();
    }
  });

  it('tf.memory().numTensors is the same after every iteration (no leak)', async () => {
    const policy = policyFor(tiny, 1e-3, { minibatchSize: 8 });
    const counts: number[] = [];
    for (let it = 0; it < 4; it++) {
      const trajs = await rollout(policy, 16, 10 + it);
      await policy.update(trajs, { kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 0.05 }, 2);
      counts.push(tf.memory().numTensors);
    }
    // Adam's moments exist from the first step; the model caches one mask per sequence length seen.
    assert.equal(counts[3], counts[2], `tensors per iteration: ${counts.join(', ')}`);
    await policy.dispose();
  });

  it('the training sequence is exactly the sampled ids plus the prompt ids (never re-encoded)', async () => {
    const policy = policyFor(tiny, 1e-3);
    const [t] = await rollout(policy, 8, 8);
    const s = trajectoryTokens(t!)!;
    const turn = t!.turns[0]!;
    assert.deepEqual(s.ids, [...letters.encode('Q'), ...turn.policy.tokens!.sampled]);
    assert.deepEqual(s.mask, [0, ...turn.policy.tokens!.sampled.map(() => 1)]);
    assert.equal(turn.actionText, letters.decode(turn.policy.tokens!.sampled));
    await policy.dispose();
  });

  it('data-parallel replicas (a helper thread) compute the same update as one replica, and sample the same greedy text', async () => {
    const trajs = await rollout(policyFor(tiny, 1e-3), 16, 21);
    for (const aggregation of ['seq-mean-token-mean', 'token-mean', 'seq-sum'] as const) {
      for (const objective of [{ kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 0.05 }, { kind: 'nll' }] as const) {
        // eps 1 (and lr 1): Adam without its per-coordinate normalisation of near-zero gradients, which
        // would turn float rounding noise (gradients summed in another order) into whole steps
        const optimizer = { lr: 1, beta1: 0.9, beta2: 0.999, eps: 1, weightDecay: 0, maxGradNorm: 0 };
        const single = policyFor(tiny, 1e-2, { minibatchSize: 8, aggregation, optimizer });
        const multi = policyFor(tiny, 1e-2, { minibatchSize: 8, aggregation, optimizer });
        try {
          multi.attachReplicas(await ReplicaPool.start(1, tf.getBackend(), multi.model, multi.reference, letters), undefined);
          assert.match(multi.compute, /2 data-parallel replicas/);
          const a = await single.update(trajs, objective, 2);
          const b = await multi.update(trajs, objective, 2);
          const label = `${aggregation} ${objective.kind}`;
          for (const k of ['loss', 'policyLoss', 'kl', 'entropy', 'clipFraction', 'gradNorm', 'ratioMin', 'ratioMax', 'logprobMismatch'] as const) {
            assert.ok(Math.abs((a[k] ?? 0) - (b[k] ?? 0)) < 1e-4, `${label} ${k}: ${a[k]} vs ${b[k]}`);
          }
          const diff = Math.max(...single.model.weights.map((w, i) => tf.tidy(() => tf.max(tf.abs(tf.sub(w, multi.model.weights[i]!))).dataSync()[0]!)));
          assert.ok(diff < 1e-5, `${label}: weights differ by ${diff}`);
          const start = new Gpt(tiny, 7);
          const moved = Math.max(...start.weights.map((w, i) => tf.tidy(() => tf.max(tf.abs(tf.sub(w, single.model.weights[i]!))).dataSync()[0]!)));
          start.dispose();
          assert.ok(moved > 1e-3, `${label}: the update moved the weights by only ${moved}`);
          const greedy = async (p: TransformerPolicy): Promise<string[]> => (await rollout(p.greedy() as TransformerPolicy, 16, 4)).map((t) => t.turns[0]!.actionText);
          assert.deepEqual(await greedy(multi), await greedy(single), `${label}: the helper's weights are in sync`);
        } finally {
          await single.dispose();
          await multi.dispose();
        }
      }
    }
  });

  it('micro-batches (bounded memory) accumulate exactly the gradient of one pass, for every aggregation', async () => {
    const trajs = await rollout(policyFor(tiny, 1e-3), 16, 23);
    const seqs = trajs.map(trajectoryTokens).filter((s): s is TokenSequence => s !== undefined);
    const model = new Gpt(tiny, 9);
    const refs = seqs.map((s) => Float32Array.from({ length: s.ids.length - 1 }, (_, i) => -0.5 - 0.01 * i));
    for (const aggregation of ['seq-mean-token-mean', 'token-mean', 'seq-sum'] as const) {
      for (const objective of ['nll', 'clipped-pg'] as const) {
        const o = { objective, aggregation, lossOpts: { ...lossOpts, aggregation } };
        const one = shardGradients(model, seqs, objective === 'clipped-pg' ? refs : undefined, o, 1e9);
        const many = shardGradients(model, seqs, objective === 'clipped-pg' ? refs : undefined, o, 12); // about 2 sequences per pass
        const diff = Math.max(...one.grads.map((g, i) => tf.tidy(() => tf.max(tf.abs(tf.sub(g, many.grads[i]!))).dataSync()[0]!)));
        assert.ok(diff < 1e-6, `${aggregation} ${objective}: gradients differ by ${diff}`);
        for (const k of ['loss', 'policyLoss', 'kl', 'entropy', 'clipLow', 'clipHigh', 'ratioMin', 'ratioMax', 'tokens', 'sequences'] as const) {
          assert.ok(Math.abs(one.stats[k] - many.stats[k]) < 1e-5, `${aggregation} ${objective} ${k}: ${one.stats[k]} vs ${many.stats[k]}`);
        }
        tf.dispose([...one.grads, ...many.grads]);
      }
    }
    assert.equal(microbatches(seqs, 12).length > 4, true);
    model.dispose();
  });

  it('a failing helper replica fails the update with its error instead of hanging', async () => {
    const multi = policyFor(tiny, 1e-2, { minibatchSize: 8 });
    const pool = await ReplicaPool.start(1, tf.getBackend(), multi.model, multi.reference, letters);
    multi.attachReplicas(pool, undefined);
    const trajs = await rollout(policyFor(tiny, 1e-3), 16, 22);
    await pool.close(); // the thread is gone
    await assert.rejects(multi.update(trajs, { kind: 'nll' }, 1), /replica thread/);
    await multi.dispose();
  });

  it('learning smoke test: a few GRPO iterations raise the reward', async () => {
    const policy = policyFor({ ...tiny, dModel: 32, nHeads: 4 }, 3e-2, { minibatchSize: 16 });
    const mean = (ts: Trajectory[]): number => ts.reduce((a, t) => a + t.outcome.reward, 0) / ts.length;
    const evalReward = async (seed: number): Promise<number> => mean(await rollout(policy, 128, seed));
    const before = await evalReward(999);
    for (let it = 0; it < 12; it++) {
      const trajs = await rollout(policy, 32, 100 + it);
      await policy.update(trajs, { kind: 'clipped-pg', clipEpsilon: 0.2, klCoef: 0.01 }, 2);
    }
    const after = await evalReward(999);
    console.log(`share of "a": ${before.toFixed(3)} → ${after.toFixed(3)}`);
    assert.ok(after > before + 0.15, `reward ${before} → ${after}`);
    await policy.dispose();
  });
});
