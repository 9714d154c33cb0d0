// The engine decoder's output head (the Decoder's base class): the final RMSNorm, then the head over
// vocabulary chunks at scored positions only (the target's log-prob, the entropy and whether it is the
// most likely token, a grammar's allowed set where one constrains the position), its backward pass
// into the hidden states (and into the head's and the final norm's gradients under full fine-tuning),
// and whole-vocabulary logits for sampling. Shapes: M scored rows, D hidden, V vocabulary, C columns
// of a chunk; [rows, cols] row-major float32 in engine memory unless said.
import type { HfArchitecture } from '../hfConfig';
import { q8Offset } from '../q8Blocks';
import type { EngineMemory } from './engineMemory';
import { convertRows, type EngineWeights } from './engineWeights';
import { q8Of, type EngineKernels, type Matrix } from './kernels';
import { q8Operand, type Q8Operand } from './q8Kernels';

/** A scored position under a grammar: its allowed ids, their probabilities, and where the target is among them. */
interface ConstrainedRow {
  readonly row: number;
  readonly ids: Int32Array;
  readonly p: Float64Array;
  readonly at: number;
}

/** What the head's backward pass reads of its forward pass (engine memory offsets, and the constrained rows). */
export interface HeadKept {
  readonly xs: number;
  readonly xf: number;
  readonly rstd: number;
  readonly logZ: number;
  readonly tg: number;
  readonly sets: readonly ConstrainedRow[];
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let j = 0; j < a.length; j++) s += a[j]! * b[j]!;
  return s;
}

export class DecoderHead {
  readonly D: number;
  readonly V: number;

  constructor(
    readonly arch: HfArchitecture,
    readonly mem: EngineMemory,
    readonly k: EngineKernels,
    readonly w: EngineWeights,
  ) {
    this.D = arch.hidden;
    this.V = arch.vocabSize;
  }

  protected f32(n: number, label: string): number {
    return this.mem.allocF32(n, label);
  }

  /** g[j] += Σ_i dy[i, j] · x[i, j] · rstd[i]: the gradient of an RMSNorm's gain (rows of width D, contiguous). */
  protected gainGradient(dy: number, x: number, rstd: number, rows: number, D: number, g: number): void {
    const f = this.mem.f32;
    const acc = new Float64Array(D);
    for (let i = 0; i < rows; i++) {
      const r = f[rstd / 4 + i]!,
        a = dy / 4 + i * D,
        b = x / 4 + i * D;
      for (let j = 0; j < D; j++) acc[j]! += f[a + j]! * f[b + j]! * r;
    }
    for (let j = 0; j < D; j++) f[g / 4 + j]! += acc[j]!;
  }

  /**
   * x[M, ldx] (K values a row) quantized per row and block of 32 as llama.cpp quantizes activations, into new memory:
   * the activation side of a product over q8 weights (undefined when `w` is not q8).
   */
  protected quantizedFor(w: Matrix, x: number, ldx: number, M: number, K: number, label: string): Q8Operand | undefined {
    if (w.dtype !== 'q8') return undefined;
    const xq = q8Operand(this.mem.alloc(q8Operand(0, M, K).layout.bytes, label), M, K);
    this.k.quantizeQ8(x, ldx, xq, 'activation');
    return xq;
  }

  /**
   * y[M, r1 − r0] (+)= x · w[r0 … r1)ᵀ: the float kernels, or over q8 weights the integer one on x's
   * blocks `xq` (quantized once by the caller, shared by the products that read the same x).
   */
  protected product(x: number, ldx: number, xq: Q8Operand | undefined, w: Matrix, y: number, ldy: number, M: number, acc: boolean, r0 = 0, r1 = w.rows): void {
    if (w.dtype !== 'q8') return this.k.ntRows(x, ldx, w, r0, r1, y, ldy, M, acc);
    if (!xq) throw new Error(`engine: a product over q8 weights [${w.rows}, ${w.cols}] without its quantized input`);
    this.k.ntQ8(xq, q8Of(w), y, ldy, acc, r0, r1);
  }

  /** Float32 scratch a backward product through q8 weights [rows, cols] dequantizes into (0 when not q8). */
  protected dequantScratch(ws: readonly Matrix[], label: string, rows = Infinity): number {
    const n = Math.max(0, ...ws.filter((w) => w.dtype === 'q8').map((w) => Math.min(rows, convertRows(w.rows, w.cols)) * w.cols));
    return n > 0 ? this.f32(n, label) : 0;
  }

  /**
   * dx[M, w.cols] (+)= dy[M, r1 − r0] · w[r0 … r1) (dy's column 0 is w's row r0). Through frozen q8
   * weights the rows are dequantized into `scratch` (dequantScratch's size: convertRows rows at a time)
   * and multiplied in float32: docs/q8-blocks.md measured dequantize + nn_f32 at 1.07× nn_bf16's speed
   * (dx[512, 896] = dy[512, 4864] · W), where an 8-bit dy would need a second, transposed copy of every
   * weight (blocks along the output dimension) and dy's outliers quantized per block.
   */
  protected backProduct(dy: number, lddy: number, w: Matrix, dx: number, lddx: number, M: number, acc: boolean, scratch: number, r0 = 0, r1 = w.rows): void {
    if (w.dtype !== 'q8') return this.k.nn(dy, lddy, w, dx, lddx, M, acc, r0, r1);
    const K = w.cols,
      step = convertRows(w.rows, K);
    for (let c0 = r0; c0 < r1; c0 += step) {
      const c1 = Math.min(r1, c0 + step);
      this.k.dequantizeQ8(q8Of(w), scratch, K, c0, c1);
      this.k.nn(dy + (c0 - r0) * 4, lddy, { ptr: scratch, rows: c1 - c0, cols: K, dtype: 'f32' }, dx, lddx, M, acc || c0 > r0);
    }
  }

  /** Vocabulary columns per chunk of the head for `rows` positions: [rows, C] floats within 32 MiB. */
  chunkColumns(rows: number): number {
    const c = Math.floor((8 * 2 ** 20) / Math.max(1, rows) / 64) * 64;
    return Math.max(64, Math.min(this.V, c));
  }

  /**
   * The head at `rows` positions of X (their indices into the pack): the final norm, then per chunk of
   * the vocabulary the logits and the running log-sum-exp. Returns per position the target's log-prob
   * at `temperature`, the entropy, and whether the target is the most likely token; with `keep`, what
   * headBwd needs stays allocated (the caller releases it).
   */
  head(
    X: number,
    rowIdx: readonly number[],
    targets: readonly number[],
    temperature: number,
    keep: boolean,
    allowed?: readonly (Int32Array | undefined)[],
  ): { logp: Float64Array; entropy: Float64Array; hit: Float64Array; kept?: HeadKept } {
    const { D, V } = this;
    const M = rowIdx.length;
    const mem = this.mem,
      k = this.k;
    const invT = Math.fround(1 / (temperature > 0 ? temperature : 1));
    const logp = new Float64Array(M),
      entropy = new Float64Array(M),
      hit = new Float64Array(M);
    // nothing scored: a kept pass still has a backward pass (every gradient zero)
    if (M === 0) return { logp, entropy, hit, ...(keep ? { kept: { xs: 0, xf: 0, rstd: 0, logZ: 0, tg: 0, sets: [] } } : {}) };
    const mark = mem.mark();
    const xs = this.f32(M * D, 'head input');
    rowIdx.forEach((r, i) => mem.u8.copyWithin(xs + i * D * 4, X + r * D * 4, X + (r + 1) * D * 4));
    const xf = this.f32(M * D, 'final norm');
    const rstd = this.f32(M, 'final norm');
    k.rmsnorm(xs, D, this.w.finalNorm, xf, D, rstd, M, D, this.arch.normEps);
    const tg = mem.alloc(M * 4, 'head targets');
    targets.forEach((t, i) => (mem.i32[tg / 4 + i] = t));
    const state = this.f32(M * 6, 'head state');
    for (let i = 0; i < M; i++) mem.f32.set([-Infinity, 0, 0, 0, -Infinity, 0], state / 4 + i * 6);
    const C = this.chunkColumns(M);
    const xq = this.quantizedFor(this.w.head, xf, D, M, D, 'head input blocks');
    mem.scoped(() => {
      const z = this.f32(M * C, 'logits chunk');
      for (let v0 = 0; v0 < V; v0 += C) {
        const c = Math.min(C, V - v0);
        this.product(xf, D, xq, this.w.head, z, c, M, false, v0, v0 + c);
        k.lseUpdate(z, M, c, v0, tg, invT, state);
      }
    });
    const logZ = this.f32(M, 'head log-normalisers');
    for (let i = 0; i < M; i++) {
      const o = state / 4 + i * 6;
      const mx = mem.f32[o]!,
        s1 = mem.f32[o + 1]!,
        s2 = mem.f32[o + 2]!,
        zt = mem.f32[o + 3]!,
        best = mem.f32[o + 4]!;
      const lz = mx + Math.log(s1);
      mem.f32[logZ / 4 + i] = lz;
      logp[i] = zt * invT - lz;
      entropy[i] = lz - s2 / s1;
      hit[i] = zt >= best ? 1 : 0;
    }
    // constrained rows: the distribution over the grammar's allowed ids only, as the sampler drew from it
    const sets: ConstrainedRow[] = [];
    allowed?.forEach((ids, i) => {
      if (!ids) return;
      // over q8 weights the input's blocks, as the whole-vocabulary product (and the sampler) read it
      const x = xq ? this.blockRow(xq, i) : mem.f32.subarray(xf / 4 + i * D, xf / 4 + (i + 1) * D);
      const z = Float64Array.from(ids, (id) => invT * dot(this.weightRow(this.w.head, id), x));
      const mx = Math.max(...z);
      let sum = 0;
      for (const v of z) sum += Math.exp(v - mx);
      const lz = mx + Math.log(sum);
      const p = z.map((v) => Math.exp(v - lz));
      const at = ids.indexOf(targets[i]!);
      if (at < 0) throw new Error(`engine head: target ${targets[i]} is outside the allowed set of its position`);
      logp[i] = z[at]! - lz;
      entropy[i] = lz - z.reduce((a, v, k) => a + p[k]! * v, 0);
      hit[i] = z[at]! >= mx ? 1 : 0;
      sets.push({ row: i, ids, p, at });
    });
    if (!keep) {
      mem.release(mark);
      return { logp, entropy, hit };
    }
    return { logp, entropy, hit, kept: { xs, xf, rstd, logZ, tg, sets } };
  }

  /** Row `r` of a Q8_0 operand, dequantized (float32). */
  private blockRow(op: Q8Operand, r: number): Float32Array {
    const { cols, paddedCols, blocksPerRow } = op.layout;
    const out = new Float32Array(cols);
    const i8 = new Int8Array(this.mem.memory.buffer, op.q + r * paddedCols, paddedCols);
    const sc = this.mem.f32.subarray(op.s / 4 + r * blocksPerRow, op.s / 4 + (r + 1) * blocksPerRow);
    for (let j = 0; j < cols; j++) out[j] = Math.fround(sc[j >> 5]! * i8[q8Offset(j)]!);
    return out;
  }

  /** Row `r` of a weight matrix as float32 (a bfloat16 matrix's 8-interleaved groups widened, a q8 one's blocks dequantized). */
  private weightRow(m: Matrix, r: number): Float32Array {
    const n = m.cols;
    if (m.dtype === 'f32') return this.mem.f32.subarray(m.ptr / 4 + r * n, m.ptr / 4 + (r + 1) * n);
    if (m.dtype === 'q8') return this.blockRow(q8Of(m), r);
    const out = new Float32Array(n);
    const bits = new Uint32Array(out.buffer);
    const base = m.ptr / 2 + r * n;
    // within each group of 8: elements 0–3 at even slots, 4–7 at odd ones (interleave8)
    for (let j = 0; j < n; j++) bits[j] = this.mem.u16[base + (j & ~7) + ((j & 7) < 4 ? 2 * (j & 7) : 2 * ((j & 7) - 4) + 1)]! << 16;
    return out;
  }

  /** dX (zeroed here) ← ∂(Σ g_i · logp_i)/∂X through the head at the kept positions. */
  headBwd(
    kept: HeadKept,
    rowIdx: readonly number[],
    g: Float32Array,
    temperature: number,
    dX: number,
    N: number,
    gw?: Pick<EngineWeights, 'head' | 'finalNorm'>,
  ): void {
    const { D, V } = this;
    const M = rowIdx.length;
    const mem = this.mem,
      k = this.k;
    const invT = Math.fround(1 / (temperature > 0 ? temperature : 1));
    k.fill(dX, 0, N * D);
    if (M === 0) return;
    mem.scoped(() => {
      const gp = this.f32(M, 'head gradient');
      mem.f32.set(g, gp / 4);
      // constrained rows go through their allowed sets below, not the whole vocabulary
      for (const c of kept.sets) mem.f32[gp / 4 + c.row] = 0;
      const dxf = this.f32(M * D, 'head gradient');
      const C = this.chunkColumns(M);
      const z = this.f32(M * C, 'logits chunk');
      const xq = this.quantizedFor(this.w.head, kept.xf, D, M, D, 'head input blocks');
      const deq = this.dequantScratch([this.w.head], 'head rows dequantized', C);
      for (let v0 = 0; v0 < V; v0 += C) {
        const c = Math.min(C, V - v0);
        this.product(kept.xf, D, xq, this.w.head, z, c, M, false, v0, v0 + c);
        k.softmaxBwd(z, M, c, v0, kept.tg, invT, kept.logZ, gp);
        this.backProduct(z, c, this.w.head, dxf, D, M, v0 > 0, deq, v0, v0 + c);
        if (gw) k.tn(z, c, kept.xf, D, gw.head.ptr + v0 * D * 4, D, M, c, D, true); // ∂head[v0 …] += zᵀ·xf
      }
      // ∂logp/∂z over an allowed set is invT·(onehot(target) − p): into dxf, and into the head's rows
      for (const c of kept.sets) {
        const x = mem.f32.subarray(kept.xf / 4 + c.row * D, kept.xf / 4 + (c.row + 1) * D);
        const dx = mem.f32.subarray(dxf / 4 + c.row * D, dxf / 4 + (c.row + 1) * D);
        c.ids.forEach((id, k) => {
          const dz = g[c.row]! * invT * ((k === c.at ? 1 : 0) - c.p[k]!);
          const w = this.weightRow(this.w.head, id);
          for (let j = 0; j < D; j++) dx[j]! += dz * w[j]!;
          if (gw) {
            const gr = mem.f32.subarray(gw.head.ptr / 4 + id * D, gw.head.ptr / 4 + (id + 1) * D);
            for (let j = 0; j < D; j++) gr[j]! += dz * x[j]!;
          }
        });
      }
      if (gw) this.gainGradient(dxf, kept.xs, kept.rstd, M, D, gw.finalNorm);
      const dxs = this.f32(M * D, 'head gradient');
      k.rmsnormBwd(kept.xs, D, this.w.finalNorm, kept.rstd, dxf, D, dxs, D, M, D, false);
      // scatter-add back to the pack's rows (a row is scored at most once)
      rowIdx.forEach((r, i) => mem.u8.copyWithin(dX + r * D * 4, dxs + i * D * 4, dxs + (i + 1) * D * 4));
    });
  }

  /** Rows of whole-vocabulary logits that fit the head's chunk of a forward pass (32 MiB, as chunkColumns). */
  logitRowsPerChunk(): number {
    return Math.max(1, Math.floor((8 * 2 ** 20) / this.V));
  }

  /**
   * Logits [rows, V] of the hidden states at `rowIdx` (final norm and the whole head), `maxRows` rows at
   * a time in engine memory (the plan's), copied out whole.
   */
  logitsOf(X: number, rowIdx: readonly number[], maxRows = rowIdx.length): Float32Array {
    const { D, V } = this;
    const all = new Float32Array(rowIdx.length * V);
    for (let r0 = 0; r0 < rowIdx.length; r0 += Math.max(1, maxRows)) {
      const part = rowIdx.slice(r0, r0 + Math.max(1, maxRows));
      this.mem.scoped(() => {
        const M = part.length;
        const xs = this.f32(M * D, 'head input');
        part.forEach((r, i) => this.mem.u8.copyWithin(xs + i * D * 4, X + r * D * 4, X + (r + 1) * D * 4));
        const xf = this.f32(M * D, 'final norm');
        const rstd = this.f32(M, 'final norm');
        this.k.rmsnorm(xs, D, this.w.finalNorm, xf, D, rstd, M, D, this.arch.normEps);
        const xq = this.quantizedFor(this.w.head, xf, D, M, D, 'head input blocks');
        const out = this.f32(M * V, 'logits');
        this.product(xf, D, xq, this.w.head, out, V, M, false);
        all.set(this.mem.f32.subarray(out / 4, out / 4 + M * V), r0 * V);
      });
    }
    return all;
  }
}
