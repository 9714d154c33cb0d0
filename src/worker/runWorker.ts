// The run worker: one process per run, forked by the VS Code host on the runtime it resolved (runtime.ts). It owns the run's
// database connection, runs the trainer with the SQLite sink, streams progress, answers cancel at an
// iteration boundary, and sends a heartbeat so the host can tell a hung worker from a busy one. Any
// error becomes a `failed` message with the reason; the process then exits.
import '../store/nodeFloorGuard'; // first: refuses a Node older than the floor before better-sqlite3 loads
import type { HostToWorker, WorkerToHost } from '../shared/protocol/workerProtocol';
import { isHostToWorker } from '../shared/protocol/workerProtocol';
import { validateRunConfig } from '../shared/runConfig';
import { train } from '../rl/train/trainer';
import { checkpointDirFor, explainSqliteError, openStore } from '../store/openStore';
import { prepareResume, resumeDirFor } from '../store/resume';
import { markOrphanedRuns, RunWriter } from '../store/runWriter';
import { runtimeInfo } from '../store/runtimeInfo';

export const HEARTBEAT_MS = 2000;

function send(msg: WorkerToHost): void {
  process.send?.(msg);
}

async function run(start: Extract<HostToWorker, { type: 'start' }>, signal: AbortSignal): Promise<void> {
  let runId: number | undefined;
  try {
    const store = openStore(start.db, { busyTimeoutMs: start.busyTimeoutMs ?? 5000 });
    try {
      markOrphanedRuns(store);
      const writer = new RunWriter(store);
      // Resume: the stored run continues with its stored config, read as data (prepareResume)
      const plan = start.resume ? prepareResume(store, start.db, String(start.resume.runId), start.resume) : undefined;
      if (plan) {
        writer.attach(plan.runId);
        for (const n of plan.notes) send({ type: 'log', level: 'warn', message: n });
      }
      const config = plan?.config ?? validateRunConfig(start.config);
      const started = (c: typeof config): void => {
        runId = writer.runId;
        send({ type: 'started', runId, name: c.name, iterations: c.iterations });
      };
      const result = await train(config, {
        ...(plan ? { resume: plan.point } : {}),
        resumeDir: () => resumeDirFor(start.db, writer.runId),
        sink: {
          begin: (c, r) => {
            writer.begin(c, r);
            started(c);
          },
          resume: (r) => {
            writer.resume(r);
            started(config);
          },
          evaluation: (e) => writer.evaluation(e),
          iteration: (rec) => writer.iteration(rec),
          end: (s, info) => writer.end(s, info),
        },
        runtime: (compute) => runtimeInfo(store, compute),
        signal,
        onProgress: (p) => send({
          type: 'progress', runId: runId!, iteration: p.iteration, iterations: p.iterations, rewardMean: p.rewardMean, successRate: p.successRate, etaMs: p.etaMs,
          loss: p.metrics.loss, ...(p.metrics.tokenAccuracy !== undefined ? { tokenAccuracy: p.metrics.tokenAccuracy } : {}),
        }),
        onPhase: (phase) => send({ type: 'phase', ...(runId !== undefined ? { runId } : {}), phase, iterations: config.iterations }),
        onEvaluation: (e) => send({ type: 'evaluation', runId: runId!, evaluation: e }),
        checkpointDir: () => checkpointDirFor(start.db, writer.runId),
        onCheckpoint: (file) => send({ type: 'log', level: 'info', message: `checkpoint written: ${file}` }),
      }).catch((e: unknown) => explainSqliteError(e, start.db));
      send({ type: 'finished', runId: runId!, status: result.status, wallMs: result.wallMs });
    } finally {
      store.close();
    }
  } catch (e) {
    send({ type: 'failed', ...(runId !== undefined ? { runId } : {}), error: e instanceof Error ? e.message : String(e) });
  }
}

function main(): void {
  if (!process.send) {
    process.stderr.write('agent-rl worker: start me with child_process.fork (an IPC channel is required)\n');
    process.exit(2);
  }
  const controller = new AbortController();
  let started = false;
  const heartbeat = setInterval(() => send({ type: 'heartbeat', at: Date.now() }), HEARTBEAT_MS);
  process.on('message', (msg: unknown) => {
    if (!isHostToWorker(msg)) {
      send({ type: 'log', level: 'warn', message: `ignored a malformed message: ${JSON.stringify(msg).slice(0, 200)}` });
      return;
    }
    if (msg.type === 'cancel') {
      controller.abort();
      return;
    }
    if (started) {
      send({ type: 'log', level: 'warn', message: 'ignored a second start: a worker runs one run' });
      return;
    }
    started = true;
    void run(msg, controller.signal).finally(() => {
      clearInterval(heartbeat);
      // Let the last messages flush, then leave (open handles such as wasm threads must not keep us).
      setTimeout(() => process.exit(0), 50);
    });
  });
  // The host went away: nobody will read our results, and the run must not be left half-written.
  process.on('disconnect', () => controller.abort());
}

main();
