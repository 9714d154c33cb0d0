// One iteration's record: the batch's rewards and outcomes, what the learner did and measured, how the
// episodes went (seed 001's acceptance metrics), where the time went, and the rollout pipeline. Pure:
// everything it reads is handed in.
import type { MethodName } from '../../shared/runConfig';
import { meanStats } from '../../shared/episodeStats';
import { toolHealthOf, type ToolHealth } from '../../shared/toolHealth';
import { TRUNCATED_TERMINATIONS, type IterationMetrics, type Trajectory } from '../../shared/types';
import type { PhaseTiming } from '../rollout/agentLoop';
import { statsOf, toolCallsOf } from './evaluate';
import type { UpdateReport } from './learner';

export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** What an iteration's metrics are computed from. */
export interface IterationInputs {
  readonly iteration: number;
  readonly method: MethodName;
  readonly trajectories: readonly Trajectory[];
  readonly report: UpdateReport;
  /** Groups whose rewards were all equal, over every group sampled (resampled ones included). */
  readonly zeroVarianceGroups: number;
  /** Groups dynamic sampling drew in place of uninformative ones. */
  readonly resampledGroups: number;
  readonly timing: PhaseTiming;
  /** Staleness and the asynchronous pipeline's queue and idle times. */
  readonly pipeline: Partial<IterationMetrics>;
  readonly policyVersion: number;
  readonly wallMs: number;
  /** The previous iteration's store time (this one's is not known until it is stored). */
  readonly storeMs: number;
}

export function iterationMetrics(i: IterationInputs): IterationMetrics {
  const { trajectories, report } = i;
  const rewards = trajectories.map((t) => t.outcome.reward);
  const rate = (f: (t: Trajectory) => boolean): number => trajectories.filter(f).length / trajectories.length;
  const ex = report.excluded;
  const episodeStats = trajectories.map(statsOf);
  return {
    iteration: i.iteration,
    rewardMean: mean(rewards),
    rewardMax: Math.max(...rewards),
    rewardMin: Math.min(...rewards),
    successRate: rate((t) => t.outcome.success),
    publicPassRate: rate((t) => t.outcome.publicPass),
    privatePassRate: rate((t) => t.outcome.privatePass),
    meanTurns: mean(trajectories.map((t) => t.turns.length)),
    zeroVarianceGroups: i.zeroVarianceGroups,
    trajectories: trajectories.length,
    loss: report.loss,
    policyLoss: report.policyLoss,
    kl: report.kl,
    clipFraction: report.clipFraction,
    entropy: report.entropy,
    gradNorm: report.gradNorm,
    ratioMin: report.ratioMin,
    ratioMax: report.ratioMax,
    updated: report.optimizerSteps > 0 ? 1 : 0,
    optimizerSteps: report.optimizerSteps,
    trainedTrajectories: report.trainedTrajectories,
    envErrorTrajectories: ex.env_error ?? 0,
    zeroAdvantageSkipped: ex.zero_advantage ?? 0,
    overlongFiltered: ex.overlong ?? 0,
    unsuccessfulSkipped: ex.unsuccessful ?? 0,
    failuresNotPushed: ex.failure_not_pushed ?? 0,
    replacedTrajectories: ex.replaced ?? 0,
    noTrainablePositions: ex.no_trainable_positions ?? 0,
    truncatedSequences: report.truncatedSequences,
    truncatedEpisodes: trajectories.filter((t) => TRUNCATED_TERMINATIONS.has(t.termination)).length,
    malformedEpisodes: episodeStats.filter((s) => s.formatErrors > 0).length,
    ...(report.nonFiniteSteps > 0 ? { nonFiniteSteps: report.nonFiniteSteps } : {}),
    ...(i.resampledGroups > 0 ? { resampledGroups: i.resampledGroups } : {}),
    ...(report.optimizerSteps > 0 ? { learningRate: report.learningRate } : {}),
    policyVersion: i.policyVersion,
    wallMs: i.wallMs,
    // what the loss reported, whatever the policy
    ...(Object.keys(report.lossMetrics).length > 0 ? { lossMetrics: report.lossMetrics } : {}),
    ...(report.logprobMismatch !== undefined ? { logprobMismatch: report.logprobMismatch } : {}),
    ...(i.method === 'sft' && report.optimizerSteps > 0 ? { tokenAccuracy: report.tokenAccuracy } : {}),
    ...languageMetrics(trajectories),
    ...rewardExtras(trajectories),
    ...toolHealthMetrics(trajectories),
    ...meanStats(episodeStats),
    phaseGenerateMs: i.timing.generateMs,
    phaseEnvMs: i.timing.envMs,
    phaseReferenceMs: report.phaseReferenceMs,
    phaseUpdateMs: report.phaseUpdateMs,
    phaseStoreMs: i.storeMs,
    phaseEvaluateMs: 0,
    ...i.pipeline,
    ...(report.importanceWeightMean !== undefined
      ? { importanceWeightMean: report.importanceWeightMean, importanceTruncated: report.importanceTruncated }
      : {}),
  };
}

/** Per tool over the iteration's episodes (those the environment did not fail). */
function toolHealthMetrics(trajectories: readonly Trajectory[]): { toolHealth?: Record<string, ToolHealth> } {
  const episodes = trajectories
    .filter((t) => t.termination !== 'env_error')
    .map((t) => t.turns.map((u) => ({ action: u.action, observation: u.observation.data })));
  const h = toolHealthOf(episodes);
  return Object.keys(h).length === 0 ? {} : { toolHealth: h };
}

/** Means of the reward function's numeric extras (outcome.details.metrics), each over the episodes that report it. */
function rewardExtras(trajectories: readonly Trajectory[]): { rewardExtras?: Record<string, number> } {
  const sums = new Map<string, { sum: number; n: number }>();
  for (const t of trajectories) {
    const m = (t.outcome.details as { metrics?: unknown } | undefined)?.metrics;
    if (typeof m !== 'object' || m === null || t.termination === 'env_error') continue;
    for (const [k, v] of Object.entries(m)) {
      if (typeof v !== 'number' || !Number.isFinite(v)) continue;
      const s = sums.get(k) ?? { sum: 0, n: 0 };
      s.sum += v;
      s.n += 1;
      sums.set(k, s);
    }
  }
  return sums.size === 0 ? {} : { rewardExtras: Object.fromEntries([...sums].map(([k, s]) => [k, s.sum / s.n])) };
}

/** Generated tokens and tool calls per trajectory, where the policy writes tokens. */
function languageMetrics(trajectories: readonly Trajectory[]): { responseTokens?: number; toolCalls?: number } {
  if (!trajectories.some((t) => t.turns.some((turn) => turn.policy.tokens))) return {};
  const tokens = trajectories.map((t) => t.turns.reduce((n, turn) => n + (turn.policy.tokens?.sampled.length ?? 0), 0));
  return { responseTokens: mean(tokens), toolCalls: mean(trajectories.map(toolCallsOf)) };
}
