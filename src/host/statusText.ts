// What a live run is doing, as text for the status bar and the progress notification (pure). From its
// first second: starting, loading, warm start, evaluating, iteration k; the figures of the last
// iteration (SFT: the model's loss and token accuracy; otherwise reward and success); the ETA once a
// few iterations are done. Run names are untrusted: they go through messageText.
import type { WorkerToHost } from '../shared/protocol/workerProtocol';
import { describePhase, progressFigures, type RunPhase } from '../shared/runPhase';
import { messageText } from '../shared/untrustedText';

type ProgressMessage = Extract<WorkerToHost, { type: 'progress' }>;

export interface LiveRunView {
  readonly name: string;
  readonly method: string;
  readonly iterations: number;
  runId?: number;
  phase?: RunPhase;
  progress?: ProgressMessage;
}

export function formatEta(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  const s = Math.round(ms / 1000);
  return s < 60
    ? `${s}s`
    : s < 3600
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

/** What the run is doing now, without its name (the notification's title has it). */
export function activityText(r: LiveRunView): string {
  const p = r.progress;
  const done = p ? [`${p.iteration}/${r.iterations}`, ...progressFigures(r.method, p), ...(p.etaMs >= 0 ? [`ETA ${formatEta(p.etaMs)}`] : [])] : [];
  if (!r.phase) return 'starting the worker';
  if (r.phase.kind === 'iteration') return (done.length > 0 ? done : [describePhase(r.phase, r.iterations)]).join(' · ');
  return [describePhase(r.phase, r.iterations), ...done.slice(0, 1)].join(' · ');
}

/** "run 3 · name" (just the name until the run is stored). */
export function runLabel(r: { readonly runId?: number; readonly name: string }): string {
  return `${r.runId !== undefined ? `run ${r.runId} · ` : ''}${messageText(r.name, 60)}`;
}

export function statusText(r: LiveRunView): string {
  return `$(sync~spin) Agent RL: ${runLabel(r)} · ${activityText(r)}`;
}

/** A run that ended: the status bar's text, and its tooltip's first line. */
export function endedText(r: { readonly runId?: number; readonly name: string }, status: string): { readonly text: string; readonly tooltip: string } {
  return {
    text: `$(${status === 'completed' ? 'pass' : 'error'}) Agent RL: ${runLabel(r)} ${status}`,
    tooltip: `${runLabel(r)}: ${status}. Click for the dashboard.`,
  };
}

/** A live run: the status bar's tooltip's first line. */
export function activityTooltip(r: LiveRunView): string {
  return `${runLabel(r)}: ${activityText(r)}. Click for the dashboard.`;
}
