// The acceptance metrics of one episode (seed 001): its length, what its tools cost, its
// invalid-action loops and what the sandbox blocked. Computed from the stored turns alone, so the
// trainer (per-iteration means), the evaluation and the inspector (one episode) count the same way.
// Stored observations are untrusted: every field is checked for its type before it counts.

export interface EpisodeStats {
  readonly turns: number;
  /** Tokens the policy generated (language models; 0 otherwise). */
  readonly tokens: number;
  /** Actions that were tool calls (not the final answer or submission, nor an environment server's step). */
  readonly toolCalls: number;
  /** Actions that were a step of an environment server (an OpenEnv episode's turns: isEnvironmentStep). */
  readonly envSteps: number;
  /** Milliseconds the environment reported spending in its tools and sandbox. */
  readonly toolMs: number;
  /** Actions the environment could not parse. */
  readonly formatErrors: number;
  /** Tool calls the tool refused (unknown tool or operation, bad arguments, a tool error). */
  readonly badToolCalls: number;
  /** Actions that repeated the previous one and got the same observation back (a loop). */
  readonly repeatedActions: number;
  /** What the sandbox stopped the code from doing, by kind. */
  readonly blocked: Readonly<Record<BlockedKind, number>>;
}

export const BLOCKED_KINDS = ['timeout', 'outputCap', 'network', 'filesystem', 'processes', 'memory'] as const;
export type BlockedKind = (typeof BLOCKED_KINDS)[number];

/** The part of a stored turn the metrics read. */
export interface TurnView {
  readonly actionText: string;
  readonly action: unknown;
  readonly observationText: string;
  readonly observation: Readonly<Record<string, unknown>>;
  readonly sampledTokens?: number;
}

/** Errors in a sandboxed program's stderr that mean the sandbox refused it something. */
const BLOCKED_PATTERNS: readonly [BlockedKind, RegExp][] = [
  [
    'network',
    /Network is unreachable|Temporary failure in name resolution|Name or service not known|Connection refused|Address family not supported|\[Errno -?(97|101|111|113|-2|-3)\]/,
  ],
  ['filesystem', /Read-only file system|\[Errno 30\]|PermissionError: \[Errno 13\]/],
  ['processes', /Resource temporarily unavailable|BlockingIOError: \[Errno 11\]|can't start new thread/],
  ['memory', /MemoryError|Cannot allocate memory/],
];

/** Actions that end an episode (a final answer or a submission): not tool calls, and their observation answers no call. */
export const FINAL_ACTIONS: ReadonlySet<string> = new Set(['answer', 'finish', 'submit']);

/**
 * A turn's observation data when the turn was a step of an environment server: OpenEnv's answer to
 * step(action) as openenvEnv.ts stores it — the server's observation (or `{ clipped }`), its reward
 * (null: none sent) and done. Every turn of an OpenEnv episode is one: the model's text is the action
 * the server's step() takes, not a call of a tool beside the episode. `step: "env"` marks the turns
 * stored since it was added; turns stored before have the three other keys alone (the shape check).
 */
export interface EnvStepData {
  readonly step: 'env';
  readonly observation: unknown;
  readonly reward: number | null;
  readonly done: boolean;
}

/** The keys of a step stored before the marker (EnvStepData without `step`). */
const ENV_STEP_KEYS: ReadonlySet<string> = new Set<keyof EnvStepData>(['observation', 'reward', 'done']);

/**
 * Whether a stored observation is an environment server's step answer: marked `step: "env"` (new turns),
 * or a turn stored before the marker with EnvStepData's other keys and no other, done a boolean.
 */
export function isEnvironmentStep(observation: Readonly<Record<string, unknown>>): boolean {
  if (observation.step === 'env') return true;
  const keys = Object.keys(observation);
  return typeof observation.done === 'boolean' && keys.includes('observation') && keys.every((k) => ENV_STEP_KEYS.has(k));
}

function actionKind(a: unknown): { kind?: string; name?: string } {
  if (typeof a !== 'object' || a === null) return {};
  const o = a as Record<string, unknown>;
  return { ...(typeof o.kind === 'string' ? { kind: o.kind } : {}), ...(typeof o.name === 'string' ? { name: o.name } : {}) };
}

export function episodeStats(turns: readonly TurnView[]): EpisodeStats {
  const blocked: Record<BlockedKind, number> = { timeout: 0, outputCap: 0, network: 0, filesystem: 0, processes: 0, memory: 0 };
  let tokens = 0,
    toolCalls = 0,
    envSteps = 0,
    toolMs = 0,
    formatErrors = 0,
    badToolCalls = 0,
    repeated = 0;
  turns.forEach((t, i) => {
    const a = actionKind(t.action);
    const d = t.observation;
    tokens += typeof t.sampledTokens === 'number' ? t.sampledTokens : 0;
    if (a.kind === 'format_error' || d.formatError === true || d.error === 'format') formatErrors += 1;
    else if (a.kind === 'tool' && isEnvironmentStep(d)) envSteps += 1;
    else if (a.kind === 'tool' && !FINAL_ACTIONS.has(a.name ?? '')) {
      toolCalls += 1;
      if (typeof d.error === 'string' && d.error !== 'format') badToolCalls += 1;
    }
    if (typeof d.durationMs === 'number' && Number.isFinite(d.durationMs) && d.durationMs > 0) toolMs += d.durationMs;
    if (d.timedOut === true) blocked.timeout += 1;
    if (d.outputCapped === true) blocked.outputCap += 1;
    if (typeof d.stderr === 'string') for (const [kind, re] of BLOCKED_PATTERNS) if (re.test(d.stderr)) blocked[kind] += 1;
    const prev = turns[i - 1];
    if (prev && prev.actionText === t.actionText && prev.observationText === t.observationText) repeated += 1;
  });
  return { turns: turns.length, tokens, toolCalls, envSteps, toolMs, formatErrors, badToolCalls, repeatedActions: repeated, blocked };
}

/** Per-field means over episodes (what an iteration or an evaluation records). */
export function meanStats(all: readonly EpisodeStats[]): Record<string, number> {
  const n = Math.max(1, all.length);
  const sum = (f: (s: EpisodeStats) => number): number => all.reduce((acc, s) => acc + f(s), 0) / n;
  return {
    formatErrors: sum((s) => s.formatErrors),
    badToolCalls: sum((s) => s.badToolCalls),
    repeatedActions: sum((s) => s.repeatedActions),
    toolMs: sum((s) => s.toolMs),
    blockedActions: sum((s) => BLOCKED_KINDS.reduce((acc, k) => acc + s.blocked[k], 0)),
  };
}
