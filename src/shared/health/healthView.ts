// The dashboard's Health section as data (pure; webview-ui/dashboard.ts renders it with textContent and
// an SVG polyline): one row per finding of each selected run, the most severe first, with the episodes its
// "show me" links open and a sparkline of the series behind it. Beside dashboardModel.ts, which it reads
// run labels from, to keep both files readable.
import { count } from '../format';
import type { RunSeries } from '../protocol/webviewProtocol';
import { oneLine } from '../untrustedText';
import { NO_ITERATIONS, runLabels } from '../dashboardModel';

export interface HealthRow {
  readonly runId: number;
  readonly run: string; // the run's name in one line (untrusted), only when several runs are selected
  readonly severity: 'info' | 'warning' | 'severe';
  readonly id: string;
  readonly iterations: string;
  readonly summary: string; // one line, invisible characters marked: it may quote a stored tool or extra name
  readonly episodes: readonly number[]; // trajectory ids the "show me" links open in the inspector
  readonly spark: string; // an SVG polyline's points (100 × 20) of the series behind it; '' with fewer than two
}

/** One row per finding of every selected run, the most severe first, then by run. */
export function healthRows(series: readonly RunSeries[]): HealthRow[] {
  const rank = { severe: 0, warning: 1, info: 2 } as const;
  const rows = series.flatMap((s) =>
    (s.findings ?? []).map((f): HealthRow => ({
      runId: s.run.id,
      run: series.length > 1 ? runLabels(s).short : '',
      severity: f.severity,
      id: oneLine(f.id, 40),
      iterations:
        f.iterations[0] === f.iterations[1] ? `iteration ${count(f.iterations[0])}` : `iterations ${count(f.iterations[0])}–${count(f.iterations[1])}`,
      summary: oneLine(f.summary, 400),
      episodes: f.episodes.filter((e) => Number.isInteger(e) && e > 0).slice(0, 5),
      spark: sparkPoints(f.spark),
    })),
  );
  return rows.sort((a, b) => rank[a.severity] - rank[b.severity]);
}

/** A sparkline's points in a 100 × 20 box (y down, as SVG draws), from the finite values only. */
export function sparkPoints(values: readonly unknown[]): string {
  const v = Array.isArray(values) ? values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x)) : [];
  if (v.length < 2) return '';
  const [lo, hi] = [Math.min(...v), Math.max(...v)];
  const r = (x: number): number => Math.round(x * 10) / 10;
  return v.map((x, i) => `${r((100 * i) / (v.length - 1))},${r(hi === lo ? 10 : 19 - (18 * (x - lo)) / (hi - lo))}`).join(' ');
}

/** Why the Health section lists nothing, or undefined when it lists findings. */
export function healthEmpty(series: readonly RunSeries[], rows: readonly HealthRow[]): string | undefined {
  if (rows.length > 0) return undefined;
  if (series.length === 0) return 'no run selected: tick one above';
  if (series.every((s) => s.iterations.length === 0)) return NO_ITERATIONS;
  return 'no findings: nothing in the stored iterations crosses a bar (docs/health.md lists them)';
}
