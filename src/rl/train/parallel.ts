// Data parallelism for the learner: a list dealt out to the policy's compute units (part 0 = this
// thread, the others helper replicas), every part asked at once, results back in part order.
import * as tf from '@tensorflow/tfjs';
import { splitShards, type LossInput, type LossStats } from '../algo/batch';
import type { LossSpec } from '../algo/objective';
import type { TrainablePolicy } from '../policies/policy';

/** Fewest sequences per part worth sharding for (below it, part 0 does the whole minibatch). */
const MIN_SHARD = 2;

/** The parts a list is dealt out to: one per compute unit when each gets at least MIN_SHARD, else all on part 0. */
export function partsOf<T>(items: readonly T[], parallelism: number): T[][] {
  return parallelism > 1 && items.length >= MIN_SHARD * parallelism ? splitShards(items, parallelism) : [[...items]];
}

/**
 * Runs `fn` on every part at once and returns the results in part order. Part 0 computes on this
 * thread and holds it until done, so the other parts' requests are sent first (highest first).
 */
export function allParts<T, R>(parts: readonly T[], fn: (part: T, k: number) => Promise<R>): Promise<R[]> {
  const started: Promise<R>[] = new Array<Promise<R>>(parts.length);
  for (let k = parts.length - 1; k >= 0; k--) started[k] = fn(parts[k]!, k);
  return Promise.all(started);
}

export interface PartGradients {
  readonly grads: tf.Tensor[];
  readonly stats: LossStats;
}

/** Every part's gradient at once; when one part fails, the others' gradients are freed before the error is raised. */
export async function allGradients(policy: TrainablePolicy, parts: readonly LossInput[][], spec: LossSpec): Promise<PartGradients[]> {
  const started: Promise<PartGradients>[] = new Array<Promise<PartGradients>>(parts.length);
  for (let k = parts.length - 1; k >= 0; k--) started[k] = policy.gradients(k, parts[k]!, spec);
  const settled = await Promise.allSettled(started);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    for (const r of settled) if (r.status === 'fulfilled') tf.dispose(r.value.grads);
    throw failed.reason;
  }
  return settled.map((r) => (r as PromiseFulfilledResult<PartGradients>).value);
}
