// Host ⇄ webview messages (dashboard and inspector), declared once for both ends: the host posts
// HostTo* and checks *ToHost with its guard; the pages post *ToHost through webview-ui/vscodeApi.ts and
// check HostTo* with its guard.
import type { EvaluationResult, IterationMetrics, RunSummary } from '../types';
import type { TrajectoryRescores } from '../rescore';
import type { TrajectoryDetail, TrajectorySummary } from './backendProtocol';
import { isNumber, isObject, oneOf, shape, type Guard } from './guards';

export interface RunSeries {
  readonly run: RunSummary;
  readonly iterations: IterationMetrics[];
  readonly evaluations: EvaluationResult[];
}

/** Every run (for the picker) and the series of the selected ones; resent whenever a live run progresses. */
export type HostToDashboard = { readonly type: 'data'; readonly runs: RunSummary[]; readonly series: RunSeries[]; readonly selected: number[] };

export type DashboardToHost = { readonly type: 'ready' } | { readonly type: 'select'; readonly runIds: number[] };

export const isDashboardToHost: Guard<DashboardToHost> = oneOf<DashboardToHost>(
  shape('ready', {}),
  shape('select', { runIds: (v) => Array.isArray(v) && v.length <= 20 && v.every(isNumber) }),
);

export const isHostToDashboard: Guard<HostToDashboard> = shape('data', { runs: Array.isArray, series: Array.isArray, selected: Array.isArray });

/** Persisted webview state (restored when the panel is reopened or VS Code restarts). */
export interface DashboardState {
  readonly selected: number[];
}

export const isDashboardState = (x: unknown): x is DashboardState => isObject(x) && Array.isArray(x.selected) && x.selected.every(isNumber);

/** Host → inspector: one trajectory, the other trajectories of its group, and agentRl.maxTextLength (0 = no cut). */
export interface InspectorData {
  readonly type: 'trajectory';
  readonly detail: TrajectoryDetail;
  readonly group: TrajectorySummary[];
  readonly maxTextLength: number;
  /** What ran the policy (the run record's compute string: backend, model, chat template and what of it was not applied); '' if unknown. */
  readonly compute: string;
  /** The trajectory's stored re-scores and scored edits (absent: none asked for, or the backend predates them). */
  readonly rescores?: TrajectoryRescores;
}

export type InspectorToHost = { readonly type: 'ready' } | { readonly type: 'open'; readonly trajectoryId: number };

export const isInspectorToHost: Guard<InspectorToHost> = oneOf<InspectorToHost>(shape('ready', {}), shape('open', { trajectoryId: isNumber }));
export const isInspectorData = (x: unknown): x is InspectorData =>
  isObject(x) &&
  x.type === 'trajectory' &&
  isObject(x.detail) &&
  Array.isArray(x.group) &&
  isNumber(x.maxTextLength) &&
  typeof x.compute === 'string' &&
  (x.rescores === undefined || (isObject(x.rescores) && Array.isArray(x.rescores.rescores) && Array.isArray(x.rescores.edits)));
