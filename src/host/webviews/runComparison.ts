// Compare Runs' section of the dashboard: where the selected runs' stored configs differ (key path and
// each run's value, shared/configDiff.ts) and the training tasks they all sampled, each run's reward and
// success on it and its latest trajectory (a click in the page opens it in the inspector). Built only
// when the selection changes: the shared-task query scans the runs' trajectories.
import type { BackendClient } from '../processes/backendClient';
import { configDifferences } from '../../shared/configDiff';
import type { DashboardComparison } from '../../shared/protocol/webviewProtocol';

/** Shared tasks sent to the page at most (the most different first). */
export const SHARED_TASKS_SHOWN = 100;

export async function loadComparison(backend: BackendClient, runIds: readonly number[]): Promise<DashboardComparison> {
  const runs: { id: number; name: string }[] = [];
  const configs: unknown[] = [];
  for (const runId of runIds) {
    const run = await backend.request('getRun', { runId });
    if (!run) continue;
    runs.push({ id: runId, name: run.summary.name });
    configs.push(run.config);
  }
  if (runs.length < 2) return { type: 'comparison', runs, differences: [], sharedTasks: [] };
  const sharedTasks = await backend.request('sharedTasks', { runIds: runs.map((r) => r.id), limit: SHARED_TASKS_SHOWN });
  return { type: 'comparison', runs, differences: configDifferences(configs), sharedTasks };
}
