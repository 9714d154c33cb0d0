// The Hugging Face engine on the random-weight fixtures (test/fixtures/hf): logits against the
// independent PyTorch references, LoRA gradients against tfjs autodiff of the tfjs decoder (the same
// checkpoint and adapters), decoding sessions against full forward passes, and the plan against what
// the allocator took.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { HfEngine } from '../../../../../../../src/rl/policies/lm/models/engine/hfEngine';
import { memory64Support } from '../../../../../../../src/rl/policies/lm/models/engine/engineAddress';
import { planEngineMemory } from '../../../../../../../src/rl/policies/lm/models/engine/enginePlan';
import { readHfConfig } from '../../../../../../../src/rl/policies/lm/models/hfConfig';
import { HfModel, hfDifferentiable } from '../../../../../../../src/rl/policies/lm/models/hfModel';
import { initBackend } from '../../../../../../../src/rl/policies/lm/models/tfjsBackend';
import { padBatch } from '../../../../../../../src/rl/algo/trainSequence';
import { logprobsOf } from '../../../../../../../src/rl/algo/gradients';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..', '..', 'test', 'fixtures', 'hf');
const LORA = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };

async function engine(family: string, threads: number, dtype: 'f32' | 'bf16' | 'q8' = 'f32', full = false): Promise<HfEngine> {
  const dir = path.join(FIXTURES, family);
  return HfEngine.create({
    dir,
    arch: readHfConfig(dir),
    contextLength: 64,
    ...(full ? {} : { lora: LORA }),
    threads,
    dtype,
    bytes: 64 * 2 ** 20,
    planText: 'test plan',
  });
}

const SEQS = [
  {
    inputs: [1, 5, 9, 30, 2, 7, 100, 3, 8],
    targets: [5, 9, 30, 2, 7, 100, 3, 8, 11],
    mask: [0, 0, 1, 1, 1, 0, 1, 1, 1],
    behaviour: new Array<number>(9).fill(0),
    advantage: 1,
  },
  { inputs: [4, 20, 21, 22, 90], targets: [20, 21, 22, 90, 5], mask: [0, 1, 1, 1, 1], behaviour: new Array<number>(5).fill(0), advantage: -1 },
];

/**
 * Log-probs at temperature T and the gradients of Σ g·logp on the engine's kept pass, against tfjs
 * autodiff of the tfjs decoder holding the same trained tensors: max error and the largest gradient.
 */
async function compareWithAutodiff(e: HfEngine, model: HfModel): Promise<{ err: number; scale: number }> {
  const T = 1.3;
  const g = SEQS.map((s, b) => Float32Array.from(s.mask, (m, t) => (m ? Math.sin(b * 7 + t) : 0)));
  const scored = await e.score('policy', SEQS, T, true);
  const grads = await e.backward(g);
  const batch = padBatch(SEQS);
  const gm = Float32Array.from({ length: batch.B * batch.T }, (_, i) => g[Math.floor(i / batch.T)]![i % batch.T] ?? 0);
  let tfLogp: tf.Tensor | undefined;
  const r = tf.variableGrads(() => {
    const { logp } = logprobsOf(hfDifferentiable(model), batch, T, false);
    tfLogp = tf.keep(logp.clone());
    return tf.sum(tf.mul(logp, tf.tensor2d(gm, [batch.B, batch.T])));
  }, model.weights);
  const lp = (await tfLogp!.data()) as Float32Array;
  SEQS.forEach((s, b) =>
    s.mask.forEach((m, t) => {
      if (m) assert.ok(Math.abs(lp[b * batch.T + t]! - scored[b]!.logp[t]!) < 2e-5, `log-prob ${b}/${t}`);
      else assert.equal(scored[b]!.logp[t], 0, 'positions not trained are not scored');
    }),
  );
  let err = 0,
    scale = 0;
  for (let i = 0; i < model.weights.length; i++) {
    const want = (await r.grads[model.weights[i]!.name]!.data()) as Float32Array;
    assert.equal(grads[i]!.length, want.length, model.names[i]);
    for (let j = 0; j < want.length; j++) {
      err = Math.max(err, Math.abs(want[j]! - grads[i]![j]!));
      scale = Math.max(scale, Math.abs(want[j]!));
    }
  }
  tf.dispose([tfLogp!, r.value, ...Object.values(r.grads)]);
  return { err, scale };
}

before(async () => {
  await initBackend('wasm');
});

describe('the Hugging Face engine', () => {
  for (const family of ['qwen2', 'qwen3', 'llama']) {
    it(`${family}: logits of every position match the PyTorch reference within 1e-4, on one thread and on two${family === 'qwen3' ? ', with float32 and with bfloat16 weights (the checkpoint is bfloat16)' : ''}`, async () => {
      const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, family, 'reference.json'), 'utf8')) as { ids: number[][]; logits: number[][][] };
      const runs: [number, 'f32' | 'bf16'][] =
        family === 'qwen3'
          ? [
              [1, 'f32'],
              [2, 'f32'],
              [2, 'bf16'],
            ]
          : [
              [1, 'f32'],
              [2, 'f32'],
            ];
      for (const [threads, dtype] of runs) {
        const e = await engine(family, threads, dtype);
        try {
          const V = e.decoder.V;
          const got = await e.logits('policy', ref.ids, 'all');
          let err = 0;
          ref.ids.forEach((row, b) =>
            row.forEach((_, t) => {
              for (let v = 0; v < V; v++) err = Math.max(err, Math.abs(got[(b * row.length + t) * V + v]! - ref.logits[b]![t]![v]!));
            }),
          );
          assert.ok(err < 1e-4, `max |engine − torch| = ${err} on ${threads} thread(s), ${dtype} weights`);
        } finally {
          await e.close();
        }
      }
    });

    it(`${family}: log-probs and LoRA gradients of a packed pass equal tfjs autodiff of the same model and adapters`, async () => {
      const dir = path.join(FIXTURES, family);
      const model = HfModel.load(dir, { contextLength: 64, lora: LORA, seed: 3 });
      const e = await engine(family, 2);
      try {
        model.weights.forEach((w, i) => {
          if (i % 2 === 1) w.assign(tf.randomNormal(w.shape, 0, 0.05, 'float32', 100 + i)); // non-zero b
        });
        model.weightsChanged();
        assert.deepEqual(
          e.trainableShapes().map((s) => `${s.name} ${s.shape.join('×')}`),
          model.names.map((n, i) => `${n} ${model.weights[i]!.shape.join('×')}`),
        );
        e.setTrainable('policy', await Promise.all(model.weights.map(async (w) => (await w.data()) as Float32Array)), false);
        const { err, scale } = await compareWithAutodiff(e, model);
        assert.ok(scale > 0.1 && err < 1e-4 * scale, `max |engine − tfjs| gradient ${err} of ${scale}`);
      } finally {
        model.dispose();
        await e.close();
      }
    });
  }

  for (const family of ['qwen2', 'qwen3', 'llama']) {
    it(`${family}: full fine-tuning — every weight's gradient of a packed pass equals tfjs autodiff, in the tfjs decoder's names and layouts, and the reference keeps its own weights`, async () => {
      const dir = path.join(FIXTURES, family);
      const model = HfModel.load(dir, { contextLength: 64 });
      const e = await engine(family, 2, 'f32', true);
      try {
        assert.ok(e.trainsBase);
        assert.deepEqual(
          e.trainableShapes().map((s) => `${s.name} ${s.shape.join('×')}`),
          model.names.map((n, i) => `${n} ${model.weights[i]!.shape.join('×')}`),
        );
        // the engine reads the weights the tfjs decoder holds, layouts included
        const start = e.readTrainable('policy');
        for (let i = 0; i < model.weights.length; i++) {
          const want = (await model.weights[i]!.data()) as Float32Array;
          assert.deepEqual(Array.from(start[i]!.slice(0, 16)), Array.from(want.slice(0, 16)), model.names[i]);
        }
        // moved weights (every tensor, the norms and the tied embedding included) reach the policy's passes only
        model.weights.forEach((w, i) => w.assign(tf.add(w, tf.randomNormal(w.shape, 0, 0.02, 'float32', 200 + i))));
        e.setTrainable('policy', await Promise.all(model.weights.map(async (w) => (await w.data()) as Float32Array)), false);
        const { err, scale } = await compareWithAutodiff(e, model);
        assert.ok(scale > 0.01 && err < 1e-4 * scale, `max |engine − tfjs| gradient ${err} of ${scale}`);
        const ref = await e.logits('reference', [[1, 2, 3]], 'last');
        const pol = await e.logits('policy', [[1, 2, 3]], 'last');
        const loaded = await engine(family, 1, 'f32', true);
        const fresh = await loaded.logits('policy', [[1, 2, 3]], 'last');
        await loaded.close();
        assert.deepEqual(Array.from(ref), Array.from(fresh), 'the reference is the checkpoint as loaded');
        assert.ok(
          pol.some((x, i) => Math.abs(x - ref[i]!) > 1e-4),
          'the policy computes with its own weights',
        );
      } finally {
        model.dispose();
        await e.close();
      }
    });
  }

  it('a decoding session (prefill in groups, then steps over the KV cache, a few rows at a time) gives the logits of full forward passes', async () => {
    const e = await engine('qwen2', 2);
    try {
      const prompts = [
        [1, 2, 3, 4, 5],
        [7, 8],
        [9, 10, 11, 12, 13, 14, 15],
      ];
      const next = [
        [20, 21, 22],
        [30, 31, 32],
        [40, 41, 42],
      ];
      const s = await e.session('policy', prompts, 16, 6, 2); // 6 positions per prefill: three groups; steps of 2 rows then 1
      const outs = [s.logits];
      for (let k = 0; k < 3; k++) outs.push(await s.step(next.map((n) => n[k]!)));
      s.dispose();
      for (let k = 0; k <= 3; k++) {
        const full = await e.logits(
          'policy',
          prompts.map((p, b) => [...p, ...next[b]!.slice(0, k)]),
          'last',
        );
        let err = 0;
        for (let i = 0; i < full.length; i++) err = Math.max(err, Math.abs(full[i]! - outs[k]![i]!));
        assert.ok(err < 1e-5, `step ${k}: ${err}`);
      }
    } finally {
      await e.close();
    }
  });

  it('the plan covers what a training pass, a forward pass and a session take, within 10 % (LoRA on float32, bfloat16 and q8 weights, full fine-tuning; wasm32 and, where the runtime has it, memory64)', async () => {
    const dir = path.join(FIXTURES, 'qwen2');
    const arch = readHfConfig(dir);
    const P = 64,
      N = 128,
      B = 6;
    const modes = memory64Support().ok ? (['wasm32', 'memory64'] as const) : (['wasm32'] as const);
    for (const [dtype, full, address] of [
      ['f32', false, 'wasm32'],
      ['bf16', false, 'wasm32'],
      ['q8', false, 'wasm32'],
      ['f32', true, 'wasm32'],
      ...modes.slice(1).flatMap((m) => [['bf16', false, m] as const, ['q8', false, m] as const]),
    ] as const) {
      const lora = full ? {} : { lora: LORA };
      const plan = planEngineMemory(arch, { ...lora, contextLength: P, positionsPerPass: N, sampleRows: B, threads: 2, dtype, address });
      const e = await HfEngine.create({
        dir,
        arch,
        contextLength: P,
        ...lora,
        threads: 2,
        dtype,
        bytes: plan.total,
        planText: 'test plan',
        address: plan.address.mode,
      });
      assert.equal(e.address, address);
      try {
        const seqs = [0, 1].map((b) => ({
          inputs: Array.from({ length: P }, (_, i) => (i * 7 + b) % 300),
          targets: Array.from({ length: P }, (_, i) => (i * 11 + b) % 300),
          mask: new Array<number>(P).fill(1),
        }));
        e.mem.resetPeak();
        await e.score('policy', seqs, 1, true);
        await e.backward(seqs.map(() => new Float32Array(P).fill(1)));
        const training = e.mem.peak;
        e.mem.resetPeak();
        await e.score('reference', seqs, 1, false);
        const forward = e.mem.peak;
        e.mem.resetPeak();
        const s = await e.session(
          'policy',
          Array.from({ length: B }, () => Array.from({ length: P - 8 }, (_, i) => i + 1)),
          P,
          N,
        );
        await s.step(new Array<number>(B).fill(3));
        s.dispose();
        // a session of short rows holds more of them than the plan's sampleRows (its KV cache is rows ×
        // capacity): its prefill packs them, its steps go sampleRows rows at a time
        const short = await e.session(
          'policy',
          Array.from({ length: 4 * B }, (_, b) => [1 + b, 2, 3]),
          P / 4,
          N,
          B,
        );
        await short.step(new Array<number>(4 * B).fill(5));
        short.dispose();
        const sampling = e.mem.peak;
        const measured = Math.max(training, forward, sampling);
        const what = `${dtype}${full ? ', full fine-tuning' : ''} (${address}): plan ${plan.total} (persistent ${plan.parts.persistent}, training ${plan.parts.training}, forward ${plan.parts.forward}, sampling ${plan.parts.sampling}) against a measured peak of ${measured} (training ${training}, forward ${forward}, sampling ${sampling})`;
        assert.ok(Math.abs(plan.total - measured) / measured < 0.1, what);
        assert.ok(measured <= plan.total, `never more than the plan: ${what}`);
      } finally {
        await e.close();
      }
    }
  });
});
