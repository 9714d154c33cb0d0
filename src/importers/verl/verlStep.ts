// One training step of a verl dump as the store keeps it: samples grouped by equal inputs (the
// rollout.n samples of one prompt), group advantages recomputed from the scores the way GRPO does,
// and the step's iteration metrics. Works on a step that already has stored members (appended lines
// join their groups), so an import in pieces gives the same rows as one in one go.
import { groupAdvantages, ZERO_SPREAD } from '../../rl/algo/advantages';
import type { EvaluationResult, IterationMetrics } from '../../shared/types';
import type { ImportedTrajectory, StoredMember } from '../importWriter';
import { sampleOutcome, sampleTurns, taskIdOf, type VerlSample } from './verlSample';

export interface StepRows {
  readonly rows: ImportedTrajectory[];
  readonly metrics: IterationMetrics;
  /** Given the new rows' ids (in order), every advantage to store: new rows and the members of the groups they joined. */
  readonly advantages: (newIds: readonly number[]) => Map<number, number>;
}

interface Member {
  readonly reward: number;
  readonly success: boolean;
  readonly publicPass: boolean;
  readonly privatePass: boolean;
  readonly turns: number;
  readonly toolCalls: number;
  readonly group: number;
}

/**
 * GRPO's outcome advantage of one group, [G] → [G]: (score − mean) / (std + 1e-6) with the sample std
 * (verl uses torch.std, which is Bessel-corrected, and epsilon 1e-6); 0 for a group of one or of equal scores.
 */
export function verlGroupAdvantages(scores: readonly number[]): number[] {
  if (scores.length < 2) return scores.map(() => 0);
  return groupAdvantages(scores, { estimator: 'grpo', std: 'sample', epsilon: 1e-6 }).advantages;
}

export function buildStep(step: number, samples: readonly VerlSample[], stored: readonly StoredMember[]): StepRows {
  const groupOf = new Map<string, { group: number; size: number; storedIds: number[]; rewards: number[]; newAt: number[] }>();
  let nextGroup = 0;
  for (const m of stored) {
    let g = groupOf.get(m.taskId);
    if (!g) groupOf.set(m.taskId, (g = { group: m.group, size: 0, storedIds: [], rewards: [], newAt: [] }));
    g.size = Math.max(g.size, m.indexInGroup + 1);
    g.storedIds.push(m.id);
    g.rewards.push(m.reward);
    nextGroup = Math.max(nextGroup, m.group + 1);
  }
  const members: Member[] = stored.map((m) => ({ ...m, toolCalls: 0 }));
  const rows: ImportedTrajectory[] = samples.map((s, i) => {
    const taskId = taskIdOf(s.input);
    let g = groupOf.get(taskId);
    if (!g) groupOf.set(taskId, (g = { group: nextGroup++, size: 0, storedIds: [], rewards: [], newAt: [] }));
    const outcome = sampleOutcome(s);
    const { turns, termination } = sampleTurns(s);
    g.rewards.push(outcome.reward);
    g.newAt.push(i);
    const toolCalls = turns.filter((t) => t.action.kind === 'tool' && t.action.name !== 'answer').length;
    members.push({
      reward: outcome.reward,
      success: outcome.success,
      publicPass: outcome.publicPass,
      privatePass: outcome.privatePass,
      turns: turns.length,
      toolCalls,
      group: g.group,
    });
    return { taskId, group: g.group, indexInGroup: g.size++, outcome, termination, policyVersion: step - 1, turns };
  });
  const advantages = (newIds: readonly number[]): Map<number, number> => {
    const out = new Map<number, number>();
    for (const g of groupOf.values()) {
      if (g.newAt.length === 0) continue;
      const a = verlGroupAdvantages(g.rewards);
      g.storedIds.forEach((id, k) => out.set(id, a[k]!));
      g.newAt.forEach((row, k) => out.set(newIds[row]!, a[g.storedIds.length + k]!));
    }
    return out;
  };
  return {
    rows,
    metrics: stepMetrics(
      step,
      members,
      [...groupOf.values()].map((g) => g.rewards),
    ),
    advantages,
  };
}

const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
const rate = (ms: readonly Member[], f: (m: Member) => boolean): number => (ms.length ? ms.filter(f).length / ms.length : 0);

/** Iteration metrics of a step. verl's update statistics (loss, KL, clip, entropy) go to its logger, not the dump: 0 here. */
function stepMetrics(step: number, ms: readonly Member[], groupRewards: readonly number[][]): IterationMetrics {
  const rewards = ms.map((m) => m.reward);
  const zeroVarianceGroups = groupRewards.filter((r) => Math.max(...r) - Math.min(...r) < ZERO_SPREAD).length;
  return {
    iteration: step,
    rewardMean: mean(rewards),
    rewardMax: Math.max(...rewards),
    rewardMin: Math.min(...rewards),
    successRate: rate(ms, (m) => m.success),
    publicPassRate: rate(ms, (m) => m.publicPass),
    privatePassRate: rate(ms, (m) => m.privatePass),
    meanTurns: mean(ms.map((m) => m.turns)),
    zeroVarianceGroups,
    trajectories: ms.length,
    loss: 0,
    policyLoss: 0,
    kl: 0,
    clipFraction: 0,
    entropy: 0,
    gradNorm: 0,
    ratioMin: 0,
    ratioMax: 0,
    updated: 1,
    trainedTrajectories: ms.length,
    policyVersion: step - 1,
    wallMs: 0,
    toolCalls: mean(ms.map((m) => m.toolCalls)),
  };
}

/** Running sums of a validation file, kept in its import progress so appended lines extend them. */
export function addValidation(state: Readonly<Record<string, number>>, samples: readonly VerlSample[]): Record<string, number> {
  const s = { n: 0, successes: 0, reward: 0, turns: 0, publicPasses: 0, privatePasses: 0, ...state };
  for (const x of samples) {
    const o = sampleOutcome(x);
    s.n += 1;
    s.successes += o.success ? 1 : 0;
    s.publicPasses += o.publicPass ? 1 : 0;
    s.privatePasses += o.privatePass ? 1 : 0;
    s.reward += o.reward;
    s.turns += sampleTurns(x).turns.length;
  }
  return s;
}

export function validationEvaluation(step: number, s: Readonly<Record<string, number>>): EvaluationResult {
  const n = s.n ?? 0;
  const per = (k: string): number => (n ? (s[k] ?? 0) / n : 0);
  return {
    iteration: step,
    episodes: n,
    successes: s.successes ?? 0,
    successRate: per('successes'),
    meanActions: per('turns'),
    publicPassRate: per('publicPasses'),
    privatePassRate: per('privatePasses'),
    rewardMean: per('reward'),
    seed: 0,
    policyVersion: step,
  };
}
