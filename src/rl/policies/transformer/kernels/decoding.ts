// Fused attention for decoding steps over a preallocated KV cache (an "arena"), on the wasm backend.
//
// With tfjs ops, every decoding step concatenated each layer's whole key and value cache with the new
// column (a copy that grows with the sequence), split the q|k|v projection into three tensors and ran
// a dozen small ops for the heads' reshapes, the scaled scores, the softmax and P·V; at a batch of 32
// those were most of a step. Here one kernel per layer (decoding.wat) writes the new key and
// value into column t of cache planes allocated once per batch, and computes softmax(q·Kᵀ/√E)·V for
// every row and head from the q|k|v row as the projection left it. The arena is private to one
// sampling call and never part of a gradient, so the kernel may write into it in place. Where the
// kernel cannot run (another backend, or a head width that is not a multiple of 4) the caller keeps
// the tfjs path.
import * as tf from '@tensorflow/tfjs';
import { WASM_BASE64 } from './decodingWasm';
import { elementCount, heapOffset, kernelModule, registerWasmKernel } from './wasmKernels';

const KERNEL = 'AgentRlDecodeAttention';
const PLANES = 'AgentRlArenaPlanes';
const LAYER_NORM = 'AgentRlLayerNorm';
const GELU = 'AgentRlGelu';
const GELU_GRAD = 'AgentRlGeluGrad';
const LAYER_NORM_GRAD = 'AgentRlLayerNormGrad';

type AttendExport = (
  qkv: number,
  kc: number,
  vc: number,
  starts: number,
  scores: number,
  out: number,
  B: number,
  H: number,
  E: number,
  P: number,
  t: number,
  scale: number,
) => void;
type FillExport = (kT: number, v: number, kc: number, vc: number, B: number, H: number, E: number, L: number, P: number) => void;
type LayerNormExport = (x: number, g: number, b: number, y: number, N: number, D: number) => void;
type GeluExport = (x: number, y: number, count: number) => void;
type GeluGradExport = (x: number, dy: number, dx: number, count: number) => void;
type LayerNormGradExport = (x: number, g: number, dy: number, dx: number, dg: number, db: number, N: number, D: number) => void;

const kernels = kernelModule(WASM_BASE64, (exports) => {
  const attend = exports.attend as AttendExport;
  const fill = exports.fill as FillExport;
  const layerNorm = exports.layerNorm as LayerNormExport;
  const layerNormGrad = exports.layerNormGrad as LayerNormGradExport;
  const gelu = exports.gelu as GeluExport;
  const geluGrad = exports.geluGrad as GeluGradExport;
  // Arena planes are allocated uninitialised (no zero-fill of megabytes per batch): columns before
  // a row's start are never read, and columns from the prefill's end are written before they are.
  registerWasmKernel<{ capacity: number }>(PLANES, (be, { kT, v }, { capacity }) => {
    const [B, H, E, L] = kT!.shape as [number, number, number, number];
    const kc = be.makeOutput([B, H, capacity, E], 'float32');
    const vc = be.makeOutput([B, H, capacity, E], 'float32');
    fill(heapOffset(be, kT!), heapOffset(be, v!), heapOffset(be, kc), heapOffset(be, vc), B, H, E, L, capacity);
    return [kc, vc];
  });
  registerWasmKernel<{ t: number; scale: number }>(KERNEL, (be, { qkv, k, v, starts, scratch }, { t, scale }) => {
    const [B, H, P, E] = k!.shape as [number, number, number, number];
    const out = be.makeOutput([B, H * E], 'float32');
    attend(
      heapOffset(be, qkv!),
      heapOffset(be, k!),
      heapOffset(be, v!),
      heapOffset(be, starts!),
      heapOffset(be, scratch!),
      heapOffset(be, out),
      B,
      H,
      E,
      P,
      t,
      scale,
    );
    return out;
  });
  registerWasmKernel(LAYER_NORM, (be, { x, g, b }) => {
    const [N, D] = x!.shape as [number, number];
    const out = be.makeOutput([N, D], 'float32');
    layerNorm(heapOffset(be, x!), heapOffset(be, g!), heapOffset(be, b!), heapOffset(be, out), N, D);
    return out;
  });
  registerWasmKernel(LAYER_NORM_GRAD, (be, { x, g, dy }) => {
    const [N, D] = x!.shape as [number, number];
    const dx = be.makeOutput([N, D], 'float32');
    const dg = be.makeOutput([D], 'float32');
    const db = be.makeOutput([D], 'float32');
    layerNormGrad(heapOffset(be, x!), heapOffset(be, g!), heapOffset(be, dy!), heapOffset(be, dx), heapOffset(be, dg), heapOffset(be, db), N, D);
    return [dx, dg, db];
  });
  registerWasmKernel(GELU, (be, { x }) => {
    const out = be.makeOutput([...x!.shape], 'float32');
    gelu(heapOffset(be, x!), heapOffset(be, out), elementCount(x!));
    return out;
  });
  registerWasmKernel(GELU_GRAD, (be, { x, dy }) => {
    const out = be.makeOutput([...x!.shape], 'float32');
    geluGrad(heapOffset(be, x!), heapOffset(be, dy!), heapOffset(be, out), elementCount(x!));
    return out;
  });
});

/** Whether decoding steps of a model with this head width can use the fused kernel here. */
export function decodeAttentionAvailable(headWidth: number): boolean {
  return headWidth % 4 === 0 && kernels.ready();
}

/** Per-layer cache planes for one batch being decoded: keys and values [B, H, P, E]. */
export interface KvArena {
  readonly k: tf.Tensor4D[];
  readonly v: tf.Tensor4D[];
  /** [B] int32: the first real column of each row (left padding before it is never attended to). */
  readonly starts: tf.Tensor1D;
  /** [P] scratch for one row and head's scores. */
  readonly scratch: tf.Tensor1D;
  /** Columns allocated (P). */
  readonly capacity: number;
  /** The column the next decoding step writes. */
  next: number;
}

/**
 * An arena of `capacity` columns holding a prefill's keys kT [B, H, E, L] and values [B, H, L, E] in
 * columns 0 … L−1. `pads[b]` is row b's left padding. Only call after decodeAttentionAvailable().
 */
export function createArena(kT: readonly tf.Tensor4D[], v: readonly tf.Tensor4D[], pads: readonly number[], capacity: number): KvArena {
  const L = kT[0]!.shape[3];
  if (capacity < L) throw new Error(`createArena: capacity ${capacity} is below the prefill length ${L}`);
  const planes = kT.map((k, l) => tf.engine().runKernel<tf.Tensor4D[]>(PLANES, { kT: k, v: v[l]! }, { capacity }));
  return {
    k: planes.map((p) => p[0]!),
    v: planes.map((p) => p[1]!),
    starts: tf.tensor1d(Int32Array.from(pads), 'int32'),
    scratch: tf.zeros<tf.Rank.R1>([capacity]),
    capacity,
    next: L,
  };
}

export function disposeArena(a: KvArena): void {
  tf.dispose([...a.k, ...a.v, a.starts, a.scratch]);
}

/**
 * One layer's attention for one decoding step: `qkv` [B, 3·D] is this step's projection; the new key
 * and value go into column `arena.next` of layer `layer`'s planes. Returns [B, D]. The caller advances
 * `arena.next` once every layer has run.
 */
export function decodeAttention(qkv: tf.Tensor2D, arena: KvArena, layer: number): tf.Tensor2D {
  if (arena.next >= arena.capacity) throw new Error(`decodeAttention: the arena's ${arena.capacity} columns are full`);
  const E = arena.k[layer]!.shape[3];
  return tf
    .engine()
    .runKernel<tf.Tensor2D>(
      KERNEL,
      { qkv, k: arena.k[layer]!, v: arena.v[layer]!, starts: arena.starts, scratch: arena.scratch },
      { t: arena.next, scale: 1 / Math.sqrt(E) },
    );
}

/** Layer norm of each row of x [N, D] (D a multiple of 4), ε = 1e-5, with gain g and bias b [D]. */
export function fusedLayerNorm(x: tf.Tensor2D, g: tf.Tensor, b: tf.Tensor): tf.Tensor2D {
  return tf.engine().runKernel<tf.Tensor2D>(LAYER_NORM, { x, g, b }, {});
}

/** GELU (tanh approximation) of every element. */
export function fusedGelu<T extends tf.Tensor>(x: T): T {
  return tf.engine().runKernel<T>(GELU, { x }, {});
}

/** GELU's tanh approximation in tfjs ops: ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
function geluOps<T extends tf.Tensor>(x: T): T {
  const x3 = tf.mul(tf.mul(x, x), x); // x·x·x: cheaper than pow, and its gradient too
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(tf.mul(tf.add(x, tf.mul(x3, 0.044715)), Math.sqrt(2 / Math.PI))), 1));
}

const geluFused = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, save] = args as [tf.Tensor, tf.GradSaveFunc];
  save([x]);
  return {
    value: fusedGelu(x),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.engine().runKernel<tf.Tensor>(GELU_GRAD, { x: saved[0]!, dy }, {}),
  };
});

/**
 * GELU (tanh approximation), differentiable: on wasm one kernel forward and one backward (instead of
 * nine elementwise ops and their gradients, tanh's among the slowest on that backend); tfjs ops elsewhere.
 */
export function gelu<T extends tf.Tensor>(x: T): T {
  return (kernels.ready() ? geluFused(x) : geluOps(x)) as T;
}

const layerNormFused = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, g, b, save] = args as [tf.Tensor2D, tf.Tensor1D, tf.Tensor1D, tf.GradSaveFunc];
  save([x, g]);
  return {
    value: fusedLayerNorm(x, g, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => tf.engine().runKernel<tf.Tensor[]>(LAYER_NORM_GRAD, { x: saved[0]!, g: saved[1]!, dy }, {}),
  };
});

/**
 * Layer norm of each row of x [N, D], ε = 1e-5, gain g and bias b [D], differentiable: on wasm one
 * kernel forward and one backward (mean, variance, normalisation and the affine part, where tfjs ran
 * about eight ops forward and fifteen backward); `ops` (tfjs) elsewhere or for widths not a multiple of 4.
 */
export function layerNorm(x: tf.Tensor2D, g: tf.Tensor, b: tf.Tensor, ops: (x: tf.Tensor2D, g: tf.Tensor, b: tf.Tensor) => tf.Tensor2D): tf.Tensor2D {
  return x.shape[1] % 4 === 0 && kernels.ready() ? layerNormFused(x, g, b) : ops(x, g, b);
}
