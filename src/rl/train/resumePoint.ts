// Resume points: everything a synchronous run needs to continue exactly where it stopped, written
// every `checkpointEvery` iterations and when a run is cancelled. A run continued from iteration k
// samples the same tasks, draws the same random numbers and takes the same optimizer steps as one that
// never stopped, so its later iterations are the same.
//   <dir>/resume.json     the pointer: the trainer's state (iteration, random generator states, the
//                         learner's steps and shuffle stream, ...) and the policy-state folder it goes with
//   <dir>/state-<k>/      the policy's state after iteration k (weights, optimizer, KL reference, version)
// The folder is written first and the pointer is replaced by a rename, so a process killed at any
// moment leaves the previous resume point whole.
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
  /** The policy-state folder, relative to the resume folder. */
  readonly policyState: string;
  readonly savedAt: string;
}

export interface ResumePoint {
  readonly state: ResumeState;
  /** Absolute path of the policy's state. */
  readonly policyDir: string;
}

export async function writeResumePoint(
  dir: string,
  state: Omit<ResumeState, 'format' | 'version' | 'policyState' | 'savedAt'>,
  policy: TrainablePolicy,
): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const name = `state-${state.iteration}`;
  const tmp = path.join(dir, `${name}.tmp`);
  fs.rmSync(tmp, { recursive: true, force: true });
  await policy.saveState(tmp);
  fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  fs.renameSync(tmp, path.join(dir, name));
  const full: ResumeState = { format: RESUME_FORMAT, version: 1, ...state, policyState: name, savedAt: new Date().toISOString() };
  const pointer = path.join(dir, 'resume.json');
  fs.writeFileSync(`${pointer}.tmp`, `${JSON.stringify(full, null, 2)}\n`);
  fs.renameSync(`${pointer}.tmp`, pointer);
  // older states are no longer pointed at
  for (const f of fs.readdirSync(dir)) if (f.startsWith('state-') && f !== name) fs.rmSync(path.join(dir, f), { recursive: true, force: true });
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
