// Re-scoring stored trajectories with a reward (issue 29, part 3): the records that cross from the
// backend or the CLI to the views, and the pure arithmetic of the report — what changed, the mean old
// → new, success flips, the largest differences, high-reward outliers and public-pass/private-fail
// episodes. No I/O here: the CLI, the backend, the host's Markdown and the inspector all read these.

/** One episode's score: the stored one, or a re-score's. */
export interface Score {
  readonly reward: number;
  readonly success: boolean;
  readonly publicPass: boolean;
  readonly privatePass: boolean;
}

/** One trajectory in a re-score: its stored score beside the new one (null when the reward raised). */
export interface RescoreItem {
  readonly trajectoryId: number;
  readonly iteration: number;
  readonly group: number;
  readonly indexInGroup: number;
  readonly taskId: string;
  readonly old: Score;
  readonly new: Score | null;
  /** Why the trajectory could not be scored (the reward raised, the task is gone, a replayed step failed). */
  readonly error: string | null;
}

/** Which reward scored: a file (path and content hash) or an environment's built-in verifier. */
export interface RewardSource {
  /** Absolute path of the reward file, or null for a built-in verifier. */
  readonly file: string | null;
  readonly sha256: string | null;
  /** What the report calls it: "reward.py", "exact_match", "built-in calculator verifier". */
  readonly label: string;
}

export interface RescoreDiff {
  readonly trajectoryId: number;
  readonly iteration: number;
  readonly taskId: string;
  readonly oldReward: number;
  readonly newReward: number;
  readonly delta: number;
  readonly successFlip: 'to success' | 'to failure' | null;
}

export interface RescoreOutlier {
  readonly trajectoryId: number;
  readonly iteration: number;
  readonly reward: number;
  /** The iteration's mean and population standard deviation of the new rewards. */
  readonly mean: number;
  readonly sd: number;
}

export interface RescoreSummary {
  readonly trajectories: number;
  readonly scored: number;
  readonly errors: number;
  /** Trajectories whose reward moved by more than REWARD_EPSILON or whose success flipped. */
  readonly changed: number;
  /** Means over the scored trajectories only (the same set on both sides). */
  readonly oldMean: number;
  readonly newMean: number;
  readonly toSuccess: number;
  readonly toFailure: number;
  /** The largest |new − old| first, at most LARGEST_SHOWN. */
  readonly largest: readonly RescoreDiff[];
  readonly outliers: readonly RescoreOutlier[];
  /** Re-scored episodes that pass the public check and fail the private verifier (the reward-hacking gap). */
  readonly publicPassPrivateFail: readonly number[];
  /** The first errors' texts, for the report (the rest are counted). */
  readonly firstErrors: readonly { readonly trajectoryId: number; readonly error: string }[];
}

/** A stored re-score: what scored, over which iterations, when, and its summary. */
export interface RescoreRecord {
  readonly id: number;
  readonly runId: number;
  readonly reward: RewardSource;
  readonly iterationFrom: number;
  readonly iterationTo: number;
  /** Set when only one trajectory was re-scored. */
  readonly trajectoryId: number | null;
  readonly createdAt: string;
  readonly wallMs: number;
  readonly summary: RescoreSummary;
}

/** A re-score and every trajectory in it (the host's report). */
export interface RescoreReport extends RescoreRecord {
  readonly items: readonly RescoreItem[];
}

/** A trajectory's final answer edited and the copy scored; the stored trajectory is never touched. */
export interface TrajectoryEdit {
  readonly id: number;
  readonly trajectoryId: number;
  readonly turnIndex: number;
  readonly actionText: string;
  readonly reward: RewardSource;
  readonly score: Score | null;
  readonly error: string | null;
  readonly createdAt: string;
}

/** What the inspector shows beside a trajectory's stored reward: its re-scores and its edits' scores. */
export interface TrajectoryRescores {
  readonly rescores: readonly {
    readonly rescoreId: number;
    readonly reward: RewardSource;
    readonly createdAt: string;
    readonly score: Score | null;
    readonly error: string | null;
  }[];
  readonly edits: readonly TrajectoryEdit[];
}

/** Rewards closer than this are the same (floating-point noise of a bonus minus a cost). */
export const REWARD_EPSILON = 1e-9;
export const LARGEST_SHOWN = 10;
/** A reward above mean + OUTLIER_SDS standard deviations of its iteration is flagged. */
export const OUTLIER_SDS = 3;
const ERRORS_SHOWN = 5;

/** An iteration range `A..B`, `A..`, `..B` or `A` (inclusive); null bounds are open. Throws a message naming the flag. */
export function parseIterationRange(text: string): { from: number | null; to: number | null } {
  const m = /^\s*(\d*)\s*(?:(\.\.)\s*(\d*))?\s*$/.exec(text);
  const bad = (): never => {
    throw new Error(`--iterations ${JSON.stringify(text)}: write A..B, A.., ..B or A (whole iteration numbers, from 1)`);
  };
  if (!m || (m[1] === '' && (m[2] === undefined || m[3] === ''))) return bad();
  const from = m[1] === '' ? null : Number(m[1]);
  const to = m[2] === undefined ? from : m[3] === '' ? null : Number(m[3]);
  if (from !== null && to !== null && to < from)
    throw new Error(`--iterations ${text}: the range ends (${to}) before it starts (${from}). Fix: write ${to}..${from}`);
  return { from, to };
}

/** An error's first and last line ("reward.py: reward() raised:" … "ValueError: …. Fix: …"): a reward's traceback is stored whole, shown short. */
export function errorHeadline(error: string): string {
  const lines = error.split('\n').filter((l) => l.trim() !== '');
  return lines.length <= 1 ? error : `${lines[0]} … ${lines[lines.length - 1]!.trim()}`;
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

/** New rewards above mean + OUTLIER_SDS · sd of their own iteration (population sd; an iteration with sd 0 has none). */
export function rewardOutliers(items: readonly RescoreItem[]): RescoreOutlier[] {
  const byIteration = new Map<number, { id: number; reward: number }[]>();
  for (const it of items) if (it.new) byIteration.set(it.iteration, [...(byIteration.get(it.iteration) ?? []), { id: it.trajectoryId, reward: it.new.reward }]);
  const out: RescoreOutlier[] = [];
  for (const [iteration, xs] of [...byIteration].sort((a, b) => a[0] - b[0])) {
    const m = mean(xs.map((x) => x.reward));
    const sd = Math.sqrt(mean(xs.map((x) => (x.reward - m) ** 2)));
    if (sd <= REWARD_EPSILON) continue;
    for (const x of xs) if (x.reward > m + OUTLIER_SDS * sd) out.push({ trajectoryId: x.id, iteration, reward: x.reward, mean: m, sd });
  }
  return out;
}

/** The report's figures over a re-score's items. */
export function summarizeRescore(items: readonly RescoreItem[]): RescoreSummary {
  const scored = items.filter((it): it is RescoreItem & { new: Score } => it.new !== null);
  const diffs: RescoreDiff[] = scored.map((it) => ({
    trajectoryId: it.trajectoryId,
    iteration: it.iteration,
    taskId: it.taskId,
    oldReward: it.old.reward,
    newReward: it.new.reward,
    delta: it.new.reward - it.old.reward,
    successFlip: it.old.success === it.new.success ? null : it.new.success ? 'to success' : 'to failure',
  }));
  const changed = diffs.filter((d) => Math.abs(d.delta) > REWARD_EPSILON || d.successFlip !== null);
  const errors = items.filter((it) => it.error !== null);
  return {
    trajectories: items.length,
    scored: scored.length,
    errors: errors.length,
    changed: changed.length,
    oldMean: mean(scored.map((it) => it.old.reward)),
    newMean: mean(scored.map((it) => it.new.reward)),
    toSuccess: diffs.filter((d) => d.successFlip === 'to success').length,
    toFailure: diffs.filter((d) => d.successFlip === 'to failure').length,
    largest: [...changed].sort((a, b) => Math.abs(b.delta) - Math.abs(a.delta) || a.trajectoryId - b.trajectoryId).slice(0, LARGEST_SHOWN),
    outliers: rewardOutliers(items),
    publicPassPrivateFail: scored.filter((it) => it.new.publicPass && !it.new.privatePass).map((it) => it.trajectoryId),
    firstErrors: errors.slice(0, ERRORS_SHOWN).map((it) => ({ trajectoryId: it.trajectoryId, error: it.error ?? '' })),
  };
}
