// What Compare Runs' section of the dashboard shows (pure: webview-ui/comparison.ts renders it, tests
// check it in Node): for two or more selected runs, where their configs differ — grouped by section
// (the top-level keys first, then algorithm, envOptions, policyOptions, …), one row per key with each
// run's value — and the training tasks they all sampled, each run's reward and success on it (a cell
// opens that run's latest trajectory of the task). Run names, config keys and values and task ids are
// stored data: one line each, invisibles marked, cut.
import { showConfigValue } from './configDiff';
import { count, fixed, percent } from './format';
import type { SharedTask } from './protocol/backendProtocol';
import type { DashboardComparison } from './protocol/webviewProtocol';
import { oneLine, showInvisibles } from './untrustedText';

export interface ComparisonHeader {
  readonly text: string;
  /** The whole name (hover). */
  readonly title: string;
}

export interface DifferenceSection {
  /** '' for the top-level keys. */
  readonly name: string;
  /** The section's heading row. */
  readonly title: string;
  readonly rows: readonly { readonly key: string; readonly title: string; readonly values: readonly string[] }[];
}

export interface TaskCell {
  readonly text: string;
  readonly title: string;
  readonly trajectoryId: number;
  readonly tone: 'good' | 'bad' | 'neutral';
}

export interface ComparisonView {
  /** Fewer than two runs: nothing to compare. */
  readonly hidden: boolean;
  readonly runs: readonly ComparisonHeader[];
  readonly differences: { readonly title: string; readonly empty?: string; readonly sections: readonly DifferenceSection[] };
  readonly tasks: {
    readonly title: string;
    readonly empty?: string;
    readonly rows: readonly { readonly task: string; readonly title: string; readonly cells: readonly TaskCell[] }[];
  };
}

/** The differences by section: the first segment of a dotted path ('' for a top-level key), top level first. */
function sections(differences: DashboardComparison['differences']): DifferenceSection[] {
  const by = new Map<string, { key: string; title: string; values: string[] }[]>();
  for (const d of differences) {
    const path = String(d.path);
    const dot = path.indexOf('.');
    const name = dot > 0 ? path.slice(0, dot) : '';
    const key = dot > 0 ? path.slice(dot + 1) : path;
    const values = (Array.isArray(d.values) ? d.values : []).map((v: unknown) => oneLine(showConfigValue(v), 100));
    if (!by.has(name)) by.set(name, []);
    by.get(name)!.push({ key: oneLine(key, 80), title: showInvisibles(path), values });
  }
  return [...by.entries()]
    .sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([name, rows]) => ({ name: oneLine(name, 80), title: name === '' ? 'run' : oneLine(name, 80), rows }));
}

export function comparisonView(c: DashboardComparison): ComparisonView {
  const runs = c.runs.map((r) => ({
    text: `${oneLine(String(r.name), 40)} (run ${String(r.id)})`,
    title: showInvisibles(`${String(r.name)} (run ${String(r.id)})`),
  }));
  return {
    hidden: c.runs.length < 2,
    runs,
    differences: {
      title: `Config differences (${count(c.differences.length)})`,
      ...(c.differences.length === 0 ? { empty: 'The configs are the same.' } : {}),
      sections: sections(c.differences),
    },
    tasks: {
      title: `Tasks every run sampled (${count(c.sharedTasks.length)} shown, the most different rewards first)`,
      ...(c.sharedTasks.length === 0 ? { empty: 'No training task was sampled by every selected run.' } : {}),
      rows: c.sharedTasks.map((t) => ({
        task: oneLine(String(t.taskId), 60),
        title: showInvisibles(String(t.taskId)),
        // the guard checks the lists, not each entry
        cells: (Array.isArray(t.runs) ? (t.runs as SharedTask['runs']) : []).map((r) => ({
          text: `reward ${fixed(r.rewardMean, 2, '?')} · success ${percent(r.successRate, 0, '?')} · ${count(r.episodes, '?')} ep.`,
          title: `Open run ${oneLine(String(r.runId), 20)}'s latest trajectory of this task (${oneLine(String(r.trajectoryId), 20)}) in the inspector`,
          trajectoryId: Number(r.trajectoryId),
          tone: r.successRate === 1 ? 'good' : r.successRate === 0 ? 'bad' : 'neutral',
        })),
      })),
    },
  };
}
