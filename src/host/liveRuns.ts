// One event channel for the runs this window started (instead of module-level listener sets and
// static panels): the run manager's messages update one record per run, and the progress notification,
// the status bar, the tree and the dashboard subscribe to its changes.
import * as vscode from 'vscode';
import type { RunHandle, RunOutcome } from './processes/runManager';
import type { WorkerToHost } from '../shared/protocol/workerProtocol';
import type { LiveRunView } from './statusText';

export interface LiveRun extends LiveRunView {
  readonly handle: RunHandle;
  /** Set once the run is over. */
  outcome?: RunOutcome;
}

export class LiveRuns implements vscode.Disposable {
  private readonly runs = new Map<RunHandle, LiveRun>();
  private readonly changed = new vscode.EventEmitter<LiveRun>();
  private readonly started = new vscode.EventEmitter<LiveRun & { readonly runId: number }>();
  /** Any change: started, phase, progress, end. */
  readonly onDidChange = this.changed.event;
  /** The run is stored and has its id (the dashboard follows it from here). */
  readonly onDidStart = this.started.event;
  private readonly storeChanged = new vscode.EventEmitter<void>();
  /** The database changed outside a run of this window (an import step landed): views reload. */
  readonly onDidChangeStore = this.storeChanged.event;

  /** Says the database changed outside a live run. */
  touched(): void {
    this.storeChanged.fire();
  }

  /** Called by Start Run right after the worker is forked, before it says anything. */
  add(handle: RunHandle, run: { readonly name: string; readonly method: string; readonly iterations: number }): LiveRun {
    const live: LiveRun = { handle, ...run };
    this.runs.set(handle, live);
    this.changed.fire(live);
    return live;
  }

  message(handle: RunHandle, msg: WorkerToHost): void {
    const run = this.runs.get(handle);
    if (!run) return;
    if (msg.type === 'started') {
      run.runId = msg.runId;
      this.started.fire({ ...run, runId: msg.runId });
    } else if (msg.type === 'phase') {
      run.phase = msg.phase;
    } else if (msg.type === 'progress') {
      run.progress = msg;
    } else {
      return;
    }
    this.changed.fire(run);
  }

  ended(handle: RunHandle, outcome: RunOutcome): void {
    const run = this.runs.get(handle);
    if (!run) return;
    run.outcome = outcome;
    if (run.runId === undefined && outcome.runId !== undefined) run.runId = outcome.runId;
    this.runs.delete(handle);
    this.changed.fire(run);
  }

  /** Runs still going, oldest first. */
  all(): LiveRun[] {
    return [...this.runs.values()];
  }

  byRunId(runId: number): LiveRun | undefined {
    return this.all().find((r) => r.runId === runId);
  }

  dispose(): void {
    this.changed.dispose();
    this.started.dispose();
    this.storeChanged.dispose();
  }
}

/** Calls `fn` at most once per `ms`, after the last of a burst of calls (progress comes many times a second). */
export function coalesce(fn: () => void, ms: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  return () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      fn();
    }, ms);
  };
}
