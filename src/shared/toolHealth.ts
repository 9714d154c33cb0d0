// Tool-use health: per tool, how often an episode calls it, how often a call fails or times out, and
// how long calls take — per iteration, from the stored turns alone (so the trainer, the CLI and the
// dashboard count alike) — and the warning that tool use collapsed: a tool's calls per episode fell
// below a set fraction of its level over the run's first iterations (verl #1569: multi-turn tool use
// collapsing to two turns, found by hand). Stored observations are untrusted: every field is checked.
import { FINAL_ACTIONS, isEnvironmentStep, type TurnView } from './episodeStats';
import { fixed } from './format';
import type { IterationMetrics, ToolHealth } from './types';

// The record itself lives in types.ts (IterationMetrics holds it), so that types.ts imports nothing back.
export type { ToolHealth };

/** Below this share of its first iterations' calls per episode, a tool's use has collapsed. */
export const TOOL_COLLAPSE_FRACTION = 0.5;
/** The iterations whose mean calls per episode are a tool's baseline. */
export const TOOL_BASELINE_ITERATIONS = 3;
/**
 * A tool called less than this per episode over the baseline iterations was hardly in use (a sampled
 * misspelling such as "cinvert" among them): its calls falling further is not a collapse.
 */
export const TOOL_MIN_BASELINE = 0.05;
/** Iterations in a row, to the last, below the threshold that make a collapse. */
export const COLLAPSE_ITERATIONS = 2;

/** The tool a turn called (undefined: a final answer, a format error, an environment server's step, or not a tool call). */
function toolOf(action: unknown, observation: Readonly<Record<string, unknown>>): string | undefined {
  if (typeof action !== 'object' || action === null) return undefined;
  const a = action as Record<string, unknown>;
  if (a.kind !== 'tool' || typeof a.name !== 'string' || FINAL_ACTIONS.has(a.name) || isEnvironmentStep(observation)) return undefined;
  // a workspace observation names the tool it ran; a code environment's action is its one tool
  return typeof observation.tool === 'string' ? observation.tool : a.name;
}

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Per tool over the episodes of an iteration (episodes: each one's turns). */
export function toolHealthOf(episodes: readonly (readonly Pick<TurnView, 'action' | 'observation'>[])[]): Record<string, ToolHealth> {
  const by = new Map<string, { calls: number; errors: number; timeouts: number; ms: number[] }>();
  for (const turns of episodes) {
    for (const t of turns) {
      const name = toolOf(t.action, t.observation);
      if (name === undefined) continue;
      const d = t.observation;
      const s = by.get(name) ?? { calls: 0, errors: 0, timeouts: 0, ms: [] };
      s.calls += 1;
      if (d.timedOut === true) s.timeouts += 1;
      else if ((typeof d.error === 'string' && d.error !== 'format') || typeof d.sandboxError === 'string') s.errors += 1;
      if (typeof d.durationMs === 'number' && Number.isFinite(d.durationMs) && d.durationMs >= 0) s.ms.push(d.durationMs);
      by.set(name, s);
    }
  }
  const n = Math.max(1, episodes.length);
  const out: Record<string, ToolHealth> = {};
  for (const [name, s] of [...by].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const ms = [...s.ms].sort((a, b) => a - b);
    out[name] = {
      calls: s.calls,
      callsPerEpisode: s.calls / n,
      errorRate: s.errors / s.calls,
      timeoutRate: s.timeouts / s.calls,
      ...(ms.length > 0 ? { latencyP50Ms: percentile(ms, 50), latencyP95Ms: percentile(ms, 95), latencyMaxMs: ms[ms.length - 1]! } : {}),
    };
  }
  return out;
}

/** A tool whose use collapsed, from which iteration on. */
export interface ToolCollapse {
  readonly tool: string;
  /** The first iteration whose calls per episode fell below the threshold. */
  readonly iteration: number;
  /** Its calls per episode then, and at the end of the run. */
  readonly level: number;
  readonly last: number;
  /** Mean calls per episode over the baseline iterations. */
  readonly baseline: number;
  readonly fraction: number;
}

/**
 * Tools whose calls per episode fell below `fraction` of their mean over the first `baselineIterations`
 * iterations and stayed below it for the last COLLAPSE_ITERATIONS iterations or more (a dip that
 * recovered, or the last iteration alone, is not a collapse).
 * An iteration where a tool was never called counts as 0 calls for it; a tool called less than
 * TOOL_MIN_BASELINE per episode over the baseline is not watched.
 */
export function toolCollapses(
  iterations: readonly Pick<IterationMetrics, 'iteration' | 'toolHealth'>[],
  fraction = TOOL_COLLAPSE_FRACTION,
  baselineIterations = TOOL_BASELINE_ITERATIONS,
): ToolCollapse[] {
  const sorted = [...iterations].filter((m) => typeof m.iteration === 'number' && Number.isFinite(m.iteration)).sort((a, b) => a.iteration - b.iteration);
  if (sorted.length < baselineIterations + COLLAPSE_ITERATIONS) return [];
  const tools = [...new Set(sorted.flatMap((m) => Object.keys(m.toolHealth ?? {})))].sort();
  // stored metrics are read back as data: a value that is not a finite number counts as no calls
  const level = (m: (typeof sorted)[number], tool: string): number => {
    const v: unknown = m.toolHealth?.[tool]?.callsPerEpisode;
    return typeof v === 'number' && Number.isFinite(v) ? v : 0;
  };
  const out: ToolCollapse[] = [];
  for (const tool of tools) {
    const base = sorted.slice(0, baselineIterations);
    const baseline = base.reduce((s, m) => s + level(m, tool), 0) / base.length;
    if (baseline < TOOL_MIN_BASELINE) continue;
    const threshold = fraction * baseline;
    const rest = sorted.slice(baselineIterations);
    const last = level(rest[rest.length - 1]!, tool);
    // the start of the final stretch below the threshold: one iteration below is noise, not a collapse
    let i = rest.length;
    while (i > 0 && level(rest[i - 1]!, tool) < threshold) i -= 1;
    if (rest.length - i < COLLAPSE_ITERATIONS) continue;
    out.push({ tool, iteration: rest[i]!.iteration, level: level(rest[i]!, tool), last, baseline, fraction });
  }
  return out;
}

/** One line per collapse, for the run record, the CLI and the dashboard. */
export function collapseText(c: ToolCollapse): string {
  const f = (x: number): string => fixed(x, 2);
  return `tool use collapsed: ${c.tool} ${f(c.last)} calls per episode at the end (below ${Math.round(c.fraction * 100)}% of ${f(c.baseline)}, its mean over the first iterations, since iteration ${c.iteration})`;
}
