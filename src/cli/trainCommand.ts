// `agent-rl train`: validate (done by the caller), open the store, run the trainer with the SQLite sink,
// show progress, write the JSON record, print where the results are.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { methodLabel } from '../shared/algorithm';
import type { RunConfig } from '../shared/runConfig';
import { describePhase, progressFigures, type RunPhase } from '../shared/runPhase';
import { showInvisibles } from '../shared/untrustedText';
import type { EvaluationResult, RuntimeInfo } from '../shared/types';
import { train, type Progress } from '../rl/train/trainer';
import { checkpointDirFor, explainSqliteError, openStore } from '../store/openStore';
import { prepareResume, resumeDirFor } from '../store/resume';
import { RunReader } from '../store/runReader';
import { markOrphanedRuns, RunWriter } from '../store/runWriter';
import { runtimeInfo } from '../store/runtimeInfo';
import { duration, evaluationLine, progressBar } from './format';
import type { RunRecord } from './runRecord';

export interface TrainCommandOptions {
  readonly db: string;
  readonly output: string | undefined;
  readonly busyTimeoutMs: number;
}

/**
 * Progress on stderr: a redrawn bar on a terminal, plain lines (about 50 per run) otherwise; what the
 * run is doing (loading, evaluating, saving) from its first second; SFT shows the model's loss and
 * token accuracy, the other methods reward and success; the ETA once a few iterations are done.
 */
function progressReporter(stream: NodeJS.WriteStream, method: string): { progress: (p: Progress) => void; phase: (p: RunPhase, iterations: number) => void; evaluation: (e: EvaluationResult) => void } {
  const tty = stream.isTTY === true;
  const phase = (p: RunPhase, iterations: number): void => {
    if (p.kind === 'iteration') return; // the bar (or the next progress line) says it
    stream.write(tty ? `\r${describePhase(p, iterations)}…\x1b[K` : `${describePhase(p, iterations)}\n`);
  };
  const evaluation = (e: EvaluationResult): void => {
    stream.write(`${tty ? '\r\x1b[K' : ''}evaluation after iteration ${e.iteration}: ${evaluationLine(e)}\n`);
  };
  const progress = (p: Progress): void => {
    const text = [`iteration ${p.iteration}/${p.iterations}`, ...progressFigures(method, p.metrics), ...(p.etaMs >= 0 ? [`ETA ${duration(p.etaMs)}`] : [])].join('  ');
    if (tty) {
      stream.write(`\r${progressBar(p.iteration, p.iterations)} ${text}\x1b[K`);
      if (p.iteration === p.iterations) stream.write('\n');
    } else if (p.iteration % Math.max(1, Math.ceil(p.iterations / 50)) === 0 || p.iteration === p.iterations) {
      stream.write(`${text}\n`);
    }
  };
  return { progress, phase, evaluation };
}

/**
 * `agent-rl train`, or with `resume` (a run id or name) `agent-rl train --resume RUN`: the stored run
 * continues from its last resume point, with the stored config (read as data) in place of `config`.
 */
export async function trainCommand(given: RunConfig | undefined, options: TrainCommandOptions & { readonly resume?: string; readonly python?: string }): Promise<number> {
  const store = openStore(options.db, { busyTimeoutMs: options.busyTimeoutMs });
  const controller = new AbortController();
  const onSignal = (): void => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
    process.stderr.write('\nagent-rl: cancelling after this iteration (press Ctrl-C again to stop at once)\n');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const orphans = markOrphanedRuns(store);
    if (orphans > 0) process.stderr.write(`agent-rl: marked ${orphans} run(s) whose process had died as failed\n`);
    const writer = new RunWriter(store);
    const plan = options.resume !== undefined ? prepareResume(store, options.db, options.resume, { python: options.python ?? '', sandbox: 'auto' }) : undefined;
    if (plan) {
      writer.attach(plan.runId);
      process.stderr.write(`agent-rl: continuing run ${plan.runId} after iteration ${plan.point.state.iteration}${plan.dropped > 0 ? ` (the ${plan.dropped} iteration(s) stored after that resume point run again)` : ''}\n`);
      for (const n of plan.notes) process.stderr.write(`agent-rl: ${showInvisibles(n)}\n`);
    }
    const config = plan?.config ?? given;
    if (!config) throw new Error('trainCommand: no config');
    let runtime: RuntimeInfo | undefined;
    let checkpoint: string | undefined;
    const reporter = progressReporter(process.stderr, config.method);
    const result = await train(config, {
      sink: writer,
      runtime: (compute) => (runtime = runtimeInfo(store, compute)),
      signal: controller.signal,
      onProgress: reporter.progress,
      onPhase: (p) => reporter.phase(p, config.iterations),
      onEvaluation: reporter.evaluation,
      // Language-model runs end with a checkpoint next to the database (checkpointDirFor)
      checkpointDir: () => checkpointDirFor(options.db, writer.runId),
      onCheckpoint: (file) => (checkpoint = path.dirname(file)),
      resumeDir: () => resumeDirFor(options.db, writer.runId),
      ...(plan ? { resume: plan.point } : {}),
    }).catch((e: unknown) => explainSqliteError(e, options.db));

    // a continued run's record holds everything stored, from before the resume point too
    const stored = plan ? new RunReader(store).detail(plan.runId) : undefined;
    const record: RunRecord = {
      runId: writer.runId, name: config.name, status: result.status, methodLabel: methodLabel(config.method, config.algorithm), database: options.db, config, runtime: runtime!,
      iterations: stored?.iterations ?? result.iterations, evaluations: stored?.evaluations ?? result.evaluations, wallMs: result.wallMs,
    };
    const out = process.stdout;
    out.write(`run ${record.runId} "${showInvisibles(config.name)}" ${result.status} in ${duration(result.wallMs)} (${plan ? `${result.iterations.length} more iterations, ${record.iterations.length} in all` : `${result.iterations.length} iterations`})\n`);
    if (result.status === 'cancelled') out.write(`  continue it with: agent-rl train --resume ${record.runId}${options.db === path.resolve('.agent-rl/runs.sqlite') ? '' : ` --db ${options.db}`}\n`);
    const first = record.evaluations[0];
    const last = record.evaluations[record.evaluations.length - 1];
    if (first) out.write(`  evaluation before training: ${evaluationLine(first)}\n`);
    if (last && last !== first) out.write(`  evaluation after training:  ${evaluationLine(last)}\n`);
    out.write(`  database: ${options.db}  (agent-rl show ${record.runId}${options.db === path.resolve('.agent-rl/runs.sqlite') ? '' : ` --db ${options.db}`})\n`);
    if (checkpoint) out.write(`  checkpoint: ${checkpoint}  (continue with --init ${checkpoint})\n`);
    if (options.output) {
      const file = path.resolve(options.output);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
      out.write(`  record: ${file}\n`);
    }
    return result.status === 'completed' ? 0 : 130;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    store.close();
  }
}
