// The trainer: collect a batch → learn from it → evaluate when due → report, iteration after
// iteration. Each iteration is handed to the sink as one record, so a store can write it in one
// transaction and a killed run leaves whole iterations only. Cancellation is honoured at iteration
// boundaries, after a resume point. What the run trains with is opened by TrainingRun; where batches
// come from (sync, dynamic sampling, the async stream) is batches.ts; the metrics are
// iterationMetrics.ts; the algorithm (advantages, what is trained, the loss, the steps) is the learner's.
import type { RunConfig } from '../../shared/runConfig';
import { remainingMs, type RunPhase } from '../../shared/runPhase';
import type { EvaluationResult, IterationMetrics, RunStatus } from '../../shared/types';
import type { RunEnvironment } from '../envs/environment';
import { iterationMetrics } from './iterationMetrics';
import type { ResumePoint } from './resumePoint';
import type { RunFolders, RunSink, RunStart } from './sink';
import { TrainingRun } from './trainingRun';

export { plannedSteps } from './trainingRun';

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

/** What a run reports as it goes, in order, on one channel. */
export type TrainEvent =
  /** What the run is doing now (loading, warm start, evaluating, iteration k, saving), from its first second. */
  | { readonly kind: 'phase'; readonly phase: RunPhase }
  /** An evaluation, the initial one (iteration 0) included. */
  | { readonly kind: 'evaluation'; readonly evaluation: EvaluationResult }
  | { readonly kind: 'progress'; readonly progress: Progress }
  /** The final checkpoint was written. */
  | { readonly kind: 'checkpoint'; readonly file: string };

export interface TrainOptions {
  readonly sink: RunSink;
  readonly signal?: AbortSignal;
  readonly onEvent?: (e: TrainEvent) => void;
  /** Continue a stored run from this resume point: the sink's `resume` is called instead of `begin`, and no iteration-0 evaluation runs again. */
  readonly resume?: ResumePoint;
  /** The environment to act in, instead of the one the config names (tests inject faults through it). */
  readonly environment?: RunEnvironment;
}

export interface TrainResult {
  readonly status: RunStatus;
  readonly iterations: IterationMetrics[];
  readonly evaluations: EvaluationResult[];
  readonly wallMs: number;
}

export async function train(config: RunConfig, options: TrainOptions): Promise<TrainResult> {
  const t0 = Date.now();
  const { sink } = options;
  const emit = options.onEvent ?? ((): void => undefined);
  const init = config.policy === 'transformer' ? config.policyOptions.init : '';
  emit({ kind: 'phase', phase: init !== '' ? { kind: 'warm-start', from: init } : { kind: 'loading' } });
  const run = await TrainingRun.open(config, options);
  const iterations: IterationMetrics[] = [];
  const evaluations: EvaluationResult[] = [];
  const evaluate = async (iteration: number): Promise<EvaluationResult> => {
    emit({ kind: 'phase', phase: { kind: 'evaluating', iteration } });
    const e = await run.evaluate(iteration);
    evaluations.push(e);
    emit({ kind: 'evaluation', evaluation: e });
    return e;
  };
  const finish = (status: RunStatus): TrainResult => {
    const wallMs = Date.now() - t0;
    sink.end(status, { wallMs });
    return { status, iterations, evaluations, wallMs };
  };
  const start = await preflight(run);
  try {
    const folders = await begin(run, options, start);
    const saveResumePoint = async (it: number): Promise<void> => {
      if (!folders.resume) return;
      emit({ kind: 'phase', phase: { kind: 'saving' } });
      await run.saveResumePoint(folders.resume, it);
    };
    if (!options.resume && config.evalEpisodes > 0) sink.evaluation(await evaluate(0));
    run.batches.start();
    let completed = options.resume?.state.iteration ?? 0;
    let storeMs = 0;
    for (let it = completed + 1; it <= config.iterations; it++) {
      // Yield to the event loop once per iteration: with in-process environments every await above
      // resolves as a microtask, and signals, IPC messages and heartbeats would wait for the whole run.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (options.signal?.aborted) {
        await run.batches.stop();
        await saveResumePoint(completed); // the next run continues after the last stored iteration
        return finish('cancelled');
      }
      emit({ kind: 'phase', phase: { kind: 'iteration', iteration: it } });
      const itStart = Date.now();
      const batch = await run.batches.next(run.policy.version);
      const report = await run.learner.update(batch.trajectories, batch.replaced);
      const metrics = iterationMetrics({
        ...batch,
        iteration: it,
        method: config.method,
        report,
        policyVersion: run.policy.version,
        wallMs: Date.now() - itStart,
        storeMs,
      });
      run.counters.optimizerSteps += report.optimizerSteps;
      // the last iteration: the planned one, or the one that took the run to its optimizer steps
      const last = it === config.iterations || (config.optimizerSteps > 0 && run.counters.optimizerSteps >= config.optimizerSteps);
      // the last update is done: what the stream would still sample is never used
      if (last) await run.batches.stop();
      const tEval = Date.now();
      const due = config.evalEpisodes > 0 && (last || (config.evalInterval > 0 && it % config.evalInterval === 0));
      const evaluation = due ? await evaluate(it) : undefined;
      const record = { ...metrics, phaseEvaluateMs: Date.now() - tEval };
      const tStore = Date.now();
      sink.iteration({
        metrics: record,
        trajectories: batch.trajectories,
        ...(evaluation ? { evaluation } : {}),
        ...(batch.judge ? { judge: batch.judge } : {}),
      });
      storeMs = Date.now() - tStore;
      iterations.push(record);
      run.counters.iterationMsTotal += record.wallMs;
      completed = it;
      // every checkpointEvery-th iteration and the last: a fork may continue a finished run (train it longer, or differently)
      if (config.checkpointEvery > 0 && (it % config.checkpointEvery === 0 || last)) await saveResumePoint(it);
      checkFinite(run, report, it);
      emit({ kind: 'progress', progress: progressOf(run, record, Date.now() - t0, evaluation) });
      if (last) break;
    }
    await run.batches.stop();
    if (folders.checkpoint && run.policy.save) {
      emit({ kind: 'phase', phase: { kind: 'saving' } });
      emit({ kind: 'checkpoint', file: await run.saveCheckpoint(folders.checkpoint) });
    }
    return finish('completed');
  } catch (e) {
    try {
      sink.end('failed', { wallMs: Date.now() - t0, error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
    } catch {
      // The sink may be what failed (a locked or full disk): the original error is the one to report.
    }
    throw e;
  } finally {
    await run.close();
  }
}

/**
 * What the run computes on, for the record; fails here, before anything is stored, when the machine
 * lacks what the environment needs (and releases what the run opened).
 */
async function preflight(run: TrainingRun): Promise<RunStart> {
  try {
    const environment = run.env.preflight?.();
    const { compute, computeReason, baseWeights } = run.policy;
    const teacher = run.teacher?.describe;
    return {
      compute,
      ...(computeReason ? { computeReason } : {}),
      ...(baseWeights ? { baseWeights } : {}),
      ...(environment ? { environment } : {}),
      ...(teacher ? { teacher } : {}),
    };
  } catch (e) {
    await run.close();
    throw e;
  }
}

/** The progress report after an iteration: its record, and the time left estimated from the iterations' own times. */
function progressOf(run: TrainingRun, record: IterationMetrics, elapsedMs: number, evaluation: EvaluationResult | undefined): Progress {
  const { iterations } = run.config;
  const it = record.iteration;
  const etaMs = remainingMs(run.counters.iterationMsTotal, it, iterations - it);
  return {
    iteration: it,
    iterations,
    rewardMean: record.rewardMean,
    successRate: record.successRate,
    elapsedMs,
    etaMs,
    metrics: record,
    ...(evaluation ? { evaluation } : {}),
  };
}

/** Stores the run, or continues the stored one from its resume point, with what it computes on; returns where its files go. */
async function begin(run: TrainingRun, options: TrainOptions, start: RunStart): Promise<RunFolders> {
  const { sink, resume } = options;
  if (resume) {
    if (!sink.resume) throw new Error('this sink cannot continue a stored run');
    await run.restore(resume);
    sink.resume(start);
  } else {
    sink.begin(run.config, start);
  }
  return sink.folders?.() ?? {};
}

/** A loss that is not finite skipped its step; many iterations in a row with one mean the run has diverged. */
function checkFinite(run: TrainingRun, report: { readonly nonFiniteSteps: number; readonly optimizerSteps: number }, it: number): void {
  const c = run.counters;
  c.nonFiniteInARow = report.nonFiniteSteps > 0 && report.optimizerSteps === 0 ? c.nonFiniteInARow + 1 : 0;
  const max = run.config.maxNonFiniteIterations;
  if (c.nonFiniteInARow >= max) {
    throw new Error(
      `the loss was NaN or infinite in ${c.nonFiniteInARow} iterations in a row (the last ${it}); their steps were skipped and the run stops here (maxNonFiniteIterations ${max}). Fix: a smaller algorithm.learningRate or maxGradNorm, or look at iteration ${it}'s rewards and advantages; iterations stored so far are complete`,
    );
  }
}
