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

export async function trainCommand(config: RunConfig, options: TrainCommandOptions): Promise<number> {
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
    }).catch((e: unknown) => explainSqliteError(e, options.db));

    const record: RunRecord = {
      runId: writer.runId, name: config.name, status: result.status, methodLabel: methodLabel(config.method, config.algorithm), database: options.db, config, runtime: runtime!,
      iterations: result.iterations, evaluations: result.evaluations, wallMs: result.wallMs,
    };
    const out = process.stdout;
    out.write(`run ${record.runId} "${showInvisibles(config.name)}" ${result.status} in ${duration(result.wallMs)} (${result.iterations.length} iterations)\n`);
    const first = result.evaluations[0];
    const last = result.evaluations[result.evaluations.length - 1];
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
