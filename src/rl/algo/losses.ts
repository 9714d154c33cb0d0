// Loss pieces as small pure functions over plain numbers, each with its derivative, so a policy can
// assemble exact gradients and tests can check them against hand-computed values.

/** log-softmax of one row of logits: [A] → [A]. Stable (max subtracted). */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] as number);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] as number) - max);
  const lse = max + Math.log(sum);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = (logits[i] as number) - lse;
  return out;
}

/** Entropy −Σ p log p of a distribution given by its log-probs [A]. */
export function entropy(logp: ArrayLike<number>): number {
  let h = 0;
  for (let i = 0; i < logp.length; i++) {
    const l = logp[i] as number;
    if (l > -Infinity) h -= Math.exp(l) * l;
  }
  return h;
}

export interface SurrogateTerm {
  /** ratio = exp(logp − oldLogp) */
  readonly ratio: number;
  /** min(ratio·A, clip(ratio, 1−εlow, 1+εhigh)·A) — to be maximised. */
  readonly objective: number;
  /** ∂objective/∂logp: ratio·A on the unclipped branch, 0 where the clipped branch is taken. */
  readonly dLogp: number;
  /** The clipped branch is active (the term stops pushing): ratio > 1+εhigh with A > 0, or < 1−εlow with A < 0. */
  readonly clippedHigh: boolean;
  readonly clippedLow: boolean;
}

/** PPO/GRPO clipped surrogate for one action (or token). */
export function clippedSurrogate(logp: number, oldLogp: number, advantage: number, epsLow: number, epsHigh = epsLow): SurrogateTerm {
  const ratio = Math.exp(logp - oldLogp);
  const clipped = Math.min(Math.max(ratio, 1 - epsLow), 1 + epsHigh);
  const unclippedObj = ratio * advantage;
  const clippedObj = clipped * advantage;
  // min() picks the clipped branch only when it is strictly smaller: then the gradient is 0.
  const useClipped = clippedObj < unclippedObj;
  return {
    ratio,
    objective: useClipped ? clippedObj : unclippedObj,
    dLogp: useClipped ? 0 : unclippedObj,
    clippedHigh: useClipped && advantage > 0,
    clippedLow: useClipped && advantage < 0,
  };
}

export interface KlTerm {
  /** KL(π‖π_ref) = Σ_a π(a)(log π(a) − log π_ref(a)), exact over the whole action distribution. */
  readonly kl: number;
  /** [A] ∂KL/∂logits_c = π(c)(log π(c) − log π_ref(c) − KL) for π = softmax(logits). */
  readonly dLogits: Float64Array;
}

/** Exact KL between two categorical distributions given as log-probs, with its gradient w.r.t. the logits of the first. */
export function exactKl(logp: ArrayLike<number>, refLogp: ArrayLike<number>): KlTerm {
  let kl = 0;
  const n = logp.length;
  for (let i = 0; i < n; i++) {
    const l = logp[i] as number;
    kl += Math.exp(l) * (l - (refLogp[i] as number));
  }
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const l = logp[i] as number;
    d[i] = Math.exp(l) * (l - (refLogp[i] as number) - kl);
  }
  return { kl, dLogits: d };
}

/** ∂ log softmax(logits)[a] / ∂ logits = onehot(a) − π: [A]. */
export function dLogpDLogits(logp: ArrayLike<number>, action: number): Float64Array {
  const d = new Float64Array(logp.length);
  for (let i = 0; i < logp.length; i++) d[i] = (i === action ? 1 : 0) - Math.exp(logp[i] as number);
  return d;
}
