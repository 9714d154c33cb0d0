// Batched matrix product for attention, C[g] = A[g] · B[g] with A [G, M, K] and B [G, K, N].
//
// tfjs-backend-wasm sends only unbatched, untransposed 2-D products to XNNPACK; every batched one
// (attention's Q·Kᵀ and P·V, forward and backward) runs in a scalar C++ loop at about 1 GFLOP/s, and
// that loop was half of a training step. On the wasm backend this op runs a hand-written SIMD kernel
// (batchMatMul.wat, 4 × f32x4 accumulators over 16 output columns) on the tensors where they lie:
// the kernel module imports tfjs-wasm's own linear memory, reads A and B at their heap offsets and
// writes into an output tensor the backend allocated, so nothing is copied. On other backends
// (tfjs-node's native TensorFlow, the plain CPU one) it is tf.matMul. The gradient materialises
// the transposes first, so it runs on the same kernel: ∂A = ∂C · Bᵀ, ∂B = Aᵀ · ∂C.
import * as tf from '@tensorflow/tfjs';
import { WASM_BASE64 } from './batchMatMulWasm';
import { heapOffset, kernelModule, registerWasmKernel } from './wasmKernels';

const KERNEL = 'AgentRlBatchMatMul';

type BmmExport = (a: number, b: number, c: number, G: number, M: number, K: number, N: number) => void;

const kernels = kernelModule(WASM_BASE64, (exports) => {
  const bmm = exports.bmm as BmmExport;
  registerWasmKernel(KERNEL, (be, { a, b }) => {
    const [G, M, K] = a!.shape as [number, number, number];
    const N = b!.shape[2]!;
    const out = be.makeOutput([G, M, N], 'float32');
    bmm(heapOffset(be, a!), heapOffset(be, b!), heapOffset(be, out), G, M, K, N);
    return out;
  });
});

/** Which implementation batched products use in this process (for run records and benchmarks). */
export function batchMatMulImplementation(): string {
  if (kernels.ready()) return 'wasm SIMD kernel';
  return kernels.reason || `backend ${tf.getBackend()} (tf.matMul)`;
}

function forward(a: tf.Tensor3D, b: tf.Tensor3D): tf.Tensor3D {
  if (a.dtype === 'float32' && b.dtype === 'float32' && kernels.ready()) {
    return tf.engine().runKernel<tf.Tensor3D>(KERNEL, { a, b }, {});
  }
  return tf.matMul(a, b);
}

const T3 = [0, 2, 1];

const bmm3 = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [a, b, save] = args as [tf.Tensor3D, tf.Tensor3D, tf.GradSaveFunc];
  save([a, b]);
  return {
    value: forward(a, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sa, sb] = saved as [tf.Tensor3D, tf.Tensor3D];
      return [forward(dy as tf.Tensor3D, tf.transpose(sb, T3)), forward(tf.transpose(sa, T3), dy as tf.Tensor3D)];
    },
  };
}) as (a: tf.Tensor3D, b: tf.Tensor3D) => tf.Tensor3D;

/**
 * a [..., M, K] · b [..., K, N] with equal leading dimensions → [..., M, N], differentiable.
 * Leading dimensions are flattened into one batch dimension (a reshape, not a copy).
 */
export function batchMatMul<R extends tf.Rank>(a: tf.Tensor<R>, b: tf.Tensor<R>): tf.Tensor<R> {
  const lead = a.shape.slice(0, -2);
  const [M, K] = a.shape.slice(-2) as [number, number];
  const [K2, N] = b.shape.slice(-2) as [number, number];
  if (K !== K2 || lead.join() !== b.shape.slice(0, -2).join()) {
    throw new Error(`batchMatMul: shapes [${a.shape.join(', ')}] and [${b.shape.join(', ')}] do not multiply`);
  }
  const G = lead.reduce((x, y) => x * y, 1);
  const c = bmm3(tf.reshape(a, [G, M, K]), tf.reshape(b, [G, K, N]));
  return tf.reshape(c, [...lead, M, N]) as unknown as tf.Tensor<R>;
}
