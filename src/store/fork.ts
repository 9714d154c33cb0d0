// Forking a stored run: a new run that starts from the parent's kept resume point after iteration N,
// with the parent's stored config (read as data; the interpreter and sandbox level are the user's)
// and, optionally, changes merged over it (shared/forkConfig.ts says which may change). The child's
// store holds only its own iterations (N+1 on) and points at its parent (runs.parent_run_id,
// runs.fork_iteration): the parent's iterations up to N are read from the parent, never copied, so a
// fork costs no database space before it trains. Nothing is written here: a refused fork stores nothing.
import type Database from 'better-sqlite3';
import { keptResumeIterations, readResumePointAt, type ResumePoint } from '../rl/train/resumePoint';
import { forkConfig } from '../shared/forkConfig';
import { agentProgramRun, ConfigError, readStoredRunConfig, trainedSmallGpt, type RunConfig } from '../shared/runConfig';
import { resumeDirFor } from './openStore';
import { agentProgramStored, ResumeError, smallGptRun, userSandbox, type ResumeSandbox } from './resume';
import { RunReader } from './runReader';

export interface ForkPlan {
  readonly parentId: number;
  /** The parent's iteration the fork starts after. */
  readonly at: number;
  readonly config: RunConfig;
  readonly point: ResumePoint;
  /** What the stored config asked for that the fork does not use (the interpreter, the sandbox level). */
  readonly notes: readonly string[];
}

/** The kept iterations nearest to `at` (the one below and the one above), for the error message. */
function nearest(kept: readonly number[], at: number): string {
  const below = kept.filter((k) => k < at).at(-1);
  const above = kept.find((k) => k > at);
  const near = [below, above].filter((k): k is number => k !== undefined);
  return near.length > 0 ? `the nearest with one: ${near.join(' and ')}` : 'it has none';
}

/**
 * Checks run `ref` (an id or a name) can be forked after iteration `at` with `changes` (a RunConfig
 * fragment, {} for none) and returns the plan. Throws ResumeError or ConfigError saying what to do.
 */
export function prepareFork(
  db: Database.Database,
  dbFile: string,
  ref: string,
  at: number,
  changes: unknown = {},
  sandbox: ResumeSandbox = { python: '', sandbox: 'auto' },
): ForkPlan {
  const reader = new RunReader(db);
  const run = reader.findRun(ref);
  if (!run) throw new ResumeError(`no run "${ref}" in ${dbFile}. Fix: \`agent-rl runs\` lists the runs; give an id or a name`);
  const row = db.prepare('SELECT config_json, source FROM runs WHERE id = ?').get(run.id) as { config_json: string; source: string | null };
  if (row.source !== null) throw new ResumeError(`run ${run.id} was imported (${row.source}): it has no saved training state to fork from`);
  if (!Number.isInteger(at) || at < 1) throw new ResumeError(`--at ${at}: give the iteration to fork after, a whole number ≥ 1`);
  const stored = db.prepare('SELECT 1 FROM iterations WHERE run_id = ? AND iteration = ?').get(run.id, at);
  if (!stored) throw new ResumeError(`run ${run.id} has no stored iteration ${at} (it has ${run.iterationsDone}). Fix: fork at an iteration it stored`);
  const storedConfig = JSON.parse(row.config_json) as unknown;
  if (trainedSmallGpt(storedConfig)) throw new ResumeError(smallGptRun(run.id, 'forked'));
  if (agentProgramRun(storedConfig)) throw new ResumeError(agentProgramStored(run.id, 'forked'));
  let parent: RunConfig;
  try {
    parent = readStoredRunConfig(storedConfig);
  } catch (e) {
    const why = e instanceof ConfigError ? e.message : String(e);
    throw new ResumeError(`run ${run.id}'s stored config is not valid for this release, so it cannot be forked:\n${why}`);
  }
  if (parent.mode !== 'sync') throw new ResumeError(`run ${run.id} ran the async schedule, whose resume points are not exact: only sync runs can be forked`);
  const dir = resumeDirFor(dbFile, run.id);
  const point = readResumePointAt(dir, at);
  if (!point) {
    const kept = keptResumeIterations(dir);
    throw new ResumeError(
      `run ${run.id} kept no saved state after iteration ${at} (states are kept every ${parent.checkpointEvery} iterations, its checkpointEvery; ${nearest(kept, at)}). ` +
        `Fix: fork at ${kept.length > 0 ? `one of ${kept.join(', ')}` : 'an iteration with a saved state, or train the run with a smaller checkpointEvery'}`,
    );
  }
  const base = { ...parent, name: `${parent.name.slice(0, 160)} (fork of run ${run.id} @ ${at})` };
  const config = userSandbox(forkConfig(base, changes, at), sandbox);
  return { parentId: run.id, at, config: config.config, point, notes: config.notes };
}
