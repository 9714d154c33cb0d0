// Where a trainer hands its results. The engine knows no storage: the CLI and the worker plug in the
// SQLite writer, tests plug in MemorySink.
import type { BaseWeights } from '../../shared/baseWeights';
import type { RunConfig } from '../../shared/runConfig';
import type { EvaluationResult, IterationMetrics, RunStatus, Trajectory } from '../../shared/types';
import type { JudgeCache, JudgeExchange } from './judge/judgeStage';

export interface IterationRecord {
  readonly metrics: IterationMetrics;
  readonly trajectories: readonly Trajectory[];
  /** Evaluation run after this iteration's update, if one was due. */
  readonly evaluation?: EvaluationResult;
  /** Each group's exchange with the judge (reward.judge), stored beside its trajectories. */
  readonly judge?: readonly JudgeExchange[];
}

/** What a run computes on, known once its policy and environment are open (the sink records it with the run). */
export interface RunStart {
  /** The policy's compute: backend, model, what is trained. */
  readonly compute: string;
  /** Why the policy computes there (its compute path's reason), where it says. */
  readonly computeReason?: string;
  /** How the policy's language model held its weights (q8, bf16, f32: shared/baseWeights.ts), where it has one. */
  readonly baseWeights?: BaseWeights;
  /** What the environment uses on this machine (the sandbox level and interpreter), if anything. */
  readonly environment?: string;
  /** The distillation teacher's compute, model and folder, where the run has one. */
  readonly teacher?: string;
}

/** Where a run's files go; a folder left out is not written. */
export interface RunFolders {
  /** The final checkpoint. */
  readonly checkpoint?: string;
  /** Resume points (every checkpointEvery iterations, and when cancelled). */
  readonly resume?: string;
}

export interface RunSink {
  /** Before anything runs. */
  begin(config: RunConfig, start: RunStart): void;
  /**
   * Instead of `begin`, when a stored run continues from a resume point: the sink already holds the
   * run and its iterations up to the resume point (and nothing after it).
   */
  resume?(start: RunStart): void;
  /** Where the run's files go, asked once it has begun (a store names them after the run's id); none when absent. */
  folders?(): RunFolders;
  /** The evaluation before training (iteration 0). */
  evaluation(result: EvaluationResult): void;
  /** One finished iteration: stored atomically (all of it or none). */
  iteration(record: IterationRecord): void;
  /** Once, at the end; wallMs covers the whole run including evaluations. */
  end(status: RunStatus, info: RunEnd): void;
  /** Judge answers stored before (this run's or others'), by cache key: a store's; none in memory. */
  readonly judgeCache?: JudgeCache;
}

export interface RunEnd {
  readonly wallMs: number;
  readonly error?: string;
}

/** Keeps everything in memory (tests, and callers that only want the returned summary); files go to the folders given, if any. */
export class MemorySink implements RunSink {
  config: RunConfig | undefined;
  start: RunStart | undefined;
  readonly evaluations: EvaluationResult[] = [];
  readonly iterations: IterationRecord[] = [];
  status: RunStatus | undefined;
  ended: RunEnd | undefined;
  constructor(private readonly files: RunFolders = {}) {}
  begin(config: RunConfig, start: RunStart): void {
    this.config = config;
    this.start = start;
  }
  folders(): RunFolders {
    return this.files;
  }
  /** Continues in memory: records after the resume point must have been dropped by the caller. */
  resume(start: RunStart): void {
    this.start = start;
    this.status = undefined;
    this.ended = undefined;
  }
  evaluation(result: EvaluationResult): void {
    this.evaluations.push(result);
  }
  iteration(record: IterationRecord): void {
    this.iterations.push(record);
    if (record.evaluation) this.evaluations.push(record.evaluation);
  }
  end(status: RunStatus, info: RunEnd): void {
    this.status = status;
    this.ended = info;
  }
}
