// What a run trains with, opened once before its first iteration: the environment (its files read and
// checked, its sandboxes owned by the run), the policy built from its own options, the learner, the
// actor that samples (the policy, or for SFT the environment's reference agent written in the policy's
// tokens), the random streams (fresh, or a resume point's), and the evaluation. close() releases all of
// it, and a failure while opening releases what was opened.
import { methodLabel } from '../../shared/algorithm';
import type { RunConfig } from '../../shared/runConfig';
import type { EvaluationResult } from '../../shared/types';
import { openEnvironment } from '../envs/registry';
import type { RunEnvironment } from '../envs/environment';
import type { TeacherScorer } from '../algo/distill';
import { createPolicy, optimizerOptions, type PolicyRunInfo } from '../policies/createPolicy';
import { createTeacher } from '../policies/teacher';
import type { Policy, TrainablePolicy } from '../policies/policy';
import { referenceAgentFor } from '../policies/scripted/demonstrations';
import { Rng } from '../random';
import { batchSource, type BatchSource, type TrainingStreams } from './batchSource';
import { evaluatePolicy } from './evaluate';
import { takeJudgeKey } from './judge/judgeKeyStore';
import { JudgeStage, type JudgeCache } from './judge/judgeStage';
import { Learner } from './learner';
import { writeResumePoint, type ResumePoint } from './resumePoint';

/** Optimizer steps a run takes at most: the end of a learning-rate decay. */
export function plannedSteps(config: RunConfig): number {
  const batch = config.groupsPerIteration * config.groupSize;
  const mb = config.algorithm.minibatchSize > 0 ? config.algorithm.minibatchSize : batch;
  const planned = config.iterations * config.algorithm.epochs * Math.ceil(batch / mb);
  return config.optimizerSteps > 0 ? Math.min(planned, config.optimizerSteps) : planned;
}

/**
 * The judge of a run with reward.judge, with its key (taken from the environment by open(), before the
 * environment could start a program: judgeKeyStore.ts; '' when unset: a local judge needs none).
 */
function openJudge(config: RunConfig, env: RunEnvironment, apiKey: string, cache: JudgeCache | undefined): JudgeStage | undefined {
  const j = config.reward.judge;
  if (!j) return undefined;
  const prompts = new Map(env.tasks().train.map((t) => [t.id, t.prompt]));
  const endpoint = { baseUrl: j.baseUrl, apiKey, timeoutMs: j.timeoutMs, retries: j.retries };
  return new JudgeStage(j, endpoint, (id) => prompts.get(id) ?? '', cache);
}

/** What a policy needs to know of the run besides its own options. */
export function policyRunInfo(config: RunConfig): PolicyRunInfo {
  const a = config.algorithm;
  return {
    seed: config.seed,
    optimizer: optimizerOptions(a),
    sampleRows: config.groupSize * config.groupsPerIteration,
    fullDistributions: (config.method === 'grpo' || config.method === 'distill') && a.klCoef > 0 && a.klEstimator === 'exact',
  };
}

/** The trainer's running totals, which a resume point carries over. */
export interface RunCounters {
  iterationMsTotal: number;
  nonFiniteInARow: number;
  /** Optimizer steps taken so far (optimizerSteps ends a run on them). */
  optimizerSteps: number;
}

export class TrainingRun {
  private constructor(
    readonly config: RunConfig,
    readonly env: RunEnvironment,
    readonly policy: TrainablePolicy,
    readonly learner: Learner,
    readonly batches: BatchSource,
    private readonly streams: TrainingStreams,
    readonly counters: RunCounters,
    /** The frozen teacher (method distill, or GRPO with a teacher term). */
    readonly teacher: TeacherScorer | undefined,
  ) {}

  /** Opens everything; `environment` replaces the config's (tests inject faults through it). */
  static async open(
    config: RunConfig,
    o: { readonly resume?: ResumePoint; readonly environment?: RunEnvironment; readonly sink?: { readonly judgeCache?: JudgeCache } },
  ): Promise<TrainingRun> {
    // the judge's key leaves process.env first: the environment may start programs (an agent program,
    // verifiers' Python, an OpenEnv server, the reasoning-gym harness) and they inherit process.env
    const judgeKey = config.reward.judge ? takeJudgeKey(config.reward.judge.apiKeyEnv) : '';
    // task, tool and reward files are read and checked before anything else (no run row exists yet)
    const env = o.environment ?? (await openEnvironment(config));
    let policy: TrainablePolicy | undefined;
    let teacher: TeacherScorer | undefined;
    try {
      policy = await createPolicy(config, policyRunInfo(config), env);
      teacher = await openTeacher(config);
      const learner = new Learner(policy, {
        ...(teacher ? { teacher } : {}),
        method: config.method,
        settings: config.algorithm,
        totalSteps: plannedSteps(config),
        seed: config.seed,
        imitate: 'imitate' in config.demonstrations ? config.demonstrations.imitate : 'all',
      });
      const actor = config.method === 'sft' ? demonstrator(config, policy) : policy;
      const saved = o.resume?.state;
      const streams: TrainingStreams = {
        tasks: saved ? Rng.fromState(saved.rng.tasks) : Rng.stream(config.seed, 'train/tasks'),
        sample: saved ? Rng.fromState(saved.rng.sample) : Rng.stream(config.seed, 'train/sample'),
        verifier: saved ? Rng.fromState(saved.rng.verifier) : Rng.stream(config.seed, 'train/verifier'),
      };
      const judge = openJudge(config, env, judgeKey, o.sink?.judgeCache);
      const batches = batchSource({ config, env, actor, learner, streams, selfSampled: actor === policy, ...(judge ? { judge } : {}) });
      const counters = {
        iterationMsTotal: saved?.iterationMsTotal ?? 0,
        nonFiniteInARow: saved?.nonFiniteInARow ?? 0,
        optimizerSteps: saved?.optimizerSteps ?? 0,
      };
      return new TrainingRun(config, env, policy, learner, batches, streams, counters, teacher);
    } catch (e) {
      await teacher?.dispose();
      await policy?.dispose?.();
      await env.dispose();
      throw e;
    }
  }

  /** Continues from a resume point: the policy's weights, optimizer and reference, and the learner's steps. */
  async restore(point: ResumePoint): Promise<void> {
    await this.policy.loadState(point.policyDir);
    this.learner.restore(point.state.learner);
  }

  /** The held-out evaluation after iteration `iteration` (0 = before training), sampled and greedy. */
  evaluate(iteration: number): Promise<EvaluationResult> {
    const c = this.config;
    const greedy = this.policy.greedy?.();
    return evaluatePolicy(this.policy, this.env, {
      episodes: c.evalEpisodes,
      seed: c.evalSeed,
      maxTurns: c.maxTurns,
      iteration,
      passK: c.evalPassK,
      ...(greedy ? { greedy } : {}),
    });
  }

  /** A resume point in `dir` after iteration `iteration` (its results are stored already). */
  saveResumePoint(dir: string, iteration: number): Promise<void> {
    const s = this.streams;
    return writeResumePoint(
      dir,
      {
        iteration,
        rng: { tasks: s.tasks.state(), sample: s.sample.state(), verifier: s.verifier.state() },
        learner: this.learner.state,
        ...this.counters,
      },
      this.policy,
      this.config.checkpointEvery, // states at its multiples are kept: forks start from them
    );
  }

  /** The final checkpoint in `dir` (a policy that saves), described by what trained it; returns its file. */
  saveCheckpoint(dir: string): Promise<string> {
    const c = this.config;
    if (!this.policy.save) throw new Error(`a ${c.policy} policy writes no checkpoint`);
    return this.policy.save(dir, `${methodLabel(c.method, c.algorithm)} on ${c.env}, seed ${c.seed}, ${c.iterations} iterations`);
  }

  async close(): Promise<void> {
    await this.batches.stop().catch(() => undefined);
    await this.teacher?.dispose();
    await this.policy.dispose?.();
    await this.env.dispose();
  }
}

/** The teacher a run names, where its method scores with one (distill, or GRPO with teacherWeight > 0). */
function openTeacher(config: RunConfig): Promise<TeacherScorer | undefined> {
  if (config.policy !== 'transformer' || config.policyOptions.teacher === '') return Promise.resolve(undefined);
  const w = config.method === 'distill' || config.method === 'grpo' ? config.algorithm.teacherWeight : 0;
  return w > 0 ? createTeacher(config.policyOptions, policyRunInfo(config)) : Promise.resolve(undefined);
}

/** SFT learns from the environment's scripted reference agent, written in the policy's tokens. */
function demonstrator(config: RunConfig, policy: TrainablePolicy): Policy {
  const agent = referenceAgentFor(config);
  if (!agent || !policy.demonstrator) throw new Error(`method sft needs a reference agent for env ${config.env} and a language-model policy`);
  return policy.demonstrator(agent);
}
