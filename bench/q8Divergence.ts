// KL(q8 ‖ bfloat16) per token for bench/seed000Scale.ts (issue 50, item 3): the engine at q8 against
// the same engine at bfloat16 on the same sequences, both with the same (fresh) adapters, every position's
// full next-token distribution compared.
import type { EngineModel } from '../src/rl/policies/lm/models/engine/engineModel';

/** log-softmax of row `r` of logits [rows, V] into `out` (float64: the sums of 151,936 terms). */
function logSoftmax(logits: Float32Array, r: number, V: number, out: Float64Array): void {
  let max = -Infinity;
  for (let v = 0; v < V; v++) max = Math.max(max, logits[r * V + v]!);
  let sum = 0;
  for (let v = 0; v < V; v++) sum += Math.exp(logits[r * V + v]! - max);
  const lse = max + Math.log(sum);
  for (let v = 0; v < V; v++) out[v] = logits[r * V + v]! - lse;
}

/** KL(p ‖ q) = Σ_v p_v (log p_v − log q_v) of each position, p and q as log-probs [V]. */
export function klOf(lp: Float64Array, lq: Float64Array): number {
  let kl = 0;
  for (let v = 0; v < lp.length; v++) kl += Math.exp(lp[v]!) * (lp[v]! - lq[v]!);
  return kl;
}

/** KL(q8 ‖ bf16) at every position of `sequences` (nats): mean, max and how many positions. */
export async function q8Divergence(
  q8: EngineModel,
  bf16: EngineModel,
  sequences: readonly (readonly number[])[],
): Promise<{ mean: number; max: number; positions: number }> {
  const V = q8.arch.vocabSize;
  const lp = new Float64Array(V),
    lq = new Float64Array(V);
  const kls: number[] = [];
  for (const ids of sequences) {
    const p = await q8.positionLogits(ids),
      q = await bf16.positionLogits(ids); // [L, V] each
    for (let r = 0; r < ids.length; r++) {
      logSoftmax(p, r, V, lp);
      logSoftmax(q, r, V, lq);
      kls.push(klOf(lp, lq));
    }
  }
  return { mean: kls.reduce((a, b) => a + b, 0) / kls.length, max: Math.max(...kls), positions: kls.length };
}
