// Pure helpers of the Runs tree (no vscode import, so plain-Node tests can load them).
import type { TrajectorySummary } from '../../shared/protocol/backendProtocol';
import type { RunSummary } from '../../shared/types';

/** Groups of one iteration's trajectories, in group order. Pure: tested without VS Code. */
export function groupTrajectories(items: readonly TrajectorySummary[]): { group: number; taskId: string; trajectories: TrajectorySummary[] }[] {
  const byGroup = new Map<number, TrajectorySummary[]>();
  for (const t of items) byGroup.set(t.group, [...(byGroup.get(t.group) ?? []), t]);
  return [...byGroup.entries()].sort((a, b) => a[0] - b[0]).map(([group, trajectories]) => ({ group, taskId: trajectories[0]!.taskId, trajectories }));
}

export function describeRun(r: RunSummary): string {
  return `${r.iterationsDone}/${r.iterationsPlanned}${r.latestRewardMean === null ? '' : ` · reward ${r.latestRewardMean.toFixed(3)}`} · ${r.env} · ${r.method}`;
}

