// What the language-model policy needs of a decoder, whichever computes it: the tfjs decoder
// (hf/hfModel.ts, on tfjs-node, WebGPU, or wasm for what the engine does not run) with its forward pass
// over a tfjs KV cache, or the engine (hf/engine) with its own decoding sessions. Shapes: B batch,
// T new positions, Tk keys, V vocabulary.
import * as tf from '@tensorflow/tfjs';
import type { BaseWeights } from '../../../../shared/baseWeights';

/** Keys and values of every layer for the tokens seen so far: keys [B, H, E, Tpast] (transposed), values [B, H, Tpast, E]. */
export interface KvCache {
  readonly k: tf.Tensor4D[];
  readonly v: tf.Tensor4D[];
  /** [B, Tpast] 1 for real tokens, 0 for left padding. */
  readonly keyMask: tf.Tensor2D;
}

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

/** A row of a step's logits [B, V] to draw from, with what the sampler decided for it. */
export interface RowDraw {
  /** The row's index in the logits. */
  readonly row: number;
  /** The draw's uniform (rng.next()): the token is where the walk over the cumulative distribution ends; absent: the row's first maximum. */
  readonly u?: number;
  /** Sets the row's disallowed logits to −∞ in place (a grammar's), on the drawer's own copy. */
  readonly mask?: (row: Float32Array) => void;
}

/** A drawn row: its token, and log Σ exp(z·inv) over the (masked) row as logSumExp computes it (max + log Σ exp(z·inv − max)). */
export interface DrawnRow {
  readonly token: number;
  readonly lse: number;
}

export interface CausalLm {
  readonly config: { readonly vocabSize: number; readonly contextLength: number };
  /** The tfjs forward pass on `ids` [B, T] at `positions` [B, T]. Absent: the model decodes through `session`. */
  run?(ids: tf.Tensor2D, positions: tf.Tensor2D, o?: RunOptions): { logits: tf.Tensor3D; k: tf.Tensor4D[]; v: tf.Tensor4D[] };
  /**
   * A model with its own decoding (the engine): prefills `prompts` into a cache of `capacity` positions
   * per row; the session holds the last logits [B·V] and steps one token per row.
   */
  session?(
    prompts: readonly (readonly number[])[],
    capacity: number,
  ): Promise<{
    readonly logits: Float32Array;
    step(tokens: readonly number[]): Promise<Float32Array>;
    /** The sampler's draw over rows of the logits in the model's own threads (the engine's), as sampleRow draws it; absent: on the main thread. */
    drawRows?(logits: Float32Array, rows: readonly RowDraw[], inv: number): DrawnRow[];
    dispose(): void;
  }>;
  /** Rows one session holds at `capacity` positions (its memory plan's KV cache); more are sampled in turn. */
  sessionRows?(capacity: number): number;
  /** Rows a prefill pass takes at once (attention scores are rows × heads × L × L per layer). */
  readonly prefillRows?: number;
}

/** A decoder as the language-model policy trains it: trainable weights in a fixed order, and a serialisable config. */
export interface PolicyModel extends CausalLm {
  /** The trainable weights (checkpoints and optimizers rely on the order). */
  readonly weights: readonly tf.Variable[];
  readonly names: readonly string[];
  parameterCount(): number;
  /** How it holds its weights (the frozen base under LoRA: q8 blocks, bf16 or f32; f32 under full fine-tuning): recorded with the run and its checkpoints. */
  readonly baseWeights?: BaseWeights;
  /** Copies the trainable weights of a model of the same shape (KL reference, weight sync). */
  copyFrom(other: PolicyModel): void;
  /** Called after the trainable weights were changed in place (an update, a restored checkpoint). */
  weightsChanged?(): void;
  /** A Hugging Face model under full fine-tuning: every weight as a checkpoint folder holds it (undefined under LoRA). */
  hfTensors?(): Promise<Map<string, { data: Float32Array; shape: number[] }> | undefined>;
  /** Frees its tensors (and an engine's threads: the promise settles when they are gone). */
  dispose(): void | Promise<void>;
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
