// Re-scoring a stored run, the one way the CLI and the backend both do it: the run's stored config is
// read as data (validated; the interpreter and sandbox level are the user's, never the stored ones),
// the environment is opened with the reward to use (a workspace's reward.py, another file, or the
// environment's own verifier), every stored trajectory is replayed through it (rl/rollout/replayEpisode)
// and the results are stored as a re-score of their own. A trajectory whose reward raises is recorded
// with its error and the re-score goes on; a reward that does not load fails before anything is written.
import type Database from 'better-sqlite3';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { agentProgramRun, ConfigError, isSandboxLevel, readStoredRunConfig, type RunConfig } from '../shared/runConfig';
import { summarizeRescore, type RescoreReport, type RewardSource, type Score, type TrajectoryEdit } from '../shared/rescore';
import type { RunEnvironment } from '../rl/envs/environment';
import { openEnvironment } from '../rl/envs/registry';
import { Rng } from '../rl/random';
import { replayEpisode, type ReplayTurn } from '../rl/rollout/replayEpisode';
import { RunReader } from './runReader';
import { insertEdit, insertRescore, iterationBounds, rescoreReport, storedEpisode, storedEpisodes, type ScoredItem, type StoredEpisode } from './rescoreStore';
import { agentProgramStored } from './resume';

export class RescoreError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  constructor(message: string) {
    super(message);
    this.name = 'RescoreError';
  }
}

/** The user's sandbox settings ('' = the default interpreter, 'auto' = the strongest level). */
export interface RescoreSandbox {
  readonly python: string;
  readonly sandbox: string;
  /**
   * The folders the user works in (the CLI's current folder; VS Code's workspace folders): a stored
   * workspace run's tools.py and reward.py are run only when they are inside one — a stored run (a
   * shared database) never chooses which files run.
   */
  readonly folders: readonly string[];
}

/** Whether `file` (symbolic links followed) lies inside one of `folders`; false when either cannot be read. */
function insideFolders(file: string, folders: readonly string[]): boolean {
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    return false;
  }
  return folders.some((d) => {
    try {
      const rel = path.relative(fs.realpathSync(d), real);
      return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
    } catch {
      return false;
    }
  });
}

export interface RescoreOptions {
  /** Run id or name. */
  readonly run: string;
  /** Another reward file for a workspace run (absolute, or relative to the current folder). */
  readonly rewardFile?: string;
  /** Inclusive; null bounds = the run's first or last stored iteration. */
  readonly iterations?: { readonly from: number | null; readonly to: number | null };
  /** Only this trajectory (it must belong to the run). */
  readonly trajectoryId?: number;
  readonly sandbox: RescoreSandbox;
  readonly onProgress?: (done: number, total: number) => void;
}

/** Episodes replayed at once: a workspace reward pool scores that many in parallel sessions. */
const CONCURRENCY = 4;

interface Opened {
  readonly runId: number;
  readonly config: RunConfig;
  readonly env: RunEnvironment;
  readonly reward: RewardSource;
}

const sha256 = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The run's stored config with the reward to score with and the user's interpreter and level. */
function configFor(
  db: Database.Database,
  dbFile: string,
  ref: string,
  rewardFile: string | undefined,
  sandbox: RescoreSandbox,
): { runId: number; config: RunConfig } {
  const run = new RunReader(db).findRun(ref);
  if (!run) throw new RescoreError(`no run "${ref.slice(0, 200)}" in ${dbFile}. Fix: \`agent-rl runs --db ${dbFile}\` lists the runs; give an id or a name`);
  const row = db.prepare('SELECT config_json, source FROM runs WHERE id = ?').get(run.id) as { config_json: string; source: string | null };
  if (row.source !== null)
    throw new RescoreError(`run ${run.id} was imported (${row.source}): its reward ran there, and this workbench has no environment to replay it in`);
  const stored = JSON.parse(row.config_json) as unknown;
  if (agentProgramRun(stored)) throw new RescoreError(agentProgramStored(run.id, 'rescored'));
  let config: RunConfig;
  try {
    config = readStoredRunConfig(stored);
  } catch (e) {
    throw new RescoreError(
      `run ${run.id}'s stored config is not valid for this release, so its environment cannot be rebuilt:\n${e instanceof ConfigError ? e.message : String(e)}`,
    );
  }
  if (rewardFile !== undefined && config.env !== 'workspace')
    throw new RescoreError(
      `--reward ${rewardFile}: run ${run.id} uses the ${config.env} environment, whose reward is its built-in verifier; a reward file applies to workspace runs. Fix: drop --reward to re-run the ${config.env} verifier`,
    );
  if (config.env === 'code' || config.env === 'workspace') {
    // stored runs are data: what runs on this machine is the user's choice
    const mine = { python: sandbox.python, sandbox: isSandboxLevel(sandbox.sandbox) ? sandbox.sandbox : ('auto' as const) };
    if (config.env === 'code') config = { ...config, envOptions: { ...config.envOptions, ...mine } };
    else {
      let reward = config.envOptions.reward;
      const root = path.resolve(config.envOptions.root || '.');
      const files = [
        ['envOptions.tools', config.envOptions.tools],
        ...(rewardFile === undefined && reward.endsWith('.py') ? [['envOptions.reward', reward]] : []),
      ].filter(([, f]) => f !== undefined && f !== '');
      for (const [field, f] of files) {
        const file = path.resolve(root, f!);
        if (!insideFolders(file, sandbox.folders))
          throw new RescoreError(
            `run ${run.id}'s ${field} is ${file}, which is not a file inside ${sandbox.folders.length ? sandbox.folders.join(', ') : 'an open folder'}: a stored run does not choose which files run. Fix: re-score from the workspace folder that holds the run's tools and reward${field === 'envOptions.reward' ? ' (or pass --reward FILE)' : ''}`,
          );
      }
      if (rewardFile !== undefined) {
        reward = path.resolve(rewardFile);
        if (!fs.existsSync(reward) || !fs.statSync(reward).isFile())
          throw new RescoreError(`--reward ${rewardFile}: no file at ${reward}. Fix: give the path of a .py file defining reward(task, trajectory)`);
      }
      config = { ...config, envOptions: { ...config.envOptions, ...mine, reward } };
    }
  }
  return { runId: run.id, config };
}

function rewardSource(config: RunConfig): RewardSource {
  if (config.env !== 'workspace') return { file: null, sha256: null, label: `built-in ${config.env} verifier` };
  const o = config.envOptions;
  if (!o.reward.endsWith('.py')) return { file: null, sha256: null, label: o.reward };
  const file = path.resolve(o.root || '.', o.reward);
  let hash: string;
  try {
    hash = sha256(file);
  } catch (e) {
    throw new RescoreError(
      `the reward file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)}). Fix: restore it, or pass --reward FILE`,
    );
  }
  return { file, sha256: hash, label: path.basename(file) };
}

async function open(db: Database.Database, dbFile: string, ref: string, rewardFile: string | undefined, sandbox: RescoreSandbox): Promise<Opened> {
  const { runId, config } = configFor(db, dbFile, ref, rewardFile, sandbox);
  const reward = rewardSource(config);
  // a reward file that does not import, or fails on a recorded episode, fails here: nothing written yet
  const env = await openEnvironment(config);
  return { runId, config, env, reward };
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** One episode replayed and scored; a raise becomes the item's error. */
async function scoreOne(o: Opened, ep: StoredEpisode, turns: readonly ReplayTurn[], edited: boolean): Promise<ScoredItem> {
  const base = { trajectoryId: ep.id, iteration: ep.iteration, group: ep.group, indexInGroup: ep.indexInGroup, taskId: ep.taskId, old: ep.old };
  try {
    // a stream of its own per trajectory: a verifier's random inputs are the same in every re-score
    const r = await replayEpisode(o.env, ep.taskId, turns, Rng.stream(o.config.seed, `rescore/${ep.id}`), edited);
    const { reward, success, publicPass, privatePass } = r.outcome;
    const replay = { termination: r.termination, replayedTurns: r.replayed, storedTurns: turns.length, differingObservations: r.differingObservations };
    return { ...base, new: { reward, success, publicPass, privatePass }, error: null, details: { ...(r.outcome.details ?? {}), replay } };
  } catch (e) {
    return { ...base, new: null, error: errorText(e).slice(0, 4000), details: null };
  }
}

/** Re-scores a run's stored trajectories (or one of them) and stores the result; returns the stored report. */
export async function rescoreRun(db: Database.Database, dbFile: string, options: RescoreOptions): Promise<RescoreReport> {
  const started = Date.now();
  const o = await open(db, dbFile, options.run, options.rewardFile, options.sandbox);
  try {
    let episodes: StoredEpisode[];
    let range: { from: number; to: number };
    if (options.trajectoryId !== undefined) {
      const ep = storedEpisode(db, options.trajectoryId);
      if (!ep || ep.runId !== o.runId)
        throw new RescoreError(
          `trajectory ${options.trajectoryId} is not in run ${o.runId}. Fix: \`agent-rl show ${o.runId}\`, or the Runs tree, lists its trajectories`,
        );
      episodes = [ep];
      range = { from: ep.iteration, to: ep.iteration };
    } else {
      const bounds = iterationBounds(db, o.runId);
      if (!bounds) throw new RescoreError(`run ${o.runId} has no stored trajectories: nothing to re-score`);
      range = { from: options.iterations?.from ?? bounds.from, to: options.iterations?.to ?? bounds.to };
      episodes = storedEpisodes(db, o.runId, range.from, range.to);
      if (episodes.length === 0)
        throw new RescoreError(
          `run ${o.runId} has no trajectories in iterations ${range.from}..${range.to}. Fix: its stored iterations are ${bounds.from}..${bounds.to}`,
        );
    }
    const items: ScoredItem[] = new Array<ScoredItem>(episodes.length);
    let next = 0;
    let done = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < episodes.length; i = next++) {
        const ep = episodes[i]!;
        items[i] = await scoreOne(o, ep, ep.turns, false);
        options.onProgress?.(++done, episodes.length);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, episodes.length) }, worker));
    const summary = summarizeRescore(items);
    const id = insertRescore(db, {
      runId: o.runId,
      reward: o.reward,
      iterationFrom: range.from,
      iterationTo: range.to,
      trajectoryId: options.trajectoryId ?? null,
      wallMs: Date.now() - started,
      summary,
      items,
    });
    return rescoreReport(db, id)!;
  } finally {
    await o.env.dispose();
  }
}

export interface EditOptions {
  readonly run: string;
  readonly trajectoryId: number;
  /** The new text of the last turn's action. */
  readonly finalAnswer: string;
  readonly rewardFile?: string;
  readonly sandbox: RescoreSandbox;
}

/** Scores a copy of a trajectory with its last action replaced, and stores it as an edit (the trajectory is untouched). */
export async function editFinalAnswer(
  db: Database.Database,
  dbFile: string,
  options: EditOptions,
): Promise<{ edit: TrajectoryEdit; old: Score; originalText: string }> {
  const o = await open(db, dbFile, options.run, options.rewardFile, options.sandbox);
  try {
    const ep = storedEpisode(db, options.trajectoryId);
    if (!ep || ep.runId !== o.runId)
      throw new RescoreError(`trajectory ${options.trajectoryId} is not in run ${o.runId}. Fix: give the run the trajectory belongs to`);
    const last = ep.turns.length - 1;
    if (last < 0) throw new RescoreError(`trajectory ${ep.id} has no turns: there is no final answer to edit`);
    const turns = ep.turns.map((t, i) => (i === last ? { ...t, actionText: options.finalAnswer } : t));
    const scored = await scoreOne(o, ep, turns, true);
    const edit = insertEdit(db, {
      trajectoryId: ep.id,
      turnIndex: last,
      actionText: options.finalAnswer,
      reward: o.reward,
      score: scored.new,
      error: scored.error,
      details: scored.details,
    });
    return { edit, old: ep.old, originalText: ep.turns[last]!.actionText };
  } finally {
    await o.env.dispose();
  }
}
