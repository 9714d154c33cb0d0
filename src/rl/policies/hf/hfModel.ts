// The tfjs decoder: a Hugging Face causal language model (qwen2, qwen3, llama, gpt2) in tfjs core ops,
// from a local checkpoint folder, with LoRA adapters or full fine-tuning — the forward pass of the
// tfjs-node(-gpu) and WebGPU backends, and on wasm of what the engine does not run (gpt2, candidate
// scoring). Shapes: B batch, T new positions, Tk keys, D hidden, H query heads, K key/value heads
// (grouped-query attention: query head h reads key/value head h ÷ (H/K)), E head width, F MLP width,
// V vocabulary.
//
// Wasm-minded choices: projections are 2-D products with materialised transposes, attention's batched
// products run on our SIMD kernel, rotate-half is a product with a fixed ±1 permutation matrix. Under LoRA the base weights are plain frozen tensors
// (never variables): no gradient reaches them, and the KL reference is the same base with a frozen copy
// of the adapters (zero at the start), so it costs no second copy of the weights. Embeddings are a gather
// when frozen and a one-hot product when trained (wasm has no gradient for gather).
import * as tf from '@tensorflow/tfjs';
import type { Differentiable } from '../../algo/gradients';
import { batchMatMul } from '../transformer/kernels/batchMatMul';
import { mm, type PolicyModel, type RunOptions } from '../transformer/policyModel';
import { ModelLoadError, outputBias, parameterCount, readHfConfig, ropeInverseFrequencies, type HfArchitecture } from './hfConfig';
import { checkpointTensors, readTensor, type StoredTensor } from './safetensors';

const NEG = -1e9;

export const LORA_TARGETS = {
  qwen2: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  qwen3: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  llama: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  gpt2: ['c_attn', 'c_proj', 'c_fc'],
} as const;

/** Bytes a prefill pass may spend on one layer's attention scores and probabilities. */
export const PREFILL_BUDGET = 512 * 2 ** 20;

export function prefillRowsOf(a: HfArchitecture, contextLength: number): number {
  return Math.max(1, Math.min(32, Math.floor(PREFILL_BUDGET / (a.heads * contextLength * contextLength * 4 * 2))));
}

/** Refuses target names that are not linear layers of the architecture (a typo would train fewer layers silently). */
export function checkLoraTargets(arch: HfArchitecture, targets: readonly string[]): void {
  const known: readonly string[] = LORA_TARGETS[arch.modelType];
  const unknown = targets.filter((t) => t !== 'all-linear' && !known.includes(t));
  if (unknown.length > 0 || targets.length === 0) {
    throw new ModelLoadError(
      `policyOptions.loraTargets: ${unknown.length ? `${unknown.map((t) => JSON.stringify(t)).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a linear layer of a ${arch.modelType} model` : 'no layers given'}. Fix: use some of ${known.join(', ')}, or all-linear`,
    );
  }
}

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

function isLinearName(modelType: HfArchitecture['modelType'], name: string): boolean {
  return (LORA_TARGETS[modelType] as readonly string[]).some((t) => name.endsWith(`.${t}`));
}

/** Reads, converts and shape-checks every weight the architecture needs. */
function loadBase(dir: string, arch: HfArchitecture): Map<string, { data: Float32Array; shape: number[] }> {
  const stored = checkpointTensors(dir);
  const out = new Map<string, { data: Float32Array; shape: number[] }>();
  const D = arch.hidden,
    E = arch.headDim,
    F = arch.intermediate,
    V = arch.vocabSize;
  const take = (canonical: string, shape: number[], alternatives: string[] = []): void => {
    const found = [canonical, ...alternatives].map((n) => stored.get(n)).find((t): t is StoredTensor => t !== undefined);
    if (!found)
      throw new ModelLoadError(
        `${dir}: the checkpoint has no tensor ${canonical}${alternatives.length ? ` (nor ${alternatives.join(', ')})` : ''}; a ${arch.modelType} model of this config.json needs it. Fix: check that config.json belongs to these weights`,
      );
    if (found.shape.join('×') !== shape.join('×')) {
      throw new ModelLoadError(
        `${found.file}: tensor ${found.name} has shape ${found.shape.join('×')}, but config.json (hidden_size ${D}, heads ${arch.heads}, kv heads ${arch.kvHeads}, vocab ${V}) needs ${shape.join('×')}. Fix: check that config.json belongs to these weights`,
      );
    }
    out.set(canonical, { data: readTensor(found), shape });
  };
  if (arch.modelType === 'gpt2') {
    const g = (n: string): string[] => [n.replace(/^transformer\./, '')];
    take('transformer.wte.weight', [V, D], g('transformer.wte.weight'));
    take('transformer.wpe.weight', [arch.maxPositions, D], g('transformer.wpe.weight'));
    for (let l = 0; l < arch.layers; l++) {
      const p = `transformer.h.${l}.`;
      for (const n of ['ln_1', 'ln_2']) {
        take(`${p}${n}.weight`, [D], g(`${p}${n}.weight`));
        take(`${p}${n}.bias`, [D], g(`${p}${n}.bias`));
      }
      take(`${p}attn.c_attn.weight`, [D, 3 * D], g(`${p}attn.c_attn.weight`));
      take(`${p}attn.c_attn.bias`, [3 * D], g(`${p}attn.c_attn.bias`));
      take(`${p}attn.c_proj.weight`, [D, D], g(`${p}attn.c_proj.weight`));
      take(`${p}attn.c_proj.bias`, [D], g(`${p}attn.c_proj.bias`));
      take(`${p}mlp.c_fc.weight`, [D, F], g(`${p}mlp.c_fc.weight`));
      take(`${p}mlp.c_fc.bias`, [F], g(`${p}mlp.c_fc.bias`));
      take(`${p}mlp.c_proj.weight`, [F, D], g(`${p}mlp.c_proj.weight`));
      take(`${p}mlp.c_proj.bias`, [D], g(`${p}mlp.c_proj.bias`));
    }
    take('transformer.ln_f.weight', [D], g('transformer.ln_f.weight'));
    take('transformer.ln_f.bias', [D], g('transformer.ln_f.bias'));
    return out;
  }
  take('model.embed_tokens.weight', [V, D]);
  for (let l = 0; l < arch.layers; l++) {
    const p = `model.layers.${l}.`;
    take(`${p}input_layernorm.weight`, [D]);
    take(`${p}post_attention_layernorm.weight`, [D]);
    take(`${p}self_attn.q_proj.weight`, [arch.heads * E, D]);
    take(`${p}self_attn.k_proj.weight`, [arch.kvHeads * E, D]);
    take(`${p}self_attn.v_proj.weight`, [arch.kvHeads * E, D]);
    take(`${p}self_attn.o_proj.weight`, [D, arch.heads * E]);
    if (arch.qkvBias) {
      take(`${p}self_attn.q_proj.bias`, [arch.heads * E]);
      take(`${p}self_attn.k_proj.bias`, [arch.kvHeads * E]);
      take(`${p}self_attn.v_proj.bias`, [arch.kvHeads * E]);
      if (outputBias(arch)) take(`${p}self_attn.o_proj.bias`, [D]);
    }
    if (arch.qkNorm) {
      take(`${p}self_attn.q_norm.weight`, [E]);
      take(`${p}self_attn.k_norm.weight`, [E]);
    }
    take(`${p}mlp.gate_proj.weight`, [F, D]);
    take(`${p}mlp.up_proj.weight`, [F, D]);
    take(`${p}mlp.down_proj.weight`, [D, F]);
  }
  take('model.norm.weight', [D]);
  if (!arch.tiedEmbeddings) take('lm_head.weight', [V, D]);
  return out;
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
    const base = loadBase(dir, arch);
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
    const targets = lora ? (lora.targets.includes('all-linear') ? [...LORA_TARGETS[arch.modelType]] : lora.targets) : [];
    let s = seed * 7919 + 17;
    for (const name of base.keys()) {
      if (name === 'lm_head.weight') continue; // the head, below
      const isWeight = name.endsWith('.weight');
      const module = name.replace(/\.(weight|bias)$/, '');
      if (isWeight && isLinearName(arch.modelType, module)) {
        const w = tensor(name, arch.modelType !== 'gpt2') as tf.Tensor2D; // nn.Linear [out, in] → [in, out]; Conv1D is [in, out]
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
      } else if (!name.endsWith('.bias') || !isLinearName(arch.modelType, module)) {
        this.vectors.set(name, tensor(name, false));
      }
    }
    if (lora && this.weights.length === 0)
      throw new ModelLoadError(
        `policyOptions.lora.targets ${JSON.stringify(lora.targets)} match no linear layer of this ${arch.modelType} model; its layers: ${LORA_TARGETS[arch.modelType].join(', ')} (or "all-linear")`,
      );
    const embedName = arch.modelType === 'gpt2' ? 'transformer.wte.weight' : 'model.embed_tokens.weight';
    this.embed = this.vectors.get(embedName) as tf.Tensor2D;
    if (arch.modelType === 'gpt2') this.positionsTable = this.vectors.get('transformer.wpe.weight') as tf.Tensor2D;
    if (!arch.tiedEmbeddings) {
      this.headT = tensor('lm_head.weight', true) as tf.Tensor2D;
    } else if (!variables) {
      // a frozen tied embedding: its transpose once (a trained or settable one is transposed per pass)
      this.headT = tf.keep(tf.transpose(this.embed));
      this.owned.push(this.headT);
    }
    if (arch.modelType !== 'gpt2') this.buildRope();
  }

  private buildRope(): void {
    const E = this.arch.headDim;
    const P = this.config.contextLength;
    const inv = ropeInverseFrequencies(this.arch);
    const cos = new Float32Array(P * E);
    const sin = new Float32Array(P * E);
    for (let p = 0; p < P; p++) {
      for (let i = 0; i < E / 2; i++) {
        const angle = p * inv[i]!;
        cos[p * E + i] = cos[p * E + i + E / 2] = Math.cos(angle);
        sin[p * E + i] = sin[p * E + i + E / 2] = Math.sin(angle);
      }
    }
    // rotate_half(x) = [−x₂, x₁] = x · R
    const r = new Float32Array(E * E);
    for (let i = 0; i < E / 2; i++) {
      r[(i + E / 2) * E + i] = -1;
      r[i * E + i + E / 2] = 1;
    }
    this.cos = tf.tensor2d(cos, [P, E]);
    this.sin = tf.tensor2d(sin, [P, E]);
    this.rotation = tf.tensor2d(r, [E, E]);
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
      ref.build(loadBase(this.config.dir, this.arch), 0);
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

  private rmsNorm(x: tf.Tensor2D, name: string): tf.Tensor2D {
    const ms = tf.mean(tf.square(x), -1, true);
    return tf.mul(tf.mul(x, tf.rsqrt(tf.add(ms, this.arch.normEps))), this.vectors.get(name)!);
  }

  /** RMSNorm over the last axis of [B, heads, T, E] with an [E] gain. */
  private headNorm(x: tf.Tensor4D, name: string): tf.Tensor4D {
    const ms = tf.mean(tf.square(x), -1, true);
    return tf.mul(tf.mul(x, tf.rsqrt(tf.add(ms, this.arch.normEps))), this.vectors.get(name)!);
  }

  private layerNorm(x: tf.Tensor2D, prefix: string): tf.Tensor2D {
    const mean = tf.mean(x, -1, true);
    const c = tf.sub(x, mean);
    const variance = tf.mean(tf.square(c), -1, true);
    return tf.add(tf.mul(tf.mul(c, tf.rsqrt(tf.add(variance, this.arch.normEps))), this.vectors.get(`${prefix}.weight`)!), this.vectors.get(`${prefix}.bias`)!);
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
    const gpt2 = a.modelType === 'gpt2';
    // a finished row of a sampling batch still steps (its id ignored) and may count past the last position
    positions = tf.minimum(positions, this.config.contextLength - 1);
    let x = this.lookup(this.embed, ids);
    if (gpt2) x = tf.add(x, this.lookup(this.positionsTable!, positions));
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
    const cos = gpt2 ? undefined : tf.reshape<tf.Rank.R4>(tf.gather(this.cos!, flatPos), [B, 1, T, E]);
    const sin = gpt2 ? undefined : tf.reshape<tf.Rank.R4>(tf.gather(this.sin!, flatPos), [B, 1, T, E]);
    const heads = (m: tf.Tensor2D, n: number): tf.Tensor4D => tf.transpose(tf.reshape(m, [B, T, n, E]), [0, 2, 1, 3]);
    const ks: tf.Tensor4D[] = [];
    const vs: tf.Tensor4D[] = [];
    const block = (l: number, x: tf.Tensor2D): [tf.Tensor2D, tf.Tensor4D, tf.Tensor4D] => {
      let q: tf.Tensor4D, kNew: tf.Tensor4D, vNew: tf.Tensor4D, out: string;
      if (gpt2) {
        const p = `transformer.h.${l}.`;
        const qkv = this.linear(this.layerNorm(x, `${p}ln_1`), `${p}attn.c_attn`, training);
        const [qm, km, vm] = tf.split(qkv, 3, 1) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
        [q, kNew, vNew] = [heads(qm, H), heads(km, K), heads(vm, K)];
        out = `${p}attn.c_proj`;
      } else {
        const p = `model.layers.${l}.`;
        const h = this.rmsNorm(x, `${p}input_layernorm.weight`);
        let qh = heads(this.linear(h, `${p}self_attn.q_proj`, training), H);
        let kh = heads(this.linear(h, `${p}self_attn.k_proj`, training), K);
        if (a.qkNorm) {
          // Qwen3: RMSNorm over each head's width, before the rotation
          qh = this.headNorm(qh, `${p}self_attn.q_norm.weight`);
          kh = this.headNorm(kh, `${p}self_attn.k_norm.weight`);
        }
        q = this.rope(qh, cos!, sin!);
        kNew = this.rope(kh, cos!, sin!);
        vNew = heads(this.linear(h, `${p}self_attn.v_proj`, training), K);
        out = `${p}self_attn.o_proj`;
      }
      const kT = tf.transpose(kNew, [0, 1, 3, 2]); // [B, K, E, T]
      const k = past ? tf.concat([past.k[l]!, kT], 3) : kT;
      const v = past ? tf.concat([past.v[l]!, vNew], 2) : vNew;
      const qg = tf.reshape(tf.mul(q, 1 / Math.sqrt(E)), [B, K, G * T, E]);
      const raw = batchMatMul(qg, k); // [B, K, G·T, Tk]
      const scores = groupMask ? tf.add(raw, groupMask) : raw;
      const att = tf.reshape(batchMatMul(tf.softmax(scores) as tf.Tensor4D, v), [B, H, T, E]);
      const merged = tf.reshape<tf.Rank.R2>(tf.transpose(att, [0, 2, 1, 3]), [B * T, H * E]);
      const y = tf.add<tf.Tensor2D>(x, this.linear(merged, out, training));
      return [this.mlp(y, l, training), k, v];
    };
    for (let l = 0; l < a.layers; l++) {
      const [y, k, v] = scoped ? tf.tidy(() => block(l, x)) : block(l, x);
      x = y;
      ks.push(k);
      vs.push(v);
    }
    // a prefill needs the last position's logits only: [B·T, V] of a real vocabulary is gigabytes
    if (lastOnly && T > 1) x = tf.reshape(tf.slice(tf.reshape(x, [B, T, -1]), [0, T - 1, 0], [B, 1, -1]), [B, -1]);
    const f = gpt2 ? this.layerNorm(x, 'transformer.ln_f') : this.rmsNorm(x, 'model.norm.weight');
    const head = this.headT ?? tf.transpose(this.embed); // trained tied embedding: its transpose, per pass
    const logits = this.trainsBase ? mm(f, head) : frozenMatMul(f, head);
    return { logits: tf.reshape(logits, [B, lastOnly ? 1 : T, a.vocabSize]), k: ks, v: vs };
  }

  private mlp(x: tf.Tensor2D, l: number, training: boolean): tf.Tensor2D {
    if (this.arch.modelType === 'gpt2') {
      const p = `transformer.h.${l}.`;
      const h = this.linear(this.layerNorm(x, `${p}ln_2`), `${p}mlp.c_fc`, training);
      // gelu_new: ½x(1 + tanh(√(2/π)(x + 0.044715x³)))
      const g = tf.mul(tf.mul(h, 0.5), tf.add(1, tf.tanh(tf.mul(Math.sqrt(2 / Math.PI), tf.add(h, tf.mul(0.044715, tf.pow(h, 3)))))));
      return tf.add(x, this.linear(g as tf.Tensor2D, `${p}mlp.c_proj`, training));
    }
    const p = `model.layers.${l}.`;
    const h = this.rmsNorm(x, `${p}post_attention_layernorm.weight`);
    const gate = this.linear(h, `${p}mlp.gate_proj`, training);
    const up = this.linear(h, `${p}mlp.up_proj`, training);
    return tf.add(x, this.linear(tf.mul<tf.Tensor2D>(tf.mul(gate, tf.sigmoid(gate)), up), `${p}mlp.down_proj`, training));
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
    if (this.headT && !this.arch.tiedEmbeddings) out.set('lm_head.weight', this.headT);
    return out;
  }

  /** The merged weights of the model (W + scale·A·B for adapted layers) in the checkpoint's own names and layouts, for export. */
  /** Full fine-tuning: every weight in the checkpoint's names and layouts (a Hugging Face folder's); undefined under LoRA. */
  async hfTensors(): Promise<Map<string, { data: Float32Array; shape: number[] }> | undefined> {
    return this.mode === 'full' ? this.mergedTensors() : undefined;
  }

  async mergedTensors(): Promise<Map<string, { data: Float32Array; shape: number[] }>> {
    const out = new Map<string, { data: Float32Array; shape: number[] }>();
    const put = async (name: string, t: tf.Tensor): Promise<void> => {
      out.set(name, { data: (await t.data()) as Float32Array, shape: t.shape });
    };
    for (const [name, t] of this.vectors) await put(name, t);
    for (const [module, lin] of this.linears) {
      const merged = tf.tidy(() => {
        const w = lin.adapter ? tf.add(lin.w, tf.mul(tf.matMul(lin.adapter.a, lin.adapter.b), lin.adapter.scale)) : lin.w;
        return this.arch.modelType === 'gpt2' ? tf.clone(w) : tf.transpose(w); // back to nn.Linear's [out, in]
      });
      await put(`${module}.weight`, merged);
      merged.dispose();
      if (lin.b) await put(`${module}.bias`, lin.b);
    }
    if (!this.arch.tiedEmbeddings && this.headT) {
      const t = tf.transpose(this.headT);
      await put('lm_head.weight', t);
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
