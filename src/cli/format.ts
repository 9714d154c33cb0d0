// Text formatting for the CLI: percentages, durations, tables, the progress bar.
import type { EvaluationResult, RunSummary } from '../shared/types';
import { oneLine } from '../shared/untrustedText';

/** A stored value in a table cell or a summary line: one line, invisible characters marked, cut. */
export const cell = (x: unknown, max = 60): string => oneLine(String(x), max);

export const pct = (x: number, digits = 1): string => `${(100 * x).toFixed(digits)}%`;

export function duration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function evaluationLine(e: EvaluationResult): string {
  const parts = [
    `${pct(e.successRate)} (${e.successes}/${e.episodes})`,
    ...(e.greedySuccessRate !== undefined ? [`greedy ${pct(e.greedySuccessRate)}`] : []),
    ...(e.passAtK !== undefined && e.passK !== undefined ? [`pass@${e.passK} ${pct(e.passAtK)}`] : []),
    ...(e.toolCalls !== undefined && e.toolCalls > 0
      ? [`tool calls ${e.toolCalls.toFixed(2)}${e.greedyToolCalls !== undefined ? ` (greedy ${e.greedyToolCalls.toFixed(2)})` : ''}`]
      : []),
    `mean actions ${e.meanActions.toFixed(3)}`,
    `public pass ${pct(e.publicPassRate)}`,
    `private pass ${pct(e.privatePassRate)}`,
  ];
  return parts.join(', ');
}

export function runsTable(runs: readonly RunSummary[]): string {
  return table(
    ['id', 'name', 'status', 'env', 'policy', 'method', 'seed', 'iterations', 'reward', 'created'],
    runs.map((r) => [
      cell(r.id),
      cell(r.name),
      cell(r.status),
      cell(r.env),
      cell(r.policy),
      cell(r.methodLabel, 60),
      cell(r.seed),
      `${cell(r.iterationsDone)}/${cell(r.iterationsPlanned)}`,
      typeof r.latestRewardMean === 'number' ? r.latestRewardMean.toFixed(3) : '-',
      cell(String(r.createdAt).replace('T', ' '), 19),
    ]),
  );
}

export function progressBar(done: number, total: number, width = 24): string {
  const filled = Math.round((done / total) * width);
  return `[${'='.repeat(Math.max(0, filled - 1))}${filled > 0 ? '>' : ''}${' '.repeat(width - filled)}]`;
}
