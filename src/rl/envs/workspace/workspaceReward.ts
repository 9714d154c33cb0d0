// Rewards of a workspace environment: a Python function `reward(task, trajectory)` from the workspace,
// run in a sandboxed session after the episode (returning a number, or {"score": number, ...extras}), or a
// built-in: exact_match (the answer against the ground truth, \boxed{} read, numbers compared as
// numbers) and unit_tests (the final code, or the answer, run with the task's tests in the sandbox).
// A format bonus and a per-call cost apply to either.
import type { Executor } from '../../sandbox/freshExecutor';
import type { SandboxLimits } from '../../sandbox/limits';
import { scalarText } from './taskRecords';
import { numericExtras } from '../../../shared/rewardExtras';
import type { SessionPool } from './toolSession';

export const BUILTIN_REWARDS = ['exact_match', 'unit_tests'] as const;
export type BuiltinReward = (typeof BUILTIN_REWARDS)[number];

/** What a reward reads of the episode (JSON for the Python function). */
export interface RewardTrajectory {
  readonly turns: readonly { readonly action: string; readonly tool: string | null; readonly observation: string; readonly error: string | null }[];
  /** The final answer's text, or null when the episode ended without one. */
  readonly answer: string | null;
  /** The last code block run (toolFormat code), or null. */
  readonly code: string | null;
  readonly tool_calls: number;
  readonly invalid_calls: number;
}

/** An agent program's episode as a reward file reads it (env "agent"). */
export interface AgentRewardTrajectory {
  /** The final conversation as OpenAI's API writes it (tool_calls, tool_call_id): the last request's messages and the policy's answer to it. */
  readonly messages: readonly Readonly<Record<string, unknown>>[];
  /** The policy's last answer's text, or null when it ended with tool calls or no request was answered. */
  readonly answer: string | null;
  readonly tool_calls: number;
  readonly requests: number;
  /** The last JSON object line the program printed, or null. */
  readonly printed: Readonly<Record<string, unknown>> | null;
  readonly exit_code: number | null;
}

export interface RewardTask {
  readonly id: string;
  readonly prompt: string;
  readonly ground_truth: unknown;
  readonly public_tests: readonly string[];
  readonly private_tests: readonly string[];
  readonly metadata: Readonly<Record<string, unknown>>;
}

export interface RewardResult {
  readonly score: number;
  readonly success?: boolean;
  readonly publicPass?: boolean;
  readonly privatePass?: boolean;
  /** Numbers (and booleans as 0/1) the reward returned beside the score: plotted per iteration. */
  readonly metrics: Readonly<Record<string, number>>;
  readonly extras: Readonly<Record<string, unknown>>;
}

export class RewardError extends Error {
  constructor(file: string, detail: string) {
    super(`${file}: ${detail}`);
    this.name = 'RewardError';
  }
}

/** The text inside the last \boxed{...} (braces balanced), else the text itself, trimmed. */
export function boxedOrSelf(text: string): string {
  const at = text.lastIndexOf('\\boxed{');
  if (at < 0) return text.trim();
  let depth = 0;
  for (let i = at + 7; i < text.length; i++) {
    if (text[i] === '{') depth += 1;
    else if (text[i] === '}') {
      if (depth === 0) return text.slice(at + 7, i).trim();
      depth -= 1;
    }
  }
  return text.slice(at + 7).trim();
}

const normal = (s: string): string =>
  s
    .trim()
    .replace(/\.$/, '')
    .replace(/^\$|\$$/g, '')
    .trim()
    .toLowerCase();

/** A decimal number ("12000", "-1.5", "1,234,567.8", "2e3"), else undefined: no hex, no "1,2". */
function decimal(s: string): number | undefined {
  const t = /^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(s) ? s.replace(/,/g, '') : s;
  return /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? Number(t) : undefined;
}

/** exact_match: equal after normalising, or both numbers within 1e-6 relative. */
export function exactMatch(answer: string | null, groundTruth: unknown): boolean {
  if (answer === null || groundTruth === undefined || groundTruth === null) return false;
  const a = normal(boxedOrSelf(answer));
  const golds = Array.isArray(groundTruth) ? groundTruth.map(scalarText) : [scalarText(groundTruth)];
  return golds.some((g0) => {
    const g = normal(boxedOrSelf(g0));
    if (a === '' || g === '') return false;
    if (a === g) return true;
    const x = decimal(a);
    const y = decimal(g);
    return x !== undefined && y !== undefined && Math.abs(x - y) <= 1e-6 * Math.max(1, Math.abs(y));
  });
}

/** unit_tests: the candidate followed by the tests, run in the sandbox; passes when it exits 0 in time. */
export async function testsPass(
  executor: Executor,
  limits: SandboxLimits,
  candidate: string,
  tests: readonly string[],
): Promise<{ pass: boolean; detail?: string }> {
  if (tests.length === 0) return { pass: false, detail: 'no tests' };
  const r = await executor.execute(`${candidate}\n\n${tests.join('\n')}\n`, limits);
  if (r.sandboxError) throw new Error(`sandbox: ${r.sandboxError}`);
  if (r.exitCode === 0 && !r.timedOut) return { pass: true };
  return { pass: false, detail: r.timedOut ? 'timed out' : (r.stderr.trim().split('\n').pop() ?? `exit ${r.exitCode}`).slice(0, 300) };
}

/** A finite number, or undefined. */
const finite = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * Calls the workspace's `reward(task, trajectory)` in one of the pool's sandboxed sessions (the file
 * imported once per session); throws RewardError when it fails or breaks its contract.
 */
export async function pythonReward(
  pool: SessionPool,
  file: string,
  task: RewardTask,
  trajectory: RewardTrajectory | AgentRewardTrajectory,
): Promise<RewardResult> {
  const r = await pool.call({ op: 'call', name: 'reward', args: [task, trajectory], whole: true });
  const fix = 'Fix: return a number, or a dict {"score": number, ...extras} (`agent-rl env check --config FILE` runs it on a recorded episode)';
  if (!r.ok) {
    const why =
      r.kind === 'raised'
        ? `raised:\n${r.error ?? ''}`
        : r.kind === 'timeout'
          ? 'did not return in time (envOptions.timeoutMs)'
          : `failed (${r.kind ?? 'unknown'}): ${r.error ?? ''}`;
    throw new RewardError(file, `reward() ${why}. ${fix}`);
  }
  const text = r.result ?? '';
  let value: unknown = text;
  if (r.type !== 'str') {
    try {
      value = JSON.parse(text);
    } catch {
      throw new RewardError(file, `reward() returned a ${r.type ?? 'value'} that is not JSON (${text.slice(0, 80)}). ${fix}`);
    }
  }
  if (typeof value === 'boolean') return { score: value ? 1 : 0, metrics: {}, extras: {} };
  const n = finite(value);
  if (n !== undefined) return { score: n, metrics: {}, extras: {} };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RewardError(file, `reward() returned ${r.type ?? typeof value} ${JSON.stringify(value).slice(0, 80)}, not a number. ${fix}`);
  }
  const o = value as Record<string, unknown>;
  const score = finite(o.score);
  if (score === undefined)
    throw new RewardError(file, `reward() returned a dict whose "score" is ${JSON.stringify(o.score) ?? 'missing'}, not a finite number. ${fix}`);
  const extras = Object.fromEntries(Object.entries(o).filter(([k]) => k !== 'score'));
  const metrics = numericExtras(extras);
  const flag = (k: string): boolean | undefined => (typeof o[k] === 'boolean' ? o[k] : undefined);
  return {
    score,
    metrics,
    extras,
    ...(flag('success') !== undefined ? { success: flag('success')! } : {}),
    ...(flag('public_pass') !== undefined ? { publicPass: flag('public_pass')! } : {}),
    ...(flag('private_pass') !== undefined ? { privatePass: flag('private_pass')! } : {}),
  };
}
