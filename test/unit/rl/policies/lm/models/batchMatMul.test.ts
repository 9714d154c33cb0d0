import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { skipOffWasm } from '../../../../../helpers/backend';
import { pathToFileURL } from 'node:url';
import { initBackend } from '../../../../../../src/rl/policies/lm/models/tfjsBackend';
import { batchMatMul, batchMatMulImplementation } from '../../../../../../src/rl/policies/lm/models/kernels/batchMatMul';
import { WASM_BASE64 } from '../../../../../../src/rl/policies/lm/models/kernels/batchMatMulWasm';

before(async () => {
  await initBackend('auto');
});

const maxAbs = (a: tf.Tensor, b: tf.Tensor): number => tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]!);

describe('batched matmul kernel', () => {
  it('runs the SIMD kernel on the wasm backend', (t) => {
    if (skipOffWasm(t)) return;
    assert.equal(batchMatMulImplementation(), 'wasm SIMD kernel');
  });

  it('equals tf.matMul within 1e-5 for column counts that exercise every path (16-wide, 4-wide, scalar tail)', () => {
    // N: 16 and 48 (16-wide blocks only), 150 (blocks, a 4-wide step, 2 scalar columns), 3 (scalar only), 1
    for (const [G, M, K, N] of [
      [2, 5, 16, 16],
      [3, 7, 9, 48],
      [4, 30, 16, 150],
      [4, 30, 150, 16],
      [2, 1, 150, 3],
      [5, 1, 16, 1],
      [1, 3, 1, 21],
    ] as const) {
      tf.tidy(() => {
        const a = tf.randomNormal<tf.Rank.R3>([G, M, K], 0, 1, 'float32', G * 100 + N);
        const b = tf.randomNormal<tf.Rank.R3>([G, K, N], 0, 1, 'float32', M * 100 + K);
        const err = maxAbs(batchMatMul(a, b), tf.matMul(a, b));
        assert.ok(err < 1e-5 * Math.max(1, Math.sqrt(K)), `[${G},${M},${K}]·[${G},${K},${N}]: max error ${err}`);
      });
    }
  });

  it('flattens leading dimensions: [B, H, T, E] · [B, H, E, Tk]', () => {
    tf.tidy(() => {
      const q = tf.randomNormal<tf.Rank.R4>([2, 3, 5, 8], 0, 1, 'float32', 1);
      const k = tf.randomNormal<tf.Rank.R4>([2, 3, 8, 6], 0, 1, 'float32', 2);
      const got = batchMatMul(q, k);
      assert.deepEqual(got.shape, [2, 3, 5, 6]);
      assert.ok(maxAbs(got, tf.matMul(q, k)) < 1e-5);
    });
    assert.throws(() => batchMatMul(tf.zeros([2, 3, 4]), tf.zeros([2, 5, 4])), /do not multiply/);
  });

  it('has the gradient of tf.matMul', () => {
    tf.tidy(() => {
      const a = tf.randomNormal<tf.Rank.R3>([3, 6, 20], 0, 1, 'float32', 3);
      const b = tf.randomNormal<tf.Rank.R3>([3, 20, 19], 0, 1, 'float32', 4);
      const w = tf.randomNormal([3, 6, 19], 0, 1, 'float32', 5);
      const ours = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(batchMatMul(x as tf.Tensor3D, y as tf.Tensor3D), w)))([a, b]);
      const theirs = tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.sum(tf.mul(tf.matMul(x as tf.Tensor3D, y as tf.Tensor3D), w)))([a, b]);
      assert.ok(maxAbs(ours[0]!, theirs[0]!) < 1e-4, 'dA');
      assert.ok(maxAbs(ours[1]!, theirs[1]!) < 1e-4, 'dB');
    });
  });

  it('keeps results right when allocations grow the wasm heap between calls', () => {
    tf.tidy(() => {
      const a = tf.randomNormal<tf.Rank.R3>([8, 64, 16], 0, 1, 'float32', 6);
      const b = tf.randomNormal<tf.Rank.R3>([8, 16, 64], 0, 1, 'float32', 7);
      const before = batchMatMul(a, b);
      const big = tf.zeros([(64 * 1024 * 1024) / 4]); // 64 MB: forces the heap to grow
      const after = batchMatMul(a, b);
      assert.equal(maxAbs(before, after), 0);
      assert.ok(maxAbs(after, tf.matMul(a, b)) < 1e-5);
      big.dispose();
    });
  });

  it('the committed binary is what batchMatMul.wat compiles to (npm run build:kernels)', async () => {
    const root = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..');
    const { compileWat } = (await import(pathToFileURL(path.join(root, 'scripts', 'watCompiler.mjs')).href)) as {
      compileWat: (f: string) => Promise<Uint8Array>;
    };
    const bytes = await compileWat(path.join(root, 'src', 'rl', 'policies', 'lm', 'models', 'kernels', 'batchMatMul.wat'));
    assert.equal(Buffer.from(bytes).toString('base64'), WASM_BASE64);
  });
});
