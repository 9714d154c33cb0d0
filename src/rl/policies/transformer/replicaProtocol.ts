// Messages between the policy (main thread) and a helper replica thread. Arrays of numbers travel as
// typed arrays (transferred, not copied, where the sender no longer needs them). Gradient and log-prob
// requests carry the learner's own data (sequences, loss inputs, the loss as a `LossSpec`), so a
// helper runs exactly the code the main thread runs (rl/train/gradients.ts).
import type { LossSpec } from '../../algo/objective';
import type { ActionGrammarName } from '../../envs/actionGrammar';
import type { StopTest } from '../../envs/parsers';
import type { LossInput, LossStats, TrainSequence } from '../../algo/batch';
import type { GptConfig } from './model';
import type { SampledSequence } from './sampler';

/** Sampling options that can cross a thread boundary (the env's stop predicate is rebuilt from its name). */
export interface PortableSampleOptions {
  readonly temperature: number;
  readonly topK: number;
  readonly topP: number;
  readonly maxNewTokens: number;
  readonly stop: readonly string[];
  /** The named stop test that applies (envs/parsers STOP_TESTS), if any: a function cannot cross to the thread. */
  readonly stopTest?: StopTest;
  /** The named action grammar of constrained decoding (envs/actionGrammar ACTION_GRAMMARS), if any. */
  readonly grammar?: ActionGrammarName;
}

export type ReplicaRequest =
  | { readonly kind: 'init'; readonly backend: string; readonly model: GptConfig; readonly tokenizer: { kind: string; [k: string]: unknown } }
  | { readonly kind: 'weights'; readonly which: 'model' | 'reference'; readonly weights: Float32Array[] }
  | { readonly kind: 'grads'; readonly inputs: readonly LossInput[]; readonly spec: LossSpec }
  | {
      readonly kind: 'logprobs';
      readonly seqs: readonly TrainSequence[];
      readonly model: 'current' | 'reference';
      readonly temperature: number;
      readonly rows: boolean;
    }
  /** `rowSeeds`: one stream per prompt (the concurrent schedule) instead of one for the shard (`seed`). */
  | {
      readonly kind: 'sample';
      readonly prompts: readonly (readonly number[])[];
      readonly options: PortableSampleOptions;
      readonly seed: number;
      readonly rowSeeds?: readonly number[];
    };

export type ReplicaReply =
  | { readonly kind: 'ok' }
  | { readonly kind: 'grads'; readonly grads: Float32Array[]; readonly stats: LossStats }
  | { readonly kind: 'logprobs'; readonly logp: Float32Array[]; readonly rows?: Float32Array[] }
  | { readonly kind: 'sample'; readonly sequences: SampledSequence[] }
  | { readonly kind: 'error'; readonly message: string };
