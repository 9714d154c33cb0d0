// The decoder (qwen2, llama, qwen3) on the engine's kernels: packed sequences (no padding: attention
// is causal within each segment), LoRA adapters on the frozen base, and the backward pass of the
// adapters with activation checkpointing — the forward pass keeps each layer's input only, and the
// backward pass recomputes one layer at a time with everything its gradients need (or, where the plan
// has room, the forward pass keeps every layer's intermediates and nothing is recomputed). The output head
// runs over vocabulary chunks (never a [positions, vocabulary] tensor) and only at scored positions
// (decoderHead.ts, the class this one extends). Over q8 weights (Q8_0 blocks, engineWeights.ts) each
// product quantizes its input per row and block of 32 on the fly (as llama.cpp does: float16 scales) and runs the integer
// kernel: q, k and v share one quantized input, and so do gate and up; the backward product dy·W
// through the frozen base dequantizes the weight's rows (decoderHead.backProduct).
// Shapes: N positions, D hidden, Hq query heads, K key/value heads, E head width, F MLP width,
// V vocabulary, r LoRA rank; [N, X] row-major float32 unless said.
import type { HfArchitecture } from '../hfConfig';
import type { EngineMemory } from './engineMemory';
import { q8Layout } from '../q8Blocks';
import { q8Of, type EngineKernels, type Matrix } from './kernels';
import { DecoderHead } from './decoderHead';
import { q8Operand, type Q8Operand } from './q8Kernels';
import { ENGINE_LINEARS, type EngineLinear, type EngineWeights, type LayerWeights, type LinearWeights } from './engineWeights';

export type { HeadKept } from './decoderHead';

/** LoRA adapters of one linear layer: a [in, r], b [r, out] (the tfjs variables' layouts), float32. */
export interface Adapter {
  readonly a: number;
  readonly b: number;
  readonly in: number;
  readonly out: number;
}

export interface AdapterSet {
  readonly rank: number;
  /** alpha / rank */
  readonly scale: number;
  readonly layers: readonly Partial<Record<EngineLinear, Adapter>>[];
  /** Every b is zero (a fresh LoRA): the adapters' products are skipped where no gradient is wanted. */
  zero: boolean;
}

/** Sequences packed end to end: ids and positions per row, and where each sequence starts. */
export interface Pack {
  readonly N: number;
  readonly ids: number;
  readonly pos: number;
  readonly segments: readonly { readonly start: number; readonly len: number }[];
}

/** Yields to the event loop (heartbeats, IPC) between layers: a pass over a large model takes seconds. */
export const breathe = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** What the backward pass of a layer reads, recomputed from the layer's input (or kept by the forward pass). */
export interface LayerKeep {
  h: number;
  rstd1: number;
  q: number;
  k: number;
  v: number;
  qRaw: number;
  kRaw: number;
  rstdQ: number;
  rstdK: number;
  att: number;
  probs: number;
  x2: number;
  h2: number;
  rstd2: number;
  gate: number;
  up: number;
  act: number;
  /** the MLP's output [N, D] (the layer's output is x2 + y) */
  y: number;
  /** per linear: the adapter's scaled input product s·(x·a) [N, r] */
  t: Partial<Record<EngineLinear, number>>;
}

export class Decoder extends DecoderHead {
  readonly E: number;
  readonly Hq: number;
  readonly K: number;
  readonly F: number;

  constructor(
    arch: HfArchitecture,
    mem: EngineMemory,
    k: EngineKernels,
    w: EngineWeights,
    readonly contextLength: number,
  ) {
    super(arch, mem, k, w);
    this.E = arch.headDim;
    this.Hq = arch.heads;
    this.K = arch.kvHeads;
    this.F = arch.intermediate;
  }

  private mat(ptr: number, rows: number, cols: number): Matrix {
    return { ptr, rows, cols, dtype: 'f32' };
  }

  /** Packs token rows (each its own segment from position 0) into engine memory. */
  pack(rows: readonly (readonly number[])[], label = 'pack'): Pack {
    for (const r of rows)
      if (r.length > this.contextLength)
        throw new Error(
          `engine: a sequence of ${r.length} positions, but the context is ${this.contextLength} (positions ≥ ${this.contextLength} have no rotary table); cut it first`,
        );
    const N = rows.reduce((n, r) => n + r.length, 0);
    const ids = this.mem.alloc(N * 4, `${label} ids`);
    const pos = this.mem.alloc(N * 4, `${label} positions`);
    const segments: { start: number; len: number }[] = [];
    let t = 0;
    for (const r of rows) {
      segments.push({ start: t, len: r.length });
      for (let i = 0; i < r.length; i++, t++) {
        this.mem.i32[ids / 4 + t] = r[i]!;
        this.mem.i32[pos / 4 + t] = i;
      }
    }
    return { N, ids, pos, segments };
  }

  /** y = x·wᵀ (+ bias) (+ s·(x·a)·b); `t` receives s·(x·a) when the backward pass will need it. */
  private linear(
    x: number,
    N: number,
    lin: LinearWeights,
    y: number,
    ad: Adapter | undefined,
    rank: number,
    scale: number,
    keepT: number | undefined,
    xq: Q8Operand | undefined,
  ): void {
    const k = this.k;
    this.product(x, lin.w.cols, xq, lin.w, y, lin.w.rows, N, false);
    if (lin.bias !== undefined) k.addBias(y, lin.w.rows, lin.bias, N, lin.w.rows);
    if (!ad) return;
    this.mem.scoped(() => {
      const t = keepT ?? this.f32(N * rank, 'lora product');
      k.nn(x, lin.w.cols, this.mat(ad.a, ad.in, rank), t, rank, N, false);
      k.scale(t, scale, N * rank);
      k.nn(t, rank, this.mat(ad.b, rank, ad.out), y, lin.w.rows, N, true);
    });
  }

  /** dx (+)= dy·W (+ the adapter's part); the adapter's gradients are added to `g`. */
  private linearBwd(
    dy: number,
    N: number,
    lin: LinearWeights,
    x: number,
    dx: number,
    acc: boolean,
    ad: Adapter | undefined,
    t: number | undefined,
    g: Adapter | undefined,
    rank: number,
    scale: number,
    gw: LinearWeights | undefined,
    deq: number,
  ): void {
    const k = this.k;
    const inDim = lin.w.cols,
      out = lin.w.rows;
    this.backProduct(dy, out, lin.w, dx, inDim, N, acc, deq);
    if (gw) {
      k.tn(dy, out, x, inDim, gw.w.ptr, inDim, N, out, inDim, true); // ∂W += dyᵀ·x   [out, in]
      if (gw.bias !== undefined) this.columnSums(dy, out, N, out, gw.bias);
    }
    if (!ad || !g || t === undefined) return;
    this.mem.scoped(() => {
      k.tn(t, rank, dy, out, g.b, out, N, rank, out, true); // ∂b += tᵀ·dy   [r, out]
      const dt = this.f32(N * rank, 'lora gradient');
      k.nt(dy, out, this.mat(ad.b, rank, out), dt, rank, N, false); // dy·bᵀ   [N, r]
      k.scale(dt, scale, N * rank);
      k.tn(x, inDim, dt, rank, g.a, rank, N, inDim, rank, true); // ∂a += xᵀ·dt   [in, r]
      k.nt(dt, rank, this.mat(ad.a, inDim, rank), dx, inDim, N, true); // dx += dt·aᵀ
    });
  }

  /** Attention work items of a pack: [start, len, head, probs offset] per (segment, query head). */
  private items(p: Pack, keepProbs: boolean): { items: number; count: number; probs: number; maxLen: number; work: number } {
    const count = p.segments.length * this.Hq;
    const items = this.mem.alloc(count * 16, 'attention items');
    let off = 0,
      work = 0,
      maxLen = 1;
    let n = 0;
    for (const s of p.segments) {
      maxLen = Math.max(maxLen, s.len);
      for (let h = 0; h < this.Hq; h++, n++) {
        const base = items / 4 + n * 4;
        this.mem.i32[base] = s.start;
        this.mem.i32[base + 1] = s.len;
        this.mem.i32[base + 2] = h;
        this.mem.i32[base + 3] = keepProbs ? off : -1;
        off += s.len * s.len * 4;
        work += s.len * s.len * this.E;
      }
    }
    const probs = keepProbs ? this.mem.alloc(off, 'attention probabilities') : 0;
    return { items, count, probs, maxLen, work };
  }

  /**
   * One decoder layer. Without `keep`: X [N, D] ← layer(X) in place, its intermediates given back.
   * With `keep`: X is left as it is and the intermediates the backward pass reads stay allocated
   * (the caller releases them). `kv`: the layer's keys and values are written into a cache [B, K,
   * cap, E] at (rows[t], pos[t]) too; with `lens` (a decoding step: one token per row) attention reads
   * the cache's first lens[b] positions instead of the pack.
   */
  layer(
    l: number,
    X: number,
    p: Pack,
    ad: AdapterSet | undefined,
    keep: boolean,
    kv?: { readonly kc: number; readonly vc: number; readonly cap: number; readonly rows: number; readonly lens?: number },
  ): LayerKeep | undefined {
    const { D, E, Hq, K, F } = this;
    const N = p.N,
      qd = Hq * E,
      kd = K * E;
    const Wl = this.w.layers[l]!;
    const adl = ad?.layers[l];
    const rank = ad?.rank ?? 0,
      scale = ad?.scale ?? 0;
    const useAd = (m: EngineLinear): Adapter | undefined => (ad && (keep || !ad.zero) ? adl?.[m] : undefined);
    const eps = this.arch.normEps;
    const k = this.k;
    const mark = this.mem.mark();
    const t: Partial<Record<EngineLinear, number>> = {};
    const tOf = (m: EngineLinear): number | undefined => (keep && useAd(m) ? (t[m] = this.f32(N * rank, `kept lora product ${m}`)) : undefined);
    // q8 weights: one buffer for the blocks of the layer's four product inputs in turn (h for q/k/v,
    // att for o, h2 for gate/up, act for down), each quantized once per row and block of 32
    const q8 = Wl.linear.q_proj.w.dtype === 'q8';
    const xqAt = q8 ? this.mem.alloc(q8Layout(N, Math.max(D, qd, F)).bytes, 'layer input blocks') : 0;
    const blocks = (x: number, K: number): Q8Operand | undefined => {
      if (!q8) return undefined;
      const op = q8Operand(xqAt, N, K);
      k.quantizeQ8(x, K, op, 'activation');
      return op;
    };
    const h = this.f32(N * D, 'layer norm');
    const rstd1 = this.f32(N, 'layer norm');
    k.rmsnorm(X, D, Wl.inNorm, h, D, rstd1, N, D, eps);
    const q = this.f32(N * qd, 'queries');
    const kk = this.f32(N * kd, 'keys');
    const v = this.f32(N * kd, 'values');
    const hq = blocks(h, D);
    this.linear(h, N, Wl.linear.q_proj, q, useAd('q_proj'), rank, scale, tOf('q_proj'), hq);
    this.linear(h, N, Wl.linear.k_proj, kk, useAd('k_proj'), rank, scale, tOf('k_proj'), hq);
    this.linear(h, N, Wl.linear.v_proj, v, useAd('v_proj'), rank, scale, tOf('v_proj'), hq);
    let qRaw = 0,
      kRaw = 0,
      rstdQ = 0,
      rstdK = 0;
    if (Wl.qNorm !== undefined && Wl.kNorm !== undefined) {
      // Qwen3: RMSNorm over each head's width before the rotation (kept raw for the backward pass)
      rstdQ = this.f32(N * Hq, 'query norms');
      rstdK = this.f32(N * K, 'key norms');
      if (keep) {
        qRaw = this.f32(N * qd, 'raw queries');
        kRaw = this.f32(N * kd, 'raw keys');
        this.mem.u8.copyWithin(qRaw, q, q + N * qd * 4);
        this.mem.u8.copyWithin(kRaw, kk, kk + N * kd * 4);
      }
      k.rmsnorm(q, E, Wl.qNorm, q, E, rstdQ, N * Hq, E, eps);
      k.rmsnorm(kk, E, Wl.kNorm, kk, E, rstdK, N * K, E, eps);
    }
    k.rope(q, qd, Hq, E, p.pos, this.w.cos, this.w.sin, N, false);
    k.rope(kk, kd, K, E, p.pos, this.w.cos, this.w.sin, N, false);
    if (kv) {
      k.kvStore(kk, kd, kv.kc, kv.cap, kv.rows, p.pos, N, K, E);
      k.kvStore(v, kd, kv.vc, kv.cap, kv.rows, p.pos, N, K, E);
    }
    const att = this.f32(N * qd, 'attention output');
    let probs = 0;
    if (kv?.lens !== undefined) {
      const scratch = this.f32(kv.cap * k.threads, 'attention scratch');
      k.attnDecode(q, qd, kv.kc, kv.vc, kv.cap, kv.lens, att, qd, N, Hq, K, E, 1 / Math.sqrt(E), scratch, N * Hq * kv.cap * E * 2);
    } else {
      const it = this.items(p, keep);
      const scratch = this.f32(it.maxLen * k.threads, 'attention scratch');
      k.attnFwd(q, qd, kk, v, kd, att, qd, it.items, it.count, E, Hq / K, 1 / Math.sqrt(E), it.probs, scratch, it.maxLen, it.work);
      probs = it.probs;
    }
    const y = this.f32(N * D, 'attention projection');
    this.linear(att, N, Wl.linear.o_proj, y, useAd('o_proj'), rank, scale, tOf('o_proj'), blocks(att, qd));
    let x2 = X;
    if (keep) {
      x2 = this.f32(N * D, 'residual');
      this.mem.u8.copyWithin(x2, X, X + N * D * 4);
    }
    k.add(x2, y, N * D);
    const h2 = this.f32(N * D, 'layer norm');
    const rstd2 = this.f32(N, 'layer norm');
    k.rmsnorm(x2, D, Wl.postNorm, h2, D, rstd2, N, D, eps);
    const gate = this.f32(N * F, 'mlp');
    const up = this.f32(N * F, 'mlp');
    const h2q = blocks(h2, D);
    this.linear(h2, N, Wl.linear.gate_proj, gate, useAd('gate_proj'), rank, scale, tOf('gate_proj'), h2q);
    this.linear(h2, N, Wl.linear.up_proj, up, useAd('up_proj'), rank, scale, tOf('up_proj'), h2q);
    const act = this.f32(N * F, 'mlp');
    k.swiglu(gate, up, act, N * F);
    this.linear(act, N, Wl.linear.down_proj, y, useAd('down_proj'), rank, scale, tOf('down_proj'), blocks(act, F));
    if (!keep) {
      k.add(X, y, N * D);
      this.mem.release(mark);
      return undefined;
    }
    return { h, rstd1, q, k: kk, v, qRaw, kRaw, rstdQ, rstdK, att, probs, x2, h2, rstd2, gate, up, act, y, t };
  }

  /**
   * Backward through layer l: dX [N, D] holds ∂L/∂(layer output) and becomes ∂L/∂(layer input);
   * adapter gradients are added to `g`. X is the layer's input kept by the forward pass; `kept`: the
   * layer's intermediates, where the forward pass kept them (else they are recomputed from X).
   */
  layerBwd(l: number, X: number, dX: number, p: Pack, ad: AdapterSet, g: AdapterSet, gw?: LayerWeights, kept?: LayerKeep): void {
    const { D, E, Hq, K, F } = this;
    const N = p.N,
      qd = Hq * E,
      kd = K * E;
    const Wl = this.w.layers[l]!;
    const adl = ad.layers[l]!,
      gl = g.layers[l]!;
    const { rank, scale } = ad;
    const k = this.k;
    this.mem.scoped(() => {
      const s = kept ?? this.layer(l, X, p, ad, true)!;
      const deq = this.dequantScratch(
        ENGINE_LINEARS.map((m) => Wl.linear[m].w),
        'base rows dequantized',
      );
      const bwd = (m: EngineLinear, dy: number, x: number, dx: number, acc: boolean): void =>
        this.linearBwd(dy, N, Wl.linear[m], x, dx, acc, adl[m], s.t[m], gl[m], rank, scale, gw?.linear[m], deq);
      // MLP: x3 = x2 + down(silu(gate)·up)
      const dAct = this.f32(N * F, 'mlp gradient');
      bwd('down_proj', dX, s.act, dAct, false);
      const dGate = this.f32(N * F, 'mlp gradient');
      const dUp = s.act; // the activation is no longer read
      k.swigluBwd(s.gate, s.up, dAct, dGate, dUp, N * F);
      const dH2 = this.f32(N * D, 'norm gradient');
      bwd('gate_proj', dGate, s.h2, dH2, false);
      bwd('up_proj', dUp, s.h2, dH2, true);
      if (gw) this.gainGradient(dH2, s.x2, s.rstd2, N, D, gw.postNorm);
      k.rmsnormBwd(s.x2, D, Wl.postNorm, s.rstd2, dH2, D, dX, D, N, D, true); // dX = ∂L/∂x2 now
      // attention: x2 = x + o(attn(rope(q), rope(k), v))
      const dAtt = this.f32(N * qd, 'attention gradient');
      bwd('o_proj', dX, s.att, dAtt, false);
      const dq = this.f32(N * qd, 'attention gradient');
      const dk = this.f32(N * kd, 'attention gradient');
      const dv = this.f32(N * kd, 'attention gradient');
      k.fill(dk, 0, N * kd);
      k.fill(dv, 0, N * kd);
      const items = this.mem.alloc(p.segments.length * K * 16, 'attention items');
      let n = 0,
        off = 0,
        maxLen = 1,
        work = 0;
      for (const seg of p.segments) {
        maxLen = Math.max(maxLen, seg.len);
        for (let gh = 0; gh < K; gh++, n++) {
          const base = items / 4 + n * 4;
          this.mem.i32[base] = seg.start;
          this.mem.i32[base + 1] = seg.len;
          this.mem.i32[base + 2] = gh;
          this.mem.i32[base + 3] = off + gh * (Hq / K) * seg.len * seg.len * 4;
          work += (Hq / K) * seg.len * seg.len * E * 2;
        }
        off += Hq * seg.len * seg.len * 4;
      }
      const scratch = this.f32(maxLen * k.threads, 'attention scratch');
      k.attnBwd(s.q, qd, s.k, s.v, kd, s.att, dAtt, qd, dq, dk, dv, items, n, E, Hq / K, 1 / Math.sqrt(E), s.probs, scratch, maxLen, work);
      k.rope(dq, qd, Hq, E, p.pos, this.w.cos, this.w.sin, N, true);
      k.rope(dk, kd, K, E, p.pos, this.w.cos, this.w.sin, N, true);
      let dqRaw = dq,
        dkRaw = dk;
      if (Wl.qNorm !== undefined && Wl.kNorm !== undefined) {
        dqRaw = this.f32(N * qd, 'attention gradient');
        dkRaw = this.f32(N * kd, 'attention gradient');
        k.rmsnormBwd(s.qRaw, E, Wl.qNorm, s.rstdQ, dq, E, dqRaw, E, N * Hq, E, false);
        k.rmsnormBwd(s.kRaw, E, Wl.kNorm, s.rstdK, dk, E, dkRaw, E, N * K, E, false);
        if (gw?.qNorm !== undefined && gw.kNorm !== undefined) {
          this.gainGradient(dq, s.qRaw, s.rstdQ, N * Hq, E, gw.qNorm);
          this.gainGradient(dk, s.kRaw, s.rstdK, N * K, E, gw.kNorm);
        }
      }
      const dH = this.f32(N * D, 'norm gradient');
      bwd('q_proj', dqRaw, s.h, dH, false);
      bwd('k_proj', dkRaw, s.h, dH, true);
      bwd('v_proj', dv, s.h, dH, true);
      if (gw) this.gainGradient(dH, X, s.rstd1, N, D, gw.inNorm);
      k.rmsnormBwd(X, D, Wl.inNorm, s.rstd1, dH, D, dX, D, N, D, true);
    });
  }

  /** out[j] += Σ_i y[i, j] over `rows` rows of [rows, ld] (a bias's gradient). */
  private columnSums(y: number, ld: number, rows: number, cols: number, out: number): void {
    const f = this.mem.f32;
    const acc = new Float64Array(cols);
    for (let i = 0; i < rows; i++) {
      const a = y / 4 + i * ld;
      for (let j = 0; j < cols; j++) acc[j]! += f[a + j]!;
    }
    for (let j = 0; j < cols; j++) f[out / 4 + j]! += acc[j]!;
  }

  /** The embedding's gradient: its row of each packed id += that position's dX [N, D]. */
  embedBwd(p: Pack, dX: number, g: Matrix): void {
    const { D } = this;
    const f = this.mem.f32,
      ids = this.mem.i32;
    for (let t = 0; t < p.N; t++) {
      const row = g.ptr / 4 + ids[p.ids / 4 + t]! * D,
        src = dX / 4 + t * D;
      for (let j = 0; j < D; j++) f[row + j]! += f[src + j]!;
    }
  }

  /** X [N, D] ← the token embeddings of the pack. */
  embed(p: Pack, X: number): void {
    const table = this.w.embed;
    if (table.dtype === 'q8') {
      // Q8_0 rows: each id's row dequantized in place (one small call a position, on this thread)
      for (let t = 0; t < p.N; t++) {
        const id = this.mem.i32[p.ids / 4 + t]!;
        this.k.dequantizeQ8(q8Of(table), X + t * this.D * 4, this.D, id, id + 1);
      }
      return;
    }
    this.k.embed(table, p.ids, p.N, X, this.D);
  }

  /** The linear layers LoRA trains in each layer, in the order of the tfjs model's variables. */
  static linears(targets: readonly string[]): EngineLinear[] {
    return ENGINE_LINEARS.filter((m) => targets.includes('all-linear') || targets.includes(m));
  }
}
