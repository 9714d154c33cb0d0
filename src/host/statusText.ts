// Status-bar text (pure).
import type { WorkerToHost } from '../shared/protocol/workerProtocol';

export function formatEta(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

export function statusText(p: Extract<WorkerToHost, { type: 'progress' }>): string {
  return `$(sync~spin) Agent RL: run ${p.runId} · ${p.iteration}/${p.iterations} · reward ${p.rewardMean.toFixed(3)} · ETA ${formatEta(p.etaMs)}`;
}

