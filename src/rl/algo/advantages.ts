// Group-relative advantages (GRPO): A_i = (r_i - mean(r)) / std(r) within one group of episodes of the
// same task. A group whose rewards are all equal carries no signal: every advantage is 0 and the group
// is counted, rather than dividing by a zero (or epsilon) spread.
import type { StdMode } from '../../shared/runConfig';

/** Rewards that differ by less than this are treated as equal (a float-noise guard, not a smoothing term). */
export const ZERO_SPREAD = 1e-12;

export interface GroupAdvantages {
  /** [G] one advantage per trajectory, in input order. */
  readonly advantages: number[];
  readonly mean: number;
  readonly std: number;
  /** True when all rewards were equal and every advantage is 0. */
  readonly zeroVariance: boolean;
}

/** rewards: [G], G ≥ 1 for 'population', G ≥ 2 for 'sample' (Bessel-corrected, n − 1). */
export function groupAdvantages(rewards: readonly number[], std: StdMode): GroupAdvantages {
  const n = rewards.length;
  if (n === 0) throw new Error('groupAdvantages: empty group');
  if (std === 'sample' && n < 2) throw new Error('groupAdvantages: the sample std needs a group of at least 2');
  const mean = rewards.reduce((a, b) => a + b, 0) / n;
  const sq = rewards.reduce((a, r) => a + (r - mean) * (r - mean), 0);
  const sd = Math.sqrt(sq / (std === 'population' ? n : n - 1));
  if (sd < ZERO_SPREAD) return { advantages: rewards.map(() => 0), mean, std: sd, zeroVariance: true };
  return { advantages: rewards.map((r) => (r - mean) / sd), mean, std: sd, zeroVariance: false };
}
