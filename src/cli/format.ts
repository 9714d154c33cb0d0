// Text formatting for the CLI: tables, evaluation lines, the progress bar. Numbers go through
// src/shared/format.ts, as in every view; percentages and durations keep the terminal's short forms.
import { duration as formatDuration, fixed, percent } from '../shared/format';
import type { EvaluationResult, RunSummary } from '../shared/types';
import { oneLine } from '../shared/untrustedText';

/** A stored value in a table cell or a summary line: one line, invisible characters marked, cut. */
export const cell = (x: unknown, max = 60): string => oneLine(String(x), max);

/** A share as a percentage: "12.5%" ('?' when not a number). */
export const pct = (x: number, digits = 1): string => percent(x, digits, '?');

/** "1.5s", "42s", "2m05s", "1h02m". */
export const duration = (ms: number): string => formatDuration(ms, { compact: true });

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
      ? [`tool calls ${fixed(e.toolCalls, 2)}${e.greedyToolCalls !== undefined ? ` (greedy ${fixed(e.greedyToolCalls, 2)})` : ''}`]
      : []),
    `mean actions ${fixed(e.meanActions, 3)}`,
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
      fixed(r.latestRewardMean, 3, '-'),
      cell(String(r.createdAt).replace('T', ' '), 19),
    ]),
  );
}

export function progressBar(done: number, total: number, width = 24): string {
  const filled = Math.round((done / total) * width);
  return `[${'='.repeat(Math.max(0, filled - 1))}${filled > 0 ? '>' : ''}${' '.repeat(width - filled)}]`;
}
