// Evaluation on the held-out split: N fresh episodes sampled from the current policy, dealt round-robin
// over the held-out tasks, with a random stream that depends only on the evaluation seed (the
// evaluation before and after training, and in every training seed, sees the same random numbers);
// then, for a policy that can decode greedily, every held-out task once more under greedy decoding.
// Reports sampled pass@1, sampled pass@k (unbiased estimator over each task's samples), greedy pass@1
// and tool calls per episode.
import type { EvaluationResult, Trajectory } from '../../shared/types';
import type { RunEnvironment } from '../envs/environment';
import type { Policy } from '../policies/policy';
import { Rng } from '../random';
import { runEpisodes, type EpisodeSpec } from '../rollout/agentLoop';
import { episodeStats, FINAL_ACTIONS, isEnvironmentStep, meanStats, type EpisodeStats } from '../../shared/episodeStats';

export interface EvaluateOptions {
  readonly episodes: number;
  readonly seed: number;
  readonly maxTurns: number;
  readonly iteration: number;
  /** k of the sampled pass@k (0 = none); lowered to the fewest samples a held-out task got when that is less. */
  readonly passK?: number;
  /** The same weights decoding greedily: each held-out task once. */
  readonly greedy?: Policy;
  /** Episodes advanced together per batch. */
  readonly batchSize?: number;
}

/** Tool calls of an episode: its actions that are tool calls other than the final answer or submission (an OpenEnv server's steps are none). */
export function toolCallsOf(t: Trajectory): number {
  // the final actions episodeStats leaves out (answer, finish and submit), so the two counts agree
  return t.turns.filter((turn) => turn.action.kind === 'tool' && !FINAL_ACTIONS.has(turn.action.name) && !isEnvironmentStep(turn.observation.data)).length;
}

/**
 * pass@k of one task from n samples with c successes: the chance that k samples drawn without
 * replacement include a success, 1 − C(n−c, k) / C(n, k) (Chen et al. 2021), computed as a product.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (k > n) throw new Error(`passAtK: k = ${k} is more than the n = ${n} samples`);
  if (n - c < k) return 1;
  let fail = 1;
  for (let i = 0; i < k; i++) fail *= (n - c - i) / (n - i);
  return 1 - fail;
}

/** A trajectory's turns as the acceptance metrics read them. */
export function statsOf(t: Trajectory): EpisodeStats {
  return episodeStats(
    t.turns.map((u) => ({
      actionText: u.actionText,
      action: u.action,
      observationText: u.observation.text,
      observation: u.observation.data,
      sampledTokens: u.policy.tokens?.sampled.length ?? 0,
    })),
  );
}

interface Tally {
  episodes: number;
  stats: EpisodeStats[];
  successes: number;
  actions: number;
  publicPass: number;
  privatePass: number;
  reward: number;
  toolCalls: number;
  perTask: Map<string, { n: number; c: number; reward: number; toolCalls: number; repeated: number }>;
}

async function rollOut(policy: Policy, env: RunEnvironment, taskCount: number, o: EvaluateOptions, episodes: number, stream: string): Promise<Tally> {
  const tasks = env.tasks().heldOut;
  const sampleRng = Rng.stream(o.seed, `${stream}/sample`);
  const verifierRng = Rng.stream(o.seed, `${stream}/verifier`);
  const batchSize = o.batchSize ?? 512;
  const tally: Tally = { episodes, stats: [], successes: 0, actions: 0, publicPass: 0, privatePass: 0, reward: 0, toolCalls: 0, perTask: new Map() };
  for (let start = 0; start < episodes; start += batchSize) {
    const specs: EpisodeSpec[] = [];
    for (let i = start; i < Math.min(episodes, start + batchSize); i++) specs.push({ task: tasks[i % taskCount]!, group: i, indexInGroup: 0 });
    const trajectories = await runEpisodes(specs, () => env.create(), policy, {
      maxTurns: o.maxTurns,
      sampleRng,
      verifierRng,
      ...(env.maxOpen !== undefined ? { maxOpen: env.maxOpen } : {}),
    });
    for (const t of trajectories) {
      tally.successes += t.outcome.success ? 1 : 0;
      tally.actions += t.turns.length;
      tally.publicPass += t.outcome.publicPass ? 1 : 0;
      tally.privatePass += t.outcome.privatePass ? 1 : 0;
      tally.reward += t.outcome.reward;
      tally.toolCalls += toolCallsOf(t);
      const st = statsOf(t);
      tally.stats.push(st);
      const pt = tally.perTask.get(t.taskId) ?? { n: 0, c: 0, reward: 0, toolCalls: 0, repeated: 0 };
      pt.n += 1;
      pt.c += t.outcome.success ? 1 : 0;
      pt.reward += t.outcome.reward;
      pt.toolCalls += toolCallsOf(t);
      pt.repeated += st.repeatedActions;
      tally.perTask.set(t.taskId, pt);
    }
  }
  return tally;
}

export async function evaluatePolicy(policy: Policy, env: RunEnvironment, o: EvaluateOptions): Promise<EvaluationResult> {
  const tasks = env.tasks().heldOut;
  if (tasks.length === 0) throw new Error(`env ${env.name}: no held-out tasks to evaluate on`);
  const s = await rollOut(policy, env, tasks.length, o, o.episodes, 'eval');
  const n = o.episodes;
  let pass: { passAtK: number; passK: number } | undefined;
  // pass@k over every held-out task; when some task has fewer than k samples (evalEpisodes too small),
  // k is lowered to the fewest any task has, and the recorded k says so
  const asked = o.passK ?? 0;
  if (asked > 0) {
    const tallies = [...s.perTask.values()];
    const k = Math.min(asked, ...tallies.map((t) => t.n));
    if (tallies.length === tasks.length && k >= 1) pass = { passK: k, passAtK: tallies.reduce((acc, t) => acc + passAtK(t.n, t.c, k), 0) / tallies.length };
  }
  let greedy: Partial<EvaluationResult> = {};
  let greedyPerTask: Tally['perTask'] | undefined;
  if (o.greedy) {
    // Greedy decoding is deterministic per task: each held-out task once is the whole measurement.
    const g = await rollOut(o.greedy, env, tasks.length, o, tasks.length, 'eval-greedy');
    greedyPerTask = g.perTask;
    greedy = { greedySuccessRate: g.successes / g.episodes, greedyEpisodes: g.episodes, greedyToolCalls: g.toolCalls / g.episodes };
  }
  return {
    iteration: o.iteration,
    episodes: n,
    successes: s.successes,
    successRate: s.successes / n,
    meanActions: s.actions / n,
    publicPassRate: s.publicPass / n,
    privatePassRate: s.privatePass / n,
    rewardMean: s.reward / n,
    seed: o.seed,
    policyVersion: policy.version,
    toolCalls: s.toolCalls / n,
    meanTokens: s.stats.reduce((acc, x) => acc + x.tokens, 0) / n,
    ...meanStats(s.stats),
    ...(pass ?? {}),
    ...greedy,
    perTask: [...s.perTask].map(([task, t]) => ({
      task,
      episodes: t.n,
      successes: t.c,
      reward: t.reward,
      toolCalls: t.toolCalls,
      repeatedActions: t.repeated,
      ...(greedyPerTask ? { greedySuccesses: greedyPerTask.get(task)?.c ?? 0 } : {}),
    })),
  };
}
