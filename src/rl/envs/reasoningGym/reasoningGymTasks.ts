// reasoning-gym's procedural datasets as a workspace environment's tasks (envOptions.taskSet
// "reasoning-gym:<dataset>", taskConfig, heldOutConfig). The Python harness (python/reasoningGymHarness.py,
// run with the interpreter this machine names, never one from a stored run) builds the training and the
// held-out dataset once and writes their entries; they become task records — prompt the question (and
// how to answer), ground truth the answer, metadata the entry for score_answer, a demonstration
// answering it for an SFT warm start — split by setting, not by hash. The generated set is kept in a
// file named by what made it (~/.cache/agent-rl-workbench/reasoning-gym, $AGENT_RL_TASK_SETS overrides):
// a resumed, forked, replayed or re-scored run with the same settings reads the same tasks back without
// Python, even after reasoning-gym was upgraded.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TaskSource } from '../environment';
import type { SourceRecord } from '../workspace/taskFiles';
import { tasksOf } from '../workspace/taskRecords';
import { WorkspaceEnvError } from '../workspace/workspaceEnvError';
import { findOnPath } from '../../sandbox/isolation';
import { REASONING_GYM_HARNESS_PY } from './reasoningGymHarnessPy.generated';

/** The venv `node scripts/pythonVenv.mjs reasoning-gym-0.1.25` makes: the tested reasoning-gym. */
export const REASONING_GYM_VENV = 'reasoning-gym-0.1.25';
const PREFIX = 'reasoning-gym:';

/** One entry as the dataset made it: its question, its answer, and what score_answer reads besides. */
export interface GymEntry {
  readonly question: string;
  readonly answer: string;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** What the harness wrote: both splits' resolved configs and entries. */
export interface GeneratedSet {
  readonly dataset: string;
  readonly version: string;
  readonly train: { readonly config: Readonly<Record<string, unknown>>; readonly entries: readonly GymEntry[] };
  readonly heldOut: {
    readonly config: Readonly<Record<string, unknown>>;
    readonly entries: readonly GymEntry[];
    /** The curriculum attributes raised for the held-out split, {attribute: [low, high] or value} (null: none, heldOutConfig.harder false or its own settings). */
    readonly harder: Readonly<Record<string, unknown>> | null;
  };
}

/** The options of a workspace environment a task set reads. */
export interface TaskSetOptions {
  readonly taskSet: string;
  readonly taskConfig: Readonly<Record<string, unknown>>;
  readonly heldOutConfig: Readonly<Record<string, unknown>>;
  readonly python: string;
  /** How the prompt asks for the answer: <answer>…</answer>, or FINAL ANSWER: for the code format. */
  readonly toolFormat: 'call' | 'hermes' | 'code';
}

/** The dataset a task set names ("reasoning-gym:basic_arithmetic" → basic_arithmetic); undefined for another set. */
export function gymDataset(taskSet: string): string | undefined {
  return taskSet.startsWith(PREFIX) ? taskSet.slice(PREFIX.length) : undefined;
}

const home = (): string => path.join(os.homedir(), '.cache', 'agent-rl-workbench');

/** The cached venv's interpreter (whether or not it exists). */
export function cachedGymPython(): string {
  const root = process.env.AGENT_RL_VENVS || path.join(home(), 'venvs');
  return process.platform === 'win32' ? path.join(root, REASONING_GYM_VENV, 'Scripts', 'python.exe') : path.join(root, REASONING_GYM_VENV, 'bin', 'python');
}

/**
 * The interpreter with reasoning-gym, by this machine's settings (a resumed run's envOptions.python is
 * the user's, runConfig's userSandbox): $AGENT_RL_REASONING_GYM_PYTHON, else the cached venv where it
 * exists, else envOptions.python, else python3 on PATH.
 */
export function gymPython(o: Pick<TaskSetOptions, 'python'>): string {
  const named = process.env.AGENT_RL_REASONING_GYM_PYTHON || '';
  if (named !== '') {
    if (!fs.existsSync(named) && !findOnPath(named))
      throw new WorkspaceEnvError(
        `the Python ${named} ($AGENT_RL_REASONING_GYM_PYTHON) does not exist. Fix: name the interpreter you installed reasoning-gym into`,
      );
    return named;
  }
  if (fs.existsSync(cachedGymPython())) return cachedGymPython();
  if (o.python !== '') return o.python;
  const onPath = findOnPath('python3');
  if (!onPath)
    throw new WorkspaceEnvError(
      `python3 is not on PATH. Fix: install reasoning-gym (\`node scripts/pythonVenv.mjs ${REASONING_GYM_VENV}\`) or name its interpreter in $AGENT_RL_REASONING_GYM_PYTHON`,
    );
  return onPath;
}

/** Runs the harness once in `mode` with `config`; resolves on exit 0, else rejects with its last stderr line (which names the dataset and the fix). */
export function runHarness(python: string, config: Readonly<Record<string, unknown>>, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', REASONING_GYM_HARNESS_PY, JSON.stringify(config)], { stdio: ['ignore', 'ignore', 'pipe'], windowsHide: true });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => (stderr = (stderr + d).slice(-16_384)));
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (e) => {
      clearTimeout(t);
      reject(
        new WorkspaceEnvError(
          `reasoning-gym: ${python} could not be started (${e.message}). Fix: name an interpreter with reasoning-gym in $AGENT_RL_REASONING_GYM_PYTHON`,
        ),
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(t);
      if (code === 0) return resolve();
      const last = stderr.trim().split('\n').pop() ?? '';
      if (code === 3 && last !== '') return reject(new WorkspaceEnvError(last));
      reject(
        new WorkspaceEnvError(
          `reasoning-gym: ${python} ended (${signal ? `stopped by ${signal}${signal === 'SIGKILL' ? ` after ${timeoutMs} ms` : ''}` : `exit code ${code}`})${last ? `; its stderr ends: ${last.slice(0, 500)}` : ''}. Fix: name a Python 3 with reasoning-gym in $AGENT_RL_REASONING_GYM_PYTHON, or make the set smaller (taskConfig.size)`,
        ),
      );
    });
  });
}

/** JSON with its object keys sorted (the cache key of equal settings written in another order is the same). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null)
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** Where the generated set of these settings is kept. */
export function taskSetFile(dataset: string, o: Pick<TaskSetOptions, 'taskConfig' | 'heldOutConfig'>): string {
  const key = createHash('sha256')
    .update(canonical({ dataset, taskConfig: o.taskConfig, heldOutConfig: o.heldOutConfig }))
    .digest('hex')
    .slice(0, 24);
  return path.join(process.env.AGENT_RL_TASK_SETS || path.join(home(), 'reasoning-gym'), `${dataset}-${key}.json`);
}

/** The set of these settings: read back when it was made before, else made by the harness (and kept). */
export async function generatedSet(o: TaskSetOptions, timeoutMs = 300_000): Promise<GeneratedSet> {
  const dataset = gymDataset(o.taskSet);
  if (dataset === undefined)
    throw new WorkspaceEnvError(`envOptions.taskSet "${o.taskSet}" is not a task set this knows. Fix: write "reasoning-gym:<dataset>"`);
  const file = taskSetFile(dataset, o);
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as GeneratedSet;
  } catch {
    // not made yet (or unreadable): make it
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    await runHarness(gymPython(o), { mode: 'generate', dataset, train: o.taskConfig, heldOut: o.heldOutConfig, out: tmp }, timeoutMs);
    const made = JSON.parse(fs.readFileSync(tmp, 'utf8')) as Omit<GeneratedSet, 'dataset'>;
    const set: GeneratedSet = { dataset, ...made };
    fs.writeFileSync(tmp, JSON.stringify(set));
    fs.renameSync(tmp, file); // whole or absent: a concurrent run reads either
    return set;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** The line after the question that says how to answer, in the environment's format. */
export function answerInstruction(format: TaskSetOptions['toolFormat']): string {
  return format === 'code' ? 'End with FINAL ANSWER: and your answer.' : 'Give your final answer as <answer>your answer</answer>.';
}

/** The set's entries as task records of the default layout: one per entry, its split named. */
export function gymRecords(set: GeneratedSet, format: TaskSetOptions['toolFormat']): SourceRecord[] {
  const records: SourceRecord[] = [];
  const demo = (answer: string): string => (format === 'code' ? `FINAL ANSWER: ${answer}` : `<answer>${answer}</answer>`);
  for (const [split, part] of [
    ['train', set.train],
    ['test', set.heldOut],
  ] as const) {
    part.entries.forEach((e, i) => {
      records.push({
        file: `reasoning-gym:${set.dataset}`,
        where: `${split === 'train' ? 'training' : 'held-out'} entry ${i + 1}`,
        value: {
          id: `rg:${set.dataset}:${split === 'train' ? 'train' : 'heldout'}:${i}`,
          prompt: `${e.question.trimEnd()}\n${answerInstruction(format)}`,
          answer: e.answer,
          split,
          demonstration: [demo(e.answer)],
          metadata: { dataset: set.dataset, entry: e },
        },
      });
    });
  }
  return records;
}

/** The run's tasks from a reasoning-gym set, split by setting; throws an error naming the dataset and the fix. */
export async function gymTaskSource(o: TaskSetOptions): Promise<{ tasks: TaskSource; set: GeneratedSet }> {
  const set = await generatedSet(o);
  if (set.train.entries.length === 0 || set.heldOut.entries.length === 0)
    throw new WorkspaceEnvError(`reasoning-gym dataset ${set.dataset}: a split holds no entry. Fix: give taskConfig and heldOutConfig a size of 1 or more`);
  const tasks = tasksOf(gymRecords(set, o.toolFormat), { preset: 'default', fields: {}, heldOutFraction: 0, splitSeed: 0 });
  return { tasks, set };
}

/** The set in a line, for the run record: the dataset, its version, both configs, what the held-out split raised. */
export function gymDescription(set: GeneratedSet): string {
  const harder = set.heldOut.harder ? `; held out harder: ${JSON.stringify(set.heldOut.harder)}` : '';
  return `reasoning-gym ${set.version} ${set.dataset}: train ${JSON.stringify(set.train.config)}, held out ${JSON.stringify(set.heldOut.config)}${harder}`;
}
