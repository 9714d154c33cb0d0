// `agent-rl import verl`: reads a trainer.rollout_data_dir (and a validation_data_dir) into the store
// as a run, and with `follow` keeps reading while verl writes. Only complete lines are read (a line
// still being written is left until its newline arrives); a malformed line is counted and reported
// with its file and line and never stops the import; a re-import continues from the stored progress.
import type Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { RuntimeInfo } from '../../shared/types';
import { ImportWriter, type FileProgress, type ImportKind } from '../importWriter';
import { readVerlConfig, runSettings, type VerlConfigFile } from './verlConfig';
import { addValidation, buildStep, validationEvaluation } from './verlStep';
import { parseDumpLine, type VerlSample } from './verlSample';

export interface VerlImportOptions {
  readonly rolloutDir: string;
  readonly validationDir?: string;
  readonly configFile?: string;
  readonly name?: string;
  readonly follow?: boolean;
  /** How often a follow looks for new lines (ms). */
  readonly pollMs?: number;
  readonly signal?: AbortSignal;
  readonly runtime: RuntimeInfo;
  readonly onEvent?: (e: ImportEvent) => void;
}

export type ImportEvent =
  | { readonly type: 'run'; readonly runId: number; readonly name: string; readonly created: boolean }
  | { readonly type: 'step'; readonly runId: number; readonly step: number; readonly added: number; readonly trajectories: number; readonly rewardMean: number }
  | { readonly type: 'evaluation'; readonly runId: number; readonly step: number; readonly episodes: number; readonly successRate: number }
  | { readonly type: 'malformed'; readonly file: string; readonly line: number; readonly reason: string }
  | { readonly type: 'pending'; readonly file: string; readonly line: number };

export interface ImportSummary {
  readonly runId: number;
  readonly name: string;
  readonly created: boolean;
  readonly steps: number;
  readonly trajectories: number;
  readonly evaluations: number;
  /** Malformed lines met by this import, and over every import of the run. */
  readonly malformed: number;
  readonly malformedTotal: number;
}

export class ImportInputError extends Error {
  override name = 'ImportInputError';
}

const STEP_FILE = /^(\d+)\.jsonl$/;

function checkDir(flag: string, dir: string): string {
  let st: fs.Stats;
  try {
    st = fs.statSync(dir);
  } catch {
    throw new ImportInputError(
      `${flag} ${dir}: no such folder. Fix: pass the folder verl's trainer.${flag === 'DIR' ? 'rollout_data_dir' : 'validation_data_dir'} points at (it holds 1.jsonl, 2.jsonl, …).`,
    );
  }
  if (!st.isDirectory()) throw new ImportInputError(`${flag} ${dir}: not a folder. Fix: pass the folder that holds verl's {step}.jsonl files, not a file.`);
  return fs.realpathSync(dir);
}

/** Step files of a folder, by step number. */
function stepFiles(dir: string): { file: string; step: number }[] {
  return fs
    .readdirSync(dir)
    .flatMap((f) => {
      const m = STEP_FILE.exec(f);
      return m ? [{ file: f, step: Number(m[1]) }] : [];
    })
    .sort((a, b) => a.step - b.step);
}

export async function importVerl(db: Database.Database, o: VerlImportOptions): Promise<ImportSummary> {
  const rolloutDir = checkDir('DIR', o.rolloutDir);
  const validationDir = o.validationDir === undefined ? undefined : checkDir('--validation', o.validationDir);
  const config: VerlConfigFile | undefined = o.configFile === undefined ? undefined : readVerlConfig(o.configFile);
  const writer = new ImportWriter(db);
  const source = `verl:${rolloutDir}`;
  const settings = runSettings(config?.config);
  const storedConfig = {
    source: 'verl',
    rolloutDir,
    validationDir: validationDir ?? null,
    configFile: config ? path.resolve(config.file) : null,
    groupSize: settings.groupSize ?? null,
    advEstimator: settings.advEstimator ?? null,
    modelPath: settings.modelPath ?? null,
    verlConfig: config?.config ?? null,
    verlConfigText: config?.text ?? null,
  };
  const found = writer.findRun(source);
  const name = o.name ?? settings.experimentName ?? path.basename(rolloutDir);
  const runId =
    found ??
    writer.createRun(
      {
        name,
        env: 'verl',
        policy: 'verl',
        method: settings.advEstimator ?? 'verl',
        seed: settings.seed ?? 0,
        iterationsPlanned: settings.totalTrainingSteps ?? 0,
        config: storedConfig,
        runtime: o.runtime,
        source,
      },
      'running',
    );
  if (found !== undefined) {
    writer.setStatus(runId, 'running');
    if (config) db.prepare('UPDATE runs SET config_json = ? WHERE id = ?').run(JSON.stringify(storedConfig), runId);
  }
  const runName = (db.prepare('SELECT name FROM runs WHERE id = ?').get(runId) as { name: string }).name;
  o.onEvent?.({ type: 'run', runId, name: runName, created: found === undefined });
  const totals = { steps: new Set<number>(), trajectories: 0, evaluations: new Set<number>(), malformed: 0 };
  const reportedPending = new Set<string>();

  /** Reads what is new in one file: complete lines only. */
  const readFile = (kind: ImportKind, dir: string, file: string, step: number): void => {
    const full = path.join(dir, file);
    const p: FileProgress = writer.progress(runId, kind, file);
    let size: number;
    try {
      size = fs.statSync(full).size;
    } catch {
      return; // removed meanwhile
    }
    if (size <= p.bytes) return;
    const buf = Buffer.alloc(size - p.bytes);
    const fd = fs.openSync(full, 'r');
    try {
      fs.readSync(fd, buf, 0, buf.length, p.bytes);
    } finally {
      fs.closeSync(fd);
    }
    const end = buf.lastIndexOf(10) + 1; // bytes up to and including the last newline
    if (end < buf.length && !o.follow && !reportedPending.has(full)) {
      reportedPending.add(full);
      o.onEvent?.({ type: 'pending', file: full, line: p.lines + buf.subarray(0, end).reduce((n, b) => n + (b === 10 ? 1 : 0), 0) + 1 });
    }
    if (end === 0) return;
    const samples: VerlSample[] = [];
    let lines = 0;
    let malformed = 0;
    for (let start = 0; start < end;) {
      const nl = buf.indexOf(10, start);
      lines += 1;
      const text = buf.toString('utf8', start, nl);
      start = nl + 1;
      if (text.trim() === '') continue;
      const r = parseDumpLine(text, step);
      if (r.ok) samples.push(r.sample);
      else {
        malformed += 1;
        o.onEvent?.({ type: 'malformed', file: full, line: p.lines + lines, reason: r.reason });
      }
    }
    totals.malformed += malformed;
    const base = { bytes: p.bytes + end, lines: p.lines + lines, malformed: p.malformed + malformed };
    if (kind === 'validation') {
      const state = addValidation(p.state, samples);
      const e = validationEvaluation(step, state);
      if (e.episodes === 0) writer.saveProgress(runId, kind, file, { ...base, state });
      else {
        writer.writeEvaluation(runId, file, e, { ...base, state });
        totals.evaluations.add(step);
        o.onEvent?.({ type: 'evaluation', runId, step, episodes: e.episodes, successRate: e.successRate });
      }
      return;
    }
    if (samples.length === 0) {
      writer.saveProgress(runId, kind, file, { ...base, state: p.state });
      return;
    }
    const built = buildStep(step, samples, p.bytes === 0 ? [] : writer.members(runId, step));
    writer.writeStep(runId, file, built.metrics, built.rows, built.advantages, { ...base, state: p.state });
    totals.steps.add(step);
    totals.trajectories += built.rows.length;
    o.onEvent?.({ type: 'step', runId, step, added: built.rows.length, trajectories: built.metrics.trajectories, rewardMean: built.metrics.rewardMean });
  };

  const scan = (): void => {
    for (const { file, step } of stepFiles(rolloutDir)) readFile('rollout', rolloutDir, file, step);
    if (validationDir) for (const { file, step } of stepFiles(validationDir)) readFile('validation', validationDir, file, step);
  };

  try {
    scan();
    while (o.follow && !o.signal?.aborted) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, o.pollMs ?? 1000);
        o.signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(t);
            resolve();
          },
          { once: true },
        );
      });
      if (o.signal?.aborted) break;
      scan();
      writer.setStatus(runId, 'running');
    }
    writer.setStatus(runId, 'completed');
  } catch (e) {
    writer.setStatus(runId, 'failed', `import stopped: ${e instanceof Error ? e.message : String(e)}`);
    throw e;
  }
  return {
    runId,
    name: runName,
    created: found === undefined,
    steps: totals.steps.size,
    trajectories: totals.trajectories,
    evaluations: totals.evaluations.size,
    malformed: totals.malformed,
    malformedTotal: writer.malformedTotal(runId),
  };
}
