// What the dashboard's drill-down shows (pure: webview-ui/drill.ts renders it, tests check it in Node):
// a click on an iteration's point in the mismatch, clip, KL or teacher's reverse-KL chart brings that iteration's worst tokens
// — a table with the inspector's columns (inspectorModel.ts), each row opening its token in context —
// and its histogram of |training − sampling log-prob|: the bars, the axis titles, the line above it.
import { count, sig } from './format';
import { remoteWorst, type WorstTable } from './worstTable';
import type { DashboardDrill } from './protocol/webviewProtocol';
import type { WorstBy } from './tokenStatsRows';
import { oneLine } from './untrustedText';

/** What the drill-down's heading says each measure is. */
export const DRILL_BY_TEXT: Record<WorstBy, string> = {
  mismatch: '|training − sampling log-prob|',
  logRatio: '|log π/π_old| (what the clip acts on)',
  kl: 'KL to the reference',
  reverseKl: '|student − teacher log-prob| (the distillation teacher’s per-token term)',
};

export interface HistogramBar {
  /** The bin's centre and its count of tokens. */
  readonly x: number;
  readonly y: number;
  /** "[0.001, 0.002): 12 tokens". */
  readonly label: string;
}

export interface DrillView {
  readonly title: string;
  readonly table: WorstTable;
  /** Why the table is empty (the backend's error, or no token has the number), when it is. */
  readonly empty?: string;
  readonly histogram: {
    /** The line above the chart: how many tokens, how many unknown. */
    readonly meta: string;
    readonly xTitle: string;
    readonly yTitle: string;
    readonly bars: readonly HistogramBar[];
  };
}

export function drillView(d: DashboardDrill, runName: string): DrillView {
  const table = remoteWorst(d.iteration, 'iteration', d.by, d.items, d.error);
  const h = d.histogram;
  const width = (h.edges[1] ?? 1) - (h.edges[0] ?? 0);
  return {
    title: `${oneLine(String(runName), 80)} · iteration ${d.iteration}: worst tokens by ${DRILL_BY_TEXT[d.by]}`,
    table,
    ...(d.error !== undefined
      ? { empty: `could not be read: ${oneLine(String(d.error), 300)}` }
      : d.items.length === 0
        ? { empty: 'no token of this iteration has this number recorded (not trained on, or a run stored before token statistics)' }
        : {}),
    histogram: {
      meta: `|training − sampling log-prob| of ${count(h.tokens)} tokens${h.unknown > 0 ? ` (${count(h.unknown)} more trained after another step of the update: unknown; algorithm.oldLogprobs "recompute" records every token)` : ''}`,
      xTitle: '|log π_train − log π_sampler| (nats)',
      yTitle: 'tokens',
      bars: h.counts.map((y, i) => {
        const lo = h.edges[i] ?? 0;
        const hi = h.edges[i + 1] ?? lo + width;
        return { x: lo + width / 2, y, label: `[${sig(lo)}, ${sig(hi)}${i === h.counts.length - 1 ? ']' : ')'}: ${count(y)} token${y === 1 ? '' : 's'}` };
      }),
    },
  };
}
