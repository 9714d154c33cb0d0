// One Hugging Face model in one wasm engine: the shared memory sized by the plan, the threads, the
// weights, and what is trained — LoRA adapter sets (the policy's and the frozen reference's, plus the
// policy's gradients) beside the base weights they share, or under full fine-tuning every weight in
// float32 three times (the policy's, the frozen reference's, their gradients). It scores packed
// training sequences (log-probs, entropies, argmax hits at the trained positions, keeping what the
// backward pass needs), runs that backward pass for what is trained, and runs sampling sessions over a
// KV cache sized to the batch.
import { createHash } from 'node:crypto';
import type { HfArchitecture } from '../hfConfig';
import { ModelLoadError } from '../hfConfig';
import type { LoraOptions } from '../hfModel';
import { Decoder, breathe, type Adapter, type AdapterSet, type HeadKept, type LayerKeep, type Pack } from './decoder';
import { chooseAddressMode, type AddressMode } from './engineAddress';
import { EngineMemory } from './engineMemory';
import { ENGINE_PLAIN64_BASE64, ENGINE_PLAIN_BASE64, ENGINE_RELAXED64_BASE64, ENGINE_RELAXED_BASE64 } from './engineWasm';
import { baseTensors, loadEngineWeights, weightsLike, type BaseTensor, type EngineLinear, type EngineWeights, type WeightDtype } from './engineWeights';
import { EngineKernels } from './kernels';
import { openSession, type DecodeSession } from './engineSession';
import { CONTROL_BYTES, ThreadPool } from './threadPool';

export type { DecodeSession } from './engineSession';

interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => object;
  validate(bytes: Uint8Array): boolean;
}
const WA = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** The kernel module of an address mode this runtime can compile: relaxed SIMD (fused multiply-add) where supported. */
export function engineModule(mode: AddressMode = 'wasm32'): { module: object; relaxed: boolean } {
  const m64 = mode === 'memory64';
  const relaxed = Buffer.from(m64 ? ENGINE_RELAXED64_BASE64 : ENGINE_RELAXED_BASE64, 'base64');
  if (WA.validate(relaxed)) return { module: new WA.Module(relaxed), relaxed: true };
  return { module: new WA.Module(Buffer.from(m64 ? ENGINE_PLAIN64_BASE64 : ENGINE_PLAIN_BASE64, 'base64')), relaxed: false };
}

export type AdapterRole = 'policy' | 'reference';

/** [rows, cols] → [cols, rows] (a copy). */
function transposed(src: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = src[r * cols + c]!;
  return out;
}

/** Copies a variable's values into its tensor in engine memory (a transposed variable, [cols, rows], back to [rows, cols]). */
function writeTensor(f32: Float32Array, t: BaseTensor, at: { ptr: number; rows: number; cols: number }, v: Float32Array): void {
  if (v.length !== at.rows * at.cols) throw new Error(`HfEngine: ${t.name} has ${v.length} values, not ${at.rows * at.cols}`);
  f32.set(t.transposed ? transposed(v, at.cols, at.rows) : v, at.ptr / 4);
}

/** A tensor in engine memory in its variable's layout (a copy). */
function readTensor(f32: Float32Array, t: BaseTensor, at: { ptr: number; rows: number; cols: number }): Float32Array {
  const stored = f32.subarray(at.ptr / 4, at.ptr / 4 + at.rows * at.cols);
  return t.transposed ? transposed(stored, at.rows, at.cols) : stored.slice();
}

export interface EngineOptions {
  readonly dir: string;
  readonly arch: HfArchitecture;
  readonly contextLength: number;
  /** Absent: full fine-tuning (every weight trained, held in float32). */
  readonly lora?: LoraOptions;
  readonly threads: number;
  readonly dtype: WeightDtype;
  /** The memory plan: its total is the engine's memory; its text is quoted in errors. */
  readonly bytes: number;
  readonly planText: string;
  /** The plan's address mode (EnginePlan.address); absent: chosen from `bytes` (engineAddress.chooseAddressMode). */
  readonly address?: AddressMode;
  /** A training pass keeps every layer's intermediates instead of recomputing them (EnginePlan.keepsActivations). */
  readonly keepActivations?: boolean;
  /**
   * Bytes below the engine's first region (default: the threads' control block). A test of the 64-bit
   * memory sets a gap past 4 GiB here, so every weight, activation and gradient lies above it; `bytes`
   * must hold the gap too.
   */
  readonly reservedBytes?: number;
}

/** A sequence to score: input ids, targets, which positions are trained (scored), and where a grammar allowed only some ids. */
export interface ScoreInput {
  readonly inputs: readonly number[];
  readonly targets: readonly number[];
  readonly mask: readonly number[];
  /** Per position: the ids constrained decoding allowed (log-probs over them only), or undefined. */
  readonly allowed?: readonly (Int32Array | undefined)[];
}

export interface Scored {
  readonly logp: Float32Array;
  readonly entropy: Float32Array;
  readonly argmaxHit: Float32Array;
}

interface KeptPass {
  readonly mark: number;
  readonly pack: Pack;
  readonly saved: number;
  readonly rowIdx: number[];
  /** per scored row: its sequence and position */
  readonly where: [number, number][];
  readonly kept: HeadKept;
  readonly temperature: number;
  /** every layer's intermediates, where the plan keeps them (else the backward pass recomputes them) */
  readonly layers?: readonly LayerKeep[];
}

export class HfEngine {
  /** The policy's decoder (its weights); `decoders.reference` reads the frozen reference's. */
  readonly decoder: Decoder;
  readonly decoders: Record<AdapterRole, Decoder>;
  readonly adapters: Record<AdapterRole, AdapterSet>;
  readonly grads: AdapterSet;
  /** The linear layers with adapters, in each layer (the variables' order: per layer, per linear, a then b); none under full fine-tuning. */
  readonly linears: readonly EngineLinear[];
  /** Full fine-tuning: the trained tensors in the variables' order, and the gradients of the last backward pass. */
  private readonly full?: { readonly tensors: readonly BaseTensor[]; readonly weights: Record<AdapterRole, EngineWeights>; readonly grads: EngineWeights };
  private pass: KeptPass | undefined;
  private closed = false;
  private readonly weightsStart: number;
  private readonly weightsEnd: number;
  /** One holder at a time (a scoring pass until its backward, a sampling session until disposed): the memory is a stack. */
  private queue: Promise<void> = Promise.resolve();
  private unlockPass: (() => void) | undefined;

  private constructor(
    readonly o: EngineOptions,
    readonly mem: EngineMemory,
    private readonly pool: ThreadPool,
    readonly kernels: EngineKernels,
    readonly relaxed: boolean,
  ) {
    const k = kernels;
    this.weightsStart = mem.used;
    const weights = loadEngineWeights(mem, k, o.dir, o.arch, o.dtype, o.contextLength);
    this.weightsEnd = mem.used;
    this.decoder = new Decoder(o.arch, mem, k, weights, o.contextLength);
    if (o.lora) {
      this.linears = Decoder.linears(o.lora.targets);
      if (this.linears.length === 0)
        throw new ModelLoadError(`policyOptions.loraTargets ${JSON.stringify(o.lora.targets)} match no linear layer of this ${o.arch.modelType} model`);
      this.decoders = { policy: this.decoder, reference: this.decoder };
    } else {
      if (o.dtype !== 'f32') throw new ModelLoadError('full fine-tuning on the engine holds float32 weights. Fix: policyOptions.weightDtype "f32" (or "auto")');
      this.linears = [];
      const reference = weightsLike(mem, o.arch, weights, 'reference weights (full fine-tuning)', true);
      const grads = weightsLike(mem, o.arch, weights, 'weight gradients (full fine-tuning)', false);
      this.full = { tensors: baseTensors(o.arch), weights: { policy: weights, reference }, grads };
      this.decoders = { policy: this.decoder, reference: new Decoder(o.arch, mem, k, reference, o.contextLength) };
    }
    const rank = o.lora?.rank ?? 0;
    const set = (label: string): AdapterSet => ({
      rank,
      scale: o.lora ? o.lora.alpha / o.lora.rank : 0,
      zero: true,
      layers: weights.layers.map((lw, l) =>
        Object.fromEntries(
          this.linears.map((m) => {
            const w = lw.linear[m].w;
            const a = mem.allocF32(w.cols * rank, `${label} adapters layer ${l}`);
            const b = mem.allocF32(rank * w.rows, `${label} adapters layer ${l}`);
            mem.zero(a, w.cols * rank * 4);
            mem.zero(b, rank * w.rows * 4);
            return [m, { a, b, in: w.cols, out: w.rows } satisfies Adapter];
          }),
        ),
      ),
    });
    this.adapters = { policy: set('policy'), reference: set('reference') };
    this.grads = set('gradients');
  }

  /** Every weight is trained (full fine-tuning), not adapters. */
  get trainsBase(): boolean {
    return this.full !== undefined;
  }

  static async create(o: EngineOptions): Promise<HfEngine> {
    if (o.lora && o.lora.rank % 4 !== 0)
      throw new ModelLoadError(`policyOptions.loraRank ${o.lora.rank}: the engine needs a multiple of 4. Fix: use 4, 8, 16 …`);
    if (o.lora && o.lora.dropout > 0)
      throw new ModelLoadError(`policyOptions.loraDropout ${o.lora.dropout}: the engine trains adapters without dropout. Fix: set it to 0`);
    const mem = new EngineMemory(o.bytes, o.planText, Math.max(CONTROL_BYTES, o.reservedBytes ?? 0), o.address ?? chooseAddressMode(o.bytes).mode);
    const { module, relaxed } = engineModule(mem.mode);
    const pool = await ThreadPool.start(mem.memory, module, o.threads);
    try {
      return new HfEngine(o, mem, pool, new EngineKernels(pool), relaxed);
    } catch (e) {
      await pool.close();
      throw e;
    }
  }

  /** Waits for the engine and returns the function that hands it back. */
  private async acquire(): Promise<() => void> {
    let unlock!: () => void;
    const mine = new Promise<void>((r) => (unlock = r));
    const before = this.queue;
    this.queue = before.then(() => mine);
    await before;
    let once = false;
    return () => {
      if (!once) {
        once = true;
        unlock();
      }
    };
  }

  get threads(): number {
    return this.pool.size;
  }

  /** The memory's address mode: wasm32 or memory64 (engineAddress.ts). */
  get address(): AddressMode {
    return this.mem.mode;
  }

  /** A digest of the base weights as they lie in memory (tests: nothing ever writes them after loading). */
  baseDigest(): string {
    const h = createHash('sha256');
    h.update(Buffer.from(this.mem.memory.buffer, this.weightsStart, this.weightsEnd - this.weightsStart));
    return h.digest('hex');
  }

  /** Time per kernel since the last call (AGENT_RL_ENGINE_PROFILE=1), for benchmarks; the most time first. */
  takeProfileEntries(): [string, { ms: number; calls: number }][] {
    return [...(this.pool.takeProfile() ?? [])].sort((a, b) => b[1].ms - a[1].ms);
  }

  /** The same as one line. */
  takeProfile(): string {
    return this.takeProfileEntries()
      .map(([k, v]) => `${k} ${(v.ms / 1000).toFixed(2)} s (${v.calls})`)
      .join(', ');
  }

  /**
   * The trained tensors' names and shapes in the variables' order: under LoRA per layer, per linear, a
   * [in, r] then b [r, out]; under full fine-tuning every weight (baseTensors).
   */
  trainableShapes(): { name: string; shape: number[] }[] {
    if (this.full) return this.full.tensors.map((t) => ({ name: t.name, shape: [...t.shape] }));
    const out: { name: string; shape: number[] }[] = [];
    const r = this.adapters.policy.rank;
    this.decoder.w.layers.forEach((lw) => {
      for (const m of this.linears) {
        const w = lw.linear[m].w;
        out.push({ name: `${lw.linear[m].module}.lora_A`, shape: [w.cols, r] }, { name: `${lw.linear[m].module}.lora_B`, shape: [r, w.rows] });
      }
    });
    return out;
  }

  private pointers(set: AdapterSet): { ptr: number; n: number }[] {
    const out: { ptr: number; n: number }[] = [];
    const r = set.rank;
    set.layers.forEach((layer) => {
      for (const m of this.linears) {
        const ad = layer[m]!;
        out.push({ ptr: ad.a, n: ad.in * r }, { ptr: ad.b, n: r * ad.out });
      }
    });
    return out;
  }

  /**
   * Writes the trained tensors' values (the variables' order and layouts) into the `role`'s set:
   * adapters (`zero`: every b is zero), or under full fine-tuning the weights themselves.
   */
  setTrainable(role: AdapterRole, values: readonly Float32Array[], zero: boolean): void {
    if (this.full) {
      const w = this.full.weights[role];
      if (values.length !== this.full.tensors.length) throw new Error(`HfEngine.setTrainable: ${values.length} arrays for ${this.full.tensors.length} weights`);
      this.full.tensors.forEach((t, i) => writeTensor(this.mem.f32, t, t.at(w), values[i]!));
      return;
    }
    const ptrs = this.pointers(this.adapters[role]);
    if (values.length !== ptrs.length) throw new Error(`HfEngine.setTrainable: ${values.length} arrays for ${ptrs.length} adapters`);
    ptrs.forEach((p, i) => {
      const v = values[i]!;
      if (v.length !== p.n) throw new Error(`HfEngine.setTrainable: adapter ${i} has ${v.length} values, not ${p.n}`);
      this.mem.f32.set(v, p.ptr / 4);
    });
    this.adapters[role].zero = zero;
  }

  /** The trained tensors' values in the `role`'s set (the variables' order and layouts): what a model starts from. */
  readTrainable(role: AdapterRole): Float32Array[] {
    if (!this.full) return this.pointers(this.adapters[role]).map((p) => this.mem.f32.slice(p.ptr / 4, p.ptr / 4 + p.n));
    const w = this.full.weights[role];
    return this.full.tensors.map((t) => readTensor(this.mem.f32, t, t.at(w)));
  }

  /** Full fine-tuning: trained values (the variables' order and layouts) as checkpoint tensors (names, stored layouts). */
  checkpointTensors(values: readonly Float32Array[]): Map<string, { data: Float32Array; shape: number[] }> {
    if (!this.full) throw new Error('HfEngine.checkpointTensors: LoRA trains adapters, not the weights');
    const out = new Map<string, { data: Float32Array; shape: number[] }>();
    this.full.tensors.forEach((t, i) => {
      const at = t.at(this.full!.weights.policy);
      out.set(t.name, t.transposed ? { data: transposed(values[i]!, at.cols, at.rows), shape: [at.rows, at.cols] } : { data: values[i]!, shape: [...t.shape] });
    });
    return out;
  }

  /** The gradients of the last backward pass, in the variables' order and layouts (copies). */
  private readGrads(): Float32Array[] {
    if (this.full) {
      const g = this.full.grads;
      return this.full.tensors.map((t) => readTensor(this.mem.f32, t, t.at(g)));
    }
    return this.pointers(this.grads).map((p) => this.mem.f32.slice(p.ptr / 4, p.ptr / 4 + p.n));
  }

  /**
   * Log-probs (at `temperature`), entropies and argmax hits of each sequence's trained positions under
   * the `role` adapters (0 elsewhere). `keep`: the activations the backward pass needs stay in memory
   * until `backward` or `release`.
   */
  async score(role: AdapterRole, seqs: readonly ScoreInput[], temperature: number, keep: boolean): Promise<Scored[]> {
    const unlock = await this.acquire();
    const d = this.decoders[role],
      mem = this.mem;
    const D = d.D,
      L = this.o.arch.layers;
    const mark = mem.mark();
    let done = false;
    try {
      const pack = d.pack(seqs.map((s) => s.inputs));
      const N = pack.N;
      const ad = this.adapters[role];
      // keep: every layer's input, [L + 1][N, D]; else one stream updated in place
      const saved = mem.allocF32((keep ? L + 1 : 1) * N * D, keep ? 'kept layer inputs' : 'residual stream');
      d.embed(pack, saved);
      const layers: LayerKeep[] | undefined = keep && this.o.keepActivations ? [] : undefined;
      for (let l = 0; l < L; l++) {
        let X = saved;
        if (layers) {
          // the layer's intermediates stay allocated; its output x2 + y becomes the next layer's input
          const s = d.layer(l, saved + l * N * D * 4, pack, ad, true)!;
          X = saved + (l + 1) * N * D * 4;
          mem.u8.copyWithin(X, s.x2, s.x2 + N * D * 4);
          this.kernels.add(X, s.y, N * D);
          layers.push(s);
        } else {
          if (keep) {
            X = saved + (l + 1) * N * D * 4;
            mem.u8.copyWithin(X, saved + l * N * D * 4, saved + (l + 1) * N * D * 4);
          }
          d.layer(l, X, pack, ad, false);
        }
        await breathe();
      }
      const rowIdx: number[] = [];
      const targets: number[] = [];
      const where: [number, number][] = [];
      const allowed: (Int32Array | undefined)[] = [];
      seqs.forEach((s, b) =>
        s.mask.forEach((m, t) => {
          if (!m) return;
          rowIdx.push(pack.segments[b]!.start + t);
          targets.push(s.targets[t]!);
          where.push([b, t]);
          allowed.push(s.allowed?.[t]);
        }),
      );
      const last = keep ? saved + L * N * D * 4 : saved;
      const h = d.head(last, rowIdx, targets, temperature, keep, seqs.some((s) => s.allowed) ? allowed : undefined);
      const out = seqs.map((s) => ({
        logp: new Float32Array(s.targets.length),
        entropy: new Float32Array(s.targets.length),
        argmaxHit: new Float32Array(s.targets.length),
      }));
      where.forEach(([b, t], i) => {
        out[b]!.logp[t] = h.logp[i]!;
        out[b]!.entropy[t] = h.entropy[i]!;
        out[b]!.argmaxHit[t] = h.hit[i]!;
      });
      if (keep && h.kept) {
        this.pass = { mark, pack, saved, rowIdx, where, kept: h.kept, temperature, ...(layers ? { layers } : {}) };
        this.unlockPass = unlock;
        done = true;
      }
      return out;
    } finally {
      if (!done) {
        mem.release(mark);
        unlock();
      }
    }
  }

  /** Logits [rows, V] of each row's last position, or of every position ('all': [ΣL, V]), under the `role` adapters. */
  async logits(role: AdapterRole, rows: readonly (readonly number[])[], which: 'last' | 'all'): Promise<Float32Array> {
    const unlock = await this.acquire();
    const d = this.decoders[role],
      mem = this.mem;
    try {
      return await mem.scopedAsync(async () => {
        const pack = d.pack(rows);
        const X = mem.allocF32(pack.N * d.D, 'residual stream');
        d.embed(pack, X);
        for (let l = 0; l < this.o.arch.layers; l++) {
          d.layer(l, X, pack, this.adapters[role], false);
          await breathe();
        }
        const idx = which === 'all' ? Array.from({ length: pack.N }, (_, i) => i) : pack.segments.map((s) => s.start + s.len - 1);
        return d.logitsOf(X, idx, d.logitRowsPerChunk());
      });
    } finally {
      unlock();
    }
  }

  /**
   * Gradients of Σ g[b][t]·logp[b][t] over the last kept pass, in the variables' order; the kept
   * activations are released.
   */
  async backward(g: readonly Float32Array[]): Promise<Float32Array[]> {
    const p = this.pass;
    if (!p) throw new Error('HfEngine.backward: no kept pass (score(…, keep = true) first)');
    const d = this.decoder,
      mem = this.mem;
    const D = d.D,
      L = this.o.arch.layers,
      N = p.pack.N;
    try {
      for (const q of this.pointers(this.grads)) mem.zero(q.ptr, q.n * 4);
      const gw = this.full?.grads;
      if (gw) for (const t of this.full.tensors) mem.zero(t.at(gw).ptr, t.at(gw).rows * t.at(gw).cols * 4);
      const gr = new Float32Array(p.rowIdx.length);
      p.where.forEach(([b, t], i) => (gr[i] = g[b]![t]!));
      const dX = mem.allocF32(N * D, 'residual gradient');
      d.headBwd(p.kept, p.rowIdx, gr, p.temperature, dX, N, gw);
      await breathe();
      for (let l = L - 1; l >= 0; l--) {
        d.layerBwd(l, p.saved + l * N * D * 4, dX, p.pack, this.adapters.policy, this.grads, gw?.layers[l], p.layers?.[l]);
        await breathe();
      }
      if (gw) d.embedBwd(p.pack, dX, gw.embed);
      return this.readGrads();
    } finally {
      this.release();
    }
  }

  /** Gives back a kept pass's activations and the engine (also after a failed update). */
  release(): void {
    if (!this.pass) return;
    this.mem.release(this.pass.mark);
    this.pass = undefined;
    const unlock = this.unlockPass;
    this.unlockPass = undefined;
    unlock?.();
  }

  /**
   * Prefills `prompts` (each ≥ 1 token) into a KV cache of `capacity` positions per row, in groups of
   * rows within `positionsPerPrefill`, and returns the session: the last logits of each row and a
   * step over the next token of every row.
   */
  async session(
    role: AdapterRole,
    prompts: readonly (readonly number[])[],
    capacity: number,
    positionsPerPrefill: number,
    rowsPerStep = prompts.length,
  ): Promise<DecodeSession> {
    const unlock = await this.acquire();
    const on = { decoder: this.decoders[role], adapters: this.adapters[role], mem: this.mem, contextLength: this.o.contextLength };
    return openSession({ ...on, unlock, closed: () => this.closed }, prompts, capacity, positionsPerPrefill, rowsPerStep);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.pass = undefined;
    await this.pool.close();
  }
}
