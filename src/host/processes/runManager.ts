// Starts and watches run workers. One worker per run; a worker that exits without saying it finished,
// or stops sending heartbeats, has its run recorded as failed (through the backend, since the host
// never opens the database) and is reported to the listeners. Other runs are not affected.
import type { FindingRecord } from '../../shared/health/findings';
import type { ChildProcess } from 'node:child_process';
import { isWorkerToHost, type HostToWorker, type WorkerToHost } from '../../shared/protocol/workerProtocol';
import type { BackendClient } from './backendClient';
import { judgeTarget } from '../../shared/judgeTarget';
import { forkNode, type ForkOptions } from './nodeProcess';

export interface RunHandle {
  readonly pid: number | undefined;
  runId: number | undefined;
  /** Resolves once the run is over: finished (any status), failed, or its worker died. */
  readonly done: Promise<RunOutcome>;
  cancel(): void;
}

export type RunOutcome =
  | { readonly kind: 'finished'; readonly runId: number; readonly status: string; readonly findings?: readonly FindingRecord[] }
  | { readonly kind: 'failed'; readonly runId?: number; readonly reason: string };

export interface RunManagerOptions {
  readonly fork: Omit<ForkOptions, 'args'>;
  readonly backend: BackendClient;
  /** A worker silent for this long is declared hung and killed. */
  readonly heartbeatTimeoutMs?: number;
  readonly onMessage?: (msg: WorkerToHost, handle: RunHandle) => void;
  /** Every run's end, including workers that died without a word (after the run was recorded failed). */
  readonly onOutcome?: (outcome: RunOutcome, handle: RunHandle) => void;
  /** A worker was forked (the output channel names the runtime it runs on). */
  readonly onStart?: (handle: RunHandle) => void;
}

export class RunManager {
  private readonly live = new Set<ChildProcess>();

  constructor(private readonly o: RunManagerOptions) {}

  /**
   * Continues stored run `runId` from its last resume point (a code run with the user's sandbox settings).
   * `judged`: the stored config has reward.judge (the caller read it and confirmed the judge), so the
   * worker is handed fork.extraEnv (the judge's key).
   */
  resume(runId: number, db: string, sandbox: { readonly python: string; readonly sandbox: string }, judged = false): RunHandle {
    return this.start({}, db, { runId, ...sandbox }, undefined, judged);
  }

  /** A new run from stored run `runId`'s kept state after iteration `at`, `changes` merged over its config; `judged` as for resume. */
  fork(
    runId: number,
    at: number,
    changes: Record<string, unknown>,
    db: string,
    sandbox: { readonly python: string; readonly sandbox: string },
    judged = false,
  ): RunHandle {
    return this.start({}, db, undefined, { runId, at, changes, ...sandbox }, judged);
  }

  /**
   * Forks a worker for `config` (or for a resume or fork of a stored run). Only a judged run's worker gets
   * fork.extraEnv (the judge's key): the programs an unjudged run starts must never inherit it.
   */
  start(
    config: unknown,
    db: string,
    resume?: { readonly runId: number; readonly python: string; readonly sandbox: string },
    fork?: Extract<HostToWorker, { type: 'start' }>['fork'],
    judged = judgeTarget(config) !== undefined,
  ): RunHandle {
    const { extraEnv, ...plain } = this.o.fork;
    const child = forkNode(judged && extraEnv ? { ...plain, extraEnv } : plain);
    this.live.add(child);
    let resolveDone!: (o: RunOutcome) => void;
    const done = new Promise<RunOutcome>((r) => (resolveDone = r));
    const settle = (o: RunOutcome): void => {
      this.o.onOutcome?.(o, handle);
      resolveDone(o);
    };
    let terminal: RunOutcome | undefined;
    let lastSeen = Date.now();
    const handle: RunHandle = {
      pid: child.pid,
      runId: undefined,
      done,
      cancel: () => {
        child.send({ type: 'cancel' } satisfies HostToWorker);
      },
    };
    const timeout = this.o.heartbeatTimeoutMs ?? 15_000;
    const watchdog = setInterval(
      () => {
        if (Date.now() - lastSeen > timeout) {
          terminal ??= {
            kind: 'failed',
            ...(handle.runId !== undefined ? { runId: handle.runId } : {}),
            reason: `the worker sent no heartbeat for ${timeout} ms and was stopped`,
          };
          child.kill('SIGKILL');
        }
      },
      Math.min(1000, timeout / 2),
    );
    child.on('message', (msg: unknown) => {
      lastSeen = Date.now();
      if (!isWorkerToHost(msg)) return;
      if (msg.type === 'started') handle.runId = msg.runId;
      if (msg.type === 'finished') terminal = { kind: 'finished', runId: msg.runId, status: msg.status, ...(msg.findings ? { findings: msg.findings } : {}) };
      if (msg.type === 'failed') terminal = { kind: 'failed', ...(msg.runId !== undefined ? { runId: msg.runId } : {}), reason: msg.error };
      this.o.onMessage?.(msg, handle);
    });
    const onGone = (why: string): void => {
      clearInterval(watchdog);
      this.live.delete(child);
      const outcome: RunOutcome = terminal ?? { kind: 'failed', ...(handle.runId !== undefined ? { runId: handle.runId } : {}), reason: why };
      if (outcome.kind === 'failed' && outcome.runId !== undefined) {
        // The worker may have died before it could record its own end: record it (no-op if it did).
        this.o.backend.request('markFailed', { runId: outcome.runId, reason: outcome.reason }).then(
          () => settle(outcome),
          () => settle(outcome),
        );
      } else {
        settle(outcome);
      }
    };
    child.on('error', (e) => onGone(`the worker could not run: ${e.message}`));
    child.on('exit', (code, signal) => onGone(signal ? `the worker was killed (${signal})` : `the worker exited with code ${code} before finishing`));
    child.send({ type: 'start', config: config as object, db, ...(resume ? { resume } : {}), ...(fork ? { fork } : {}) } satisfies HostToWorker);
    this.o.onStart?.(handle);
    return handle;
  }

  /** Stops every worker (on deactivate). */
  dispose(): void {
    for (const c of this.live) c.kill();
    this.live.clear();
  }
}
