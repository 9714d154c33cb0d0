// Evaluation: N fresh episodes on the held-out split, sampled from the current policy with a random
// stream that depends only on the evaluation seed, so the evaluation before and after training (and in
// every training seed) sees the same stream of random numbers.
import type { EvaluationResult } from '../../shared/types';
import type { EnvironmentFactory } from '../envs/environment';
import type { Policy } from '../policies/policy';
import { Rng } from '../random';
import { runEpisodes, type EpisodeSpec } from '../rollout/agentLoop';

export interface EvaluateOptions {
  readonly episodes: number;
  readonly seed: number;
  readonly maxTurns: number;
  readonly envOptions: Readonly<Record<string, unknown>>;
  readonly iteration: number;
  /** Episodes advanced together per batch. */
  readonly batchSize?: number;
}

export async function evaluatePolicy(policy: Policy, env: EnvironmentFactory, options: EvaluateOptions): Promise<EvaluationResult> {
  const tasks = env.tasks(options.envOptions).heldOut;
  if (tasks.length === 0) throw new Error(`env ${env.name}: no held-out tasks to evaluate on`);
  const sampleRng = Rng.stream(options.seed, 'eval/sample');
  const verifierRng = Rng.stream(options.seed, 'eval/verifier');
  const batchSize = options.batchSize ?? 512;
  let successes = 0, actions = 0, publicPass = 0, privatePass = 0, reward = 0;
  for (let start = 0; start < options.episodes; start += batchSize) {
    const specs: EpisodeSpec[] = [];
    for (let i = start; i < Math.min(options.episodes, start + batchSize); i++) {
      specs.push({ task: tasks[i % tasks.length]!, group: i, indexInGroup: 0 });
    }
    const trajectories = await runEpisodes(specs, () => env.create(options.envOptions), policy, { maxTurns: options.maxTurns, sampleRng, verifierRng });
    for (const t of trajectories) {
      successes += t.outcome.success ? 1 : 0;
      actions += t.turns.length;
      publicPass += t.outcome.publicPass ? 1 : 0;
      privatePass += t.outcome.privatePass ? 1 : 0;
      reward += t.outcome.reward;
    }
  }
  const n = options.episodes;
  return {
    iteration: options.iteration,
    episodes: n,
    successes,
    successRate: successes / n,
    meanActions: actions / n,
    publicPassRate: publicPass / n,
    privatePassRate: privatePass / n,
    rewardMean: reward / n,
    seed: options.seed,
    policyVersion: policy.version,
  };
}
