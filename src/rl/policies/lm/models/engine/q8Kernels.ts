// The engine's 8-bit kernels (scripts/kernels/q8Wat.mjs, layout in ../q8Blocks.ts) as typed calls on
// one thread. The module imports "env" "memory" — the engine's shared memory, exactly as the float
// kernels' module does — so it runs on the engine's buffers in place. Each call's arguments are split
// the way kernels.ts splits the float kernels' (output columns of q8_nt, rows of q8_quantize and
// q8_dequantize), so joining the thread pool is a matter of adding these functions to its table.
import { q8Layout, type Q8Layout, type Q8Quantizer } from '../q8Blocks';
import { Q8_PLAIN_BASE64, Q8_RELAXED_BASE64 } from './q8Wasm.generated';

interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
  validate(bytes: Uint8Array): boolean;
}
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

export type Q8Build = 'relaxed' | 'plain';

/** The 8-bit kernel module this runtime can compile: relaxed SIMD where supported (or the build asked for). */
export function q8Module(build?: Q8Build): { module: object; build: Q8Build } {
  const relaxed = Buffer.from(Q8_RELAXED_BASE64, 'base64');
  if (build !== 'plain' && WA.validate(relaxed)) return { module: new WA.Module(relaxed), build: 'relaxed' };
  if (build === 'relaxed') throw new Error('q8 kernels: this runtime has no relaxed SIMD');
  return { module: new WA.Module(Buffer.from(Q8_PLAIN_BASE64, 'base64')), build: 'plain' };
}

/** A matrix in the engine's Q8 layout in wasm memory: int8 values at `q`, scales at `s` (float32 holding float16 values). */
export interface Q8Operand {
  readonly q: number;
  readonly s: number;
  readonly layout: Q8Layout;
}

/** Places a [rows, cols] Q8 operand at `ptr` (values, then scales; 16-byte aligned when ptr is). */
export function q8Operand(ptr: number, rows: number, cols: number): Q8Operand {
  const layout = q8Layout(rows, cols);
  return { q: ptr, s: ptr + layout.valueBytes, layout };
}

// The argument lists of the module's exports, one function each, so the thread pool (kernels.ts) can
// split a call into parts exactly as this single-threaded wrapper calls it whole.

/** q8_quantize over rows [r0, r1) of x and `out`. */
export function q8QuantizeArgs(x: number, ldx: number, out: Q8Operand, kind: Q8Quantizer, r0: number, r1: number): number[] {
  const { cols, paddedCols, blocksPerRow } = out.layout;
  return [x + r0 * ldx * 4, ldx, r1 - r0, cols, out.q + r0 * paddedCols, out.s + r0 * blocksPerRow * 4, kind === 'activation' ? 1 : 0];
}

/** q8_dequantize over rows [r0, r1). */
export function q8DequantizeArgs(src: Q8Operand, out: number, ldo: number, r0: number, r1: number): number[] {
  const { cols, paddedCols, blocksPerRow } = src.layout;
  return [src.q + r0 * paddedCols, src.s + r0 * blocksPerRow * 4, r1 - r0, cols, out + r0 * ldo * 4, ldo];
}

/** q8_nt over output columns (rows of w) [n0, n1): what a thread's part of y[M, N] = x · wᵀ is. */
export function q8NtArgs(x: Q8Operand, w: Q8Operand, y: number, ldy: number, acc: boolean, n0: number, n1: number): number[] {
  if (x.layout.cols !== w.layout.cols) throw new Error(`q8 nt: ${x.layout.cols} columns against ${w.layout.cols}`);
  return [x.q, x.s, w.q, w.s, y, ldy, x.layout.rows, x.layout.paddedCols, n0, n1, acc ? 1 : 0];
}

type Fn = (...args: number[]) => void;

export class Q8Kernels {
  readonly build: Q8Build;
  private readonly fns: { quantize: Fn; dequantize: Fn; nt: Fn };

  constructor(memory: { readonly buffer: SharedArrayBuffer }, module: { module: object; build: Q8Build } = q8Module()) {
    this.build = module.build;
    const ex = new WA.Instance(module.module, { env: { memory } }).exports;
    const fn = (n: string): Fn => {
      const f = ex[n];
      if (typeof f !== 'function') throw new Error(`q8 kernels: the module has no export ${n} (rebuild with npm run build:q8-kernels)`);
      return f as Fn;
    };
    this.fns = { quantize: fn('q8_quantize'), dequantize: fn('q8_dequantize'), nt: fn('q8_nt') };
  }

  /** x[rows, ldx] float32 (cols values a row) → `out`, by llama.cpp's rule for weights or for activations (../q8Blocks.ts). */
  quantize(x: number, ldx: number, out: Q8Operand, kind: Q8Quantizer, rows = out.layout.rows): void {
    this.fns.quantize(...q8QuantizeArgs(x, ldx, out, kind, 0, rows));
  }

  /** `src` → out[rows, ldo] float32 (cols values a row). */
  dequantize(src: Q8Operand, out: number, ldo: number): void {
    this.fns.dequantize(...q8DequantizeArgs(src, out, ldo, 0, src.layout.rows));
  }

  /** y[x.rows, n1 − n0 at column n0] (+)= x · wᵀ over rows [n0, n1) of w. */
  nt(x: Q8Operand, w: Q8Operand, y: number, ldy: number, acc: boolean, n0 = 0, n1 = w.layout.rows): void {
    this.fns.nt(...q8NtArgs(x, w, y, ldy, acc, n0, n1));
  }
}
