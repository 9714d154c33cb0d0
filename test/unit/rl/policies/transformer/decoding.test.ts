import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { skipOffWasm } from '../../../../helpers/backend';
import { pathToFileURL } from 'node:url';
import { initBackend } from '../../../../../src/rl/policies/transformer/backend';
import {
  createArena,
  decodeAttention,
  decodeAttentionAvailable,
  disposeArena,
  fusedGelu,
  fusedLayerNorm,
  gelu,
  layerNorm,
} from '../../../../../src/rl/policies/transformer/kernels/decoding';
import { WASM_BASE64 } from '../../../../../src/rl/policies/transformer/kernels/decodingWasm';

before(async () => {
  await initBackend('auto');
});

const maxAbs = (a: tf.Tensor, b: tf.Tensor): number => tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]!);

describe('fused decoding kernels', () => {
  it('are available on the wasm backend for head widths that are multiples of 4, and not otherwise', (t) => {
    if (skipOffWasm(t)) return;
    assert.equal(decodeAttentionAvailable(16), true);
    assert.equal(decodeAttentionAvailable(6), false);
  });

  it('GELU equals the tfjs tanh formula within 1e-5 from −30 to 30 (exp underflow and saturation included) and 1e-6 on [−3, 3]', (t) => {
    if (skipOffWasm(t)) return;
    const x = tf.linspace(-30, 30, 6001);
    const ref = tf.tidy(() => tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(tf.mul(tf.add(x, tf.mul(tf.pow(x, 3), 0.044715)), Math.sqrt(2 / Math.PI))), 1)));
    const got = fusedGelu(x);
    assert.ok(maxAbs(got, ref) < 1e-5, `max |Δ| = ${maxAbs(got, ref)}`);
    // relative error where values are small
    const small = tf.linspace(-3, 3, 601);
    const smallRef = tf.tidy(() =>
      tf.mul(tf.mul(small, 0.5), tf.add(tf.tanh(tf.mul(tf.add(small, tf.mul(tf.pow(small, 3), 0.044715)), Math.sqrt(2 / Math.PI))), 1)),
    );
    const smallGot = fusedGelu(small);
    assert.ok(maxAbs(smallGot, smallRef) < 1e-6, `max |Δ| on [−3, 3] = ${maxAbs(smallGot, smallRef)}`);
    tf.dispose([x, ref, got, small, smallRef, smallGot]);
  });

  it('the differentiable GELU has the gradient of the tfjs formula within 1e-5 (SIMD lanes and the scalar tail)', () => {
    const x = tf.linspace(-12, 12, 4003); // not a multiple of 4: the tail runs too
    const formula = (v: tf.Tensor): tf.Tensor =>
      tf.mul(tf.mul(v, 0.5), tf.add(tf.tanh(tf.mul(tf.add(v, tf.mul(tf.pow(v, 3), 0.044715)), Math.sqrt(2 / Math.PI))), 1));
    const w = tf.linspace(0.5, 1.5, 4003);
    const got = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(gelu(v), w)))(x);
    const ref = tf.grad((v: tf.Tensor) => tf.sum(tf.mul(formula(v), w)))(x);
    assert.ok(maxAbs(got, ref) < 1e-5, `max |Δ| = ${maxAbs(got, ref)}`);
    tf.dispose([x, w, got, ref]);
  });

  it('layer norm equals the tfjs moments formula within 1e-5 on rows with large offsets', (t) => {
    if (skipOffWasm(t)) return;
    const x = tf.add<tf.Tensor2D>(tf.randomNormal([37, 64], 0, 3, 'float32', 1), tf.randomUniform([37, 1], -50, 50, 'float32', 2));
    const g = tf.randomNormal([64], 1, 0.2, 'float32', 3);
    const b = tf.randomNormal([64], 0, 0.2, 'float32', 4);
    const ref = tf.tidy(() => {
      const { mean, variance } = tf.moments(x, -1, true);
      return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5))), g), b);
    });
    const got = fusedLayerNorm(x, g, b);
    assert.ok(maxAbs(got, ref) < 1e-5, `max |Δ| = ${maxAbs(got, ref)}`);
    tf.dispose([x, g, b, ref, got]);
  });

  it('the differentiable layer norm has the gradients of the tfjs formula within 1e-4 for x, gain and bias', () => {
    const x = tf.add<tf.Tensor2D>(tf.randomNormal([19, 32], 0, 2, 'float32', 11), tf.randomUniform([19, 1], -5, 5, 'float32', 12));
    const g = tf.randomNormal([32], 1, 0.3, 'float32', 13);
    const b = tf.randomNormal([32], 0, 0.3, 'float32', 14);
    const w = tf.randomNormal([19, 32], 0, 1, 'float32', 15);
    const ops = (v: tf.Tensor2D, gain: tf.Tensor, bias: tf.Tensor): tf.Tensor2D => {
      const { mean, variance } = tf.moments(v, -1, true);
      return tf.add(tf.mul(tf.div(tf.sub(v, mean), tf.sqrt(tf.add(variance, 1e-5))), gain), bias);
    };
    const lossWith =
      (f: (v: tf.Tensor2D, gain: tf.Tensor, bias: tf.Tensor) => tf.Tensor2D) =>
      (v: tf.Tensor, gain: tf.Tensor, bias: tf.Tensor): tf.Scalar =>
        tf.sum(tf.mul(tf.square(f(v as tf.Tensor2D, gain, bias)), w));
    const got = tf.grads(lossWith((v, gain, bias) => layerNorm(v, gain, bias, ops)))([x, g, b]);
    const ref = tf.grads(lossWith(ops))([x, g, b]);
    got.forEach((t, i) => assert.ok(maxAbs(t, ref[i]!) < 1e-4, `input ${i}: max |Δ| = ${maxAbs(t, ref[i]!)}`));
    tf.dispose([x, g, b, w, ...got, ...ref]);
  });

  it('attention over the arena equals softmax(q·Kᵀ/√E)·V over each row’s real columns, and writes the new column in place', (t) => {
    if (skipOffWasm(t)) return;
    const [B, H, E, L, P] = [3, 2, 8, 5, 9];
    const D = H * E;
    const kT = tf.randomNormal<tf.Rank.R4>([B, H, E, L], 0, 1, 'float32', 5);
    const v = tf.randomNormal<tf.Rank.R4>([B, H, L, E], 0, 1, 'float32', 6);
    const pads = [0, 2, 4];
    const arena = createArena([kT], [v], pads, P);
    const qkv = tf.randomNormal<tf.Rank.R2>([B, 3 * D], 0, 2, 'float32', 7);
    const got = decodeAttention(qkv, arena, 0);
    // reference per row and head, from the prefill's tensors plus the new key and value
    const q = qkv.arraySync();
    const K = kT.arraySync();
    const Vv = v.arraySync();
    const out = got.arraySync();
    let worst = 0;
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < H; h++) {
        const keys: number[][] = [];
        const vals: number[][] = [];
        for (let s = pads[b]!; s < L; s++) {
          keys.push(Array.from({ length: E }, (_, e) => K[b]![h]![e]![s]!));
          vals.push(Vv[b]![h]![s]!);
        }
        keys.push(q[b]!.slice(D + h * E, D + (h + 1) * E));
        vals.push(q[b]!.slice(2 * D + h * E, 2 * D + (h + 1) * E));
        const qh = q[b]!.slice(h * E, (h + 1) * E);
        const scores = keys.map((k) => k.reduce((acc, x, e) => acc + x * qh[e]!, 0) / Math.sqrt(E));
        const m = Math.max(...scores);
        const w = scores.map((s) => Math.exp(s - m));
        const z = w.reduce((a, c) => a + c, 0);
        for (let e = 0; e < E; e++) {
          const ref = vals.reduce((acc, row, i) => acc + (w[i]! / z) * row[e]!, 0);
          worst = Math.max(worst, Math.abs(ref - out[b]![h * E + e]!));
        }
      }
    }
    assert.ok(worst < 1e-5, `max |Δ| = ${worst}`);
    // the new key of row 1, head 1 sits in column L of the arena
    const col = tf.tidy(() => tf.slice(arena.k[0]!, [1, 1, L, 0], [1, 1, 1, E]).dataSync());
    assert.deepEqual(
      Array.from(col),
      q[1]!.slice(D + E, D + 2 * E).map((x) => Math.fround(x)),
    );
    tf.dispose([kT, v, qkv, got]);
    disposeArena(arena);
  });

  it('the committed binary is what decoding.wat compiles to (npm run build:kernels)', async () => {
    const root = path.resolve(__dirname, '..', '..', '..', '..', '..', '..');
    const { compileWat } = (await import(pathToFileURL(path.join(root, 'scripts', 'watCompiler.mjs')).href)) as {
      compileWat: (f: string) => Promise<Uint8Array>;
    };
    const bytes = await compileWat(path.join(root, 'src', 'rl', 'policies', 'transformer', 'kernels', 'decoding.wat'));
    assert.equal(Buffer.from(bytes).toString('base64'), WASM_BASE64);
  });
});
