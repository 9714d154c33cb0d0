// Between the projection layout [B·T, S·D] and S attention-heads tensors [B, H, T, E] in one pass
// each (heads.wat). Training's forward used to split q|k|v out of one [B·T, 3D] product with tf.split
// (column slices: a slow path of tfjs-wasm), transpose each into heads, and merge the heads back with
// another transpose; here each direction is one kernel with S outputs (or inputs), registered with
// its gradient, which is the other direction. Other backends use split, reshape and transpose.
import * as tf from '@tensorflow/tfjs';
import { WASM_BASE64 } from './headsWasm';
import { heapOffset, kernelModule, registerWasmKernel } from './wasmKernels';

type MoveExport = (src: number, dst: number, B: number, T: number, S: number, s: number, H: number, E: number) => void;
export interface HeadDims {
  readonly B: number;
  readonly T: number;
  readonly H: number;
  readonly E: number;
}
type Attrs = HeadDims & { readonly S: number };

const TO = 'AgentRlToHeads';
const FROM = 'AgentRlFromHeads';
const inputNames = (S: number): string[] => Array.from({ length: S }, (_, s) => `x${s}`);

const kernels = kernelModule(WASM_BASE64, (exports) => {
  const toHeads = exports.toHeads as MoveExport;
  const fromHeads = exports.fromHeads as MoveExport;
  registerWasmKernel<Attrs>(TO, (be, { x }, { B, T, S, H, E }) =>
    Array.from({ length: S }, (_, s) => {
      const out = be.makeOutput([B, H, T, E], 'float32');
      toHeads(heapOffset(be, x!), heapOffset(be, out), B, T, S, s, H, E);
      return out;
    }),
  );
  registerWasmKernel<Attrs>(FROM, (be, inputs, { B, T, S, H, E }) => {
    const out = be.makeOutput([B * T, S * H * E], 'float32');
    inputNames(S).forEach((name, s) => fromHeads(heapOffset(be, inputs[name]!), heapOffset(be, out), B, T, S, s, H, E));
    return out;
  });
  tf.registerGradient({
    kernelName: TO,
    gradFunc: (dy: tf.Tensor | tf.Tensor[], _saved: tf.Tensor[], attrs: tf.NamedAttrMap) => {
      const a = attrs as unknown as Attrs;
      return { x: () => fromHeadsRows(dy as tf.Tensor4D[], a) };
    },
  });
  tf.registerGradient({
    kernelName: FROM,
    gradFunc: (dy: tf.Tensor | tf.Tensor[], _saved: tf.Tensor[], attrs: tf.NamedAttrMap) => {
      const a = attrs as unknown as Attrs;
      const parts = toHeadsParts(dy as tf.Tensor2D, a.S, a);
      return Object.fromEntries(inputNames(a.S).map((name, s) => [name, () => parts[s]!]));
    },
  });
});

function toHeadsParts(rows: tf.Tensor2D, S: number, d: HeadDims): tf.Tensor4D[] {
  return tf.engine().runKernel<tf.Tensor4D[]>(TO, { x: rows }, { ...d, S });
}

function fromHeadsRows(heads: readonly tf.Tensor4D[], d: HeadDims): tf.Tensor2D {
  return tf.engine().runKernel<tf.Tensor2D>(FROM, Object.fromEntries(inputNames(heads.length).map((name, s) => [name, heads[s]!])), { ...d, S: heads.length });
}

/** rows [B·T, S·H·E] → S tensors [B, H, T, E] (block s of every row), differentiable. */
export function toHeads(rows: tf.Tensor2D, S: number, d: HeadDims): tf.Tensor4D[] {
  if (kernels.ready()) return toHeadsParts(rows, S, d);
  return tf.split(rows, S, 1).map((p) => tf.transpose(tf.reshape<tf.Rank.R4>(p, [d.B, d.T, d.H, d.E]), [0, 2, 1, 3]));
}

/** S tensors [B, H, T, E] → rows [B·T, S·H·E], differentiable. */
export function fromHeads(heads: readonly tf.Tensor4D[], d: HeadDims): tf.Tensor2D {
  if (kernels.ready()) return fromHeadsRows(heads, d);
  const rows = heads.map((h) => tf.reshape<tf.Rank.R2>(tf.transpose(h, [0, 2, 1, 3]), [d.B * d.T, d.H * d.E]));
  return rows.length === 1 ? rows[0]! : tf.concat(rows, 1);
}
