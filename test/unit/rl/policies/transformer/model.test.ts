import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { initBackend } from '../../../../../src/rl/policies/transformer/backend';
import { Gpt, type GptConfig } from '../../../../../src/rl/policies/transformer/model';
import { decodeStep, disposeState, prefill, sampleBatch } from '../../../../../src/rl/policies/transformer/sampler';
import { Rng } from '../../../../../src/rl/random';

const tiny: GptConfig = { vocabSize: 98, contextLength: 48, dModel: 32, nLayers: 2, nHeads: 4, mlpRatio: 4, tiedHead: true };

before(async () => {
  const info = await initBackend('auto');
  console.log(`backend: ${info.name}`);
});

/** Last-position logits of a full forward over one unpadded sequence: [V]. */
function fullLast(model: Gpt, seq: number[]): Float32Array {
  return tf.tidy(() => {
    const logits = model.forward(tf.tensor2d([seq], [1, seq.length], 'int32'));
    return tf.slice(logits, [0, seq.length - 1, 0], [1, 1, -1]).dataSync() as Float32Array;
  });
}

describe('GPT with KV cache', () => {
  it('uses the wasm backend here (tfjs-node is optional and absent)', () => {
    assert.ok(['wasm', 'tensorflow'].includes(tf.getBackend()), tf.getBackend());
  });

  it('a forward-only (scoped) pass gives the same logits with a lower memory peak, and leaks nothing', async () => {
    const model = new Gpt({ ...tiny, nLayers: 4 }, 3);
    const ids = tf.tensor2d(
      Array.from({ length: 8 * 40 }, (_, i) => (i * 7) % 98),
      [8, 40],
      'int32',
    );
    const peak = async (scoped: boolean): Promise<{ peak: number; logits: Float32Array }> => {
      let logits: Float32Array = new Float32Array();
      const info = await tf.profile(() => {
        const out = model.forward(ids, scoped);
        logits = out.dataSync() as Float32Array;
        out.dispose();
      });
      return { peak: info.peakBytes, logits };
    };
    await peak(true); // first use: lazily built constants
    const before = tf.memory().numTensors;
    const all = await peak(false);
    const scoped = await peak(true);
    assert.deepEqual(scoped.logits, all.logits);
    assert.ok(scoped.peak < 0.6 * all.peak, `peak ${scoped.peak} bytes scoped against ${all.peak} unscoped`);
    assert.equal(tf.memory().numTensors, before);
    ids.dispose();
    model.dispose();
  });

  for (const fused of [true, false]) {
    const path = fused ? 'the fused attention kernel over an arena' : 'the tfjs cache grown by concatenation';
    it(`KV-cache logits equal a full forward pass within 1e-4 at every step, with left-padded prompts of different lengths (${path})`, () => {
      const model = new Gpt(tiny, 1);
      // 35 rows: prefill runs in chunks of 32 rows, so the cache is assembled from two passes
      const prompts = [
        [5, 6, 7, 8, 9, 10, 11],
        [3],
        [20, 21, 22],
        ...Array.from({ length: 32 }, (_, i) => Array.from({ length: 1 + (i % 7) }, (_, j) => (i * 5 + j * 3) % 90)),
      ];
      const pass = (): number => {
        const seqs = prompts.map((p) => [...p]);
        // capacity: the longest prompt (7) plus the 12 steps, exactly; one more step would overflow it
        const started = prefill(model, prompts, { fused, capacity: 7 + 12 });
        const state = started.state;
        assert.equal(state.arena !== undefined, fused && tf.getBackend() === 'wasm', 'the arena is used exactly when asked for on wasm');
        let logits = started.logits;
        let worst = 0;
        for (let step = 0; step <= 12; step++) {
          const data = logits.dataSync() as Float32Array;
          logits.dispose();
          const V = tiny.vocabSize;
          const next: number[] = [];
          prompts.forEach((_, b) => {
            const ref = fullLast(model, seqs[b]!);
            for (let i = 0; i < V; i++) worst = Math.max(worst, Math.abs(ref[i]! - data[b * V + i]!));
            const tok = (step * 7 + b * 13) % V;
            seqs[b]!.push(tok);
            next.push(tok);
          });
          if (step === 12) break;
          logits = decodeStep(model, state, next);
        }
        if (state.arena)
          assert.throws(
            () =>
              decodeStep(
                model,
                state,
                prompts.map(() => 1),
              ),
            /columns are full/,
          );
        disposeState(state);
        return worst;
      };
      const worst = pass();
      assert.ok(worst < 1e-4, `max |Δlogit| = ${worst}`);
      // The model caches one causal mask per sequence length; a second identical pass must add nothing.
      const tensors = tf.memory().numTensors;
      pass();
      assert.equal(tf.memory().numTensors, tensors, 'sampling leaked tensors');
      model.dispose();
    });
  }

  it('a stop tag split across two tokens still stops generation', async () => {
    // A rigged model over 2-character tokens: position p prefers token p mod 4, so greedy decoding
    // writes '</' 'ca' 'll' '>x' …; the stop tag '</call>' ends inside the fourth token.
    const chunks = ['</', 'ca', 'll', '>x', 'zz'];
    const chunkTok = {
      vocabSize: chunks.length,
      encode: () => [],
      decode: (ids: readonly number[]) => ids.map((i) => chunks[i]!).join(''),
      toJSON: () => ({ kind: 'test' }),
    };
    const m = new Gpt({ ...tiny, vocabSize: chunks.length, tiedHead: false }, 3);
    const D = tiny.dModel;
    const wpe = new Float32Array(tiny.contextLength * D);
    for (let p = 0; p < tiny.contextLength; p++) wpe[p * D + (p % 4)] = 50; // the token at position p predicts chunk p mod 4
    m.w('wpe').assign(tf.tensor2d(wpe, [tiny.contextLength, D]));
    m.w('wte').assign(tf.zeros([chunks.length, D]));
    const head = new Float32Array(D * chunks.length);
    for (let c = 0; c < 4; c++) head[c * chunks.length + c] = 1; // feature c → chunk c
    m.w('head').assign(tf.tensor2d(head, [D, chunks.length]));
    for (let l = 0; l < tiny.nLayers; l++) {
      m.w(`h${l}.attn.wo`).assign(tf.zeros(m.w(`h${l}.attn.wo`).shape));
      m.w(`h${l}.mlp.w2`).assign(tf.zeros(m.w(`h${l}.mlp.w2`).shape));
    }
    m.w('lnf.g').assign(tf.ones([D]));
    const [out] = await sampleBatch(m, chunkTok, [[4]], { temperature: 0, topK: 0, topP: 1, maxNewTokens: 20, stop: ['</call>'] }, new Rng(1));
    assert.equal(out!.stopReason, 'stop');
    assert.equal(out!.text, '</call>x'); // 4 tokens: '</' 'ca' 'll' '>x'; the tag ends inside the last one
    assert.equal(out!.tokens.length, 4);
    m.dispose();
  });
});
