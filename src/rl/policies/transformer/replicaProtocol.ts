// Messages between the policy (main thread) and a helper replica thread. Arrays of numbers travel as
// typed arrays (transferred, not copied, where the sender no longer needs them).
import type { GptConfig } from './model';
import type { SampledSequence } from './sampler';
import type { ShardLoss, ShardStats } from './shardWork';
import type { TokenSequence } from './tokenLoss';

/** Sampling options that can cross a thread boundary (the env's stop predicate is rebuilt from its name). */
export interface PortableSampleOptions {
  readonly temperature: number;
  readonly topK: number;
  readonly topP: number;
  readonly maxNewTokens: number;
  readonly stop: readonly string[];
  /** Environment whose `stop.when` applies, if any. */
  readonly stopEnv?: string;
}

export type ReplicaRequest =
  | { readonly kind: 'init'; readonly backend: string; readonly model: GptConfig; readonly tokenizer: { kind: string; [k: string]: unknown } }
  | { readonly kind: 'weights'; readonly which: 'model' | 'reference'; readonly weights: Float32Array[] }
  | { readonly kind: 'grads'; readonly seqs: TokenSequence[]; readonly refs?: Float32Array[]; readonly loss: ShardLoss }
  | { readonly kind: 'logprobs'; readonly seqs: TokenSequence[]; readonly temperature: number }
  | { readonly kind: 'sample'; readonly prompts: readonly (readonly number[])[]; readonly options: PortableSampleOptions; readonly seed: number };

export type ReplicaReply =
  | { readonly kind: 'ok' }
  | { readonly kind: 'grads'; readonly grads: Float32Array[]; readonly stats: ShardStats }
  | { readonly kind: 'logprobs'; readonly refs: Float32Array[]; readonly mismatchSum: number; readonly tokens: number }
  | { readonly kind: 'sample'; readonly sequences: SampledSequence[] }
  | { readonly kind: 'error'; readonly message: string };
