// What the dashboard draws (pure; the webview renders it with chart.js, tests check it in Node): one
// panel per metric with a line per selected run, points that stay visible when a series is a single
// value, legends that shorten long run names and keep the whole name for the hover, a reason when a
// panel has nothing to draw, and a stacked chart of where each iteration's time went.
import type { RunSeries } from './protocol/webviewProtocol';
import type { WorstBy } from './tokenStatsRows';
import { collapseText, toolCollapses, type ToolHealth } from './toolHealth';
import type { EvaluationResult, IterationMetrics } from './types';
import { lossMetric, lossMetricDescriptor, lossMetricNames } from './lossMetrics';
import { count, sig } from './format';
import { oneLine, showInvisibles } from './untrustedText';

export interface PanelLine {
  readonly label: string;
  readonly value: (m: IterationMetrics) => number | undefined;
}

export interface Panel {
  readonly id: string;
  readonly title: string;
  /** The y axis's title: what its numbers are, in which unit (the x axis is always the iteration). */
  readonly unit: string;
  /** One line per run and metric. */
  readonly lines: readonly PanelLine[];
  /** Lines that depend on what the selected runs recorded (they win over `lines`). */
  readonly linesFor?: (series: readonly RunSeries[]) => readonly PanelLine[];
  /** Plots evaluations instead of iterations: one line per run and evaluation metric. */
  readonly evaluation?: readonly { readonly label: string; readonly value: (e: EvaluationResult) => number | undefined }[];
  /** A share in [0, 1]: the y axis spans at least 0–1, so a constant series is not drawn on a sliver. */
  readonly rate?: boolean;
  /** Why a panel with nothing to draw is empty, when the selected runs explain it. */
  readonly emptyBecause?: (series: readonly RunSeries[]) => string | undefined;
  /** A click on an iteration's point opens its worst tokens by this measure (and its mismatch histogram). */
  readonly drill?: WorstBy;
  /** Warnings about what the panel shows (a tool's use collapsed), one line each. */
  readonly warnings?: (series: readonly RunSeries[]) => readonly string[];
}

/** Lines of one number of every tool the selected runs called. */
const perTool =
  (parts: readonly { suffix: string; value: (h: ToolHealth) => number | undefined }[]) =>
  (series: readonly RunSeries[]): PanelLine[] =>
    [...new Set(series.flatMap((s) => s.iterations.flatMap((m) => Object.keys(m.toolHealth ?? {}))))].sort().flatMap((tool) =>
      parts.map((p) => ({
        label: oneLine(`${tool}${p.suffix}`, 40),
        value: (m: IterationMetrics) => {
          // stored metrics are data: a value that is not a finite number is not drawn
          const h = m.toolHealth?.[tool];
          const v: unknown = h ? p.value(h) : undefined;
          return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
        },
      })),
    );

const noToolHealth = (): string =>
  'no tool calls recorded per tool (a table policy, an environment without tools, or a run stored before tool health was recorded)';

const languageModelOnly =
  (what: string) =>
  (series: readonly RunSeries[]): string =>
    series.every((s) => s.run.policy === 'table') ? `table policies ${what}` : 'this run has no language-model metrics';

const judgeOnly = (): string => 'only runs with a judge (reward.judge, docs/judge.md) record these';

/** A judge's reward (issue 51): its groups, cost and agreement with the verifier, one chart each. */
const JUDGE_PANELS: readonly Panel[] = [
  {
    id: 'judgeGroups',
    title: 'Judge: groups judged, failed (not trained on) and answered from the cache',
    unit: 'groups',
    lines: [
      { label: 'judged', value: (m) => m.judgeGroups },
      { label: 'failed', value: (m) => m.judgeFailures },
      { label: 'cached', value: (m) => m.judgeCachedGroups },
    ],
    emptyBecause: judgeOnly,
  },
  {
    id: 'judgeLatency',
    title: 'Judge: mean time of a request that went out (retries included)',
    unit: 'ms',
    lines: [{ label: 'latency', value: (m) => m.judgeLatencyMs }],
    emptyBecause: judgeOnly,
  },
  {
    id: 'judgeTokens',
    title: 'Judge: tokens its answers say they used (usage.total_tokens)',
    unit: 'tokens per iteration',
    lines: [{ label: 'tokens', value: (m) => m.judgeTokens }],
    emptyBecause: judgeOnly,
  },
  {
    id: 'judgeAgreement',
    title: 'Judge–verifier agreement: share of pairs with different verifier outcomes the judge ordered the same way',
    unit: 'share of pairs',
    rate: true,
    lines: [{ label: 'agreement', value: (m) => m.judgeVerifierAgreement }],
    emptyBecause: judgeOnly,
  },
];

const asyncOnly = (): string =>
  'only runs in mode "async" record these (a synchronous run samples every group with the current policy: no queue, nothing stale)';

export const PANELS: readonly Panel[] = [
  {
    id: 'reward',
    title: 'Reward (mean, max)',
    unit: 'reward per episode',
    lines: [
      { label: 'mean', value: (m) => m.rewardMean },
      { label: 'max', value: (m) => m.rewardMax },
    ],
  },
  {
    id: 'rewardExtras',
    title: "The reward function's extras (mean per episode)",
    unit: 'value (mean per episode)',
    lines: [],
    linesFor: (series) =>
      [...new Set(series.flatMap((s) => s.iterations.flatMap((m) => Object.keys(m.rewardExtras ?? {}))))]
        .sort()
        .map((k) => ({ label: oneLine(k, 40), value: (m: IterationMetrics) => m.rewardExtras?.[k] })),
    emptyBecause: () => 'no reward extras: a workspace reward file that returns {"score": ..., "name": number} plots each name here',
  },
  ...JUDGE_PANELS,
  { id: 'success', title: 'Training success', unit: 'share of episodes', rate: true, lines: [{ label: 'success', value: (m) => m.successRate }] },
  {
    id: 'evaluation',
    title: 'Held-out evaluation: sampled and greedy pass@1, sampled pass@k',
    unit: 'share of held-out tasks',
    rate: true,
    lines: [],
    evaluation: [
      { label: 'sampled', value: (e) => e.successRate },
      { label: 'greedy', value: (e) => e.greedySuccessRate },
      { label: 'pass@k', value: (e) => e.passAtK },
    ],
  },
  {
    id: 'hacking',
    title: 'Public test vs private verifier (reward-hacking gap)',
    unit: 'share of episodes passing',
    rate: true,
    lines: [
      { label: 'public', value: (m) => m.publicPassRate },
      { label: 'private', value: (m) => m.privatePassRate },
    ],
  },
  {
    id: 'loss',
    title: 'Loss',
    unit: 'loss',
    lines: [
      { label: 'loss', value: (m) => m.loss },
      { label: 'policy', value: (m) => m.policyLoss },
    ],
  },
  {
    id: 'accuracy',
    title: 'Token accuracy on the demonstrations (SFT)',
    unit: 'share of tokens',
    rate: true,
    lines: [{ label: 'token accuracy', value: (m) => m.tokenAccuracy }],
    emptyBecause: (series) => (series.some((s) => s.run.method === 'sft') ? 'this run recorded no token accuracy' : 'only SFT runs record token accuracy'),
  },
  { id: 'kl', title: 'KL to reference', unit: 'nats per token', drill: 'kl', lines: [{ label: 'KL', value: (m) => m.kl }] },
  {
    id: 'mismatch',
    title: 'Train–inference mismatch: mean |log π_train − log π_sampler| before a step',
    unit: 'nats per token',
    drill: 'mismatch',
    lines: [{ label: 'mismatch', value: (m) => m.logprobMismatch }],
    emptyBecause: languageModelOnly('have no sampler/trainer mismatch'),
  },
  {
    id: 'clip',
    title: 'Clip fraction',
    unit: 'share of tokens',
    drill: 'logRatio',
    rate: true,
    lines: [
      { label: 'all', value: (m) => m.clipFraction },
      { label: 'low', value: (m) => lossMetric(m, 'clipFractionLow') },
      { label: 'high', value: (m) => lossMetric(m, 'clipFractionHigh') },
    ],
  },
  { id: 'entropy', title: 'Entropy', unit: 'nats per token', lines: [{ label: 'entropy', value: (m) => m.entropy }] },
  {
    id: 'length',
    title: 'Response tokens and turns',
    unit: 'tokens, turns (per episode)',
    lines: [
      { label: 'tokens', value: (m) => m.responseTokens },
      { label: 'turns', value: (m) => m.meanTurns },
    ],
  },
  {
    id: 'tools',
    title: 'Tool calls',
    unit: 'calls per episode',
    lines: [{ label: 'calls', value: (m) => m.toolCalls }],
    emptyBecause: languageModelOnly('make no tool calls (their actions are table entries)'),
  },
  {
    id: 'toolUse',
    title: 'Tool use: calls per episode, per tool',
    unit: 'calls per episode',
    lines: [],
    linesFor: perTool([{ suffix: '', value: (h) => h.callsPerEpisode }]),
    emptyBecause: noToolHealth,
    warnings: (series) => series.flatMap((s) => toolCollapses(s.iterations).map((c) => `${oneLine(s.run.name, 40)}: ${collapseText(c)}`)),
  },
  {
    id: 'toolErrors',
    title: 'Tool health: share of calls that failed or timed out, per tool',
    unit: 'share of calls',
    rate: true,
    lines: [],
    linesFor: perTool([
      { suffix: ' errors', value: (h) => h.errorRate },
      { suffix: ' timeouts', value: (h) => h.timeoutRate },
    ]),
    emptyBecause: noToolHealth,
  },
  {
    id: 'toolLatency',
    title: 'Tool latency per call: p50 and p95 (ms), per tool',
    unit: 'ms per call',
    lines: [],
    linesFor: perTool([
      { suffix: ' p50', value: (h) => h.latencyP50Ms },
      { suffix: ' p95', value: (h) => h.latencyP95Ms },
    ]),
    emptyBecause: () => "no tool reported its duration (the calculator's tools answer at once)",
  },
  {
    id: 'invalid',
    title: 'Invalid actions and sandbox blocks (per episode)',
    unit: 'count per episode',
    lines: [
      { label: 'format errors', value: (m) => m.formatErrors },
      { label: 'bad tool calls', value: (m) => m.badToolCalls },
      { label: 'repeated actions', value: (m) => m.repeatedActions },
      { label: 'blocked by the sandbox', value: (m) => m.blockedActions },
    ],
  },
  {
    id: 'degraded',
    title: "Sampled episodes that ran out of room or had a malformed action (of the iteration's episodes)",
    unit: 'episodes',
    lines: [
      { label: 'ended by the context or turn cap', value: (m) => m.truncatedEpisodes },
      { label: 'with a malformed action', value: (m) => m.malformedEpisodes },
    ],
    emptyBecause: () => 'runs stored before these counts were kept do not have them',
  },
  {
    id: 'toolTime',
    title: 'Time in tools and the sandbox (ms per episode)',
    unit: 'ms per episode',
    lines: [{ label: 'tool ms', value: (m) => m.toolMs }],
    emptyBecause: () => "this environment reports no tool time (the calculator's tools answer at once)",
  },
  {
    id: 'staleness',
    title: 'Staleness: policy versions behind the learner (mean, max)',
    unit: 'policy versions behind',
    lines: [
      { label: 'mean', value: (m) => m.stalenessMean },
      { label: 'max', value: (m) => m.stalenessMax },
    ],
    emptyBecause: () => 'this run recorded no staleness (it predates the metric)',
  },
  {
    id: 'stalenessGroups',
    title: 'Async: groups trained on by versions behind, dropped as too old, queued',
    unit: 'groups',
    lines: [
      { label: '0 behind', value: (m) => m.staleness0 },
      { label: '1 behind', value: (m) => m.staleness1 },
      { label: '2 behind', value: (m) => m.staleness2 },
      { label: '3+ behind', value: (m) => m.staleness3plus },
      { label: 'dropped', value: (m) => m.droppedStaleGroups },
      { label: 'queued at take', value: (m) => m.queueDepth },
    ],
    emptyBecause: asyncOnly,
  },
  {
    id: 'pipeline',
    title: 'Async: learner waiting, rollout busy and held back (ms per iteration)',
    unit: 'ms per iteration',
    lines: [
      { label: 'learner waiting', value: (m) => m.learnerIdleMs },
      { label: 'rollout busy', value: (m) => m.rolloutBusyMs },
      { label: 'rollout held back', value: (m) => m.rolloutBlockedMs },
    ],
    emptyBecause: asyncOnly,
  },
  {
    id: 'importance',
    title: 'Off-policy correction: mean truncated importance weight, share of tokens at the cap',
    unit: 'weight; share of tokens',
    lines: [
      { label: 'mean weight', value: (m) => m.importanceWeightMean },
      { label: 'at the cap', value: (m) => m.importanceTruncated },
    ],
    emptyBecause: () =>
      'no off-policy correction in this run (algorithm.offPolicyCorrection "truncated-is" with oldLogprobs "recompute" turns it on; mode "async" does by default)',
  },
  {
    id: 'trained',
    title: 'Trajectories trained on, and left out (by reason)',
    unit: 'trajectories',
    lines: [
      { label: 'trained', value: (m) => m.trainedTrajectories },
      { label: 'zero advantage', value: (m) => m.zeroAdvantageSkipped },
      { label: 'env error', value: (m) => m.envErrorTrajectories },
      { label: 'overlong', value: (m) => m.overlongFiltered },
      { label: 'unsuccessful', value: (m) => m.unsuccessfulSkipped },
      { label: 'failure not pushed', value: (m) => m.failuresNotPushed },
      { label: 'replaced', value: (m) => m.replacedTrajectories },
      { label: 'cut to the context', value: (m) => m.truncatedSequences },
    ],
  },
];

/**
 * The panels for these runs: PANELS, then one per policy-loss metric they recorded (titles and units
 * from shared/lossMetrics.ts; a metric with no descriptor under its own name), except those drawn as a
 * line of another panel (the clip fraction's low and high sides).
 */
export function panelsFor(series: readonly RunSeries[]): Panel[] {
  const names = lossMetricNames(series.flatMap((s) => s.iterations));
  const own = names.filter((k) => lossMetricDescriptor(k).panel === undefined);
  return [
    ...PANELS,
    ...own.map((k): Panel => {
      const d = lossMetricDescriptor(k);
      return {
        id: `loss:${k}`,
        title: d.title,
        unit: d.unit,
        ...(d.rate ? { rate: true } : {}),
        ...(d.drill ? { drill: d.drill } : {}),
        lines: [{ label: oneLine(k, 40), value: (m) => lossMetric(m, k) }],
        emptyBecause: () => `these runs' policy loss does not report ${oneLine(k, 40)}`,
      };
    }),
  ];
}

/** Legends show this much of a run name; the whole name is the legend entry's hover text. */
export const LEGEND_NAME_LENGTH = 24;

export interface Line {
  readonly runIndex: number;
  /** Short label for the legend and the chart's tooltip. */
  readonly label: string;
  /** The whole name, invisible characters marked: the legend entry's title. */
  readonly fullLabel: string;
  readonly dashed: boolean;
  readonly data: { x: number; y: number }[];
  readonly pointRadius: number;
}

/** Points stay visible where a line has too few of them to be seen as a line. */
export const pointRadius = (points: number): number => (points < 2 ? 3 : points <= 20 ? 2 : 0);

export function runLabels(s: RunSeries): { short: string; full: string } {
  return { short: oneLine(s.run.name, LEGEND_NAME_LENGTH), full: `${showInvisibles(s.run.name)} (run ${s.run.id})` };
}

export function panelLines(panel: Panel, series: readonly RunSeries[]): Line[] {
  return series.flatMap((s, runIndex): Line[] => {
    const name = runLabels(s);
    if (panel.evaluation) {
      const lines = panel.evaluation;
      return lines
        .map((line, j): Line => {
          const data = s.evaluations
            .map((e) => ({ x: e.iteration, y: line.value(e) }))
            .filter((p): p is { x: number; y: number } => typeof p.y === 'number' && Number.isFinite(p.y));
          const k = line.label === 'pass@k' ? s.evaluations.find((e) => e.passK !== undefined)?.passK : undefined;
          const suffix = ` · ${k !== undefined ? `pass@${k}` : line.label}`;
          return { runIndex, label: `${name.short}${suffix}`, fullLabel: `${name.full}${suffix}`, dashed: j > 0, data, pointRadius: 3 };
        })
        .filter((l) => l.data.length > 0);
    }
    const lines = panel.linesFor?.(series) ?? panel.lines;
    return lines
      .map((line, j): Line => {
        const data = s.iterations
          .map((m) => ({ x: m.iteration, y: line.value(m) }))
          .filter((p): p is { x: number; y: number } => typeof p.y === 'number' && Number.isFinite(p.y));
        const suffix = lines.length > 1 || panel.linesFor ? ` · ${line.label}` : '';
        return { runIndex, label: `${name.short}${suffix}`, fullLabel: `${name.full}${suffix}`, dashed: j > 0, data, pointRadius: pointRadius(data.length) };
      })
      .filter((l) => l.data.length > 0);
  });
}

export const NO_ITERATIONS = 'no iterations yet: a point appears here as each iteration of the run finishes';

/** Why a panel draws nothing (undefined when it draws something). */
export function emptyReason(panel: Panel, series: readonly RunSeries[], drawn: number): string | undefined {
  if (drawn > 0) return undefined;
  if (series.length === 0) return 'no run selected: tick one above, or run “Agent RL: Compare Runs”';
  if (panel.evaluation)
    return 'no evaluations yet: a point appears when a run evaluates on its held-out tasks (before and after training, and every evalInterval iterations)';
  if (series.every((s) => s.iterations.length === 0)) return NO_ITERATIONS;
  return panel.emptyBecause?.(series) ?? 'nothing recorded for this metric';
}

// ── Where each iteration's time went ────────────────────────────────────────────────────────────────
export const PHASES = [
  { key: 'phaseGenerateMs', label: 'generate' },
  { key: 'phaseEnvMs', label: 'environment' },
  { key: 'phaseReferenceMs', label: 'reference' },
  { key: 'phaseUpdateMs', label: 'update' },
  { key: 'phaseEvaluateMs', label: 'evaluate' },
  { key: 'phaseStoreMs', label: 'store' },
] as const satisfies readonly { key: keyof IterationMetrics; label: string }[];

export const PHASE_PANEL = { id: 'phases', title: 'Where each iteration’s time goes (s)', unit: 'seconds per iteration' } as const;

export interface PhaseBars {
  readonly runIndex: number;
  readonly phase: (typeof PHASES)[number]['label'];
  readonly label: string;
  readonly fullLabel: string;
  /** x = iteration (the first of its bucket), y = seconds (the bucket's mean). */
  readonly data: { x: number; y: number }[];
}

/**
 * One stacked bar per iteration and run, a segment per phase; runs longer than `maxBars` iterations are
 * drawn as means over consecutive buckets. Only iterations that recorded phase timings count.
 */
export function phaseBars(series: readonly RunSeries[], maxBars = 200): PhaseBars[] {
  return series.flatMap((s, runIndex) => {
    const timed = s.iterations.filter((m) => PHASES.some((p) => typeof m[p.key] === 'number'));
    if (timed.length === 0) return [];
    const size = Math.ceil(timed.length / maxBars);
    const name = runLabels(s);
    const many = series.length > 1;
    return PHASES.map((p): PhaseBars => {
      const data: { x: number; y: number }[] = [];
      for (let i = 0; i < timed.length; i += size) {
        const bucket = timed.slice(i, i + size);
        data.push({ x: bucket[0]!.iteration, y: bucket.reduce((sum, m) => sum + (m[p.key] ?? 0), 0) / bucket.length / 1000 });
      }
      return { runIndex, phase: p.label, label: many ? `${name.short} · ${p.label}` : p.label, fullLabel: many ? `${name.full} · ${p.label}` : p.label, data };
    });
  });
}

export function phaseEmptyReason(series: readonly RunSeries[], drawn: number): string | undefined {
  if (drawn > 0) return undefined;
  if (series.length === 0) return 'no run selected: tick one above';
  if (series.every((s) => s.iterations.length === 0)) return NO_ITERATIONS;
  return series.length === 1 ? 'no phase timings recorded for this run' : 'no phase timings recorded for these runs';
}

// ── What a chart says in words ──────────────────────────────────────────────────────────────────────

/** The legend is drawn only where there is more than one line to tell apart. */
export const showLegend = (lines: number): boolean => lines > 1;

/** A point's hover: the iteration as the title, then each line's value there. */
export function pointTitle(iteration: number): string {
  return `iteration ${count(iteration)}`;
}

export function pointLabel(label: string, y: number): string {
  return `${showInvisibles(label)}: ${sig(y)}`;
}

/**
 * The chart in words, for a screen reader (the canvas's aria-label): its title and unit, then each
 * line's points, iterations and last value (the first `max` lines; how many more), or why it is empty.
 */
export function chartSummary(
  panel: { readonly title: string; readonly unit: string },
  lines: readonly { readonly label: string; readonly data: readonly { readonly x: number; readonly y: number }[] }[],
  empty: string | undefined,
  max = 8,
): string {
  const head = `${panel.title} — ${panel.unit} by iteration`;
  if (empty !== undefined || lines.length === 0) return `${head}: empty, ${empty ?? 'nothing to draw'}`;
  const parts = lines.slice(0, max).map((l) => {
    const first = l.data[0];
    const last = l.data[l.data.length - 1];
    if (!first || !last) return `${showInvisibles(l.label)}: no points`;
    const span = first.x === last.x ? `iteration ${count(first.x)}` : `iterations ${count(first.x)}–${count(last.x)}`;
    return `${showInvisibles(l.label)}: ${count(l.data.length)} point${l.data.length === 1 ? '' : 's'}, ${span}, last ${sig(last.y)}`;
  });
  const more = lines.length > max ? `; and ${count(lines.length - max)} more lines` : '';
  return `${head}: ${parts.join('; ')}${more}`;
}
