// What each policy loss's metric is (rl/algo/policyLosses.ts reports them by name; the learner stores
// them as IterationMetrics.lossMetrics): a title and a unit for its dashboard chart, whether it is a
// share (the y axis then spans 0–1), and what it is a mean over (micro-batches combine in proportion
// to it). A metric a loss reports with no line here still gets a chart, under its own name. Runs
// stored before the map kept four of these names as top-level fields; `lossMetric` reads them there.
import type { WorstBy } from './tokenStatsRows';
import type { IterationMetrics } from './types';

export interface LossMetricDescriptor {
  readonly title: string;
  /** The y axis: what the number is, in which unit. */
  readonly unit: string;
  /** A share in [0, 1]. */
  readonly rate?: boolean;
  /** A mean over trained positions (default) or over trained sequences. */
  readonly per?: 'token' | 'sequence';
  /** Drawn as a line of this dashboard panel rather than a chart of its own. */
  readonly panel?: string;
  /** A click on an iteration's point opens its worst tokens by this number (the drill-down). */
  readonly drill?: WorstBy;
}

export const LOSS_METRICS: Readonly<Record<string, LossMetricDescriptor>> = {
  clipFractionLow: { title: 'Clip fraction, low: ratio below 1 − ε_low with A < 0', unit: 'share of tokens', rate: true, panel: 'clip' },
  clipFractionHigh: { title: 'Clip fraction, high: ratio above 1 + ε_high with A > 0', unit: 'share of tokens', rate: true, panel: 'clip' },
  dualClipFraction: { title: 'Dual clip: share of tokens whose loss its bound c·|A| held (A < 0)', unit: 'share of tokens', rate: true },
  approxKl: { title: "Approximate KL to π_old over the update steps (PPO's approx_kl: mean log π_old − log π)", unit: 'nats per token' },
  absLogRatio: { title: 'How far each step had moved from π_old: mean |log π − log π_old|', unit: 'nats per token' },
  sequenceClipFraction: {
    title: 'GSPO: share of sequences whose ratio the clip held (above 1 + 4e-4 with A > 0, below 1 − 3e-4 with A < 0)',
    unit: 'share of sequences',
    rate: true,
    per: 'sequence',
  },
  teacherReverseKl: {
    title: 'Distillation: mean reverse KL to the teacher per sampled token (log π_student − log π_teacher, before the update)',
    unit: 'nats per token',
    drill: 'reverseKl',
  },
  teacherMs: { title: "Distillation: the teacher's scoring time per update (one forward pass per sequence)", unit: 'ms' },
  truncatedFraction: { title: 'CISPO: share of tokens whose weight was truncated at 1 + ε_high (their gradient kept)', unit: 'share of tokens', rate: true },
};

/** Stored before lossMetrics existed: these names were top-level fields of IterationMetrics. */
const LEGACY_FIELDS = ['clipFractionLow', 'clipFractionHigh', 'dualClipFraction', 'approxKl'] as const;

/** What a metric is a mean over (combining micro-batches). */
export function lossMetricPer(name: string): 'token' | 'sequence' {
  return Object.hasOwn(LOSS_METRICS, name) ? (LOSS_METRICS[name]!.per ?? 'token') : 'token';
}

/** The descriptor of a metric, or a generic one under its own name. */
export function lossMetricDescriptor(name: string): LossMetricDescriptor {
  return Object.hasOwn(LOSS_METRICS, name) ? LOSS_METRICS[name]! : { title: `Policy-loss metric: ${name}`, unit: 'value (mean over the update steps)' };
}

/** A stored map of numbers, or nothing: stored metrics are untrusted data. */
function storedMap(m: IterationMetrics): Readonly<Record<string, unknown>> {
  const x: unknown = m.lossMetrics;
  return typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
}

/** An iteration's value of a loss metric (the map, else an older run's top-level field), when it is a finite number. */
export function lossMetric(m: IterationMetrics, name: string): number | undefined {
  const map = storedMap(m);
  const legacy = (LEGACY_FIELDS as readonly string[]).includes(name) ? (m as unknown as Record<string, unknown>)[name] : undefined;
  const v = Object.hasOwn(map, name) ? map[name] : legacy;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** The loss metrics these iterations recorded: described ones in the table's order, then the others by name. */
export function lossMetricNames(iterations: readonly IterationMetrics[]): string[] {
  const seen = new Set<string>();
  for (const m of iterations) {
    for (const k of Object.keys(storedMap(m))) seen.add(k);
    for (const k of LEGACY_FIELDS) if (lossMetric(m, k) !== undefined) seen.add(k);
  }
  const described = Object.keys(LOSS_METRICS).filter((k) => seen.has(k));
  return [...described, ...[...seen].filter((k) => !Object.hasOwn(LOSS_METRICS, k)).sort()];
}
