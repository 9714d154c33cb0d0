// Outcome advantages within a group of episodes of the same task. Every estimator turns the group's
// rewards [G] into one advantage per episode, in input order, and a group whose rewards are all equal
// carries no signal: every advantage is exactly 0 and the group is flagged (never a division by a
// zero, or epsilon-sized, spread).
//   grpo     A_i = (r_i − mean(r)) / (std(r) + ε)      DeepSeekMath; std over the population (÷G) or the
//                                                      sample (÷(G−1))
//   dr-grpo  A_i = r_i − mean(r)                       Dr. GRPO (Liu et al. 2025): no std division, which
//                                                      weighs easy and hard groups by their reward gap
//   rloo     A_i = r_i − mean_{j≠i}(r_j)               RLOO (Ahmadian et al. 2024): leave-one-out baseline,
//                                                      = G/(G−1) · (r_i − mean(r)); unbiased for the gradient
import { ADVANTAGE_ESTIMATORS, type AdvantageEstimator, type StdMode } from '../../shared/algorithm';

export { ADVANTAGE_ESTIMATORS, type AdvantageEstimator };

/** Rewards that differ by less than this are treated as equal (a float-noise guard, not a smoothing term). */
export const ZERO_SPREAD = 1e-12;

export interface AdvantageOptions {
  readonly estimator: AdvantageEstimator;
  /** grpo only. */
  readonly std: StdMode;
  /** grpo only: added to the std before dividing (verl: 1e-6). */
  readonly epsilon: number;
}

export interface GroupAdvantages {
  /** [G] one advantage per trajectory, in input order. */
  readonly advantages: number[];
  readonly mean: number;
  /** The group's spread under the chosen std mode (population for the estimators that use none). */
  readonly std: number;
  /** True when all rewards were equal and every advantage is 0. */
  readonly zeroVariance: boolean;
}

/** rewards: [G], G ≥ 1; G ≥ 2 for the sample std and for RLOO (a leave-one-out mean needs another member). */
export function groupAdvantages(rewards: readonly number[], o: AdvantageOptions): GroupAdvantages {
  const n = rewards.length;
  if (n === 0) throw new Error('groupAdvantages: empty group');
  const useSample = o.estimator === 'grpo' && o.std === 'sample';
  if (useSample && n < 2) throw new Error('groupAdvantages: the sample std needs a group of at least 2');
  if (o.estimator === 'rloo' && n < 2) throw new Error('groupAdvantages: RLOO needs a group of at least 2');
  const mean = rewards.reduce((a, b) => a + b, 0) / n;
  const sq = rewards.reduce((a, r) => a + (r - mean) * (r - mean), 0);
  const sd = Math.sqrt(sq / (useSample ? n - 1 : n));
  if (Math.sqrt(sq / n) < ZERO_SPREAD) return { advantages: rewards.map(() => 0), mean, std: sd, zeroVariance: true };
  let advantages: number[];
  switch (o.estimator) {
    case 'grpo':
      advantages = rewards.map((r) => (r - mean) / (sd + o.epsilon));
      break;
    case 'dr-grpo':
      advantages = rewards.map((r) => r - mean);
      break;
    case 'rloo':
      advantages = rewards.map((r) => r - (mean * n - r) / (n - 1));
      break;
  }
  return { advantages, mean, std: sd, zeroVariance: false };
}
