// Host ⇄ run worker messages (child_process IPC, JSON). Declared once, used by both ends; every
// message received is checked by its guard before use.
import type { FindingRecord } from '../health/findings';
import { isRunPhase, type RunPhase } from '../runPhase';
import type { EvaluationResult, RunStatus } from '../types';
import { isNumber, isObject, isString, oneOf, shape, type Guard } from './guards';

export type HostToWorker =
  /**
   * Start one run. `config` is validated by the worker (errors come back as `failed` with the field).
   * With `resume`, the stored run `resume.runId` continues from its last resume point with its stored
   * config instead (`config` is ignored), a code run with the user's interpreter and sandbox level.
   * With `fork`, a new run starts from stored run `fork.runId`'s kept state after iteration `fork.at`,
   * with its config and `fork.changes` (a RunConfig fragment, checked by the worker) merged over it.
   */
  | {
      readonly type: 'start';
      readonly config: unknown;
      readonly db: string;
      readonly busyTimeoutMs?: number;
      readonly resume?: { readonly runId: number; readonly python: string; readonly sandbox: string };
      readonly fork?: { readonly runId: number; readonly at: number; readonly changes: unknown; readonly python: string; readonly sandbox: string };
    }
  /** Stop at the next iteration boundary. */
  | { readonly type: 'cancel' };

export type WorkerToHost =
  | { readonly type: 'started'; readonly runId: number; readonly name: string; readonly iterations: number }
  /** `etaMs` -1 while unknown; `loss` and `tokenAccuracy` are what SFT progress reports (runPhase.ts). */
  | {
      readonly type: 'progress';
      readonly runId: number;
      readonly iteration: number;
      readonly iterations: number;
      readonly rewardMean: number;
      readonly successRate: number;
      readonly etaMs: number;
      readonly loss: number;
      readonly tokenAccuracy?: number;
    }
  /** What the run is doing now; sent from the first second, before the run is stored (then without `runId`). */
  | { readonly type: 'phase'; readonly runId?: number; readonly phase: RunPhase; readonly iterations: number }
  | { readonly type: 'evaluation'; readonly runId: number; readonly evaluation: EvaluationResult }
  | { readonly type: 'heartbeat'; readonly at: number }
  | { readonly type: 'log'; readonly level: 'info' | 'warn' | 'error'; readonly message: string }
  /** `findings`: what the stored iterations show going wrong at the end (shared/health/findings.ts), the most severe first. */
  | { readonly type: 'finished'; readonly runId: number; readonly status: RunStatus; readonly wallMs: number; readonly findings?: readonly FindingRecord[] }
  /** A severe health finding the run's iterations show for the first time (shared/health/findings.ts): sent once per finding, not per iteration. */
  | { readonly type: 'finding'; readonly runId: number; readonly finding: FindingRecord }
  /** The run could not start or failed; `runId` is absent when it failed before it was stored. */
  | { readonly type: 'failed'; readonly runId?: number; readonly error: string };

const optNumber = (v: unknown): boolean => v === undefined || isNumber(v);
const STATUSES = ['running', 'completed', 'failed', 'cancelled'];
const SEVERITIES: readonly string[] = ['info', 'warning', 'severe'] satisfies readonly FindingRecord['severity'][];
/** A finding as the worker sends it: an id, a known severity and a summary (the host shows it through untrustedText). */
const isFindingRecord = (v: unknown): boolean =>
  isObject(v) && isString(v.id) && isString(v.summary) && isString(v.severity) && SEVERITIES.includes(v.severity);

export const isHostToWorker: Guard<HostToWorker> = oneOf<HostToWorker>(
  shape('start', {
    config: isObject,
    db: isString,
    busyTimeoutMs: optNumber,
    resume: (r) => r === undefined || (isObject(r) && isNumber(r.runId) && isString(r.python) && isString(r.sandbox)),
    fork: (f) => f === undefined || (isObject(f) && isNumber(f.runId) && isNumber(f.at) && isObject(f.changes) && isString(f.python) && isString(f.sandbox)),
  }),
  shape('cancel', {}),
);

export const isWorkerToHost: Guard<WorkerToHost> = oneOf<WorkerToHost>(
  shape('started', { runId: isNumber, name: isString, iterations: isNumber }),
  shape('progress', {
    runId: isNumber,
    iteration: isNumber,
    iterations: isNumber,
    rewardMean: isNumber,
    successRate: isNumber,
    etaMs: isNumber,
    loss: isNumber,
    tokenAccuracy: optNumber,
  }),
  shape('phase', { runId: optNumber, phase: isRunPhase, iterations: isNumber }),
  shape('evaluation', { runId: isNumber, evaluation: (e) => isObject(e) && isNumber(e.successRate) && isNumber(e.iteration) }),
  shape('heartbeat', { at: isNumber }),
  shape('log', { level: (l) => l === 'info' || l === 'warn' || l === 'error', message: isString }),
  shape('finding', { runId: isNumber, finding: isFindingRecord }),
  shape('finished', {
    runId: isNumber,
    status: (s) => STATUSES.includes(s as string),
    wallMs: isNumber,
    findings: (v) => v === undefined || (Array.isArray(v) && v.every(isFindingRecord)),
  }),
  shape('failed', { runId: optNumber, error: isString }),
);
