// The learner's passes over a policy's weights: rl/algo/gradients.ts on what the policy exposes (its
// weights as a `Trainable` and how much one pass may hold). Tests ask a policy for its log-probs here too.
import type * as tf from '@tensorflow/tfjs';
import type { LossInput, LossStats, TrainSequence } from '../algo/trainSequence';
import { shardGradients, shardLogprobs, type SequenceLogprobs } from '../algo/gradients';
import type { LossSpec } from '../algo/objective';
import type { TrainablePolicy } from '../policies/policy';

/** Log-probs of each sequence's targets under the policy's current weights or its frozen reference (forward only). */
export function policyLogprobs(
  policy: TrainablePolicy,
  seqs: readonly TrainSequence[],
  o: { readonly model: 'current' | 'reference'; readonly temperature: number; readonly rows: boolean },
): Promise<SequenceLogprobs> {
  return shardLogprobs(policy.trainable(o.model), seqs, o, policy.passBudget.logprobs);
}

/** Gradients of `spec`'s loss on these inputs, aligned with the policy's weights (the caller disposes them), and its scalars. */
export function policyGradients(policy: TrainablePolicy, inputs: readonly LossInput[], spec: LossSpec): Promise<{ grads: tf.Tensor[]; stats: LossStats }> {
  return shardGradients(policy.trainable('current'), inputs, spec, policy.passBudget.train);
}
