// A run trained into the database, the one way the worker and the CLI both do it: open the store,
// mark runs whose process died as failed, continue a stored run from its resume point (its stored
// config read as data, the user's interpreter and sandbox level), fork a new run from a stored run's
// kept resume point (store/fork.ts), or start a new one, train with the
// SQLite sink (its checkpoints next to the database), and explain a SQLite failure in the user's terms.
import type { RunConfig } from '../shared/runConfig';
import type { RuntimeInfo } from '../shared/types';
import { train, type TrainEvent, type TrainResult } from '../rl/train/trainer';
import { explainSqliteError, openStore } from './openStore';
import { prepareFork } from './fork';
import { prepareResume } from './resume';
import { RunReader, type RunDetail } from './runReader';
import { markOrphanedRuns, RunWriter } from './runWriter';

/** What the run says before it trains. */
export type StoredRunNotice =
  | { readonly kind: 'orphans'; readonly count: number }
  /** A stored run continues after iteration `after`, with its stored config; `dropped` iterations stored after that run again. */
  | { readonly kind: 'continuing'; readonly runId: number; readonly after: number; readonly dropped: number; readonly config: RunConfig }
  /** A new run forked from `parentId` after iteration `at`, with `config` (the parent's, changes merged). */
  | { readonly kind: 'forking'; readonly parentId: number; readonly at: number; readonly config: RunConfig }
  /** Where a continued run differs from the stored one (the interpreter, the sandbox level). */
  | { readonly kind: 'note'; readonly text: string };

export interface StoredRunOptions {
  readonly db: string;
  readonly busyTimeoutMs: number;
  /** A new run's config (validated), or `resume`. */
  readonly config?: RunConfig;
  /** The stored run (id or name) to continue from its last resume point, with the user's interpreter and sandbox level. */
  readonly resume?: { readonly run: string; readonly python: string; readonly sandbox: string };
  /**
   * Fork stored run `run` (id or name) after its iteration `at`: a new run from that kept resume point,
   * with the parent's config and `changes` (a RunConfig fragment) merged over it.
   */
  readonly fork?: { readonly run: string; readonly at: number; readonly changes: unknown; readonly python: string; readonly sandbox: string };
  readonly signal?: AbortSignal;
  readonly onEvent?: (e: TrainEvent) => void;
  readonly onNotice?: (n: StoredRunNotice) => void;
  /** The run is in the database (a new run once begun): its id and the config it trains with. */
  readonly onStored?: (runId: number, config: RunConfig) => void;
}

export interface StoredRunResult {
  readonly runId: number;
  readonly config: RunConfig;
  readonly result: TrainResult;
  readonly runtime: RuntimeInfo | undefined;
  /** A continued run's whole stored record (its iterations before the resume point too). */
  readonly stored: RunDetail | undefined;
}

export async function trainStored(o: StoredRunOptions): Promise<StoredRunResult> {
  const store = openStore(o.db, { busyTimeoutMs: o.busyTimeoutMs });
  try {
    const orphans = markOrphanedRuns(store);
    if (orphans > 0) o.onNotice?.({ kind: 'orphans', count: orphans });
    const writer = new RunWriter(store, o.db);
    const plan = o.resume ? prepareResume(store, o.db, o.resume.run, { python: o.resume.python, sandbox: o.resume.sandbox }) : undefined;
    if (plan) {
      writer.attach(plan.runId);
      o.onNotice?.({ kind: 'continuing', runId: plan.runId, after: plan.point.state.iteration, dropped: plan.dropped, config: plan.config });
      for (const text of plan.notes) o.onNotice?.({ kind: 'note', text });
    }
    const fork = o.fork ? prepareFork(store, o.db, o.fork.run, o.fork.at, o.fork.changes, { python: o.fork.python, sandbox: o.fork.sandbox }) : undefined;
    if (fork) {
      o.onNotice?.({ kind: 'forking', parentId: fork.parentId, at: fork.at, config: fork.config });
      for (const text of fork.notes) o.onNotice?.({ kind: 'note', text });
    }
    const config = plan?.config ?? fork?.config ?? o.config;
    if (!config) throw new Error('trainStored: neither a config nor a run to resume or fork');
    const stored = (): void => o.onStored?.(writer.runId, config);
    const result = await train(config, {
      sink: {
        begin: (c, start) => {
          writer.begin(c, start);
          stored();
        },
        resume: (start) => {
          // a fork is a new run that starts from the parent's state; a resumed run is the same run
          if (fork) writer.begin(config, start, { parentId: fork.parentId, at: fork.at });
          else writer.resume(start);
          stored();
        },
        folders: () => writer.folders(),
        evaluation: (e) => writer.evaluation(e),
        iteration: (r) => writer.iteration(r),
        end: (s, info) => writer.end(s, info),
      },
      ...(plan ? { resume: plan.point } : fork ? { resume: fork.point } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
      ...(o.onEvent ? { onEvent: o.onEvent } : {}),
    }).catch((e: unknown) => explainSqliteError(e, o.db));
    return { runId: writer.runId, config, result, runtime: writer.runtime, stored: plan ? new RunReader(store).detail(plan.runId) : undefined };
  } finally {
    store.close();
  }
}
