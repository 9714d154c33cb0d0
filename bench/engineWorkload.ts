// The engine's side of the seed 000 training workload, shared by bench/seed000Scale.ts (timed against
// PyTorch) and bench/engineProfile.ts (where the engine's time goes): S random sequences of `len`
// tokens, the last `len − from` trained; the frozen reference's pass, then a training pass (forward,
// backward) and one AdamW step.
import type { AdamW } from '../src/rl/algo/adamw';
import type { TrainSequence } from '../src/rl/algo/trainSequence';
import { shardGradients, shardLogprobs } from '../src/rl/algo/gradients';
import type { EngineModel } from '../src/rl/policies/lm/models/engine/engineModel';
import type { Rng } from '../src/rl/random';

const NLL = { kind: 'nll', aggregation: 'token-mean', normTokens: 1 } as const;

export function randomSequences(rng: Rng, vocab: number, count: number, len: number, from: number): TrainSequence[] {
  return Array.from({ length: count }, () => {
    const ids = Array.from({ length: len + 1 }, () => rng.int(vocab));
    return {
      inputs: ids.slice(0, -1),
      targets: ids.slice(1),
      mask: ids.slice(1).map((_, i) => (i >= from ? 1 : 0)),
      behaviour: ids.slice(1).map(() => 0),
      advantage: 0,
    };
  });
}

/** The reference pass and the training step over `seqs`; seconds in all and of the reference pass. */
export async function engineTrainStep(
  model: EngineModel,
  reference: ReturnType<EngineModel['reference']>,
  optimizer: AdamW,
  seqs: readonly TrainSequence[],
): Promise<{ seconds: number; reference_seconds: number }> {
  const t = performance.now();
  await shardLogprobs(reference.scorer(), seqs, { temperature: 1, rows: false });
  const ref = (performance.now() - t) / 1000;
  const { grads } = await shardGradients(
    model.scorer(),
    seqs.map((seq) => ({ seq })),
    NLL,
  );
  await optimizer.apply(grads, 1e-4);
  grads.forEach((g) => g.dispose());
  model.weightsChanged();
  return { seconds: (performance.now() - t) / 1000, reference_seconds: ref };
}
