// `agent-rl train`: validate (done by the caller), open the store, run the trainer with the SQLite sink,
// show progress, write the JSON record, print where the results are.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { methodLabel } from '../shared/algorithm';
import type { RunConfig } from '../shared/runConfig';
import { describePhase, progressFigures } from '../shared/runPhase';
import { showInvisibles } from '../shared/untrustedText';
import type { TrainEvent } from '../rl/train/trainer';
import { trainStored } from '../store/storedRun';
import { duration, evaluationLine, progressBar } from './format';
import { recordWarnings, type RunRecord } from './runRecord';
import { storedFindings } from '../store/storedFindings';
import { findingLines } from './healthCommand';
import type { FindingRecord } from '../shared/health/findings';

/** The trained run's findings for its record; a store that cannot be read again (locked, gone) costs the findings, not the finished run's exit code. */
function findingsAfterTraining(db: string, busyTimeoutMs: number, runId: number): FindingRecord[] {
  try {
    return storedFindings(db, busyTimeoutMs, runId);
  } catch (e) {
    process.stderr.write(
      `agent-rl: the run's health findings could not be read (${showInvisibles(e instanceof Error ? e.message : String(e))}); \`agent-rl health ${runId}\` reads them later\n`,
    );
    return [];
  }
}

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
function showEvent(
  stream: NodeJS.WriteStream,
  e: Exclude<TrainEvent, { kind: 'checkpoint' }>,
  run: { readonly method: string; readonly iterations: number },
): void {
  const tty = stream.isTTY === true;
  if (e.kind === 'phase') {
    if (e.phase.kind === 'iteration') return; // the bar (or the next progress line) says it
    const text = describePhase(e.phase, run.iterations);
    stream.write(tty ? `\r${text}…\x1b[K` : `${text}\n`);
  } else if (e.kind === 'evaluation') {
    stream.write(`${tty ? '\r\x1b[K' : ''}evaluation after iteration ${e.evaluation.iteration}: ${evaluationLine(e.evaluation)}\n`);
  } else {
    const p = e.progress;
    const text = [
      `iteration ${p.iteration}/${p.iterations}`,
      ...progressFigures(run.method, p.metrics),
      ...(p.etaMs >= 0 ? [`ETA ${duration(p.etaMs)}`] : []),
    ].join('  ');
    if (tty) {
      stream.write(`\r${progressBar(p.iteration, p.iterations)} ${text}\x1b[K`);
      if (p.iteration === p.iterations) stream.write('\n');
    } else if (p.iteration % Math.max(1, Math.ceil(p.iterations / 50)) === 0 || p.iteration === p.iterations) {
      stream.write(`${text}\n`);
    }
  }
}

/**
 * `agent-rl train`, or with `resume` (a run id or name) `agent-rl train --resume RUN`: the stored run
 * continues from its last resume point, with the stored config (read as data) in place of `config`.
 */
export async function trainCommand(
  given: RunConfig | undefined,
  options: TrainCommandOptions & {
    readonly resume?: string;
    readonly python?: string;
    /** `agent-rl train --fork RUN --at N`: a new run from RUN's saved state after N, changes merged over its config. */
    readonly fork?: { readonly run: string; readonly at: number; readonly changes: unknown };
  },
): Promise<number> {
  const controller = new AbortController();
  const onSignal = (): void => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
    process.stderr.write('\nagent-rl: cancelling after this iteration (press Ctrl-C again to stop at once)\n');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    let checkpoint: string | undefined;
    let config = given;
    let forkedFrom: RunRecord['forkedFrom'];
    const r = await trainStored({
      db: options.db,
      busyTimeoutMs: options.busyTimeoutMs,
      signal: controller.signal,
      ...(options.resume !== undefined ? { resume: { run: options.resume, python: options.python ?? '', sandbox: 'auto' } } : given ? { config: given } : {}),
      ...(options.fork ? { fork: { ...options.fork, python: options.python ?? '', sandbox: 'auto' } } : {}),
      onNotice: (n) => {
        if (n.kind === 'orphans') process.stderr.write(`agent-rl: marked ${n.count} run(s) whose process had died as failed\n`);
        else if (n.kind === 'continuing') {
          config = n.config;
          process.stderr.write(
            `agent-rl: continuing run ${n.runId} after iteration ${n.after}${n.dropped > 0 ? ` (the ${n.dropped} iteration(s) stored after that resume point run again)` : ''}\n`,
          );
        } else if (n.kind === 'forking') {
          config = n.config;
          forkedFrom = { runId: n.parentId, iteration: n.at };
          process.stderr.write(`agent-rl: forking run ${n.parentId} after iteration ${n.at} into a new run (iterations ${n.at + 1}–${n.config.iterations})\n`);
        } else process.stderr.write(`agent-rl: ${showInvisibles(n.text)}\n`);
      },
      onEvent: (e) => {
        // Language-model runs end with a checkpoint next to the database
        if (e.kind === 'checkpoint') checkpoint = path.dirname(e.file);
        else showEvent(process.stderr, e, { method: config?.method ?? 'grpo', iterations: config?.iterations ?? 0 });
      },
    });
    const { result } = r;
    config = r.config;
    // a continued run's record holds everything stored, from before the resume point too
    const record: RunRecord = {
      runId: r.runId,
      name: config.name,
      status: result.status,
      methodLabel: methodLabel(config.method, config.algorithm),
      database: options.db,
      config,
      ...(forkedFrom ? { forkedFrom } : {}),
      runtime: r.runtime!,
      iterations: r.stored?.iterations ?? result.iterations,
      evaluations: r.stored?.evaluations ?? result.evaluations,
      wallMs: result.wallMs,
      warnings: recordWarnings(r.stored?.iterations ?? result.iterations),
      findings: findingsAfterTraining(options.db, options.busyTimeoutMs, r.runId),
    };
    const out = process.stdout;
    const dbFlag = options.db === path.resolve('.agent-rl/runs.sqlite') ? '' : ` --db ${options.db}`;
    out.write(
      `run ${record.runId} "${showInvisibles(config.name)}" ${result.status} in ${duration(result.wallMs)} (${r.stored ? `${result.iterations.length} more iterations, ${record.iterations.length} in all` : `${result.iterations.length} iterations`})\n`,
    );
    if (forkedFrom)
      out.write(`  forked from run ${forkedFrom.runId} after iteration ${forkedFrom.iteration}: this run stores iterations ${forkedFrom.iteration + 1} on\n`);
    if (result.status === 'cancelled') out.write(`  continue it with: agent-rl train --resume ${record.runId}${dbFlag}\n`);
    const first = record.evaluations[0];
    const last = record.evaluations[record.evaluations.length - 1];
    // a fork's record starts after its fork iteration: its first evaluation is not one before training
    if (first)
      out.write(`  ${first.iteration === 0 ? 'evaluation before training' : `evaluation after iteration ${first.iteration}`}: ${evaluationLine(first)}\n`);
    if (last && last !== first) out.write(`  evaluation after training:  ${evaluationLine(last)}\n`);
    for (const w of record.warnings) out.write(`  warning: ${showInvisibles(w)}\n`);
    for (const f of record.findings) if (f.severity !== 'info') out.write(`  ${findingLines(f).join('\n  ')}\n`);
    out.write(`  database: ${options.db}  (agent-rl show ${record.runId}${dbFlag})\n`);
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
  }
}
