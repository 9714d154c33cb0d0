// The code environment of seed 000, production version: the policy writes Python in a ```python block
// (execute_code) or `FINAL ANSWER: ...` (finish); code runs in the sandbox (warm pool, strongest level
// available or the one demanded); the observation is structured (stdout/stderr tails, exit code,
// timed-out flag, duration, level). After the episode the last executed code is the artifact: the
// public check runs it and compares its last printed line with the task's public output; the private
// verifier calls its function on hidden inputs and compares with the reference solution's results.
import * as crypto from 'node:crypto';
import type { EpisodeOutcome, Observation, ParsedAction } from '../../../shared/types';
import { parseCodeAction } from '../parsers';
import type { CodeOptions } from '../../../shared/runConfig';
import { levelHolds, type IsolationLevel } from '../../sandbox/isolation';
import { limitsOf, type ExecutionResult, type SandboxLimits } from '../../sandbox/limits';
import { SandboxPools, type Sandbox } from '../../sandbox/sandboxPools';
import { CODE_TASKS, codeTaskPrompt, formulaShapeTasks, formulaTasks, formulaTestTasks, formulaValidationTasks, type CodeTask } from '../../tasks/codeTasks';
import { ConfigError } from '../../../shared/runConfig';
import type { Environment, EnvironmentDefinition, RunEnvironment, StepResult, Task, TaskSource } from '../environment';
import { VERIFIER_PY } from './verifierPy.generated';

export interface CodeEnvOptions {
  readonly sandbox: IsolationLevel | 'auto';
  /** Interpreter path; '' = /usr/bin/python3, else python3 on PATH. */
  readonly python: string;
  readonly limits: SandboxLimits;
  /** execute_code turns (and malformed turns) allowed per episode. */
  readonly maxExecutions: number;
  readonly poolSize: number;
  readonly taskSet: 'functions' | 'formulas' | 'formula-shapes';
  /** held-out: the set's held-out split; new-families, test: formula families no training task has (formulas only). */
  readonly evaluationSet: 'held-out' | 'new-families' | 'test';
}

/** The run's options as the environment uses them (the sandbox limits together). */
export function codeEnvOptions(o: CodeOptions): CodeEnvOptions {
  return {
    sandbox: o.sandbox,
    python: o.python,
    limits: limitsOf(o),
    maxExecutions: o.maxExecutions,
    poolSize: o.poolSize,
    taskSet: o.taskSet,
    evaluationSet: o.evaluationSet,
  };
}

/** functions: the 65 hand-written tasks; formulas: the generated one-line family (formulaTasks); formula-shapes: many shapes of it (formulaShapeTasks). */
function taskSet(name: CodeEnvOptions['taskSet']): readonly (CodeTask & { readonly split: 'train' | 'heldOut' })[] {
  return name === 'formulas' ? formulaTasks() : name === 'formula-shapes' ? formulaShapeTasks() : CODE_TASKS;
}

/** The code task each Task object was made from (read back typed, not from its data record). */
const specOf = new WeakMap<Task, CodeTask>();

export function codeTask(t: CodeTask): Task {
  const task: Task = {
    id: t.id,
    prompt: codeTaskPrompt(t),
    data: { fn: t.fn, publicArgs: t.publicArgs, publicOutput: t.publicOutput, hidden: t.hidden, reference: t.reference },
  };
  specOf.set(task, t);
  return task;
}

/** The code task behind a task of this environment; an error for any other task. */
export function codeTaskOf(task: Task): CodeTask {
  const t = specOf.get(task);
  if (!t) throw new Error(`task ${task.id} is not a code-environment task`);
  return t;
}

/** The observation text a model reads after running code. */
export function formatExecution(r: ExecutionResult): string {
  const parts: string[] = [];
  if (r.stdout) parts.push(`[stdout]\n${r.stdout.replace(/\n$/, '')}`);
  if (r.stderr) parts.push(`[stderr]\n${r.stderr.replace(/\n$/, '')}`);
  if (r.sandboxError) parts.push(`[sandbox error] ${r.sandboxError}`);
  if (r.timedOut) parts.push(`[timeout] killed after ${Math.round(r.durationMs)} ms`);
  if (r.outputCapped) parts.push(`[output cut] more than ${r.outputBytes} bytes`);
  parts.push(`[exit ${r.exitCode ?? r.signal ?? '?'}]`);
  return parts.join('\n');
}

function lastLine(s: string): string {
  const lines = s
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines[lines.length - 1] ?? '';
}

/**
 * The verifier program for the candidate's `code`: it calls `fn` on each hidden input and prints the
 * results after `nonce`. The program is python/verifier.py behind one data line, its inputs as a JSON
 * string (a JSON string is a Python string literal); the exported verl reward writes the same line.
 */
export function verifierProgram(code: string, fn: string, calls: readonly string[], nonce: string): string {
  return `_VERIFY = ${JSON.stringify(JSON.stringify({ code, fn, calls, nonce }))}\n${VERIFIER_PY}`;
}

type Verdict = { results: [string, string][] } | { error: string };

async function runVerifier(sandbox: Sandbox, limits: SandboxLimits, code: string, fn: string, calls: readonly string[]): Promise<Verdict> {
  const nonce = `@@verify-${crypto.randomBytes(8).toString('hex')}@@`;
  const r = await sandbox.executor.execute(verifierProgram(code, fn, calls, nonce), { ...limits, tailBytes: Math.max(limits.tailBytes, 64 * 1024) });
  const line = r.stdout
    .split('\n')
    .reverse()
    .find((l) => l.startsWith(nonce));
  if (!line) return { error: r.timedOut ? 'timed out' : r.sandboxError ? `sandbox: ${r.sandboxError}` : `no verdict (exit ${r.exitCode ?? r.signal})` };
  return JSON.parse(line.slice(nonce.length)) as Verdict;
}

/** Reference results per task and sandbox, computed once (a separate run: the candidate cannot touch it). */
const referenceCache = new Map<string, Promise<Verdict>>();

export interface CodeVerdict {
  readonly publicPass: boolean;
  readonly privatePass: boolean;
  readonly detail: Record<string, unknown>;
}

/** Public check and private verifier of `code` for a task. */
export async function verifyCode(sandbox: Sandbox, limits: SandboxLimits, task: Task, code: string): Promise<CodeVerdict> {
  const t = codeTaskOf(task);
  const { fn, hidden } = t;
  const pub = await sandbox.executor.execute(code, limits);
  const publicPass = pub.exitCode === 0 && lastLine(pub.stdout) === t.publicOutput;
  const key = `${task.id}|${sandbox.level}|${sandbox.python}`;
  let ref = referenceCache.get(key);
  if (!ref) {
    ref = runVerifier(sandbox, limits, t.reference, fn, hidden);
    referenceCache.set(key, ref);
  }
  const expected = await ref;
  if ('error' in expected) throw new Error(`reference solution of ${task.id} failed in the sandbox: ${expected.error}`);
  const got = await runVerifier(sandbox, limits, code, fn, hidden);
  if ('error' in got) return { publicPass, privatePass: false, detail: { verifier: got.error } };
  const failed = expected.results.findIndex((e, i) => JSON.stringify(e) !== JSON.stringify(got.results[i]));
  return {
    publicPass,
    privatePass: failed === -1,
    detail: failed === -1 ? {} : { failedInput: hidden[failed], expected: expected.results[failed], got: got.results[failed] ?? null },
  };
}

class CodeEnv implements Environment {
  private task: Task | undefined;
  private artifact: string | undefined;
  private executions = 0;
  private finished = false;
  private done = false;
  constructor(
    private readonly o: CodeEnvOptions,
    private readonly sandbox: Sandbox,
  ) {}

  reset(task: Task): Promise<Observation> {
    this.task = task;
    this.artifact = undefined;
    this.executions = 0;
    this.finished = false;
    this.done = false;
    return Promise.resolve({ text: task.prompt, data: { taskId: task.id, level: this.sandbox.level } });
  }

  parseAction(text: string): ParsedAction {
    return parseCodeAction(text);
  }

  async step(action: ParsedAction): Promise<StepResult> {
    if (this.done || !this.task) throw new Error('code: step() outside an episode; call reset() first');
    if (action.kind === 'tool' && action.name === 'finish') {
      this.finished = true;
      this.done = true;
      return { observation: { text: 'submitted', data: { answer: action.args.answer, level: this.sandbox.level } }, done: true, termination: 'finished' };
    }
    this.executions += 1;
    let observation: Observation;
    if (action.kind === 'format_error') {
      observation = { text: `format error: ${action.message}`, data: { formatError: true, level: this.sandbox.level } };
    } else {
      const code = String(action.args.code);
      this.artifact = code;
      const r = await this.sandbox.executor.execute(code, this.o.limits);
      observation = {
        text: formatExecution(r),
        data: {
          stdout: r.stdout,
          stderr: r.stderr,
          exitCode: r.exitCode,
          signal: r.signal,
          timedOut: r.timedOut,
          outputCapped: r.outputCapped,
          durationMs: Math.round(r.durationMs),
          level: r.level,
          ...(r.sandboxError ? { sandboxError: r.sandboxError } : {}),
        },
      };
    }
    if (this.executions >= this.o.maxExecutions) {
      this.done = true;
      return { observation, done: true, termination: 'budget_exhausted' };
    }
    return { observation, done: false };
  }

  async verify(): Promise<EpisodeOutcome> {
    const base = { level: this.sandbox.level, executions: this.executions, finished: this.finished };
    if (!this.task || this.artifact === undefined) {
      return { reward: 0, success: false, publicPass: false, privatePass: false, details: { ...base, verifier: 'no code was run' } };
    }
    const v = await verifyCode(this.sandbox, this.o.limits, this.task, this.artifact);
    const success = this.finished && v.privatePass;
    return { reward: success ? 1 : 0, success, publicPass: v.publicPass, privatePass: v.privatePass, details: { ...base, ...v.detail } };
  }

  close(): Promise<void> {
    return Promise.resolve(); // the pool is the run's; its environment's dispose() closes it
  }
}

const DESCRIPTION = 'Write and run Python in a sandbox, read errors, fix, submit (seed 000).';

/** A task of either set by its id, for replay. */
function codeTaskById(id: string): Task | undefined {
  const t = [...CODE_TASKS, ...formulaTasks(), ...formulaShapeTasks(), ...formulaValidationTasks(), ...formulaTestTasks()].find(
    (x) => x.id === id || x.id === `code:${id}`,
  );
  return t ? codeTask(t) : undefined;
}

/** The code environment of a run: its episodes share the run's warm pool, which dispose() closes. */
export function openCodeEnvironment(options: CodeOptions): RunEnvironment {
  const o = codeEnvOptions(options);
  if (o.evaluationSet !== 'held-out' && o.taskSet === 'functions') {
    throw new ConfigError([
      {
        field: 'envOptions.evaluationSet',
        value: o.evaluationSet,
        message: `"${o.evaluationSet}" is a split of the formula tasks, and taskSet is "${o.taskSet}"`,
        fix: 'set envOptions.taskSet to "formula-shapes" (or "formulas"), or evaluationSet to "held-out"',
      },
    ]);
  }
  const pools = new SandboxPools();
  return {
    name: 'code',
    description: DESCRIPTION,
    // an action ends with a closed code block, or with the line after FINAL ANSWER:
    stop: { strings: [], test: 'code-action' },
    create: () => new CodeEnv(o, pools.get(o)),
    tasks: (): TaskSource => {
      const all = taskSet(o.taskSet);
      const heldOut =
        o.evaluationSet === 'test'
          ? formulaTestTasks()
          : o.evaluationSet === 'new-families'
            ? formulaValidationTasks()
            : all.filter((t) => t.split === 'heldOut');
      return { train: all.filter((t) => t.split === 'train').map(codeTask), heldOut: heldOut.map(codeTask) };
    },
    taskFromId: codeTaskById,
    preflight: () => {
      const s = pools.get(o);
      return `code sandbox: level ${s.level} (${levelHolds(s.level, s.python)}), python ${s.python}`;
    },
    dispose: () => pools.close(),
  };
}

export const codeEnvironment: EnvironmentDefinition<CodeOptions> = {
  name: 'code',
  description: DESCRIPTION,
  open: (o) => Promise.resolve(openCodeEnvironment(o)),
};
