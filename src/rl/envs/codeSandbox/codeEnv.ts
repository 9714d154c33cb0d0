// The code environment of seed 000, production version: the policy writes Python in a ```python block
// (execute_code) or `FINAL ANSWER: ...` (finish); code runs in the sandbox (warm pool, strongest level
// available or the one demanded); the observation is structured (stdout/stderr tails, exit code,
// timed-out flag, duration, level). After the episode the last executed code is the artifact: the
// public check runs it and compares its last printed line with the task's public output; the private
// verifier calls its function on hidden inputs and compares with the reference solution's results.
import * as crypto from 'node:crypto';
import type { EpisodeOutcome, Observation, ParsedAction } from '../../../shared/types';
import { parseCodeAction } from '../../rollout/parsers';
import type { Executor } from '../../sandbox/freshExecutor';
import { chooseLevel, resolvePython, type IsolationLevel } from '../../sandbox/isolation';
import { DEFAULT_LIMITS, type ExecutionResult, type SandboxLimits } from '../../sandbox/limits';
import { WarmPool } from '../../sandbox/warmPool';
import { CODE_TASKS, codeTaskPrompt, formulaTasks, type CodeTask } from '../../tasks/codeTasks';
import { numberOption, type Environment, type EnvironmentFactory, type StepResult, type Task, type TaskSource } from '../environment';
import { VERIFIER_PY } from './verifierPy.generated';

export interface CodeEnvOptions {
  readonly sandbox: IsolationLevel | 'auto';
  /** Interpreter path; '' = /usr/bin/python3, else python3 on PATH. */
  readonly python: string;
  readonly limits: SandboxLimits;
  /** execute_code turns (and malformed turns) allowed per episode. */
  readonly maxExecutions: number;
  readonly poolSize: number;
  readonly taskSet: 'functions' | 'formulas';
}

/** The sandbox limits an environment's options set (timeoutMs, tailBytes, outputCapBytes), over the defaults. */
export function limitsOption(o: Readonly<Record<string, unknown>>): SandboxLimits {
  const n = (k: keyof SandboxLimits): number => numberOption(o, k, DEFAULT_LIMITS[k]);
  return { ...DEFAULT_LIMITS, timeoutMs: n('timeoutMs'), tailBytes: n('tailBytes'), outputCapBytes: n('outputCapBytes') };
}

export function codeEnvOptions(o: Readonly<Record<string, unknown>>): CodeEnvOptions {
  const n = (k: string, d: number): number => numberOption(o, k, d);
  return {
    sandbox: (typeof o.sandbox === 'string' ? o.sandbox : 'auto') as IsolationLevel | 'auto',
    python: typeof o.python === 'string' ? o.python : '',
    limits: limitsOption(o),
    maxExecutions: n('maxExecutions', 4),
    poolSize: n('poolSize', 2),
    taskSet: o.taskSet === 'formulas' ? 'formulas' : 'functions',
  };
}

/** functions: the 65 hand-written tasks; formulas: the generated one-line family (see formulaTasks). */
function taskSet(name: 'functions' | 'formulas'): readonly (CodeTask & { readonly split: 'train' | 'heldOut' })[] {
  return name === 'formulas' ? formulaTasks() : CODE_TASKS;
}

/** One warm pool per (level, interpreter, size), shared by every episode; closed by dispose(). */
const pools = new Map<string, WarmPool>();

interface Sandbox {
  readonly executor: Executor;
  readonly level: IsolationLevel;
  readonly python: string;
}

/** Resolves the interpreter and the level (throwing an error that names the fix), then the shared pool (started on first use). */
export function sandboxFor(o: Pick<CodeEnvOptions, 'sandbox' | 'python' | 'poolSize'>): Sandbox {
  const python = resolvePython(o.python || undefined);
  const level = chooseLevel(o.sandbox, python);
  const key = `${level}|${python}|${o.poolSize}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = new WarmPool(level, python, o.poolSize);
    pools.set(key, pool);
  }
  return { executor: pool, level, python };
}

export async function disposeSandboxes(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.close()));
}

export function codeTask(t: CodeTask): Task {
  return { id: t.id, prompt: codeTaskPrompt(t), data: { fn: t.fn, publicArgs: t.publicArgs, publicOutput: t.publicOutput, hidden: t.hidden, reference: t.reference } };
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
  const lines = s.split('\n').map((l) => l.trim()).filter((l) => l !== '');
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
  const line = r.stdout.split('\n').reverse().find((l) => l.startsWith(nonce));
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
  const fn = String(task.data.fn);
  const hidden = task.data.hidden as string[];
  const pub = await sandbox.executor.execute(code, limits);
  const publicPass = pub.exitCode === 0 && lastLine(pub.stdout) === String(task.data.publicOutput);
  const key = `${task.id}|${sandbox.level}|${sandbox.python}`;
  let ref = referenceCache.get(key);
  if (!ref) {
    ref = runVerifier(sandbox, limits, String(task.data.reference), fn, hidden);
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
  private readonly sandbox: Sandbox;

  constructor(private readonly o: CodeEnvOptions) {
    this.sandbox = sandboxFor(o);
  }

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
        data: { stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut, outputCapped: r.outputCapped, durationMs: Math.round(r.durationMs), level: r.level, ...(r.sandboxError ? { sandboxError: r.sandboxError } : {}) },
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
    return Promise.resolve(); // the pool is shared; dispose() closes it
  }
}

export const codeEnvironment: EnvironmentFactory = {
  name: 'code',
  description: 'Write and run Python in a sandbox, read errors, fix, submit (seed 000).',
  // an action ends with a closed code block, or with the line after FINAL ANSWER:
  stop: { strings: [], when: (text) => /```(?:python|py)?[^\S\n]*\n[\s\S]*?```/.test(text) || /FINAL ANSWER:[^\n]*\n/.test(text) },
  create: (options) => new CodeEnv(codeEnvOptions(options)),
  tasks: (options): TaskSource => {
    const all = taskSet(codeEnvOptions(options).taskSet);
    return { train: all.filter((t) => t.split === 'train').map(codeTask), heldOut: all.filter((t) => t.split === 'heldOut').map(codeTask) };
  },
  taskFromId: (id) => {
    const t = [...CODE_TASKS, ...formulaTasks()].find((x) => x.id === id || x.id === `code:${id}`);
    return t ? codeTask(t) : undefined;
  },
  preflight: (options) => {
    const s = sandboxFor(codeEnvOptions(options));
    return `code sandbox: level ${s.level}, python ${s.python}`;
  },
  dispose: disposeSandboxes,
};
