// Resume points: everything a synchronous run needs to continue exactly where it stopped, written
// every `checkpointEvery` iterations and when a run is cancelled. A run continued from iteration k
// samples the same tasks, draws the same random numbers and takes the same optimizer steps as one that
// never stopped, so its later iterations are the same.
//   <dir>/resume.json     the pointer: the trainer's state (iteration, random generator states, the
//                         learner's steps and shuffle stream, ...) and the policy-state folder it goes with
//   <dir>/state-<k>/      the policy's state after iteration k (weights, optimizer, KL reference, version),
//                         with its own copy of the trainer's state (trainer.json), so a fork can start there
// The folder is written first and the pointer is replaced by a rename, so a process killed at any
// moment leaves the previous resume point whole. Kept: the newest state and every state at a multiple of
// `keepEvery` (the run's checkpointEvery): a run of I iterations keeps at most I / checkpointEvery + 1
// states, each the size of the policy's saveState (weights, optimizer moments, reference) — the figure
// docs/architecture.md gives — so the disk a run takes grows with its length, bounded by checkpointEvery.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TrainablePolicy } from '../policies/policy';
import type { LearnerState } from './learner';

export const RESUME_FORMAT = 'agent-rl-resume';

export interface ResumeState {
  readonly format: typeof RESUME_FORMAT;
  readonly version: 1;
  /** The last iteration whose results the database holds and this state follows. */
  readonly iteration: number;
  /** The trainer's random streams, by name. */
  readonly rng: { readonly tasks: readonly number[]; readonly sample: readonly number[]; readonly verifier: readonly number[] };
  readonly learner: LearnerState;
  /** Sum of the iterations' own times so far (the ETA goes on from it). */
  readonly iterationMsTotal: number;
  /** Iterations in a row whose loss was not finite, at the time of the resume point. */
  readonly nonFiniteInARow: number;
  /** Optimizer steps taken so far (absent in resume points written before optimizerSteps: 0). */
  readonly optimizerSteps?: number;
  /** The policy-state folder, relative to the resume folder. */
  readonly policyState: string;
  readonly savedAt: string;
}

export interface ResumePoint {
  readonly state: ResumeState;
  /** Absolute path of the policy's state. */
  readonly policyDir: string;
}

/** The trainer's state inside a kept policy-state folder (what a fork from that iteration reads). */
const TRAINER_FILE = 'trainer.json';
const STATE_NAME = /^state-(\d+)$/;

/**
 * Writes the resume point after `state.iteration`, then prunes: states at a multiple of `keepEvery`
 * stay (forks start from them), other older ones go (0 = keep only the newest, as before forks).
 */
export async function writeResumePoint(
  dir: string,
  state: Omit<ResumeState, 'format' | 'version' | 'policyState' | 'savedAt'>,
  policy: TrainablePolicy,
  keepEvery = 0,
): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const name = `state-${state.iteration}`;
  const full: ResumeState = { format: RESUME_FORMAT, version: 1, ...state, policyState: name, savedAt: new Date().toISOString() };
  const text = `${JSON.stringify(full, null, 2)}\n`;
  const tmp = path.join(dir, `${name}.tmp`);
  fs.rmSync(tmp, { recursive: true, force: true });
  await policy.saveState(tmp);
  fs.writeFileSync(path.join(tmp, TRAINER_FILE), text);
  fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  fs.renameSync(tmp, path.join(dir, name));
  const pointer = path.join(dir, 'resume.json');
  fs.writeFileSync(`${pointer}.tmp`, text);
  fs.renameSync(`${pointer}.tmp`, pointer);
  for (const f of fs.readdirSync(dir)) {
    const k = STATE_NAME.exec(f)?.[1];
    if (k === undefined || f === name) continue;
    if (keepEvery > 0 && Number(k) % keepEvery === 0 && Number(k) < state.iteration) continue;
    fs.rmSync(path.join(dir, f), { recursive: true, force: true });
  }
}

/** Iterations with a whole kept state in `dir` (ascending): the points a fork may start from. */
export function keptResumeIterations(dir: string): number[] {
  if (!fs.existsSync(dir)) return [];
  const latest = readResumePoint(dir)?.state.iteration;
  const kept = fs
    .readdirSync(dir)
    .map((f) => STATE_NAME.exec(f)?.[1])
    .filter((k): k is string => k !== undefined)
    .map(Number)
    .filter((k) => k === latest || fs.existsSync(path.join(dir, `state-${k}`, TRAINER_FILE)));
  return [...new Set(kept)].sort((a, b) => a - b);
}

/** The kept resume point after iteration `iteration` in `dir`, or undefined when that state was not kept. */
export function readResumePointAt(dir: string, iteration: number): ResumePoint | undefined {
  const latest = readResumePoint(dir);
  if (latest?.state.iteration === iteration) return latest;
  const policyDir = path.join(dir, `state-${iteration}`);
  const file = path.join(policyDir, TRAINER_FILE);
  if (!fs.existsSync(file)) return undefined;
  const state = JSON.parse(fs.readFileSync(file, 'utf8')) as ResumeState;
  if (state.format !== RESUME_FORMAT || state.version !== 1 || state.iteration !== iteration)
    throw new Error(`${file} is not an agent-rl resume point of version 1 for iteration ${iteration}`);
  return { state, policyDir };
}

/** The resume point in `dir`, or undefined when there is none. A pointer that is not ours is an error. */
export function readResumePoint(dir: string): ResumePoint | undefined {
  const pointer = path.join(dir, 'resume.json');
  if (!fs.existsSync(pointer)) return undefined;
  const state = JSON.parse(fs.readFileSync(pointer, 'utf8')) as ResumeState;
  if (state.format !== RESUME_FORMAT || state.version !== 1) throw new Error(`${pointer} is not an agent-rl resume point of version 1`);
  const policyDir = path.join(dir, state.policyState);
  if (!fs.existsSync(policyDir)) throw new Error(`${pointer} points at ${policyDir}, which is missing`);
  return { state, policyDir };
}
