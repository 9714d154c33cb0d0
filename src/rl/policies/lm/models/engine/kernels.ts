// The engine's kernels as typed calls, each split over the threads along a dimension no two threads
// write in common: output columns of x·wᵀ, output columns of dy·w, rows of aᵀ·b, rows of the row
// kernels, work items of attention. Small calls stay on the calling thread (waking the others costs
// more than they save). Pointers are byte offsets into the engine's memory; strides count elements.
import { q8DequantizeArgs, q8NtArgs, q8Operand, q8QuantizeArgs, type Q8Operand } from './q8Kernels';
import type { Q8Quantizer } from '../q8Blocks';
import type { KernelName, ThreadPool } from './threadPool';

/**
 * A weight matrix [rows, cols] in the engine's memory: bfloat16 (8-interleaved rows), float32, or Q8_0
 * blocks in the engine's layout (../q8Blocks.ts: int8 values at `ptr`, their float32 scales after them).
 */
export interface Matrix {
  readonly ptr: number;
  readonly rows: number;
  readonly cols: number;
  readonly dtype: 'bf16' | 'f32' | 'q8';
}

/** A q8 weight as the 8-bit kernels' operand (values at ptr, scales after them). */
export function q8Of(w: Matrix): Q8Operand {
  if (w.dtype !== 'q8') throw new Error(`engine: a ${w.dtype} matrix [${w.rows}, ${w.cols}] where Q8_0 blocks were expected`);
  return q8Operand(w.ptr, w.rows, w.cols);
}

function floatKernel(w: Matrix, f32: KernelName, bf16: KernelName): KernelName {
  if (w.dtype === 'q8')
    throw new Error(`engine: a float product over a q8 matrix [${w.rows}, ${w.cols}]; quantize x and call ntQ8, or dequantize the rows first (decoder.ts)`);
  return w.dtype === 'bf16' ? bf16 : f32;
}

/**
 * The most bytes one operand of a kernel call may span. The kernels (scripts/kernels/*.mjs) index an
 * operand with i32 byte offsets and compare their loop bounds as signed i32 — a count of 2 GiB or more
 * wraps negative and the loop does nothing, silently — so the calls below refuse such an operand (no
 * model the engine plans reaches it: the largest, Qwen3-4B's float32 embedding, is 1.56 GB).
 */
export const MAX_KERNEL_SPAN = 2 ** 31 - 1;

/** Throws when one of `spans` ([what, bytes]) of a call to `kernel` is past MAX_KERNEL_SPAN, naming it. */
export function checkSpans(kernel: string, ...spans: readonly (readonly [string, number])[]): void {
  for (const [what, bytes] of spans)
    if (bytes > MAX_KERNEL_SPAN)
      throw new Error(
        `engine kernel ${kernel}: ${what} spans ${bytes} bytes, past the ${MAX_KERNEL_SPAN} one call can index (its offsets and loop bounds are signed 32-bit). Fix: hold the weights at weightDtype "bf16" or "q8" (a smaller matrix), or a smaller contextLength / sampleRows (smaller activations)`,
      );
}

/** Bytes of a weight matrix in the engine. */
const matrixBytes = (w: Matrix): number => w.rows * w.cols * (w.dtype === 'bf16' ? 2 : w.dtype === 'q8' ? 1 : 4);

/** Multiply-adds below which a product runs on one thread. */
const PARALLEL_WORK = 1 << 21;

/** [start, end) of `n` units split in `parts`, each boundary a multiple of `align`. */
export function splits(n: number, parts: number, align: number): [number, number][] {
  const out: [number, number][] = [];
  const per = Math.ceil(n / parts / align) * align;
  for (let s = 0; s < n; s += per) out.push([s, Math.min(n, s + per)]);
  return out;
}

export class EngineKernels {
  /** `parallelWork`: multiply-adds from which a call is split over the threads (tests set 0: always). */
  constructor(
    private readonly pool: ThreadPool,
    private readonly parallelWork = PARALLEL_WORK,
  ) {}

  get threads(): number {
    return this.pool.size;
  }

  private parts(work: number, n: number, align: number): [number, number][] {
    return work < this.parallelWork || this.pool.size === 1 ? [[0, n]] : splits(n, this.pool.size, align);
  }

  private run(k: KernelName, parts: readonly (readonly number[])[]): void {
    this.pool.run(k, parts);
  }

  /** y[M, w.rows] (+)= x[M, w.cols] · wᵀ. */
  nt(x: number, ldx: number, w: Matrix, y: number, ldy: number, M: number, acc: boolean): void {
    const K = w.cols;
    checkSpans('nt', ['w', matrixBytes(w)], ['x', M * ldx * 4], ['y', M * ldy * 4]);
    this.run(
      floatKernel(w, 'nt_f32', 'nt_bf16'),
      this.parts(M * K * w.rows, w.rows, 8).map(([a, b]) => [x, ldx, w.ptr, K, y, ldy, M, K, a, b, acc ? 1 : 0]),
    );
  }

  /** The same over rows [r0, r1) of w only (a vocabulary chunk): y[M, r1 − r0]. */
  ntRows(x: number, ldx: number, w: Matrix, r0: number, r1: number, y: number, ldy: number, M: number, acc: boolean): void {
    const K = w.cols;
    const ptr = w.ptr + r0 * K * (w.dtype === 'bf16' ? 2 : 4);
    checkSpans('nt', ['w rows', (r1 - r0) * K * (w.dtype === 'bf16' ? 2 : 4)], ['x', M * ldx * 4], ['y', M * ldy * 4]);
    this.run(
      floatKernel(w, 'nt_f32', 'nt_bf16'),
      this.parts(M * K * (r1 - r0), r1 - r0, 8).map(([a, b]) => [x, ldx, ptr, K, y, ldy, M, K, a, b, acc ? 1 : 0]),
    );
  }

  /** dx[M, w.cols] (+)= dy[M, w.rows] · w (rows [r0, r1) of w and columns of dy, when given). */
  nn(dy: number, lddy: number, w: Matrix, dx: number, lddx: number, M: number, acc: boolean, r0 = 0, r1 = w.rows): void {
    const K = w.cols,
      N = r1 - r0;
    const ptr = w.ptr + r0 * K * (w.dtype === 'bf16' ? 2 : 4);
    checkSpans('nn', ['w rows', N * K * (w.dtype === 'bf16' ? 2 : 4)], ['dy', M * lddy * 4], ['dx', M * lddx * 4]);
    this.run(
      floatKernel(w, 'nn_f32', 'nn_bf16'),
      this.parts(M * K * N, K, 8).map(([a, b]) => [dy, lddy, ptr, K, dx, lddx, M, N, a, b, acc ? 1 : 0]),
    );
  }

  /**
   * x[rows, ldx] float32 (out.layout.cols values a row) → Q8_0 blocks in `out`, split over rows, by
   * llama.cpp's rule for `kind` (../q8Blocks.ts): 'weight' as GGUF stores them, 'activation' as ggml-cpu
   * quantizes a product's input (per row and block of 32, on the fly).
   */
  quantizeQ8(x: number, ldx: number, out: Q8Operand, kind: Q8Quantizer, rows = out.layout.rows): void {
    checkSpans('q8_quantize', ['x', rows * ldx * 4], ['blocks', out.layout.valueBytes]);
    this.run(
      'q8_quantize',
      this.parts(rows * out.layout.cols * 4, rows, 1).map(([a, b]) => q8QuantizeArgs(x, ldx, out, kind, a, b)),
    );
  }

  /** Rows [r0, r1) of `src` → out[r1 − r0, ldo] float32, split over rows. */
  dequantizeQ8(src: Q8Operand, out: number, ldo: number, r0 = 0, r1 = src.layout.rows): void {
    checkSpans('q8_dequantize', ['blocks', src.layout.valueBytes], ['out', (r1 - r0) * ldo * 4]);
    this.run(
      'q8_dequantize',
      this.parts((r1 - r0) * src.layout.cols * 2, r1 - r0, 1).map(([a, b]) => q8DequantizeArgs(src, out - r0 * ldo * 4, ldo, r0 + a, r0 + b)),
    );
  }

  /**
   * y[x.rows, n1 − n0] (+)= x · wᵀ over rows [n0, n1) of w (y's column 0 is w's row n0): integer dots
   * within a block of 32, float32 accumulation across blocks; split over output columns.
   */
  ntQ8(x: Q8Operand, w: Q8Operand, y: number, ldy: number, acc: boolean, n0 = 0, n1 = w.layout.rows): void {
    const N = n1 - n0;
    // the kernel writes y[m, n] for n in [n0, n1): shift y so that column n0 lands at y's start
    const y0 = y - n0 * 4;
    checkSpans('q8_nt', ['w', w.layout.valueBytes], ['x', x.layout.valueBytes], ['y', x.layout.rows * ldy * 4]);
    this.run(
      'q8_nt',
      this.parts(x.layout.rows * x.layout.cols * N, N, 16).map(([a, b]) => q8NtArgs(x, w, y0, ldy, acc, n0 + a, n0 + b)),
    );
  }

  /** c[I, J] (+)= aᵀ · b for a [M, I], b [M, J] (J multiple of 4). */
  tn(a: number, lda: number, b: number, ldb: number, c: number, ldc: number, M: number, I: number, J: number, acc: boolean): void {
    checkSpans('tn', ['a', M * lda * 4], ['b', M * ldb * 4], ['c', I * ldc * 4]);
    this.run(
      'tn_f32',
      this.parts(M * I * J, I, 4).map(([i0, i1]) => [a, lda, b, ldb, c, ldc, M, i0, i1, J, acc ? 1 : 0]),
    );
  }

  /** x[0..n) += y[0..n) (n multiple of 4). */
  add(x: number, y: number, n: number): void {
    checkSpans('add', ['x', n * 4]);
    this.run(
      'add',
      this.parts(n * 8, n, 64).map(([a, b]) => [x + a * 4, y + a * 4, b - a]),
    );
  }

  scale(x: number, s: number, n: number): void {
    checkSpans('scale', ['x', n * 4]);
    this.run(
      'scale',
      this.parts(n * 8, n, 64).map(([a, b]) => [x + a * 4, s, b - a]),
    );
  }

  fill(x: number, s: number, n: number): void {
    checkSpans('fill', ['x', n * 4]);
    this.run(
      'fill',
      this.parts(n * 8, n, 64).map(([a, b]) => [x + a * 4, s, b - a]),
    );
  }

  addBias(y: number, ldy: number, bias: number, M: number, N: number): void {
    checkSpans('add_bias', ['y', M * ldy * 4]);
    this.run(
      'add_bias',
      this.parts(M * N * 8, M, 1).map(([a, b]) => [y + a * ldy * 4, ldy, bias, b - a, N]),
    );
  }

  rmsnorm(x: number, ldx: number, g: number, y: number, ldy: number, rstd: number, M: number, D: number, eps: number): void {
    checkSpans('rmsnorm', ['x', M * ldx * 4], ['y', M * ldy * 4]);
    this.run(
      'rmsnorm',
      this.parts(M * D * 8, M, 1).map(([a, b]) => [x + a * ldx * 4, ldx, g, y + a * ldy * 4, ldy, rstd + a * 4, b - a, D, eps]),
    );
  }

  rmsnormBwd(x: number, ldx: number, g: number, rstd: number, dy: number, lddy: number, dx: number, lddx: number, M: number, D: number, acc: boolean): void {
    checkSpans('rmsnorm_bwd', ['x', M * ldx * 4], ['dy', M * lddy * 4], ['dx', M * lddx * 4]);
    this.run(
      'rmsnorm_bwd',
      this.parts(M * D * 8, M, 1).map(([a, b]) => [
        x + a * ldx * 4,
        ldx,
        g,
        rstd + a * 4,
        dy + a * lddy * 4,
        lddy,
        dx + a * lddx * 4,
        lddx,
        b - a,
        D,
        acc ? 1 : 0,
      ]),
    );
  }

  /** Rotary embedding in place on heads [0, heads) of E at each row's position (int32 `pos`); inverse: the backward pass. */
  rope(x: number, ldx: number, heads: number, E: number, pos: number, cos: number, sin: number, M: number, inverse: boolean): void {
    this.run(
      'rope',
      this.parts(M * heads * E * 8, M, 1).map(([a, b]) => [x + a * ldx * 4, ldx, heads, E, pos + a * 4, cos, sin, b - a, inverse ? -1 : 1]),
    );
  }

  swiglu(g: number, u: number, out: number, n: number): void {
    checkSpans('swiglu', ['g', n * 4]);
    this.run(
      'swiglu',
      this.parts(n * 16, n, 64).map(([a, b]) => [g + a * 4, u + a * 4, out + a * 4, b - a]),
    );
  }

  swigluBwd(g: number, u: number, da: number, dg: number, du: number, n: number): void {
    checkSpans('swiglu_bwd', ['g', n * 4]);
    this.run(
      'swiglu_bwd',
      this.parts(n * 16, n, 64).map(([a, b]) => [g + a * 4, u + a * 4, da + a * 4, dg + a * 4, du + a * 4, b - a]),
    );
  }

  /** out[m, :] = table row ids[m] (int32 `ids`). */
  embed(table: Matrix, ids: number, M: number, out: number, ldo: number): void {
    checkSpans('embed', ['table', matrixBytes(table)], ['out', M * ldo * 4]);
    this.run(
      table.dtype === 'bf16' ? 'embed_bf16' : 'embed_f32',
      this.parts(M * table.cols * 4, M, 1).map(([a, b]) => [table.ptr, table.cols, ids + a * 4, b - a, table.cols, out + a * ldo * 4, ldo]),
    );
  }

  kvStore(src: number, lds: number, cache: number, cap: number, rows: number, poss: number, N: number, K: number, E: number): void {
    this.run('kv_store', [[src, lds, cache, cap, rows, poss, N, K, E]]);
  }

  /**
   * Attention over packed segments: `items` (int32 ×4 each: segStart, segLen, head, probsOffset or −1)
   * split over the threads; `scratch` holds a row of `maxLen` floats per thread.
   */
  attnFwd(
    q: number,
    ldq: number,
    k: number,
    v: number,
    ldk: number,
    o: number,
    ldo: number,
    items: number,
    count: number,
    E: number,
    G: number,
    scale: number,
    probs: number,
    scratch: number,
    maxLen: number,
    work: number,
  ): void {
    this.run(
      'attn_fwd',
      this.parts(work, count, 1).map(([a, b], t) => [q, ldq, k, v, ldk, o, ldo, items, a, b, E, G, scale, probs, scratch + t * maxLen * 4]),
    );
  }

  attnBwd(
    q: number,
    ldq: number,
    k: number,
    v: number,
    ldk: number,
    o: number,
    dO: number,
    ldo: number,
    dq: number,
    dk: number,
    dv: number,
    items: number,
    count: number,
    E: number,
    G: number,
    scale: number,
    probs: number,
    scratch: number,
    maxLen: number,
    work: number,
  ): void {
    this.run(
      'attn_bwd',
      this.parts(work, count, 1).map(([a, b], t) => [q, ldq, k, v, ldk, o, dO, ldo, dq, dk, dv, items, a, b, E, G, scale, probs, scratch + t * maxLen * 4]),
    );
  }

  attnDecode(
    q: number,
    ldq: number,
    kc: number,
    vc: number,
    cap: number,
    lens: number,
    o: number,
    ldo: number,
    B: number,
    H: number,
    K: number,
    E: number,
    scale: number,
    scratch: number,
    work: number,
  ): void {
    this.run(
      'attn_decode',
      this.parts(work, B * H, 1).map(([a, b], t) => [q, ldq, kc, vc, cap, lens, o, ldo, a, b, H, K, E, scale, scratch + t * cap * 4]),
    );
  }

  lseUpdate(z: number, M: number, C: number, v0: number, targets: number, invT: number, state: number): void {
    this.run(
      'lse_update',
      this.parts(M * C * 16, M, 1).map(([a, b]) => [z + a * C * 4, b - a, C, v0, targets + a * 4, invT, state + a * 24]),
    );
  }

  softmaxBwd(z: number, M: number, C: number, v0: number, targets: number, invT: number, logZ: number, g: number): void {
    this.run(
      'softmax_bwd',
      this.parts(M * C * 16, M, 1).map(([a, b]) => [z + a * C * 4, b - a, C, v0, targets + a * 4, invT, logZ + a * 4, g + a * 4]),
    );
  }

  interleave8(p: number, n: number): void {
    checkSpans('interleave8', ['p', n * 2]);
    this.run(
      'interleave8',
      this.parts(n * 2, n, 64).map(([a, b]) => [p + a * 2, b - a]),
    );
  }

  f32ToBf16(src: number, dst: number, n: number): void {
    checkSpans('f32_to_bf16', ['src', n * 4]);
    this.run(
      'f32_to_bf16',
      this.parts(n * 4, n, 64).map(([a, b]) => [src + a * 4, dst + a * 2, b - a]),
    );
  }

  /**
   * The sampler's normaliser of each row of z [rows, ld] (V logits a row) at 1/temperature `inv`:
   * out [rows, 3] float64 = max z·inv, Σ exp(z·inv − max), the first argmax of z (drawWat.mjs); rows split over the threads.
   */
  drawNorm(z: number, ld: number, rows: number, V: number, inv: number, out: number): void {
    this.run(
      'draw_norm',
      this.parts(rows * V * 16, rows, 1).map(([a, b]) => [z + a * ld * 4, ld, b - a, V, inv, out + a * 24]),
    );
  }

  /** The sampler's draw of each row of z: tok [rows] int32 from the uniforms u and log-normalisers lse [rows] float64. */
  drawWalk(z: number, ld: number, rows: number, V: number, inv: number, lse: number, u: number, tok: number): void {
    this.run(
      'draw_walk',
      this.parts(rows * V * 8, rows, 1).map(([a, b]) => [z + a * ld * 4, ld, b - a, V, inv, lse + a * 8, u + a * 8, tok + a * 4]),
    );
  }
}
