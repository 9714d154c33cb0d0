// A GPT-style decoder in tfjs core ops: token and position embeddings, pre-norm blocks (causal
// multi-head attention + GELU MLP), final layer norm, tied or untied output head. Built for the wasm
// backend's limits: embeddings are one-hot matrix products (wasm has no gradient for gather), the
// one-hot is built as int32 and cast (float one-hot is wrong on wasm), projections are 2-D matmuls with
// materialised transposes (XNNPACK), and attention's batched products run on our SIMD kernel (kernels/).
// Shapes: B batch, T time, D width, H heads, E = D / H head width, V vocabulary, P context length.
import * as tf from '@tensorflow/tfjs';
import type { Differentiable } from '../../algo/gradients';
import { batchMatMul } from './kernels/batchMatMul';
import { fromHeads, toHeads } from './kernels/heads';
import { decodeAttention, fusedGelu, fusedLayerNorm, gelu, layerNorm, type KvArena } from './kernels/decoding';

export interface GptConfig {
  readonly vocabSize: number;
  /** Longest sequence (positions 0 … P−1). */
  readonly contextLength: number;
  readonly dModel: number;
  readonly nLayers: number;
  readonly nHeads: number;
  readonly mlpRatio: number;
  /** Output head shares the token embedding (transposed). */
  readonly tiedHead: boolean;
}

/**
 * Keys and values of every layer for the tokens seen so far: keys transposed, [B, H, E, Tpast] (the
 * layout Q·Kᵀ consumes, so a decoding step transposes only its new key), values [B, H, Tpast, E].
 */
export interface KvCache {
  readonly k: tf.Tensor4D[];
  readonly v: tf.Tensor4D[];
  /** [B, Tpast] 1 for real tokens, 0 for left padding. */
  readonly keyMask: tf.Tensor2D;
}

const NEG = -1e9;

/**
 * What the sampler needs of a decoder: `run` over new ids after a tfjs KV cache, and where the fused
 * wasm decoding kernels apply (the small GPT), its head width and the fused step.
 */
/** A decoder pass's options: what it attends to, what it keeps, what it returns. */
export interface RunOptions {
  /** [B, Tpast + T] 1 = real token, 0 = padding (never attended to); absent: every position is real. */
  readonly keyMask?: tf.Tensor2D;
  /** The keys and values of the tokens before `ids`. */
  readonly past?: KvCache;
  /** Free each layer's intermediates when it is done (inference only: no gradient through it). */
  readonly scoped?: boolean;
  /** Logits of each row's last position only ([B, 1, V]), as a prefill needs. */
  readonly lastOnly?: boolean;
  /** A training pass (adapter dropout applies). */
  readonly training?: boolean;
}

export interface CausalLm {
  readonly config: { readonly vocabSize: number; readonly contextLength: number };
  /** Head width when the fused decoding kernels (kernels/decoding.ts) can run this model; else undefined. */
  readonly fusedHeadDim: number | undefined;
  /** The tfjs forward pass on `ids` [B, T] at `positions` [B, T]. Absent: the model decodes through `session`. */
  run?(ids: tf.Tensor2D, positions: tf.Tensor2D, o?: RunOptions): { logits: tf.Tensor3D; k: tf.Tensor4D[]; v: tf.Tensor4D[] };
  /**
   * A model with its own decoding (the Hugging Face engine): prefills `prompts` into a cache of
   * `capacity` positions per row; the session holds the last logits [B·V] and steps one token per row.
   */
  session?(
    prompts: readonly (readonly number[])[],
    capacity: number,
  ): Promise<{ readonly logits: Float32Array; step(tokens: readonly number[]): Promise<Float32Array>; dispose(): void }>;
  /** Rows one session holds at `capacity` positions (its memory plan's KV cache); more are sampled in turn. */
  sessionRows?(capacity: number): number;
  /** Rows a prefill pass takes at once (attention scores are rows × heads × L × L per layer). */
  readonly prefillRows?: number;
  decode?(ids: tf.Tensor2D, positions: tf.Tensor2D, arena: KvArena, head: tf.Tensor2D): tf.Tensor2D;
  headWeight?(): tf.Tensor2D;
}

/**
 * 2-D matmul whose gradient materialises the transposes first: on wasm only plain, non-transposed
 * 2-D products reach XNNPACK, and autodiff of tf.matMul emits transposed ones (a slow scalar loop).
 * a [M, K] · b [K, N] → [M, N]; ∂a = dy · bᵀ, ∂b = aᵀ · dy.
 */
export const mm = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [a, b, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.GradSaveFunc];
  save([a, b]);
  return {
    value: tf.matMul(a, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sa, sb] = saved as [tf.Tensor2D, tf.Tensor2D];
      return [tf.matMul(dy, tf.transpose(sb)), tf.matMul(tf.transpose(sa), dy)];
    },
  };
}) as (a: tf.Tensor2D, b: tf.Tensor2D) => tf.Tensor2D;

/** Σ over rows of m [M, N] → [N], as the product 1ᵀ·m (XNNPACK), not tf.sum over axis 0 (tfjs-wasm
 * transposes, then reduces in a scalar loop: a third of a training step's time went there). */
function sumRows(m: tf.Tensor2D): tf.Tensor1D {
  return tf.reshape(tf.matMul(tf.ones([1, m.shape[0]]), m), [m.shape[1]]);
}

/** x [M, N] · g [N] + b [N] (per-column gain and bias) whose gradients for g and b are row sums. */
export const affine = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, g, b, save] = args as [tf.Tensor2D, tf.Tensor1D, tf.Tensor1D, tf.GradSaveFunc];
  save([x, g]);
  return {
    value: tf.add(tf.mul(x, g), b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [sx, sg] = saved as [tf.Tensor2D, tf.Tensor1D];
      return [tf.mul(dy, sg), sumRows(tf.mul<tf.Tensor2D>(dy, sx)), sumRows(dy as tf.Tensor2D)];
    },
  };
}) as (x: tf.Tensor2D, g: tf.Tensor, b: tf.Tensor) => tf.Tensor2D;

/** x [M, N] + b [N] whose bias gradient is a row sum. */
export const addBias = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
  const [x, b] = args as [tf.Tensor2D, tf.Tensor1D];
  return {
    value: tf.add(x, b),
    gradFunc: (dy: tf.Tensor) => [dy, sumRows(dy as tf.Tensor2D)],
  };
}) as (x: tf.Tensor2D, b: tf.Tensor) => tf.Tensor2D;

/** Layer norm in tfjs ops (backends without our kernels): (x − mean)/√(var + 1e-5)·g + b per row. */
function layerNormOps(x: tf.Tensor2D, g: tf.Tensor, b: tf.Tensor): tf.Tensor2D {
  const mean = tf.mean(x, -1, true);
  const centered = tf.sub(x, mean);
  const variance = tf.mean(tf.square(centered), -1, true);
  return affine(tf.mul(centered, tf.rsqrt(tf.add(variance, 1e-5))), g, b);
}

/** A decoder as the language-model policy trains it: trainable weights in a fixed order, and a serialisable config. */
export interface PolicyModel extends CausalLm {
  /** The trainable weights (checkpoints and optimizers rely on the order). */
  readonly weights: readonly tf.Variable[];
  readonly names: readonly string[];
  parameterCount(): number;
  /** Copies the trainable weights of a model of the same shape (KL reference, weight sync). */
  copyFrom(other: PolicyModel): void;
  /** Called after the trainable weights were changed in place (an update, a restored checkpoint). */
  weightsChanged?(): void;
  /** A Hugging Face model under full fine-tuning: every weight as a checkpoint folder holds it (undefined under LoRA). */
  hfTensors?(): Promise<Map<string, { data: Float32Array; shape: number[] }> | undefined>;
  dispose(): void;
}

export class Gpt implements PolicyModel {
  /** Trainable weights in a fixed order (checkpoints and optimizers rely on it). */
  readonly weights: tf.Variable[] = [];
  private readonly byName = new Map<string, tf.Variable>();
  private readonly maskCache = new Map<number, tf.Tensor2D>();

  constructor(
    readonly config: GptConfig,
    seed = 0,
    trainable = true,
  ) {
    const { vocabSize: V, contextLength: P, dModel: D, nLayers: L, mlpRatio } = config;
    if (D % config.nHeads !== 0) throw new Error(`dModel ${D} is not divisible by nHeads ${config.nHeads}`);
    let s = seed * 1000;
    const normal = (name: string, shape: number[], std: number): void => this.add(name, tf.randomNormal(shape, 0, std, 'float32', ++s), trainable);
    const fill = (name: string, shape: number[], value: number): void => this.add(name, tf.fill(shape, value), trainable);
    normal('wte', [V, D], 0.02);
    normal('wpe', [P, D], 0.01);
    const resid = 0.02 / Math.sqrt(2 * L); // GPT-2: residual projections scaled by depth
    for (let l = 0; l < L; l++) {
      fill(`h${l}.ln1.g`, [D], 1);
      fill(`h${l}.ln1.b`, [D], 0);
      normal(`h${l}.attn.wqkv`, [D, 3 * D], 0.02);
      fill(`h${l}.attn.bqkv`, [3 * D], 0);
      normal(`h${l}.attn.wo`, [D, D], resid);
      fill(`h${l}.attn.bo`, [D], 0);
      fill(`h${l}.ln2.g`, [D], 1);
      fill(`h${l}.ln2.b`, [D], 0);
      normal(`h${l}.mlp.w1`, [D, mlpRatio * D], 0.02);
      fill(`h${l}.mlp.b1`, [mlpRatio * D], 0);
      normal(`h${l}.mlp.w2`, [mlpRatio * D, D], resid);
      fill(`h${l}.mlp.b2`, [D], 0);
    }
    fill('lnf.g', [D], 1);
    fill('lnf.b', [D], 0);
    if (!config.tiedHead) normal('head', [D, V], 0.02);
  }

  private add(name: string, init: tf.Tensor, trainable: boolean): void {
    const v = tf.variable(init, trainable, `${name}_${Math.random().toString(36).slice(2, 8)}`);
    init.dispose();
    this.weights.push(v);
    this.byName.set(name, v);
  }

  w(name: string): tf.Variable {
    const v = this.byName.get(name);
    if (!v) throw new Error(`no weight ${name}`);
    return v;
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  get fusedHeadDim(): number {
    return this.config.dModel / this.config.nHeads;
  }

  parameterCount(): number {
    return this.weights.reduce((n, v) => n + v.size, 0);
  }

  /** Copies every weight from another model of the same shape (reference snapshots, weight sync). */
  copyFrom(other: PolicyModel): void {
    other.weights.forEach((v, i) => this.weights[i]!.assign(v));
  }

  dispose(): void {
    for (const v of this.weights) v.dispose();
    for (const m of this.maskCache.values()) m.dispose();
    this.maskCache.clear();
  }

  private layerNorm(x: tf.Tensor2D, prefix: string): tf.Tensor2D {
    return layerNorm(x, this.w(`${prefix}.g`), this.w(`${prefix}.b`), layerNormOps);
  }

  /** [B·T] int ids → [B·T, n] float one-hot (built as int32, then cast: float one-hot is wrong on wasm). */
  private oneHot(ids: tf.Tensor, n: number): tf.Tensor2D {
    return tf.cast(tf.oneHot(tf.cast<tf.Tensor1D>(tf.reshape(ids, [-1]), 'int32'), n) as tf.Tensor2D, 'float32');
  }

  /**
   * Additive causal mask [T, Tk] for T new queries after `Tk − T` cached keys: 0 allowed, −1e9 masked;
   * undefined for a single new query (it may see every key). Masks without a past are cached per length
   * (at most contextLength of them); others are built per call and freed with the caller's scope.
   */
  private causalMask(T: number, Tk: number): tf.Tensor2D | undefined {
    if (T === 1) return undefined;
    const build = (): tf.Tensor2D => {
      const past = Tk - T;
      const data = new Float32Array(T * Tk);
      for (let i = 0; i < T; i++) for (let j = 0; j < Tk; j++) data[i * Tk + j] = j <= i + past ? 0 : NEG;
      return tf.tensor2d(data, [T, Tk]);
    };
    if (Tk !== T) return build();
    let m = this.maskCache.get(T);
    if (!m) {
      m = tf.keep(build());
      this.maskCache.set(T, m);
    }
    return m;
  }

  /**
   * Runs the decoder on `ids` [B, T] at `positions` [B, T], after the cached keys/values if any.
   * Returns logits [B, T, V] and the new per-layer keys ([B, H, E, Tk]) and values ([B, H, Tk, E]).
   */
  run(
    ids: tf.Tensor2D,
    positions: tf.Tensor2D,
    { keyMask, past, scoped = false, lastOnly = false }: RunOptions = {},
  ): { logits: tf.Tensor3D; k: tf.Tensor4D[]; v: tf.Tensor4D[] } {
    const { dModel: D, nHeads: H, nLayers: L } = this.config;
    const [B, T] = ids.shape;
    const E = D / H;
    let x = this.embed(ids, positions); // [B·T, D]
    const Tk = (past?.k[0]?.shape[3] ?? 0) + T;
    // [1, 1, T, Tk] causal + [B, 1, 1, Tk] padding
    const causal = this.causalMask(T, Tk);
    let mask: tf.Tensor | undefined = causal ? tf.reshape(causal, [1, 1, T, Tk]) : undefined;
    if (keyMask) {
      const pad = tf.reshape(tf.mul(tf.sub(1, keyMask), NEG), [B, 1, 1, Tk]);
      mask = mask ? tf.add(mask, pad) : pad;
    }
    const ks: tf.Tensor4D[] = [];
    const vs: tf.Tensor4D[] = [];
    const block = (l: number, x: tf.Tensor2D): [tf.Tensor2D, tf.Tensor4D, tf.Tensor4D] => {
      // One product with the whole wqkv, then a split of the activation. (Three products with column
      // slices of the weight were faster to train at width 64, but tfjs-wasm slices columns slowly and
      // XNNPACK repacks a weight it has not seen: decoding the 5M model spent half of every step there.)
      const qkv = this.linear(this.layerNorm(x, `h${l}.ln1`), `h${l}.attn.wqkv`, `h${l}.attn.bqkv`); // [B·T, 3D]
      // q|k|v straight into heads, [3, B, H, T, E] (one kernel on wasm: tf.split's column slices are slow there)
      const [q, kNew, vNew] = toHeads(qkv, 3, { B, T, H, E }) as [tf.Tensor4D, tf.Tensor4D, tf.Tensor4D];
      const kT = tf.transpose(kNew, [0, 1, 3, 2]); // [B, H, E, T]
      const k = past ? tf.concat([past.k[l]!, kT], 3) : kT; // [B, H, E, Tk]
      const v = past ? tf.concat([past.v[l]!, vNew], 2) : vNew;
      // Q·Kᵀ with the 1/√E scale folded into Q (T·E products instead of T·Tk), then P·V
      const qs = tf.mul(q, 1 / Math.sqrt(E));
      const raw = batchMatMul(qs, k); // [B, H, T, Tk]
      const scores = mask ? tf.add(raw, mask) : raw;
      const att = batchMatMul(tf.softmax(scores) as tf.Tensor4D, v); // [B, H, T, E]
      const merged = fromHeads([att], { B, T, H, E }); // [B·T, D]
      return [this.mlpBlock(tf.add(x, this.linear(merged, `h${l}.attn.wo`, `h${l}.attn.bo`)), l), k, v];
    };
    for (let l = 0; l < L; l++) {
      // Inference frees each layer's intermediates as it goes (a prefill of 256 × 140 tokens held
      // 2 GB of attention scores otherwise); training keeps them for the backward pass.
      const [y, k, v] = scoped ? tf.tidy(() => block(l, x)) : block(l, x);
      x = y;
      ks.push(k);
      vs.push(v);
    }
    if (lastOnly && T > 1) x = tf.reshape(tf.slice(tf.reshape(x, [B, T, -1]), [0, T - 1, 0], [B, 1, -1]), [B, -1]);
    return { logits: tf.reshape(this.head(x), [B, lastOnly ? 1 : T, this.config.vocabSize]), k: ks, v: vs };
  }

  /**
   * One decoding step on the fused kernels (wasm only; inference, no gradient): ids and positions
   * [B, 1]; every layer's new key and value are written into column `arena.next` of the arena, which
   * then advances. `head` is the output projection [D, V] (headWeight(), made once per batch).
   * Returns logits [B, V].
   */
  decode(ids: tf.Tensor2D, positions: tf.Tensor2D, arena: KvArena, head: tf.Tensor2D): tf.Tensor2D {
    const w = (name: string): tf.Tensor2D => this.w(name) as tf.Tensor2D;
    const norm = (x: tf.Tensor2D, prefix: string): tf.Tensor2D => fusedLayerNorm(x, this.w(`${prefix}.g`), this.w(`${prefix}.b`));
    const linear = (a: tf.Tensor2D, prefix: string, bias: string): tf.Tensor2D => tf.fused.matMul({ a, b: w(prefix), bias: this.w(bias) }) as tf.Tensor2D;
    let x = this.embed(ids, positions); // [B, D]
    for (let l = 0; l < this.config.nLayers; l++) {
      const att = decodeAttention(linear(norm(x, `h${l}.ln1`), `h${l}.attn.wqkv`, `h${l}.attn.bqkv`), arena, l); // [B, D]
      x = tf.add(x, linear(att, `h${l}.attn.wo`, `h${l}.attn.bo`));
      x = tf.add(x, linear(fusedGelu(linear(norm(x, `h${l}.ln2`), `h${l}.mlp.w1`, `h${l}.mlp.b1`)), `h${l}.mlp.w2`, `h${l}.mlp.b2`));
    }
    arena.next += 1;
    return tf.matMul(norm(x, 'lnf'), head);
  }

  /** The output projection as a [D, V] matrix: a new tensor (the transposed embedding) when tied. */
  headWeight(): tf.Tensor2D {
    return this.config.tiedHead ? tf.transpose(this.w('wte') as tf.Tensor2D) : (tf.clone(this.w('head')) as tf.Tensor2D);
  }

  /** Token plus position embedding of ids, positions [B, T] → [B·T, D]. */
  private embed(ids: tf.Tensor2D, positions: tf.Tensor2D): tf.Tensor2D {
    const tok = mm(this.oneHot(ids, this.config.vocabSize), this.w('wte') as tf.Tensor2D);
    return tf.add(tok, mm(this.oneHot(positions, this.config.contextLength), this.w('wpe') as tf.Tensor2D));
  }

  private linear(a: tf.Tensor2D, w: string, b: string): tf.Tensor2D {
    return addBias(mm(a, this.w(w) as tf.Tensor2D), this.w(b));
  }

  /** x + MLP(LN(x)) of layer l: the second half of a block. */
  private mlpBlock(x: tf.Tensor2D, l: number): tf.Tensor2D {
    const m = this.linear(this.layerNorm(x, `h${l}.ln2`), `h${l}.mlp.w1`, `h${l}.mlp.b1`);
    return tf.add(x, this.linear(gelu(m), `h${l}.mlp.w2`, `h${l}.mlp.b2`));
  }

  /** Final layer norm and output head: [N, D] → logits [N, V]. */
  private head(x: tf.Tensor2D): tf.Tensor2D {
    const f = this.layerNorm(x, 'lnf');
    return this.config.tiedHead ? mm(f, tf.transpose(this.w('wte') as tf.Tensor2D)) : mm(f, this.w('head') as tf.Tensor2D);
  }

  /**
   * Full forward: ids [B, T] from position 0 → logits [B, T, V]. `scoped` (forward-only passes) frees
   * each layer's intermediates as it goes instead of when the pass ends.
   */
  forward(ids: tf.Tensor2D, scoped = false): tf.Tensor3D {
    const P = this.config.contextLength;
    if (ids.shape[1] > P)
      throw new Error(`Gpt.forward: ${ids.shape[1]} positions, but the model has ${P} (positions ≥ ${P} have no embedding); cut the sequence first`);
    return tf.tidy(() => {
      const [B, T] = ids.shape;
      const positions = tf.tile<tf.Tensor2D>(tf.reshape(tf.range(0, T, 1, 'int32'), [1, T]), [B, 1]);
      return this.run(ids, positions, { scoped }).logits;
    });
  }
}

/** The model as the learner's gradient code sees it: its weights and the logits of a padded batch of token ids. */
export function gptDifferentiable(model: Gpt): Differentiable {
  return {
    weights: model.weights,
    vocabularySize: model.config.vocabSize,
    logits: (batch, forwardOnly) => tf.tidy(() => model.forward(tf.tensor2d(batch.inputs, [batch.B, batch.T], 'int32'), forwardOnly)),
  };
}
