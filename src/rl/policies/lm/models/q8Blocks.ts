// Q8_0 blocks as a type (issue 50, item 1; ARCHITECTURE.md "Quantized blocks as a type, not a flag"):
// ggml's block_q8_0 — 32 int8 values in [−127, 127] and one scale, value ≈ scale · q — defined once
// here, in the two byte layouts that use it, with the TypeScript reference of every 8-bit kernel
// (scripts/kernels/q8Wat.mjs), bit for bit:
//
// GGUF (type 8, what llama.cpp reads and the GGUF writer writes): a tensor [rows, cols] is rows × cols
// / 32 blocks in row-major order, 34 bytes each: the scale as a little-endian float16, then 32 int8.
//
// The engine (what the kernels read): a row of K values (K a multiple of 32) takes Kp = K rounded up
// to 128 bytes of int8 — groups of four blocks, within a group the 16-byte vector v (0..7) holding
// elements 4v..4v+3 of blocks 0, 1, 2, 3 (byte 16v + 4j + t = block j's element 4v + t) — and its
// Kp / 32 scales are float32 in a separate array [rows, Kp / 32]. Why not GGUF's 34-byte blocks: the
// kernels read 16-byte vectors (34 is not a multiple of 16, and wasm has no float16 arithmetic to use
// the scale in place); why the interleave: `i32x4.relaxed_dot_i8x16_i7x16_add_s` sums four adjacent
// bytes into one lane, so after a group's eight vectors lane j holds block j's whole integer dot and
// four blocks reach the float accumulator with one convert, three multiplies (the two sides' four
// scales, one 16-byte load each, then the dots) and one add; why 128: a group is four blocks (padding blocks: q = 0, scale 0;
// every hidden size of the supported models is a multiple of 128, so padding is rare). A weight's
// scales hold exactly the float16 values GGUF stores, so engine ↔ GGUF is lossless both ways.
//
// Quantizing a block: amax = max |x|, d = amax / 127, the scale kept float16(d) (round to nearest even:
// what GGUF stores for weights and what ggml's dot product reads for activations), and q clamped to
// [−127, 127] — never −128, which the relaxed dot's exactness rests on — all in float32, by one of
// llama.cpp's two rules (Q8Quantizer): 'weight' is quantize_row_q8_0_ref (llama-quantize, gguf-py), id =
// d ≠ 0 ? 1 / d : 0 and q = round half away from zero (x · id); 'activation' is ggml-cpu's x86
// quantize_row_q8_0 (AVX/AVX2), which quantizes every product's input at run time: id = amax ≠ 0 ?
// 127 / amax : 0 and q = round half to even (x · id). So a Q8_0 GGUF sampled by llama.cpp on x86 and the
// engine compute the same blocks on both sides of every product.
import { ModelLoadError } from './hfConfig';

/** Values per block. */
export const Q8_BLOCK = 32;
/** Values per group of four interleaved blocks (the engine layout's unit along a row). */
export const Q8_GROUP = 128;
/** The largest magnitude a quantized value takes (−128 never occurs). */
export const Q8_MAX = 127;
/** GGUF's Q8_0: ggml type id 8, 34 bytes per block of 32 (a float16 scale, then 32 int8). */
export const GGUF_Q8_0 = { type: 8, blockValues: Q8_BLOCK, blockBytes: 34 } as const;

/** Which of llama.cpp's Q8_0 rules a quantization follows (above): stored weights or run-time activations. */
export type Q8Quantizer = 'weight' | 'activation';

/** The engine layout of a [rows, cols] matrix: sizes in bytes (the memory plan reads these). */
export interface Q8Layout {
  readonly rows: number;
  readonly cols: number;
  /** cols rounded up to a multiple of 128: int8 bytes a row. */
  readonly paddedCols: number;
  /** Scales a row (paddedCols / 32). */
  readonly blocksPerRow: number;
  /** rows × paddedCols. */
  readonly valueBytes: number;
  /** rows × blocksPerRow × 4. */
  readonly scaleBytes: number;
  /** valueBytes + scaleBytes (both parts 16-byte aligned when the first is). */
  readonly bytes: number;
}

export function q8Layout(rows: number, cols: number): Q8Layout {
  if (!Number.isInteger(rows) || rows < 0 || !Number.isInteger(cols) || cols < 0 || cols % Q8_BLOCK !== 0)
    throw new Error(`Q8_0 blocks need whole rows of 32 values: a [${rows}, ${cols}] matrix has ${cols} columns, not a multiple of 32`);
  const paddedCols = Math.ceil(cols / Q8_GROUP) * Q8_GROUP;
  const blocksPerRow = paddedCols / Q8_BLOCK;
  const valueBytes = rows * paddedCols;
  const scaleBytes = rows * blocksPerRow * 4;
  return { rows, cols, paddedCols, blocksPerRow, valueBytes, scaleBytes, bytes: valueBytes + scaleBytes };
}

/** Bytes of a [rows, cols] tensor as GGUF Q8_0 blocks. */
export function ggufQ8_0Bytes(rows: number, cols: number): number {
  q8Layout(rows, cols);
  return ((rows * cols) / Q8_BLOCK) * GGUF_Q8_0.blockBytes;
}

/** Byte offset, within an engine row, of element k. */
export function q8Offset(k: number): number {
  const e = k & 31;
  return (k >> 7) * Q8_GROUP + (e >> 2) * 16 + ((k >> 5) & 3) * 4 + (e & 3);
}

/** A matrix in the engine layout, in JavaScript memory (the kernels take the same bytes in wasm memory). */
export interface Q8Matrix {
  readonly layout: Q8Layout;
  /** [rows, paddedCols], interleaved as above. */
  readonly q: Int8Array;
  /** [rows, blocksPerRow]. */
  readonly scales: Float32Array;
}

export function emptyQ8(rows: number, cols: number): Q8Matrix {
  const layout = q8Layout(rows, cols);
  return { layout, q: new Int8Array(layout.valueBytes), scales: new Float32Array(layout.scaleBytes / 4) };
}

const f32 = Math.fround;
const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/** float32 → float16 bits, round to nearest even (overflow → infinity, as a C conversion does). */
export function f32ToF16Bits(x: number): number {
  F32[0] = x;
  const b = U32[0]!;
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  const man = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (man ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    const m = man | 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = m & ((1 << shift) - 1);
    let h = m >>> shift;
    if (rest > half || (rest === half && (h & 1) === 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (man >>> 13);
  const rest = man & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1) === 1)) h++;
  return sign | h; // a carry into the exponent is right, up to infinity
}

export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const man = h & 0x3ff;
  if (exp === 0) return sign * man * 2 ** -24;
  if (exp === 31) return man ? NaN : sign * Infinity;
  return sign * (1 + man / 1024) * 2 ** (exp - 15);
}

/** C's roundf: half away from zero (on a float32 input, exact in float64). */
export function roundHalfAway(v: number): number {
  const t = Math.trunc(v);
  return Math.abs(v - t) >= 0.5 ? t + Math.sign(v) : t;
}

/** Round half to even (SSE's _MM_ROUND_NEAREST, wasm's f32.nearest), on a float32 input, exact in float64. */
export function roundHalfEven(v: number): number {
  const r = Math.round(v); // half up
  return r - v === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * Quantizes values[r·ld + k] (k < cols) into `out` row by row, by llama.cpp's rule for `kind` (weights
 * as GGUF stores them, activations as ggml-cpu quantizes a product's input). The kernel q8_quantize
 * does the same, bit for bit.
 */
export function quantizeQ8(values: ArrayLike<number>, rows: number, cols: number, kind: Q8Quantizer, ld = cols, out = emptyQ8(rows, cols)): Q8Matrix {
  const { paddedCols, blocksPerRow } = out.layout;
  const kb = cols / Q8_BLOCK;
  const act = kind === 'activation';
  const round = act ? roundHalfEven : roundHalfAway;
  for (let r = 0; r < rows; r++) {
    for (let b = 0; b < kb; b++) {
      const base = r * ld + b * Q8_BLOCK;
      let amax = 0;
      for (let i = 0; i < Q8_BLOCK; i++) amax = Math.max(amax, Math.abs(f32(values[base + i]!)));
      const d = f32(amax / Q8_MAX);
      const id = act ? (amax !== 0 ? f32(Q8_MAX / amax) : 0) : d !== 0 ? f32(1 / d) : 0;
      out.scales[r * blocksPerRow + b] = f16BitsToF32(f32ToF16Bits(d));
      for (let i = 0; i < Q8_BLOCK; i++) {
        const q = round(f32(f32(values[base + i]!) * id));
        out.q[r * paddedCols + q8Offset(b * Q8_BLOCK + i)] = Math.max(-Q8_MAX, Math.min(Q8_MAX, q)) || 0;
      }
    }
    for (let b = kb; b < blocksPerRow; b++) out.scales[r * blocksPerRow + b] = 0;
    for (let k = cols; k < paddedCols; k++) out.q[r * paddedCols + q8Offset(k)] = 0;
  }
  return out;
}

/** Element (r, k) as a number: scale · q (float32). */
export function q8Value(m: Q8Matrix, r: number, k: number): number {
  return f32(m.scales[r * m.layout.blocksPerRow + (k >> 5)]! * m.q[r * m.layout.paddedCols + q8Offset(k)]!);
}

/** [rows, cols] float32 (the kernel q8_dequantize does the same). */
export function dequantizeQ8(m: Q8Matrix): Float32Array {
  const { rows, cols } = m.layout;
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let k = 0; k < cols; k++) out[r * cols + k] = q8Value(m, r, k);
  return out;
}

/** The GGUF bytes of a matrix whose scales are float16 values (every quantizeQ8 result's are). */
export function encodeGgufQ8_0(m: Q8Matrix): Uint8Array {
  const { rows, cols, paddedCols, blocksPerRow } = m.layout;
  const kb = cols / Q8_BLOCK;
  const out = new Uint8Array(ggufQ8_0Bytes(rows, cols));
  const view = new DataView(out.buffer);
  for (let r = 0; r < rows; r++)
    for (let b = 0; b < kb; b++) {
      const at = (r * kb + b) * GGUF_Q8_0.blockBytes;
      const s = m.scales[r * blocksPerRow + b]!;
      const h = f32ToF16Bits(s);
      if (!Object.is(f16BitsToF32(h), s))
        throw new Error(`encodeGgufQ8_0: scale ${s} of row ${r}, block ${b} is not a float16 value (quantize with quantizeQ8, which keeps float16 scales)`);
      view.setUint16(at, h, true);
      for (let i = 0; i < Q8_BLOCK; i++) view.setInt8(at + 2 + i, m.q[r * paddedCols + q8Offset(b * Q8_BLOCK + i)]!);
    }
  return out;
}

/**
 * GGUF Q8_0 bytes of a [rows, cols] tensor → the engine layout (lossless). A value of −128 is refused:
 * llama.cpp's quantizer never writes it (Q8_0 is −127…127), and the relaxed-SIMD product's sign trick
 * (|qx| as the 7-bit operand, qw with qx's sign as the signed one) is exact only for weights in
 * −127…127 — negating −128 wraps back to −128, so a file from another writer would flip that term's sign.
 */
export function decodeGgufQ8_0(bytes: Uint8Array, rows: number, cols: number, name = 'a Q8_0 tensor'): Q8Matrix {
  const m = emptyQ8(rows, cols);
  const need = ggufQ8_0Bytes(rows, cols);
  if (bytes.length < need) throw new Error(`decodeGgufQ8_0: a [${rows}, ${cols}] Q8_0 tensor takes ${need} bytes, got ${bytes.length}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const kb = cols / Q8_BLOCK;
  const { paddedCols, blocksPerRow } = m.layout;
  for (let r = 0; r < rows; r++)
    for (let b = 0; b < kb; b++) {
      const at = (r * kb + b) * GGUF_Q8_0.blockBytes;
      m.scales[r * blocksPerRow + b] = f16BitsToF32(view.getUint16(at, true));
      for (let i = 0; i < Q8_BLOCK; i++) {
        const v = view.getInt8(at + 2 + i);
        if (v === -128)
          throw new ModelLoadError(
            `${name}: row ${r}, block ${b} holds −128, outside Q8_0's −127…127 (llama.cpp's quantizer never writes it, and the engine's 8-bit product is exact only within it). Fix: quantize the checkpoint again with llama.cpp's llama-quantize, or let the workbench quantize the safetensors weights itself (policyOptions.weightDtype "q8")`,
          );
        m.q[r * paddedCols + q8Offset(b * Q8_BLOCK + i)] = v;
      }
    }
  return m;
}

/**
 * The product the kernel q8_nt computes, in its exact float order: y[m, n] = hsum over lanes j of
 * Σ_g (in order) D(g, j) · (sx · sw) with D the integer dot of block 4g + j, every operation rounded
 * to float32, hsum = (l0 + l1) + (l2 + l3). `acc`: added to y's values (one more float32 add).
 */
export function q8ProductReference(x: Q8Matrix, w: Q8Matrix, y?: Float32Array, acc = false): Float32Array {
  if (x.layout.cols !== w.layout.cols) throw new Error(`q8ProductReference: ${x.layout.cols} columns against ${w.layout.cols}`);
  const M = x.layout.rows,
    N = w.layout.rows,
    Kp = x.layout.paddedCols,
    B = x.layout.blocksPerRow;
  const out = y ?? new Float32Array(M * N);
  const lanes = [0, 0, 0, 0];
  for (let m = 0; m < M; m++)
    for (let n = 0; n < N; n++) {
      lanes.fill(0);
      for (let b = 0; b < B; b++) {
        let d = 0;
        const px = m * Kp + (b >> 2) * Q8_GROUP + (b & 3) * 4,
          pw = n * Kp + (b >> 2) * Q8_GROUP + (b & 3) * 4;
        for (let v = 0; v < 8; v++) for (let t = 0; t < 4; t++) d += x.q[px + 16 * v + t]! * w.q[pw + 16 * v + t]!;
        const s = f32(x.scales[m * B + b]! * w.scales[n * B + b]!);
        lanes[b & 3] = f32(lanes[b & 3]! + f32(d * s));
      }
      const h = f32(f32(lanes[0]! + lanes[1]!) + f32(lanes[2]! + lanes[3]!));
      out[m * N + n] = acc ? f32(out[m * N + n]! + h) : h;
    }
  return out;
}
