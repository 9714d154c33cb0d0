// The synchronous trainer: rollout → reward → the learner's update → evaluate → store. Each iteration
// is handed to the sink as one record, so a store can write it in one transaction and a killed run
// leaves whole iterations only. Cancellation is honoured at iteration boundaries. The algorithm
// (advantages, what is trained, the loss and the optimizer's steps) is the learner's.
import { methodLabel } from '../../shared/algorithm';
import type { RunConfig } from '../../shared/runConfig';
import { remainingMs, type RunPhase } from '../../shared/runPhase';
import type { EvaluationResult, IterationMetrics, RunStatus, RuntimeInfo, Trajectory } from '../../shared/types';
import type { EnvironmentFactory } from '../envs/environment';
import { environmentFactory } from '../envs/registry';
import type { Policy } from '../policies/policy';
import { createPolicy } from '../policies/registry';
import { DemonstrationPolicy, referenceAgentFor } from '../policies/scripted/demonstrations';
import { TransformerPolicy } from '../policies/transformer/transformerPolicy';
import { Rng } from '../random';
import { EpisodeStream, runEpisodes, type EpisodeSpec, type PhaseTiming } from '../rollout/agentLoop';
import { meanStats } from '../../shared/episodeStats';
import { evaluatePolicy, statsOf, toolCallsOf } from './evaluate';
import { AsyncRollout, oldestVersion } from './asyncRollout';
import { Learner } from './learner';
import { writeResumePoint, type ResumePoint } from './resumePoint';
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
  /** Where resume points go (asked after the run is stored, when its id is known); none if undefined. */
  readonly resumeDir?: () => string | undefined;
  /** Continue a stored run from this resume point: the sink's `resume` is called instead of `begin`, and no iteration-0 evaluation runs again. */
  readonly resume?: ResumePoint;
  /** The environment to act in, instead of the registry's for `config.env` (tests inject faults through it). */
  readonly environment?: EnvironmentFactory;
}

export interface TrainResult {
  readonly status: RunStatus;
  readonly iterations: IterationMetrics[];
  readonly evaluations: EvaluationResult[];
  readonly wallMs: number;
}

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Optimizer steps a run takes at most: the end of a learning-rate decay. */
export function plannedSteps(config: RunConfig): number {
  const batch = config.groupsPerIteration * config.groupSize;
  const mb = config.algorithm.minibatchSize > 0 ? config.algorithm.minibatchSize : batch;
  return config.iterations * config.algorithm.epochs * Math.ceil(batch / mb);
}

/** Trajectories by group number, in their order. */
function groupsOf(ts: readonly Trajectory[]): Map<number, Trajectory[]> {
  const m = new Map<number, Trajectory[]>();
  for (const t of ts) {
    let g = m.get(t.group);
    if (!g) m.set(t.group, (g = []));
    g.push(t);
  }
  return m;
}

/** Whether a group can teach anything: some member that the environment did not fail has a non-zero advantage. */
function informative(group: readonly Trajectory[]): boolean {
  return group.some((t) => t.termination !== 'env_error' && t.advantage !== 0);
}

export async function train(config: RunConfig, options: TrainOptions): Promise<TrainResult> {
  const t0 = Date.now();
  const init = config.policyOptions.init;
  options.onPhase?.(typeof init === 'string' && init !== '' ? { kind: 'warm-start', from: init } : { kind: 'loading' });
  const env = options.environment ?? environmentFactory(config.env);
  // task, tool and reward files are read and checked before anything else (no run row exists yet)
  await env.prepare?.(config.envOptions);
  const policy = await createPolicy(config, env);
  const learner = new Learner(policy, {
    method: config.method, settings: config.algorithm, totalSteps: plannedSteps(config), seed: config.seed,
    imitate: config.demonstrations.imitate === 'successful' ? 'successful' : 'all',
  });
  // SFT learns from the environment's scripted reference agent; every other method from its own samples.
  let actor: Policy = policy;
  if (config.method === 'sft') {
    const agent = referenceAgentFor(config.env, config.demonstrations);
    if (!agent || !(policy instanceof TransformerPolicy)) throw new Error(`method sft needs a reference agent for env ${config.env} and a language-model policy`);
    actor = new DemonstrationPolicy(agent, policy.tokenizer);
  }
  const { sink } = options;
  const tasks = env.tasks(config.envOptions).train;
  const resume = options.resume?.state;
  const taskRng = resume ? Rng.fromState(resume.rng.tasks) : Rng.stream(config.seed, 'train/tasks');
  const sampleRng = resume ? Rng.fromState(resume.rng.sample) : Rng.stream(config.seed, 'train/sample');
  const verifierRng = resume ? Rng.fromState(resume.rng.verifier) : Rng.stream(config.seed, 'train/verifier');
  const iterations: IterationMetrics[] = [];
  const evaluations: EvaluationResult[] = [];
  const greedy = policy.greedy?.();
  const evaluate = async (iteration: number): Promise<EvaluationResult> => {
    options.onPhase?.({ kind: 'evaluating', iteration });
    const e = await evaluatePolicy(policy, env, {
      episodes: config.evalEpisodes, seed: config.evalSeed, maxTurns: config.maxTurns, envOptions: config.envOptions, iteration, passK: config.evalPassK,
      ...(greedy ? { greedy } : {}),
    });
    evaluations.push(e);
    options.onEvaluation?.(e);
    return e;
  };
  /** G groups × N episodes of new tasks, numbered from `firstGroup`, sampled by the actor. */
  const rollout = (groups: number, firstGroup: number, timing: PhaseTiming): Promise<Trajectory[]> => {
    const specs: EpisodeSpec[] = [];
    for (let g = 0; g < groups; g++) {
      const task = tasks[taskRng.int(tasks.length)]!;
      for (let i = 0; i < config.groupSize; i++) specs.push({ task, group: firstGroup + g, indexInGroup: i });
    }
    return runEpisodes(specs, () => env.create(config.envOptions), actor, { maxTurns: config.maxTurns, sampleRng, verifierRng, timing, maxInFlight: config.maxInFlight });
  };
  // Asynchronous mode: the rollout stream samples into a queue of finished groups while this loop
  // learns; both share the policy's engines (the stream samples between the learner's steps).
  let streamGroup = 0;
  const stream = config.mode === 'async'
    ? new AsyncRollout({
        capacity: config.queueGroups > 0 ? config.queueGroups : (config.maxStaleness + 1) * config.groupsPerIteration,
        groupsPerTake: config.groupsPerIteration, maxStaleness: config.maxStaleness,
        producer: (side) => new EpisodeStream(actor, {
          maxTurns: config.maxTurns, sampleRng, verifierRng, timing: side.timing, maxInFlight: config.maxInFlight,
          makeEnv: () => env.create(config.envOptions),
          onGroup: (group) => side.push(group),
          nextGroup: () => {
            const admitted = side.admit();
            if (admitted !== 'start') return admitted;
            const task = tasks[taskRng.int(tasks.length)]!;
            const group = streamGroup++;
            return Array.from({ length: config.groupSize }, (_, i) => ({ task, group, indexInGroup: i }));
          },
        }),
      })
    : undefined;

  // Fails here, before anything is stored, when the machine lacks what the environment needs.
  const environment = env.preflight?.(config.envOptions);
  const runtime = { ...options.runtime(policy.compute), ...(environment ? { environment } : {}) };
  let iterationMsTotal = resume?.iterationMsTotal ?? 0;
  let nonFiniteInARow = resume?.nonFiniteInARow ?? 0;
  let storeMs = 0;
  let resumeDir: string | undefined;
  /** A resume point after iteration `it` (its results are stored already). */
  const saveResumePoint = async (it: number): Promise<void> => {
    if (!resumeDir) return;
    options.onPhase?.({ kind: 'saving' });
    await writeResumePoint(resumeDir, {
      iteration: it, rng: { tasks: taskRng.state(), sample: sampleRng.state(), verifier: verifierRng.state() },
      learner: learner.state, iterationMsTotal, nonFiniteInARow,
    }, policy);
  };
  try {
    if (options.resume) {
      if (!sink.resume) throw new Error('this sink cannot continue a stored run');
      await policy.loadState(options.resume.policyDir);
      learner.restore(options.resume.state.learner);
      sink.resume(runtime);
    } else {
      sink.begin(config, runtime);
    }
    // asked once the run is stored (its folder is named after the run's id)
    resumeDir = options.resumeDir?.();
    if (!resume) sink.evaluation(await evaluate(0));
    stream?.start();
    let completedIteration = resume?.iteration ?? 0;
    for (let it = completedIteration + 1; it <= config.iterations; it++) {
      // Yield to the event loop once per iteration: with in-process environments every await above
      // resolves as a microtask, and signals, IPC messages and heartbeats would wait for the whole run.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) {
        await stream?.stop();
        // the next run continues from here: a resume point after the last stored iteration
        await saveResumePoint(completedIteration);
        const wallMs = Date.now() - t0;
        sink.end('cancelled', { wallMs });
        return { status: 'cancelled', iterations, evaluations, wallMs };
      }
      options.onPhase?.({ kind: 'iteration', iteration: it });
      const itStart = Date.now();
      let timing: PhaseTiming = { generateMs: 0, envMs: 0 };
      let pipelineMetrics: Partial<IterationMetrics> = {};
      let trajectories: Trajectory[];
      if (stream) {
        // G finished groups from the stream, none older than maxStaleness versions, numbered 0 … G−1
        const taken = await stream.take(policy.version);
        trajectories = taken.groups.flatMap((g, i) => g.map((t) => ({ ...t, group: i })));
        const produced = stream.stats();
        timing = produced.timing;
        const hist = [0, 1, 2].map((k) => taken.staleness.filter((s) => s === k).length);
        pipelineMetrics = {
          stalenessMean: mean(taken.staleness), stalenessMax: Math.max(0, ...taken.staleness), staleness0: hist[0]!, staleness1: hist[1]!, staleness2: hist[2]!,
          staleness3plus: taken.staleness.filter((s) => s >= 3).length, droppedStaleGroups: taken.dropped, queueDepth: taken.queueDepth,
          learnerIdleMs: taken.waitedMs, rolloutBusyMs: produced.busyMs, rolloutBlockedMs: produced.blockedMs,
        };
      } else {
        // Rollout: G groups × N episodes, each group on one task; with dynamic sampling, groups that
        // cannot teach anything are replaced by new ones, up to the configured number of extra rounds.
        trajectories = await rollout(config.groupsPerIteration, 0, timing);
      }
      const adv = learner.assignAdvantages(trajectories);
      let zeroVarianceGroups = adv.zeroVarianceGroups;
      let resampledGroups = 0;
      const replaced = new Set<number>();
      if (!stream && config.method === 'grpo' && config.algorithm.dynamicSampling > 0) {
        // DAPO: a group that cannot teach anything is dropped and a new one sampled in its place, until
        // the batch holds groupsPerIteration informative groups or the rounds run out
        const drop = (ts: readonly Trajectory[]): number => {
          let useful = 0;
          for (const [g, members] of groupsOf(ts)) {
            if (informative(members)) useful += 1;
            else replaced.add(g);
          }
          return useful;
        };
        let useful = drop(trajectories);
        for (let round = 0; round < config.algorithm.dynamicSampling && useful < config.groupsPerIteration; round++) {
          const missing = config.groupsPerIteration - useful;
          const extra = await rollout(missing, config.groupsPerIteration + resampledGroups, timing);
          resampledGroups += missing;
          zeroVarianceGroups += learner.assignAdvantages(extra).zeroVarianceGroups;
          trajectories.push(...extra);
          useful += drop(extra);
        }
        // groups still uninformative after the last round stay out too: they would only dilute the batch
      }

      // staleness for every run that samples itself (seed 001): versions between the weights that
      // sampled a group and the ones it updates (0 by construction in sync mode; the stream's histogram
      // in async mode); SFT's demonstrations have no version to be behind
      if (!stream && actor === policy) {
        const behind = [...groupsOf(trajectories).values()].map((g) => policy.version - oldestVersion(g));
        pipelineMetrics = { stalenessMean: mean(behind), stalenessMax: Math.max(0, ...behind) };
      }
      const report = await learner.update(trajectories, replaced);

      const rewards = trajectories.map((t) => t.outcome.reward);
      const rate = (f: (t: Trajectory) => boolean): number => trajectories.filter(f).length / trajectories.length;
      const ex = report.excluded;
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
        loss: report.loss, policyLoss: report.policyLoss, kl: report.kl, clipFraction: report.clipFraction, entropy: report.entropy,
        gradNorm: report.gradNorm, ratioMin: report.ratioMin, ratioMax: report.ratioMax,
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
        ...(report.nonFiniteSteps > 0 ? { nonFiniteSteps: report.nonFiniteSteps } : {}),
        ...(resampledGroups > 0 ? { resampledGroups } : {}),
        ...(report.optimizerSteps > 0 ? { learningRate: report.learningRate } : {}),
        policyVersion: policy.version,
        ...(stream && policy instanceof TransformerPolicy && policy.parallelism > 1 ? { weightSyncMs: policy.takeSyncMs() } : {}),
        wallMs: Date.now() - itStart,
        ...(config.policy === 'transformer' ? {
          clipFractionLow: report.clipFractionLow, clipFractionHigh: report.clipFractionHigh, dualClipFraction: report.dualClipFraction, approxKl: report.approxKl,
          ...(report.logprobMismatch !== undefined ? { logprobMismatch: report.logprobMismatch } : {}),
          ...(config.method === 'sft' && report.optimizerSteps > 0 ? { tokenAccuracy: report.tokenAccuracy } : {}),
        } : {}),
        ...languageMetrics(trajectories),
        ...rewardExtras(trajectories),
        ...meanStats(trajectories.map(statsOf)),
        phaseGenerateMs: timing.generateMs,
        phaseEnvMs: timing.envMs,
        phaseReferenceMs: report.phaseReferenceMs,
        phaseUpdateMs: report.phaseUpdateMs,
        phaseStoreMs: storeMs,
        phaseEvaluateMs: 0,
        ...pipelineMetrics,
        ...(report.importanceWeightMean !== undefined ? { importanceWeightMean: report.importanceWeightMean, importanceTruncated: report.importanceTruncated } : {}),
      };
      // the last update is done: what the stream would still sample is never used
      if (stream && it === config.iterations) await stream.stop();
      const due = it === config.iterations || (config.evalInterval > 0 && it % config.evalInterval === 0);
      const tEval = Date.now();
      const evaluation = due ? await evaluate(it) : undefined;
      const record = { ...metrics, phaseEvaluateMs: Date.now() - tEval };
      const tStore = Date.now();
      sink.iteration({ metrics: record, trajectories, ...(evaluation ? { evaluation } : {}) });
      storeMs = Date.now() - tStore;
      iterations.push(record);
      iterationMsTotal += record.wallMs;
      completedIteration = it;
      if (config.checkpointEvery > 0 && it % config.checkpointEvery === 0 && it < config.iterations) await saveResumePoint(it);
      // A loss that is not finite skipped its step; many in a row mean the run has diverged.
      nonFiniteInARow = report.nonFiniteSteps > 0 && report.optimizerSteps === 0 ? nonFiniteInARow + 1 : 0;
      if (nonFiniteInARow >= config.maxNonFiniteIterations) {
        throw new Error(`the loss was NaN or infinite in ${nonFiniteInARow} iterations in a row (the last ${it}); their steps were skipped and the run stops here (maxNonFiniteIterations ${config.maxNonFiniteIterations}). Fix: a smaller algorithm.learningRate or maxGradNorm, or look at iteration ${it}'s rewards and advantages; iterations stored so far are complete`);
      }
      options.onProgress?.({
        iteration: it, iterations: config.iterations, rewardMean: record.rewardMean, successRate: record.successRate, elapsedMs: Date.now() - t0,
        etaMs: remainingMs(iterationMsTotal, it, config.iterations - it), metrics: record, ...(evaluation ? { evaluation } : {}),
      });
    }
    await stream?.stop();
    const dir = options.checkpointDir?.();
    if (dir && policy.save) {
      options.onPhase?.({ kind: 'saving' });
      const file = await policy.save(dir, `${methodLabel(config.method, config.algorithm)} on ${config.env}, seed ${config.seed}, ${config.iterations} iterations`);
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
    await stream?.stop().catch(() => undefined);
    await policy.dispose?.();
    await env.dispose?.();
  }
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
