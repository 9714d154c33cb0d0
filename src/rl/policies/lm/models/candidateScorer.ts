// What a decoder offers a candidate-scoring policy (lm/scoringPolicy.ts): the rows a batch of prompts is
// scored as, and the scorer each compute path implements — with tfjs autodiff (the tfjs decoder,
// lm/scoringPolicy.ts's tfjsCandidateScorer) or the engine's own backward pass (engine/engineCandidates.ts).
// It sits with the models so the engine's scorer needs nothing from the policy above it.
import type { Trainable } from '../../../algo/gradients';

/**
 * The rows a batch of prompts is scored as: every prompt followed by every candidate, prompt-major
 * ([P·A] rows), each with the index of its candidate's first id.
 */
export interface CandidateRows {
  readonly rows: readonly { readonly ids: readonly number[]; readonly from: number }[];
  readonly prompts: number;
  readonly actions: number;
  /** s(a, h) is the mean of the candidate's token log-probs (else their sum). */
  readonly mean: boolean;
}

/** How a decoder scores candidate rows: with tfjs autodiff (the tfjs decoder) or its own backward pass (the engine). */
export interface CandidateScorer<M> {
  /** s(a, h) [P·A] of the rows under `model`, without gradient. */
  scores(model: M, c: CandidateRows): Promise<Float32Array>;
  /** The learner's view of `model`: a batch's inputs are prompt ids (`rowsOf` gives their rows), its logits [B, T, actions] their scores. */
  trainable(model: M, actions: number, rowsOf: (prompts: readonly number[]) => CandidateRows): Trainable;
}
