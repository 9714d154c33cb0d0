// The Hugging Face decoders against logits from an independent PyTorch implementation
// (test/fixtures/makeHfFixtures.py, committed beside the random-weight checkpoints).
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { parseHfConfig } from '../../../../../../src/rl/policies/lm/models/hfConfig';
import { HfModel, hfDifferentiable } from '../../../../../../src/rl/policies/lm/models/hfModel';
import { checkpointTensors, toFloat32 } from '../../../../../../src/rl/policies/lm/models/safetensors';
import { initBackend } from '../../../../../../src/rl/policies/lm/models/tfjsBackend';
import { decodeStep, disposeState, prefill, sampleBatch } from '../../../../../../src/rl/policies/lm/sampler';
import { HfTokenizer } from '../../../../../../src/rl/policies/lm/tokenizer';
import { Rng } from '../../../../../../src/rl/random';

export const HF_FIXTURES = path.join(__dirname, '..', '..', '..', '..', '..', '..', '..', 'test', 'fixtures', 'hf');
const FAMILIES = ['qwen2', 'qwen3', 'llama', 'gpt2'] as const;

interface Reference {
  dtype: string;
  ids: number[][];
  logits: number[][][];
}

function reference(family: string): Reference {
  return JSON.parse(fs.readFileSync(path.join(HF_FIXTURES, family, 'reference.json'), 'utf8')) as Reference;
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

before(async () => {
  await initBackend('auto');
});

describe('Hugging Face checkpoints against the PyTorch reference', () => {
  for (const family of FAMILIES) {
    it(`${family}: a full pass matches the reference logits within 1e-4`, async () => {
      const ref = reference(family);
      const model = HfModel.load(path.join(HF_FIXTURES, family), { lora: { rank: 4, alpha: 8, dropout: 0, targets: ['all-linear'] } });
      try {
        const ids = tf.tensor2d(ref.ids, [ref.ids.length, ref.ids[0]!.length], 'int32');
        const logits = model.forward(ids);
        const got = (await logits.data()) as Float32Array;
        tf.dispose([ids, logits]);
        const diff = maxDiff(got, ref.logits.flat(2));
        console.log(`${family} (${ref.dtype}): max |tfjs − torch| = ${diff.toExponential(2)}`);
        assert.ok(diff < 1e-4, `max difference ${diff}`);
      } finally {
        model.dispose();
      }
    });

    it(`${family}: step by step through the KV cache, left-padded in a batch, matches the reference`, async () => {
      const ref = reference(family);
      const model = HfModel.load(path.join(HF_FIXTURES, family), { lora: { rank: 4, alpha: 8, dropout: 0, targets: ['all-linear'] } });
      try {
        // row 0 starts with 4 tokens, row 1 with 7 (left-padded), then both decode the rest of their ids one by one
        const starts = [4, 7];
        const { state, logits: first } = prefill(
          model,
          ref.ids.map((ids, b) => ids.slice(0, starts[b])),
        );
        let logits = first;
        let worst = 0;
        const T = ref.ids[0]!.length;
        for (let step = 0; ; step++) {
          const data = (await logits.data()) as Float32Array;
          logits.dispose();
          const V = data.length / 2;
          for (let b = 0; b < 2; b++) {
            const pos = starts[b]! - 1 + step;
            if (pos < T) worst = Math.max(worst, maxDiff(data.subarray(b * V, (b + 1) * V), ref.logits[b]![pos]!));
          }
          if (starts[0]! + step >= T) break;
          logits = decodeStep(
            model,
            state,
            ref.ids.map((ids, b) => ids[Math.min(starts[b]! + step, T - 1)]!),
          );
        }
        disposeState(state);
        assert.ok(worst < 1e-4, `max difference ${worst}`);
      } finally {
        model.dispose();
      }
    });
  }

  it("a batch where one row's context is already full samples the others and stops that one at the context", async () => {
    const model = HfModel.load(path.join(HF_FIXTURES, 'gpt2'), { contextLength: 24, lora: { rank: 2, alpha: 4, dropout: 0, targets: ['all-linear'] } });
    const tokenizer = HfTokenizer.fromDirectory(path.join(HF_FIXTURES, 'gpt2'));
    try {
      const full = Array.from({ length: 30 }, (_, i) => (i * 7) % 300);
      const [a, b] = await sampleBatch(model, tokenizer, [full, [5, 6, 7]], { temperature: 1, topK: 0, topP: 1, maxNewTokens: 4, stop: [] }, new Rng(2));
      assert.equal(a!.stopReason, 'context');
      assert.equal(a!.tokens.length, 0);
      assert.equal(b!.tokens.length, 4);
    } finally {
      model.dispose();
    }
  });

  it('full fine-tuning and LoRA compute the same logits before training; LoRA trains only its adapters', async () => {
    const dir = path.join(HF_FIXTURES, 'qwen2');
    const full = HfModel.load(dir);
    const lora = HfModel.load(dir, { lora: { rank: 2, alpha: 4, dropout: 0, targets: ['q_proj', 'v_proj'] } });
    try {
      assert.equal(full.trainableCount(), full.parameterCount());
      // 2 layers × (q: 64×2 + 2×64, v: 64×2 + 2×32)
      assert.equal(lora.trainableCount(), 2 * (64 * 2 + 2 * 64 + 64 * 2 + 2 * 32));
      assert.ok(
        lora.names.every((n) => /\.lora_[AB]$/.test(n)),
        lora.names.join(','),
      );
      const ids = tf.tensor2d([[1, 2, 3, 4, 5]], [1, 5], 'int32');
      const a = full.forward(ids);
      const b = lora.forward(ids);
      assert.ok(maxDiff(await a.data(), await b.data()) < 1e-5);
      tf.dispose([ids, a, b]);
    } finally {
      full.dispose();
      lora.dispose();
    }
  });

  it('a LoRA gradient step moves only the adapters, and the reference (base, frozen adapters) stays where it was', async () => {
    const model = HfModel.load(path.join(HF_FIXTURES, 'llama'), { lora: { rank: 4, alpha: 8, dropout: 0, targets: ['all-linear'] } });
    const reference = model.reference();
    try {
      const batch = { inputs: [5, 9, 30, 31, 2, 7], B: 1, T: 6 };
      const diff = hfDifferentiable(model);
      const before = (await model.forward(tf.tensor2d(batch.inputs, [1, 6], 'int32')).data()) as Float32Array;
      const { grads } = tf.variableGrads(() => tf.mean<tf.Scalar>(tf.square(diff.logits(batch as never, false))), model.weights);
      assert.deepEqual(Object.keys(grads).length, model.weights.length);
      for (const v of model.weights) v.assign(tf.sub(v, tf.mul(grads[v.name]!, 0.5)));
      tf.dispose(Object.values(grads));
      model.weightsChanged();
      const after = (await model.forward(tf.tensor2d(batch.inputs, [1, 6], 'int32')).data()) as Float32Array;
      const ref = (await reference.forward(tf.tensor2d(batch.inputs, [1, 6], 'int32')).data()) as Float32Array;
      assert.ok(maxDiff(before, after) > 1e-3, 'the adapted model moved');
      assert.ok(maxDiff(before, ref) < 1e-6, 'the reference did not');
      // merged export: base + scale·A·B reproduces the adapted model
      const merged = await model.mergedTensors();
      const q = merged.get('model.layers.0.self_attn.q_proj.weight')!;
      assert.deepEqual(q.shape, [64, 64]);
    } finally {
      reference.dispose();
      model.dispose();
    }
  });
});

describe('safetensors and config.json errors', () => {
  it('bfloat16 and float16 convert exactly', () => {
    const bf = Buffer.from([0x80, 0x3f, 0x00, 0xc0]); // 1.0, −2.0
    assert.deepEqual([...toFloat32(bf, 'BF16')], [1, -2]);
    const h = Buffer.from([0x00, 0x3c, 0x00, 0xb8, 0x01, 0x00]); // 1.0, −0.5, smallest subnormal
    assert.deepEqual([...toFloat32(h, 'F16')], [1, -0.5, 2 ** -24]);
  });

  it('names the file and field: unsupported model_type, a truncated shard, a missing shard, a shape unlike the config', () => {
    assert.throws(
      () => parseHfConfig({ model_type: 'mistral' }, 'x/config.json'),
      /x\/config\.json: model_type "mistral" is not supported; supported: qwen2, qwen3, llama, gpt2 \(Qwen2 \/ Qwen2\.5, Qwen3, Llama \/ SmolLM2 \/ Llama 3\.x, GPT-2\)\. Fix: choose a checkpoint of one of these families/,
    );
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-'));
    for (const f of fs.readdirSync(path.join(HF_FIXTURES, 'llama'))) fs.copyFileSync(path.join(HF_FIXTURES, 'llama', f), path.join(tmp, f));
    fs.rmSync(path.join(tmp, 'model-00002-of-00002.safetensors'));
    assert.throws(() => checkpointTensors(tmp), /names model-00002-of-00002\.safetensors, which is missing/);
    const shard = path.join(tmp, 'model-00001-of-00002.safetensors');
    fs.copyFileSync(path.join(HF_FIXTURES, 'llama', 'model-00002-of-00002.safetensors'), path.join(tmp, 'model-00002-of-00002.safetensors'));
    fs.truncateSync(shard, fs.statSync(shard).size - 100);
    assert.throws(() => checkpointTensors(tmp), /model-00001-of-00002\.safetensors: tensor .* run past the end of the file \(truncated download\?\)/);
    fs.copyFileSync(path.join(HF_FIXTURES, 'llama', 'model-00001-of-00002.safetensors'), shard);
    const cfg = JSON.parse(fs.readFileSync(path.join(tmp, 'config.json'), 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(path.join(tmp, 'config.json'), JSON.stringify({ ...cfg, num_key_value_heads: 2 }));
    assert.throws(() => HfModel.load(tmp), /tensor model\.layers\.0\.self_attn\.k_proj\.weight has shape 16×64, but config\.json .* needs 32×64/);
    fs.rmSync(path.join(tmp, 'model.safetensors.index.json'));
    assert.throws(() => HfModel.load(tmp), /no model\.safetensors and no model\.safetensors\.index\.json/);
    fs.rmSync(tmp, { recursive: true, force: true });
  });
});
