import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { initBackend } from '../../../../../src/rl/policies/transformer/backend';
import { fromHeads, toHeads } from '../../../../../src/rl/policies/transformer/kernels/heads';
import { WASM_BASE64 } from '../../../../../src/rl/policies/transformer/kernels/headsWasm';

before(async () => {
  await initBackend('auto');
});

const [B, T, H, E] = [2, 5, 3, 4];
const D = H * E;
const d = { B, T, H, E };
/** The layout change in plain tfjs ops: block s of every row, as [B, H, T, E]. */
const reference = (rows: tf.Tensor2D, S: number): tf.Tensor4D[] =>
  tf.split(rows, S, 1).map((p) => tf.transpose(tf.reshape<tf.Rank.R4>(p, [B, T, H, E]), [0, 2, 1, 3]));

describe('heads layout kernels', () => {
  it('toHeads equals split + reshape + transpose exactly, for S = 3 and S = 1', () => {
    for (const S of [3, 1]) {
      const rows = tf.randomNormal<tf.Rank.R2>([B * T, S * D], 0, 1, 'float32', S);
      const got = toHeads(rows, S, d);
      const ref = reference(rows, S);
      assert.equal(got.length, S);
      got.forEach((g, s) => assert.deepEqual(Array.from(g.dataSync()), Array.from(ref[s]!.dataSync()), `block ${s}`));
      tf.dispose([rows, ...got, ...ref]);
    }
  });

  it('fromHeads inverts toHeads', () => {
    const rows = tf.randomNormal<tf.Rank.R2>([B * T, 3 * D], 0, 1, 'float32', 9);
    const parts = toHeads(rows, 3, d);
    const back = fromHeads(parts, d);
    assert.deepEqual(back.shape, [B * T, 3 * D]);
    assert.deepEqual(Array.from(back.dataSync()), Array.from(rows.dataSync()));
    tf.dispose([rows, back, ...parts]);
  });

  it('both directions have the gradients of the plain ops', () => {
    const rows = tf.randomNormal<tf.Rank.R2>([B * T, 3 * D], 0, 1, 'float32', 10);
    const w = [0, 1, 2].map((s) => tf.randomNormal<tf.Rank.R4>([B, H, T, E], 0, 1, 'float32', 20 + s));
    // a loss that weighs every element differently, through toHeads then fromHeads of a scaled copy
    const loss =
      (f: (r: tf.Tensor2D) => tf.Tensor4D[]) =>
      (r: tf.Tensor): tf.Scalar => {
        const parts = f(r as tf.Tensor2D);
        const mixed = fromHeads(
          parts.map((p, s) => tf.mul(p, w[s]!)),
          d,
        );
        return tf.sum(tf.mul(mixed, mixed));
      };
    const got = tf.grad(loss((r) => toHeads(r, 3, d)))(rows);
    const ref = tf.grad(loss((r) => reference(r, 3)))(rows);
    const diff = tf.max(tf.abs(tf.sub(got, ref))).dataSync()[0]!;
    assert.ok(diff < 1e-5, `max |Δ| = ${diff}`);
    tf.dispose([rows, ...w, got, ref]);
  });

  it('the committed binary is what heads.wat compiles to (npm run build:kernels)', async () => {
    const root = path.resolve(__dirname, '..', '..', '..', '..', '..', '..');
    const { compileWat } = (await import(pathToFileURL(path.join(root, 'scripts', 'watCompiler.mjs')).href)) as {
      compileWat: (f: string) => Promise<Uint8Array>;
    };
    const bytes = await compileWat(path.join(root, 'src', 'rl', 'policies', 'transformer', 'kernels', 'heads.wat'));
    assert.equal(Buffer.from(bytes).toString('base64'), WASM_BASE64);
  });
});
