// Continuing a stored run: find it, check it can continue (not completed, not still running, a resume
// point on disk), read its config as data (the interpreter and the sandbox level come from the user,
// never from the stored run), and drop whatever was stored after the resume point in one transaction,
// so the continued run stores every iteration exactly once.
import type Database from 'better-sqlite3';
import { readResumePoint, type ResumePoint } from '../rl/train/resumePoint';
import { agentProgramRun, ConfigError, isSandboxLevel, readStoredRunConfig, trainedSmallGpt, type RunConfig } from '../shared/runConfig';
import { resumeDirFor } from './openStore';
import { RunReader } from './runReader';
import { markOrphanedRuns } from './runWriter';

/** Where a run's resume points go: <its checkpoint folder>/resume. */
export { resumeDirFor };

export class ResumeError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  constructor(message: string) {
    super(message);
    this.name = 'ResumeError';
  }
}

/** Why a run of the small character-level GPT of earlier versions cannot be resumed or forked. */
export function smallGptRun(id: number, what: 'resumed' | 'forked'): string {
  return `run ${id} trained the small character-level GPT of earlier versions; that network is gone (small models are Hugging Face checkpoints on the engine now), so its saved state cannot be loaded and it cannot be ${what}. Its iterations, episodes and metrics stay readable in every view. Fix: start a new run with the same settings (agent-rl train --config, or Start Run)`;
}

/** Why a run of an agent program is not resumed, forked or rescored from its record: what a stored run holds never decides what runs here. */
export function agentProgramStored(id: number, what: 'resumed' | 'forked' | 'rescored'): string {
  return `run ${id} ran your own code (an agent program, a verifiers environment or an OpenEnv server's command), and such code is never started from what a run stored (a stored run is data, and could have been edited), so it cannot be ${what} from its record. Fix: start a new run from your config file (agent-rl train --config FILE, or Start Run), with policyOptions.init set to its checkpoint to go on from its weights`;
}

export interface ResumePlan {
  readonly runId: number;
  readonly config: RunConfig;
  readonly point: ResumePoint;
  /** Iterations stored after the resume point, dropped to be run again. */
  readonly dropped: number;
  /** What the stored config asked for that the continued run does not use (the interpreter, the sandbox level). */
  readonly notes: readonly string[];
}

/** The user's sandbox settings for a continued code run ('' = the default interpreter, 'auto' = the strongest level). */
export interface ResumeSandbox {
  readonly python: string;
  readonly sandbox: string;
}

/**
 * Checks run `ref` (an id or a name) can continue and prepares the database: the run is marked
 * running again (this process's pid) and everything after the resume point is deleted.
 */
export function prepareResume(db: Database.Database, dbFile: string, ref: string, sandbox: ResumeSandbox = { python: '', sandbox: 'auto' }): ResumePlan {
  markOrphanedRuns(db);
  const reader = new RunReader(db);
  const run = reader.findRun(ref);
  if (!run) throw new ResumeError(`no run "${ref}" in ${dbFile}. Fix: \`agent-rl runs\` lists the runs; give an id or a name`);
  if (run.status === 'completed')
    throw new ResumeError(
      `run ${run.id} completed all its ${run.iterationsPlanned} iterations: nothing to continue. Fix: start a new run; --init its checkpoint to train it further`,
    );
  if (run.status === 'running')
    throw new ResumeError(`run ${run.id} is still running (its process is alive). Fix: stop it first (Ctrl-C, or Stop Run), then resume`);
  const row = db.prepare('SELECT config_json, source FROM runs WHERE id = ?').get(run.id) as { config_json: string; source: string | null };
  if (row.source !== null) throw new ResumeError(`run ${run.id} was imported (${row.source}): there is no training to continue here`);
  const stored = JSON.parse(row.config_json) as unknown;
  if (trainedSmallGpt(stored)) throw new ResumeError(smallGptRun(run.id, 'resumed'));
  if (agentProgramRun(stored)) throw new ResumeError(agentProgramStored(run.id, 'resumed'));
  let config: RunConfig;
  try {
    config = readStoredRunConfig(stored);
  } catch (e) {
    const why = e instanceof ConfigError ? e.message : String(e);
    throw new ResumeError(`run ${run.id}'s stored config is not valid for this release, so it cannot continue:\n${why}`);
  }
  const point = readResumePoint(resumeDirFor(dbFile, run.id));
  if (!point) {
    throw new ResumeError(
      `run ${run.id} has no resume point (it stopped before its first, written every ${config.checkpointEvery} iterations and on cancel, or it was written by an earlier release). Fix: start it again`,
    );
  }
  const mine = userSandbox(config, sandbox);
  const k = point.state.iteration;
  const dropped = db
    .transaction(() => {
      const n = (db.prepare('SELECT count(*) AS n FROM iterations WHERE run_id = ? AND iteration > ?').get(run.id, k) as { n: number }).n;
      db.prepare('DELETE FROM turns WHERE trajectory_id IN (SELECT id FROM trajectories WHERE run_id = ? AND iteration > ?)').run(run.id, k);
      db.prepare('DELETE FROM trajectories WHERE run_id = ? AND iteration > ?').run(run.id, k);
      db.prepare('DELETE FROM evaluations WHERE run_id = ? AND iteration > ?').run(run.id, k);
      db.prepare('DELETE FROM iterations WHERE run_id = ? AND iteration > ?').run(run.id, k);
      return n;
    })
    .immediate();
  return { runId: run.id, config: mine.config, point, dropped, notes: mine.notes };
}

/**
 * A stored config with the user's interpreter and sandbox level in place of the stored ones (stored runs
 * are data: what runs on this machine is the user's choice), and notes saying what changed.
 */
export function userSandbox(stored: RunConfig, sandbox: ResumeSandbox): { config: RunConfig; notes: string[] } {
  let config = stored;
  const notes: string[] = [];
  if (config.env === 'code' || config.env === 'workspace') {
    const given = config.envOptions;
    const level = isSandboxLevel(sandbox.sandbox) ? sandbox.sandbox : 'auto';
    if (given.python !== sandbox.python)
      notes.push(
        `the stored run named the interpreter "${given.python}"; the continued run uses ${sandbox.python === '' ? 'the default interpreter' : `"${sandbox.python}"`}`,
      );
    if (given.sandbox !== level) notes.push(`the stored run asked for the sandbox level "${given.sandbox}"; the continued run uses "${level}"`);
    const mine = { python: sandbox.python, sandbox: level };
    // (one branch per environment: each spread keeps its own options' type)
    config =
      config.env === 'code' ? { ...config, envOptions: { ...config.envOptions, ...mine } } : { ...config, envOptions: { ...config.envOptions, ...mine } };
  }
  return { config, notes };
}
