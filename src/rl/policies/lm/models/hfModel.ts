// The tfjs decoder: a Hugging Face causal language model (qwen2, qwen3, llama, gpt2) in tfjs core ops,
// from a local checkpoint folder, with LoRA adapters or full fine-tuning — the forward pass of the
// tfjs-node(-gpu) and WebGPU backends, and on wasm of what the engine does not run (gpt2, candidate
// scoring). Tensor names, shapes and the steps of a layer (RMSNorm or LayerNorm, rotary or learned
// positions, separate or fused q/k/v, SwiGLU or GELU, the stored linear layout) are the model's
// family spec (families/); nothing here names a family. Shapes: B batch, T new positions, Tk keys, D
// hidden, H query heads, K key/value heads (grouped-query attention: query head h reads key/value
// head h ÷ (H/K)), E head width, F MLP width, V vocabulary.
//
// Wasm-minded choices: projections are 2-D products with materialised transposes, attention's batched
// products run on our SIMD kernel, rotate-half is a product with a fixed ±1 permutation matrix. Under
// LoRA the base weights are plain frozen tensors (never variables): no gradient reaches them, and the
// KL reference is the same base with a frozen copy of the adapters (zero at the start), so it costs no
// second copy of the weights. Embeddings are a gather when frozen and a one-hot product when trained
// (wasm has no gradient for gather).
import * as tf from '@tensorflow/tfjs';
import type { BaseWeights } from '../../../../shared/baseWeights';
import type { Differentiable } from '../../../algo/gradients';
import { batchMatMul } from './kernels/batchMatMul';
import { mm, type PolicyModel, type RunOptions } from './policyModel';
import { checkLoraTargets, familyOf, loraModules, parameterCount } from './families/familyOf';
import type { LayerModules, ModelFamily } from './families/modelFamily';
import { ModelLoadError, readHfConfig, rotaryTables, type HfArchitecture } from './hfConfig';
import { readFamilyTensors } from './safetensors';

const NEG = -1e9;

/** Bytes a prefill pass may spend on one layer's attention scores and probabilities. */
export const PREFILL_BUDGET = 512 * 2 ** 20;

export function prefillRowsOf(a: HfArchitecture, contextLength: number): number {
  return Math.max(1, Math.min(32, Math.floor(PREFILL_BUDGET / (a.heads * contextLength * contextLength * 4 * 2))));
}

export { checkLoraTargets }; // createPolicy checks targets before the engine loads

export interface LoraOptions {
  readonly rank: number;
  readonly alpha: number;
  readonly dropout: number;
  /** Module names (the last part of a linear layer's path), or ["all-linear"]. */
  readonly targets: readonly string[];
}

/** What a checkpoint and a run record store of the model: enough to rebuild it from the same folder. */
export interface HfModelConfig {
  readonly kind: 'hf';
  /** Absolute path of the checkpoint folder. */
  readonly dir: string;
  readonly arch: HfArchitecture;
  /** Longest sequence the policy uses (≤ the model's max_position_embeddings). */
  readonly contextLength: number;
  readonly vocabSize: number;
  /** Absent: full fine-tuning. */
  readonly lora?: LoraOptions;
}

/** One linear layer: base weight [in, out] (stored transposed from nn.Linear's [out, in]; Conv1D as is), optional bias, optional adapter. */
interface Linear {
  readonly w: tf.Tensor2D;
  readonly b?: tf.Tensor1D;
  adapter?: { readonly a: tf.Variable; readonly b: tf.Variable; readonly scale: number };
}

/** Frozen x · W whose gradient reaches x only (dy · Wᵀ, the transpose materialised for XNNPACK). */
function frozenMatMul(x: tf.Tensor2D, w: tf.Tensor2D): tf.Tensor2D {
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [input] = args as [tf.Tensor2D];
    return { value: tf.matMul(input, w), gradFunc: (dy: tf.Tensor) => [tf.matMul(dy, tf.transpose(w))] };
  }) as (x: tf.Tensor2D) => tf.Tensor2D;
  return f(x);
}

export class HfModel implements PolicyModel {
  /** The trainable weights in a fixed order (adapters under LoRA, every base weight otherwise). */
  readonly weights: tf.Variable[] = [];
  readonly names: string[] = [];
  private readonly linears = new Map<string, Linear>();
  private readonly vectors = new Map<string, tf.Tensor>();
  private readonly owned: tf.Tensor[] = [];
  private embed!: tf.Tensor2D;
  private positionsTable?: tf.Tensor2D;
  /** [D, V] output projection: the untied head, or the frozen tied embedding's transpose (made once). */
  private headT?: tf.Tensor2D;
  private cos?: tf.Tensor2D;
  private sin?: tf.Tensor2D;
  private rotation?: tf.Tensor2D;
  private fullMask: tf.Tensor2D | undefined;
  private dropoutSeed = 0;
  /** Adapters are all zero (a fresh LoRA or its reference at the start): the adapter products are skipped. */
  private adaptersZero = true;

  /**
   * lora: frozen base tensors, trainable adapters; full: every weight a trainable variable; frozen: a
   * reference's weights (variables that are not trained, so copyFrom can set them).
   */
  private constructor(
    readonly config: HfModelConfig,
    private readonly mode: 'lora' | 'full' | 'frozen',
  ) {}

  get arch(): HfArchitecture {
    return this.config.arch;
  }

  /** The tfjs decoder reads every weight into float32 tensors, whatever the folder stores. */
  get baseWeights(): BaseWeights {
    return 'f32';
  }

  /** The family spec the weights and the forward pass follow. */
  get family(): ModelFamily {
    return familyOf(this.config.arch);
  }

  /** Every base weight is trained (full fine-tuning). */
  get trainsBase(): boolean {
    return this.mode === 'full';
  }

  /** Loads a checkpoint folder (config.json and safetensors) with adapters per `lora`, or for full fine-tuning. */
  static load(dir: string, options: { contextLength?: number; lora?: LoraOptions; seed?: number } = {}): HfModel {
    const arch = readHfConfig(dir);
    const contextLength = Math.min(arch.maxPositions, options.contextLength ?? arch.maxPositions);
    const model = new HfModel(
      { kind: 'hf', dir, arch, contextLength, vocabSize: arch.vocabSize, ...(options.lora ? { lora: options.lora } : {}) },
      options.lora ? 'lora' : 'full',
    );
    if (options.lora) checkLoraTargets(arch, options.lora.targets);
    const base = readFamilyTensors(dir, arch);
    try {
      model.build(base, options.seed ?? 0);
    } catch (e) {
      model.dispose();
      throw e;
    }
    return model;
  }

  private build(base: Map<string, { data: Float32Array; shape: number[] }>, seed: number): void {
    const arch = this.arch;
    const variables = this.mode !== 'lora';
    const tensor = (name: string, transpose: boolean): tf.Tensor => {
      const { data, shape } = base.get(name)!;
      const t = tf.tidy(() => {
        const raw = tf.tensor(data, shape);
        return transpose ? tf.transpose(raw) : raw;
      });
      if (!variables) {
        this.owned.push(t);
        return t;
      }
      const v = tf.variable(t, this.mode === 'full', `${name}_${Math.random().toString(36).slice(2, 8)}`);
      t.dispose();
      this.weights.push(v);
      this.names.push(name);
      return v;
    };
    const lora = this.mode === 'lora' ? this.config.lora : undefined;
    const family = this.family;
    const targets = lora ? loraModules(arch, lora.targets) : [];
    let s = seed * 7919 + 17;
    for (const { name, role } of family.tensors(arch)) {
      if (role === 'head' || role === 'bias') continue; // the head below; a bias with its linear layer
      if (role !== 'linear') {
        this.vectors.set(name, tensor(name, false));
        continue;
      }
      const module = name.replace(/\.weight$/, '');
      const w = tensor(name, family.linearLayout === 'out-in') as tf.Tensor2D; // nn.Linear [out, in] → [in, out]; Conv1D is [in, out]
      const bias = base.has(`${module}.bias`) ? (tensor(`${module}.bias`, false) as tf.Tensor1D) : undefined;
      const lin: Linear = { w, ...(bias ? { b: bias } : {}) };
      if (lora && targets.some((t) => module.endsWith(`.${t}`))) {
        const [inDim, outDim] = w.shape;
        const bound = 1 / Math.sqrt(inDim); // PEFT's kaiming-uniform(a=√5) bound for A; B starts at zero
        const a = tf.variable(
          tf.randomUniform([inDim, lora.rank], -bound, bound, 'float32', ++s),
          true,
          `${module}.lora_A_${Math.random().toString(36).slice(2, 8)}`,
        );
        const b = tf.variable(tf.zeros([lora.rank, outDim]), true, `${module}.lora_B_${Math.random().toString(36).slice(2, 8)}`);
        lin.adapter = { a, b, scale: lora.alpha / lora.rank };
        this.weights.push(a, b);
        this.names.push(`${module}.lora_A`, `${module}.lora_B`);
      }
      this.linears.set(module, lin);
    }
    if (lora && this.weights.length === 0)
      throw new ModelLoadError(
        `policyOptions.lora.targets ${JSON.stringify(lora.targets)} match no linear layer of this ${arch.modelType} model; its layers: ${family.loraTargets.join(', ')} (or "all-linear")`,
      );
    this.embed = this.vectors.get(family.names.embed) as tf.Tensor2D;
    if (family.positions === 'learned') this.positionsTable = this.vectors.get(family.names.positions!) as tf.Tensor2D;
    if (!arch.tiedEmbeddings) {
      this.headT = tensor(family.names.head, true) as tf.Tensor2D;
    } else if (!variables) {
      // a frozen tied embedding: its transpose once (a trained or settable one is transposed per pass)
      this.headT = tf.keep(tf.transpose(this.embed));
      this.owned.push(this.headT);
    }
    if (family.positions === 'rotary') this.buildRope();
  }

  private buildRope(): void {
    const E = this.arch.headDim;
    const P = this.config.contextLength;
    const { cos, sin, rotation } = rotaryTables(this.arch, P);
    this.cos = tf.tensor2d(cos, [P, E]);
    this.sin = tf.tensor2d(sin, [P, E]);
    this.rotation = tf.tensor2d(rotation, [E, E]);
    this.owned.push(this.cos, this.sin, this.rotation);
  }

  parameterCount(): number {
    return parameterCount(this.arch);
  }

  trainableCount(): number {
    return this.weights.reduce((n, v) => n + v.size, 0);
  }

  /**
   * The frozen KL reference: under LoRA the same base tensors with a frozen copy of the adapters (no
   * second copy of the weights); for full fine-tuning a frozen copy of every weight, read again from
   * the folder and set to this model's weights.
   */
  reference(): HfModel {
    if (this.mode === 'full') {
      const ref = new HfModel(this.config, 'frozen');
      ref.build(readFamilyTensors(this.config.dir, this.arch), 0);
      ref.copyFrom(this);
      return ref;
    }
    const ref = new HfModel(this.config, 'frozen');
    ref.embed = this.embed;
    ref.positionsTable = this.positionsTable;
    ref.headT = this.headT;
    ref.cos = this.cos;
    ref.sin = this.sin;
    ref.rotation = this.rotation;
    for (const [name, t] of this.vectors) ref.vectors.set(name, t);
    for (const [module, lin] of this.linears) {
      const r: Linear = { w: lin.w, ...(lin.b ? { b: lin.b } : {}) };
      if (lin.adapter) {
        const a = tf.variable(lin.adapter.a, false);
        const b = tf.variable(lin.adapter.b, false);
        r.adapter = { a, b, scale: lin.adapter.scale };
        ref.weights.push(a, b);
        ref.names.push(`${module}.lora_A`, `${module}.lora_B`);
      }
      ref.linears.set(module, r);
    }
    ref.adaptersZero = this.adaptersZero;
    return ref;
  }

  /** Copies the trainable weights of another model of the same shape (resetReference, weight sync). */
  copyFrom(other: PolicyModel): void {
    other.weights.forEach((v, i) => this.weights[i]!.assign(v));
    this.adaptersZero = other instanceof HfModel ? other.adaptersZero : false;
  }

  /** The trainable weights changed (an update or a restored checkpoint): adapters are no longer zero. */
  weightsChanged(): void {
    this.adaptersZero = false;
  }

  /** Prefill rows per pass: a layer's scores and probabilities (rows × heads × P² floats, twice) within PREFILL_BUDGET. */
  get prefillRows(): number {
    return prefillRowsOf(this.arch, this.config.contextLength);
  }

  dispose(): void {
    // a LoRA reference shares the model's base tensors and owns only its adapter copies
    tf.dispose(this.weights);
    tf.dispose(this.owned);
    this.fullMask?.dispose();
    this.fullMask = undefined;
  }

  private linear(x: tf.Tensor2D, module: string, training: boolean): tf.Tensor2D {
    const lin = this.linears.get(module)!;
    let y = this.trainsBase ? mm(x, lin.w) : frozenMatMul(x, lin.w);
    if (lin.b) y = tf.add(y, lin.b);
    if (lin.adapter && (training || !this.adaptersZero)) {
      const { a, b, scale } = lin.adapter;
      const dropout = this.config.lora?.dropout ?? 0;
      const input = training && dropout > 0 ? (tf.dropout(x, dropout, undefined, ++this.dropoutSeed) as tf.Tensor2D) : x;
      y = tf.add(y, tf.mul(mm(mm(input, a as unknown as tf.Tensor2D), b as unknown as tf.Tensor2D), scale));
    }
    return y;
  }

  /** The family's norm over the last axis of [N, D]: RMSNorm (gain `module.weight`) or LayerNorm (gain and bias `module.bias`). */
  private norm(x: tf.Tensor2D, module: string): tf.Tensor2D {
    const gain = this.vectors.get(`${module}.weight`)!;
    if (this.family.norm === 'rmsnorm') {
      const ms = tf.mean(tf.square(x), -1, true);
      return tf.mul(tf.mul(x, tf.rsqrt(tf.add(ms, this.arch.normEps))), gain);
    }
    const mean = tf.mean(x, -1, true);
    const c = tf.sub(x, mean);
    const variance = tf.mean(tf.square(c), -1, true);
    return tf.add(tf.mul(tf.mul(c, tf.rsqrt(tf.add(variance, this.arch.normEps))), gain), this.vectors.get(`${module}.bias`)!);
  }

  /** RMSNorm over the last axis of [B, heads, T, E] with an [E] gain. */
  private headNorm(x: tf.Tensor4D, name: string): tf.Tensor4D {
    const ms = tf.mean(tf.square(x), -1, true);
    return tf.mul(tf.mul(x, tf.rsqrt(tf.add(ms, this.arch.normEps))), this.vectors.get(name)!);
  }

  /** ids [B·T] of a table [N, D] → [B·T, D]: a gather when frozen, a one-hot product when trained. */
  private lookup(table: tf.Tensor2D, ids: tf.Tensor): tf.Tensor2D {
    const flat = tf.cast<tf.Tensor1D>(tf.reshape(ids, [-1]), 'int32');
    if (this.mode !== 'full') return tf.gather<tf.Tensor2D>(table, flat);
    return mm(tf.cast(tf.oneHot(flat, table.shape[0]), 'float32') as tf.Tensor2D, table);
  }

  /**
   * Additive causal mask [T, Tk] for T new queries after Tk − T cached keys: a slice of one [P, P]
   * mask made once (row i may see keys ≤ i); undefined for a single query.
   */
  private causalMask(T: number, Tk: number): tf.Tensor2D | undefined {
    if (T === 1) return undefined;
    if (Tk > this.config.contextLength) {
      // past the context (callers cut sequences to it; built per call rather than failing here)
      const data = new Float32Array(T * Tk);
      for (let i = 0; i < T; i++) for (let j = 0; j < Tk; j++) data[i * Tk + j] = j <= i + Tk - T ? 0 : NEG;
      return tf.tensor2d(data, [T, Tk]);
    }
    if (!this.fullMask) {
      const P = this.config.contextLength;
      const data = new Float32Array(P * P);
      for (let i = 0; i < P; i++) for (let j = i + 1; j < P; j++) data[i * P + j] = NEG;
      this.fullMask = tf.keep(tf.tensor2d(data, [P, P]));
    }
    return tf.slice(this.fullMask, [Tk - T, 0], [T, Tk]);
  }

  /** q or k [B, heads, T, E] rotated at their positions (cos, sin [B, 1, T, E]). */
  private rope(x: tf.Tensor4D, cos: tf.Tensor4D, sin: tf.Tensor4D): tf.Tensor4D {
    const [B, n, T, E] = x.shape;
    const rotated = tf.reshape(mm(tf.reshape(x, [B * n * T, E]), this.rotation!), [B, n, T, E]);
    return tf.add(tf.mul(x, cos), tf.mul(rotated, sin));
  }

  /**
   * The decoder on `ids` [B, T] at `positions` [B, T] after the cached keys and values (keys [B, K, E,
   * Tpast], values [B, K, Tpast, E]). Returns logits [B, T, V] and every layer's keys and values.
   */
  run(
    ids: tf.Tensor2D,
    positions: tf.Tensor2D,
    { keyMask, past, scoped = false, lastOnly = false, training = false }: RunOptions = {},
  ): { logits: tf.Tensor3D; k: tf.Tensor4D[]; v: tf.Tensor4D[] } {
    const a = this.arch;
    const [B, T] = ids.shape;
    const H = a.heads,
      K = a.kvHeads,
      E = a.headDim,
      G = H / K;
    const family = this.family;
    const learned = family.positions === 'learned';
    // a finished row of a sampling batch still steps (its id ignored) and may count past the last position
    positions = tf.minimum(positions, this.config.contextLength - 1);
    let x = this.lookup(this.embed, ids);
    if (learned) x = tf.add(x, this.lookup(this.positionsTable!, positions));
    const Tk = (past?.k[0]?.shape[3] ?? 0) + T;
    const causal = this.causalMask(T, Tk);
    let mask: tf.Tensor4D | undefined = causal ? tf.reshape(causal, [1, 1, T, Tk]) : undefined;
    if (keyMask) {
      const pad = tf.reshape<tf.Rank.R4>(tf.mul(tf.sub(1, keyMask), NEG), [B, 1, 1, Tk]);
      mask = mask ? tf.add<tf.Tensor4D>(mask, pad) : pad;
    }
    // grouped queries: the G query heads of one key/value head are stacked along time, [B, K, G·T, Tk]
    const groupMask = mask && G > 1 ? tf.tile<tf.Tensor4D>(mask, [1, 1, G, 1]) : mask;
    const flatPos = tf.cast<tf.Tensor1D>(tf.reshape(positions, [-1]), 'int32');
    const cos = learned ? undefined : tf.reshape<tf.Rank.R4>(tf.gather(this.cos!, flatPos), [B, 1, T, E]);
    const sin = learned ? undefined : tf.reshape<tf.Rank.R4>(tf.gather(this.sin!, flatPos), [B, 1, T, E]);
    const heads = (m: tf.Tensor2D, n: number): tf.Tensor4D => tf.transpose(tf.reshape(m, [B, T, n, E]), [0, 2, 1, 3]);
    const ks: tf.Tensor4D[] = [];
    const vs: tf.Tensor4D[] = [];
    const block = (l: number, x: tf.Tensor2D): [tf.Tensor2D, tf.Tensor4D, tf.Tensor4D] => {
      const m = family.names.layer(l);
      const h = this.norm(x, m.attnNorm);
      let q: tf.Tensor4D, kNew: tf.Tensor4D, vNew: tf.Tensor4D;
      if ('fused' in m.qkv) {
        // one projection [D, 3·D] split in thirds (gpt2's c_attn)
        const [qm, km, vm] = tf.split(this.linear(h, m.qkv.fused, training), 3, 1) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
        [q, kNew, vNew] = [heads(qm, H), heads(km, K), heads(vm, K)];
      } else {
        q = heads(this.linear(h, m.qkv.q, training), H);
        kNew = heads(this.linear(h, m.qkv.k, training), K);
        vNew = heads(this.linear(h, m.qkv.v, training), K);
      }
      if (a.qkNorm) {
        // Qwen3: RMSNorm over each head's width, before the rotation
        q = this.headNorm(q, `${m.qNorm!}.weight`);
        kNew = this.headNorm(kNew, `${m.kNorm!}.weight`);
      }
      if (!learned) {
        q = this.rope(q, cos!, sin!);
        kNew = this.rope(kNew, cos!, sin!);
      }
      const kT = tf.transpose(kNew, [0, 1, 3, 2]); // [B, K, E, T]
      const k = past ? tf.concat([past.k[l]!, kT], 3) : kT;
      const v = past ? tf.concat([past.v[l]!, vNew], 2) : vNew;
      const qg = tf.reshape(tf.mul(q, 1 / Math.sqrt(E)), [B, K, G * T, E]);
      const raw = batchMatMul(qg, k); // [B, K, G·T, Tk]
      const scores = groupMask ? tf.add(raw, groupMask) : raw;
      const att = tf.reshape(batchMatMul(tf.softmax(scores) as tf.Tensor4D, v), [B, H, T, E]);
      const merged = tf.reshape<tf.Rank.R2>(tf.transpose(att, [0, 2, 1, 3]), [B * T, H * E]);
      const y = tf.add<tf.Tensor2D>(x, this.linear(merged, m.o, training));
      return [this.mlp(y, m, training), k, v];
    };
    for (let l = 0; l < a.layers; l++) {
      const [y, k, v] = scoped ? tf.tidy(() => block(l, x)) : block(l, x);
      x = y;
      ks.push(k);
      vs.push(v);
    }
    // a prefill needs the last position's logits only: [B·T, V] of a real vocabulary is gigabytes
    if (lastOnly && T > 1) x = tf.reshape(tf.slice(tf.reshape(x, [B, T, -1]), [0, T - 1, 0], [B, 1, -1]), [B, -1]);
    const f = this.norm(x, family.names.finalNorm);
    const head = this.headT ?? tf.transpose(this.embed); // trained tied embedding: its transpose, per pass
    const logits = this.trainsBase ? mm(f, head) : frozenMatMul(f, head);
    return { logits: tf.reshape(logits, [B, lastOnly ? 1 : T, a.vocabSize]), k: ks, v: vs };
  }

  /** The residual MLP block: SwiGLU (down(silu(gate) · up)) or GELU (down(gelu_new(up))). */
  private mlp(x: tf.Tensor2D, m: LayerModules, training: boolean): tf.Tensor2D {
    const h = this.norm(x, m.mlpNorm);
    if (this.family.mlp === 'gelu') {
      const u = this.linear(h, m.up, training);
      // gelu_new: ½x(1 + tanh(√(2/π)(x + 0.044715x³)))
      const g = tf.mul(tf.mul(u, 0.5), tf.add(1, tf.tanh(tf.mul(Math.sqrt(2 / Math.PI), tf.add(u, tf.mul(0.044715, tf.pow(u, 3)))))));
      return tf.add(x, this.linear(g as tf.Tensor2D, m.down, training));
    }
    const gate = this.linear(h, m.gate!, training);
    const up = this.linear(h, m.up, training);
    return tf.add(x, this.linear(tf.mul<tf.Tensor2D>(tf.mul(gate, tf.sigmoid(gate)), up), m.down, training));
  }

  /** Full forward from position 0: ids [B, T] → logits [B, T, V]. */
  forward(ids: tf.Tensor2D, scoped = false, training = false): tf.Tensor3D {
    const P = this.config.contextLength;
    if (ids.shape[1] > P) throw new Error(`HfModel.forward: ${ids.shape[1]} positions, but the policy's context length is ${P}; cut the sequence first`);
    return tf.tidy(() => {
      const [B, T] = ids.shape;
      const positions = tf.tile<tf.Tensor2D>(tf.reshape(tf.range(0, T, 1, 'int32'), [1, T]), [B, 1]);
      return this.run(ids, positions, { scoped, training }).logits;
    });
  }

  /** The base weights as the forward pass reads them (nn.Linear ones in [in, out]); for checks, not to be disposed. */
  baseTensors(): Map<string, tf.Tensor> {
    const out = new Map<string, tf.Tensor>(this.vectors);
    for (const [module, lin] of this.linears) {
      out.set(`${module}.weight`, lin.w);
      if (lin.b) out.set(`${module}.bias`, lin.b);
    }
    if (this.headT && !this.arch.tiedEmbeddings) out.set(this.family.names.head, this.headT);
    return out;
  }

  /** Full fine-tuning: every weight in the checkpoint's names and layouts (a Hugging Face folder's); undefined under LoRA. */
  async hfTensors(): Promise<Map<string, { data: Float32Array; shape: number[] }> | undefined> {
    return this.mode === 'full' ? this.mergedTensors() : undefined;
  }

  /** The merged weights of the model (W + scale·A·B for adapted layers) in the checkpoint's own names and layouts, for export. */
  async mergedTensors(): Promise<Map<string, { data: Float32Array; shape: number[] }>> {
    const out = new Map<string, { data: Float32Array; shape: number[] }>();
    const put = async (name: string, t: tf.Tensor): Promise<void> => {
      out.set(name, { data: (await t.data()) as Float32Array, shape: t.shape });
    };
    for (const [name, t] of this.vectors) await put(name, t);
    for (const [module, lin] of this.linears) {
      const merged = tf.tidy(() => {
        const w = lin.adapter ? tf.add(lin.w, tf.mul(tf.matMul(lin.adapter.a, lin.adapter.b), lin.adapter.scale)) : lin.w;
        return this.family.linearLayout === 'in-out' ? tf.clone(w) : tf.transpose(w); // back to nn.Linear's [out, in]
      });
      await put(`${module}.weight`, merged);
      merged.dispose();
      if (lin.b) await put(`${module}.bias`, lin.b);
    }
    if (!this.arch.tiedEmbeddings && this.headT) {
      const t = tf.transpose(this.headT);
      await put(this.family.names.head, t);
      t.dispose();
    }
    return out;
  }
}

/** The model as the learner's gradient code sees it. */
export function hfDifferentiable(model: HfModel): Differentiable {
  return {
    weights: model.weights,
    vocabularySize: model.config.vocabSize,
    logits: (batch, forwardOnly) => tf.tidy(() => model.forward(tf.tensor2d(batch.inputs, [batch.B, batch.T], 'int32'), forwardOnly, !forwardOnly)),
  };
}
