// A rollout engine's sampled tokens against the trainer's recompute (the llama.cpp tests, float and
// Q8_0): each row's prompt and sampled tokens become one training sequence, the engine scores it, and
// every sampled token's behaviour log-prob is paired with the engine's — what `mismatch` compares.
import type { Trainable } from '../../src/rl/algo/gradients';
import { shardLogprobs } from '../../src/rl/algo/gradients';
import type { TrainSequence } from '../../src/rl/algo/trainSequence';
import { mismatch } from '../../src/rl/policies/lm/rolloutEngines/llamaCpp';
import type { SampledSequence } from '../../src/rl/policies/lm/sampler';

/** The pairs (engine's, sampler's) log-prob of every sampled token, and their mismatch. */
export async function samplerMismatch(
  scorer: Trainable,
  prompts: readonly (readonly number[])[],
  rows: readonly Pick<SampledSequence, 'tokens' | 'logprobs'>[],
): Promise<{ ours: number[]; theirs: number[]; m: ReturnType<typeof mismatch> }> {
  const seqs: TrainSequence[] = rows.map((r, i) => {
    const ids = [...prompts[i]!, ...r.tokens];
    return {
      inputs: ids.slice(0, -1),
      targets: ids.slice(1),
      mask: ids.slice(1).map((_, j) => (j >= prompts[i]!.length - 1 ? 1 : 0)),
      behaviour: ids.slice(1).map(() => 0),
      advantage: 0,
    };
  });
  const { logp } = await shardLogprobs(scorer, seqs, { temperature: 1, rows: false });
  const ours: number[] = [],
    theirs: number[] = [];
  rows.forEach((r, i) => {
    const from = prompts[i]!.length - 1;
    r.logprobs.forEach((lp, j) => {
      theirs.push(lp);
      ours.push(logp[i]![from + j]!);
    });
  });
  return { ours, theirs, m: mismatch(ours, theirs) };
}
