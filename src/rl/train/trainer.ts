// The synchronous trainer: rollout → reward → group advantages → K update epochs → evaluate → store.
// Each iteration is handed to the sink as one record, so a store can write it in one transaction and a
// killed run leaves whole iterations only. Cancellation is honoured at iteration boundaries.
import type { RunConfig } from '../../shared/runConfig';
import { remainingMs, type RunPhase } from '../../shared/runPhase';
import type { EvaluationResult, IterationMetrics, RunStatus, RuntimeInfo, Trajectory } from '../../shared/types';
import { groupAdvantages } from '../algo/advantages';
import { environmentFactory } from '../envs/registry';
import type { Objective, Policy, UpdateStats } from '../policies/policy';
import { DemonstrationPolicy, referenceAgentFor } from '../policies/scripted/demonstrations';
import type { Tokenizer } from '../policies/transformer/tokenizer';
import { createPolicy, minibatchSizeFor } from '../policies/registry';
import { Rng } from '../random';
import { runEpisodes, type EpisodeSpec } from '../rollout/agentLoop';
import { evaluatePolicy } from './evaluate';
import type { RunSink } from './sink';

export interface Progress {
  readonly iteration: number;
  readonly iterations: number;
  readonly rewardMean: number;
  readonly successRate: number;
  readonly elapsedMs: number;
  /** Estimated time left from the iterations' own times (no startup, no evaluations); -1 until a few are done. */
  readonly etaMs: number;
  readonly metrics: IterationMetrics;
  readonly evaluation?: EvaluationResult;
}

export interface TrainOptions {
  readonly sink: RunSink;
  /** Builds the runtime record once the policy (and so the compute backend) is known. */
  readonly runtime: (compute: string) => RuntimeInfo;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: Progress) => void;
  /** What the run is doing now (loading, warm start, evaluating, iteration k, saving), from its first second. */
  readonly onPhase?: (p: RunPhase) => void;
  /** Called with the initial evaluation too (iteration 0). */
  readonly onEvaluation?: (e: EvaluationResult) => void;
  /** Where to write the final checkpoint (asked at the end, when the run id is known); none if undefined. */
  readonly checkpointDir?: () => string | undefined;
  readonly onCheckpoint?: (file: string) => void;
}

export interface TrainResult {
  readonly status: RunStatus;
  readonly iterations: IterationMetrics[];
  readonly evaluations: EvaluationResult[];
  readonly wallMs: number;
}

const NO_UPDATE: UpdateStats = { loss: 0, policyLoss: 0, kl: 0, clipFraction: 0, entropy: 0, gradNorm: 0, ratioMin: 1, ratioMax: 1, optimizerSteps: 0 };

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

export async function train(config: RunConfig, options: TrainOptions): Promise<TrainResult> {
  const t0 = Date.now();
  const init = config.policyOptions.init;
  options.onPhase?.(typeof init === 'string' && init !== '' ? { kind: 'warm-start', from: init } : { kind: 'loading' });
  const env = environmentFactory(config.env);
  const batch = config.groupsPerIteration * config.groupSize;
  const minibatch = minibatchSizeFor(config);
  const policy = await createPolicy(config, env, config.iterations * config.epochs * Math.ceil(batch / minibatch));
  // SFT learns from the environment's scripted reference agent; every other method from its own samples.
  let actor: Policy = policy;
  if (config.method === 'sft') {
    const agent = referenceAgentFor(config.env, Number(config.policyOptions.mistakeRate ?? 0));
    const tokenizer = (policy as { tokenizer?: Tokenizer }).tokenizer;
    if (!agent || !tokenizer) throw new Error(`method sft needs a reference agent for env ${config.env} and a language-model policy`);
    actor = new DemonstrationPolicy(agent, tokenizer);
  }
  const { sink } = options;
  const tasks = env.tasks(config.envOptions).train;
  const taskRng = Rng.stream(config.seed, 'train/tasks');
  const sampleRng = Rng.stream(config.seed, 'train/sample');
  const verifierRng = Rng.stream(config.seed, 'train/verifier');
  const iterations: IterationMetrics[] = [];
  const evaluations: EvaluationResult[] = [];
  const greedy = policy.greedy?.();
  const heldOutTasks = env.tasks(config.envOptions).heldOut.length;
  const evaluate = async (iteration: number): Promise<EvaluationResult> => {
    options.onPhase?.({ kind: 'evaluating', iteration });
    const o = { episodes: config.evalEpisodes, seed: config.evalSeed, maxTurns: config.maxTurns, envOptions: config.envOptions, iteration };
    let e = await evaluatePolicy(policy, env, o);
    // Greedy decoding is deterministic per task: each held-out task once is the whole measurement.
    if (greedy) e = { ...e, greedySuccessRate: (await evaluatePolicy(greedy, env, { ...o, episodes: Math.min(o.episodes, heldOutTasks) })).successRate };
    evaluations.push(e);
    options.onEvaluation?.(e);
    return e;
  };

  // Fails here, before anything is stored, when the machine lacks what the environment needs.
  const environment = env.preflight?.(config.envOptions);
  sink.begin(config, { ...options.runtime(policy.compute), ...(environment ? { environment } : {}) });
  let iterationMsTotal = 0;
  try {
    sink.evaluation(await evaluate(0));
    for (let it = 1; it <= config.iterations; it++) {
      // Yield to the event loop once per iteration: with in-process environments every await above
      // resolves as a microtask, and signals, IPC messages and heartbeats would wait for the whole run.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) {
        const wallMs = Date.now() - t0;
        sink.end('cancelled', { wallMs });
        return { status: 'cancelled', iterations, evaluations, wallMs };
      }
      options.onPhase?.({ kind: 'iteration', iteration: it });
      const itStart = Date.now();
      // Rollout: G groups × N episodes, each group on one task.
      const specs: EpisodeSpec[] = [];
      for (let g = 0; g < config.groupsPerIteration; g++) {
        const task = tasks[taskRng.int(tasks.length)]!;
        for (let i = 0; i < config.groupSize; i++) specs.push({ task, group: g, indexInGroup: i });
      }
      const trajectories = await runEpisodes(specs, () => env.create(config.envOptions), actor, { maxTurns: config.maxTurns, sampleRng, verifierRng });

      // Advantages per group.
      let zeroVarianceGroups = 0;
      for (let g = 0; g < config.groupsPerIteration; g++) {
        const group = trajectories.filter((t) => t.group === g);
        const adv = groupAdvantages(group.map((t) => t.outcome.reward), config.advantageStd);
        if (adv.zeroVariance) zeroVarianceGroups += 1;
        group.forEach((t, i) => (t.advantage = adv.advantages[i]!));
      }

      // Update.
      let stats = NO_UPDATE;
      let trained: readonly Trajectory[] = [];
      if (config.method === 'grpo') {
        trained = trajectories;
        const objective: Objective = { kind: 'clipped-pg', clipEpsilon: config.clipEpsilon, klCoef: config.klCoef };
        stats = await policy.update(trained, objective, config.epochs);
      } else if (config.method === 'sft') {
        // SFT on demonstrations (successful ones: a demonstration that failed teaches nothing useful).
        trained = trajectories.filter((t) => t.outcome.success);
        if (trained.length > 0) stats = await policy.update(trained, { kind: 'nll' }, config.epochs);
      } else {
        // RS-SFT: keep successful samples only; no success this round → no update at all.
        trained = trajectories.filter((t) => t.outcome.success);
        if (trained.length > 0) stats = await policy.update(trained, { kind: 'nll' }, config.epochs);
      }

      const rewards = trajectories.map((t) => t.outcome.reward);
      const rate = (f: (t: Trajectory) => boolean): number => trajectories.filter(f).length / trajectories.length;
      const metrics: IterationMetrics = {
        iteration: it,
        rewardMean: mean(rewards),
        rewardMax: Math.max(...rewards),
        rewardMin: Math.min(...rewards),
        successRate: rate((t) => t.outcome.success),
        publicPassRate: rate((t) => t.outcome.publicPass),
        privatePassRate: rate((t) => t.outcome.privatePass),
        meanTurns: mean(trajectories.map((t) => t.turns.length)),
        zeroVarianceGroups,
        trajectories: trajectories.length,
        ...stats,
        updated: stats.optimizerSteps > 0 ? 1 : 0,
        trainedTrajectories: stats.optimizerSteps > 0 ? trained.length : 0,
        policyVersion: policy.version,
        wallMs: Date.now() - itStart,
        ...languageMetrics(trajectories),
      };
      const due = it === config.iterations || (config.evalInterval > 0 && it % config.evalInterval === 0);
      const evaluation = due ? await evaluate(it) : undefined;
      sink.iteration({ metrics, trajectories, ...(evaluation ? { evaluation } : {}) });
      iterations.push(metrics);
      iterationMsTotal += metrics.wallMs;
      options.onProgress?.({
        iteration: it, iterations: config.iterations, rewardMean: metrics.rewardMean, successRate: metrics.successRate, elapsedMs: Date.now() - t0,
        etaMs: remainingMs(iterationMsTotal, it, config.iterations - it), metrics, ...(evaluation ? { evaluation } : {}),
      });
    }
    const dir = options.checkpointDir?.();
    if (dir && policy.save) {
      options.onPhase?.({ kind: 'saving' });
      const file = policy.save(dir, `${config.method} on ${config.env}, seed ${config.seed}, ${config.iterations} iterations`);
      options.onCheckpoint?.(file);
    }
    const wallMs = Date.now() - t0;
    sink.end('completed', { wallMs });
    return { status: 'completed', iterations, evaluations, wallMs };
  } catch (e) {
    try {
      sink.end('failed', { wallMs: Date.now() - t0, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    } catch {
      // The sink may be what failed (a locked or full disk): the original error is the one to report.
    }
    throw e;
  } finally {
    await policy.dispose?.();
    await env.dispose?.();
  }
}

/** Generated tokens and tool calls per trajectory, where the policy writes tokens. */
function languageMetrics(trajectories: readonly Trajectory[]): { responseTokens?: number; toolCalls?: number } {
  if (!trajectories.some((t) => t.turns.some((turn) => turn.policy.tokens))) return {};
  const tokens = trajectories.map((t) => t.turns.reduce((n, turn) => n + (turn.policy.tokens?.sampled.length ?? 0), 0));
  const calls = trajectories.map((t) => t.turns.filter((turn) => turn.action.kind === 'tool' && !['answer', 'finish'].includes(turn.action.name)).length);
  return { responseTokens: mean(tokens), toolCalls: mean(calls) };
}
