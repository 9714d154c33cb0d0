// Off-policy quantities of one sequence over its trained positions (mask 1): how far the log-probs the
// learner recomputes (π_old) are from those the sampler recorded (π_behaviour), and the truncated
// importance weights min(π_old / π_behaviour, cap) that correct an update for samples drawn from older
// weights (asynchronous rollouts). Per-token arrays in, plain numbers out.

/** Σ |log π_old − log π_behaviour| over trained positions, and how many there are. */
export function logprobGap(current: ArrayLike<number>, behaviour: ArrayLike<number>, mask: ArrayLike<number>): { sum: number; tokens: number } {
  let sum = 0;
  let tokens = 0;
  for (let t = 0; t < mask.length; t++) {
    if (!mask[t]) continue;
    sum += Math.abs(current[t]! - behaviour[t]!);
    tokens += 1;
  }
  return { sum, tokens };
}

/**
 * Per position min(exp(log π_old − log π_behaviour), cap) ([T], 0 where mask is 0), with the sum of the
 * weights, the positions at the cap and the positions weighed.
 */
export function truncatedImportanceWeights(
  current: ArrayLike<number>,
  behaviour: ArrayLike<number>,
  mask: ArrayLike<number>,
  cap: number,
): { weights: Float32Array; sum: number; truncated: number; tokens: number } {
  const weights = new Float32Array(mask.length);
  let sum = 0;
  let truncated = 0;
  let tokens = 0;
  for (let t = 0; t < mask.length; t++) {
    if (!mask[t]) continue;
    // compared with the cap before the float32 store rounds it
    const w = Math.exp(current[t]! - behaviour[t]!);
    weights[t] = Math.min(w, cap);
    sum += Math.min(w, cap);
    truncated += w >= cap ? 1 : 0;
    tokens += 1;
  }
  return { weights, sum, truncated, tokens };
}
