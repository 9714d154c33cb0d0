// Where a trainer hands its results. The engine knows no storage: the CLI and the worker plug in the
// SQLite writer, tests plug in MemorySink.
import type { RunConfig } from '../../shared/runConfig';
import type { EvaluationResult, IterationMetrics, RunStatus, RuntimeInfo, Trajectory } from '../../shared/types';

export interface IterationRecord {
  readonly metrics: IterationMetrics;
  readonly trajectories: readonly Trajectory[];
  /** Evaluation run after this iteration's update, if one was due. */
  readonly evaluation?: EvaluationResult;
}

export interface RunSink {
  /** Before anything runs. */
  begin(config: RunConfig, runtime: RuntimeInfo): void;
  /**
   * Instead of `begin`, when a stored run continues from a resume point: the sink already holds the
   * run and its iterations up to the resume point (and nothing after it).
   */
  resume?(runtime: RuntimeInfo): void;
  /** The evaluation before training (iteration 0). */
  evaluation(result: EvaluationResult): void;
  /** One finished iteration: stored atomically (all of it or none). */
  iteration(record: IterationRecord): void;
  /** Once, at the end; wallMs covers the whole run including evaluations. */
  end(status: RunStatus, info: RunEnd): void;
}

export interface RunEnd {
  readonly wallMs: number;
  readonly error?: string;
}

/** Keeps everything in memory (tests, and callers that only want the returned summary). */
export class MemorySink implements RunSink {
  config: RunConfig | undefined;
  runtime: RuntimeInfo | undefined;
  readonly evaluations: EvaluationResult[] = [];
  readonly iterations: IterationRecord[] = [];
  status: RunStatus | undefined;
  ended: RunEnd | undefined;
  begin(config: RunConfig, runtime: RuntimeInfo): void {
    this.config = config;
    this.runtime = runtime;
  }
  /** Continues in memory: records after the resume point must have been dropped by the caller. */
  resume(runtime: RuntimeInfo): void {
    this.runtime = runtime;
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
