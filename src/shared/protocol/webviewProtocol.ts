// Host ⇄ webview messages (dashboard and inspector), declared once for both ends: the host posts
// HostTo* and checks *ToHost with its guard; the pages post *ToHost through webview-ui/vscodeApi.ts and
// check HostTo* with its guard.
import { isBaseWeights, type BaseWeights } from '../baseWeights';
import type { EvaluationResult, IterationMetrics, RunSummary } from '../types';
import type { FindingView } from '../health/findings';
import type { ConfigDifference } from '../configDiff';
import type { SharedTask, TrajectoryDetail, TrajectorySummary, WorstToken } from './backendProtocol';
import type { WorstBy } from '../tokenStatsRows';
import type { TrajectoryRescores } from '../rescore';
import { isNumber, isObject, oneOf, shape, type Guard } from './guards';

export interface RunSeries {
  readonly run: RunSummary;
  readonly iterations: IterationMetrics[];
  readonly evaluations: EvaluationResult[];
  /** What its stored iterations show going wrong (shared/health/findings.ts), with the episodes to open; absent when not read. */
  readonly findings?: readonly FindingView[];
  /** How the run's model held its base weights (q8, bf16, f32), from the stored run; absent when not recorded. */
  readonly baseWeights?: BaseWeights;
}

/** Every run (for the picker) and the series of the selected ones; resent whenever a live run progresses. */
export interface DashboardData {
  readonly type: 'data';
  readonly runs: RunSummary[];
  readonly series: RunSeries[];
  readonly selected: number[];
}

/** An iteration's worst tokens and its histogram of |train − sampling log-prob| (a click on a chart's point). */
export interface DashboardDrill {
  readonly type: 'drill';
  readonly runId: number;
  readonly iteration: number;
  readonly by: WorstBy;
  readonly items: WorstToken[];
  readonly histogram: { readonly edges: number[]; readonly counts: number[]; readonly tokens: number; readonly unknown: number };
  /** Why the iteration's tokens could not be read (the backend's error), when they could not. */
  readonly error?: string;
}

export type HostToDashboard = DashboardData | DashboardDrill;

export type DashboardToHost =
  | { readonly type: 'ready' }
  | { readonly type: 'select'; readonly runIds: number[] }
  | { readonly type: 'drill'; readonly runId: number; readonly iteration: number; readonly by: WorstBy }
  | { readonly type: 'openToken'; readonly trajectoryId: number; readonly focus: TokenFocus }
  /** Compare Runs: open one run's trajectory of a shared task in the inspector. */
  | { readonly type: 'openTrajectory'; readonly trajectoryId: number };

export const isDashboardToHost: Guard<DashboardToHost> = oneOf<DashboardToHost>(
  shape('ready', {}),
  shape('select', { runIds: (v) => Array.isArray(v) && v.length <= 20 && v.every(isNumber) }),
  shape('drill', { runId: isNumber, iteration: isNumber, by: (v) => isWorstBy(v) }),
  shape('openToken', { trajectoryId: isNumber, focus: (v) => v !== undefined && isFocus(v) }),
  shape('openTrajectory', { trajectoryId: isNumber }),
);

export const isHostToDashboard: Guard<HostToDashboard> = oneOf<HostToDashboard>(
  shape('data', { runs: Array.isArray, series: Array.isArray, selected: Array.isArray }),
  shape('drill', { runId: isNumber, iteration: isNumber, by: (v) => isWorstBy(v), items: Array.isArray, histogram: isObject }),
);

/**
 * Compare Runs' section of the dashboard (its own message, drawn by webview-ui/comparison.ts): for two or
 * more selected runs, where their configs differ and the tasks they all sampled; empty lists otherwise.
 */
export interface DashboardComparison {
  readonly type: 'comparison';
  /** The compared runs, in the order of each difference's values and each task's runs. */
  readonly runs: readonly { readonly id: number; readonly name: string }[];
  readonly differences: readonly ConfigDifference[];
  readonly sharedTasks: readonly SharedTask[];
}

export const isDashboardComparison = (x: unknown): x is DashboardComparison =>
  isObject(x) && x.type === 'comparison' && Array.isArray(x.runs) && Array.isArray(x.differences) && Array.isArray(x.sharedTasks);

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
  /** How the run's model held its base weights (q8, bf16, f32), from the stored run; absent when not recorded. */
  readonly baseWeights?: BaseWeights;
  /** A token to show in context (a worst-token list's click). */
  readonly focus?: TokenFocus;
  /** The trajectory's stored re-scores and scored edits (absent: none asked for, or the backend predates them). */
  readonly rescores?: TrajectoryRescores;
}

/** A generated token: its turn, and its index among the turn's generated tokens. */
export interface TokenFocus {
  readonly turn: number;
  readonly token: number;
}

/** Where a worst-token list looks: the shown trajectory's iteration, or its whole run. */
export type WorstScope = 'iteration' | 'run';

/** Host → inspector: a worst-token list it asked for. */
export interface InspectorWorst {
  readonly type: 'worst';
  /** The trajectory shown when it was asked for (a reply that arrives after another was opened is dropped). */
  readonly trajectoryId: number;
  /** Why the list could not be read (the backend's error), when it could not. */
  readonly error?: string;
  readonly scope: WorstScope;
  readonly by: WorstBy;
  readonly items: WorstToken[];
}

export type HostToInspector = InspectorData | InspectorWorst;

export type InspectorToHost =
  | { readonly type: 'ready' }
  | { readonly type: 'open'; readonly trajectoryId: number; readonly focus?: TokenFocus }
  | { readonly type: 'worst'; readonly scope: WorstScope; readonly by: WorstBy };

function isFocus(v: unknown): boolean {
  return v === undefined || (isObject(v) && isNumber(v.turn) && isNumber(v.token));
}
function isWorstBy(v: unknown): boolean {
  return v === 'mismatch' || v === 'logRatio' || v === 'kl' || v === 'reverseKl';
}

export const isInspectorToHost: Guard<InspectorToHost> = oneOf<InspectorToHost>(
  shape('ready', {}),
  shape('open', { trajectoryId: isNumber, focus: isFocus }),
  shape('worst', { scope: (v) => v === 'iteration' || v === 'run', by: isWorstBy }),
);
export const isInspectorData = (x: unknown): x is InspectorData =>
  isObject(x) &&
  x.type === 'trajectory' &&
  isObject(x.detail) &&
  Array.isArray(x.group) &&
  isNumber(x.maxTextLength) &&
  typeof x.compute === 'string' &&
  (x.baseWeights === undefined || isBaseWeights(x.baseWeights)) &&
  isFocus(x.focus) &&
  (x.rescores === undefined || (isObject(x.rescores) && Array.isArray(x.rescores.rescores) && Array.isArray(x.rescores.edits)));
export const isInspectorWorst: Guard<InspectorWorst> = shape('worst', {
  trajectoryId: isNumber,
  error: (v) => v === undefined || typeof v === 'string',
  scope: (v) => v === 'iteration' || v === 'run',
  by: isWorstBy,
  items: Array.isArray,
});
export const isHostToInspector: Guard<HostToInspector> = oneOf<HostToInspector>(isInspectorData, isInspectorWorst);
