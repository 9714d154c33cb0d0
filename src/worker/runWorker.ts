// The run worker: one process per run, forked by the VS Code host on the runtime it resolved (runtime.ts). It owns the run's
// database connection, runs the trainer with the SQLite sink, streams progress, answers cancel at an
// iteration boundary, and sends a heartbeat so the host can tell a hung worker from a busy one. Any
// error becomes a `failed` message with the reason; the process then exits.
import '../store/nodeFloorGuard'; // first: refuses a Node older than the floor before better-sqlite3 loads
import type { HostToWorker, WorkerToHost } from '../shared/protocol/workerProtocol';
import { isHostToWorker } from '../shared/protocol/workerProtocol';
import { JUDGE_OPTION_SPECS } from '../shared/judgeSettings';
import { validateRunConfig } from '../shared/runConfig';
import { takeJudgeKey } from '../rl/train/judge/judgeKeyStore';
import { findingRecord, healthContextOf, healthFindings, type FindingRecord } from '../shared/health/findings';
import type { IterationMetrics } from '../shared/types';
import { storedFindings } from '../store/storedFindings';
import { trainStored } from '../store/storedRun';

export const HEARTBEAT_MS = 2000;

function send(msg: WorkerToHost): void {
  process.send?.(msg);
}

async function run(start: Extract<HostToWorker, { type: 'start' }>, signal: AbortSignal): Promise<void> {
  let runId: number | undefined;
  try {
    // Resume: the stored run continues with its stored config, read as data (prepareResume)
    const config = start.resume || start.fork ? undefined : validateRunConfig(start.config);
    const f = start.fork;
    let iterations = config?.iterations ?? 0;
    // this process's iterations, for the live findings (a resumed or forked run's earlier ones are in the
    // store: the findings at the end read them all)
    const seen: IterationMetrics[] = [];
    const announced = new Set<string>();
    let health = healthContextOf(config);
    const r = await trainStored({
      db: start.db,
      busyTimeoutMs: start.busyTimeoutMs ?? 5000,
      signal,
      ...(config
        ? { config }
        : f
          ? { fork: { run: String(f.runId), at: f.at, changes: f.changes, python: f.python, sandbox: f.sandbox } }
          : { resume: { run: String(start.resume!.runId), python: start.resume!.python, sandbox: start.resume!.sandbox } }),
      onNotice: (n) => {
        if (n.kind === 'continuing' || n.kind === 'forking') {
          iterations = n.config.iterations;
          health = healthContextOf(n.config);
        }
        if (n.kind === 'forking') send({ type: 'log', level: 'info', message: `forking run ${n.parentId} after iteration ${n.at}` });
        if (n.kind === 'note') send({ type: 'log', level: 'warn', message: n.text });
      },
      onStored: (id, c) => {
        runId = id;
        iterations = c.iterations;
        send({ type: 'started', runId: id, name: c.name, iterations: c.iterations });
      },
      onEvent: (e) => {
        switch (e.kind) {
          case 'phase':
            return send({ type: 'phase', ...(runId !== undefined ? { runId } : {}), phase: e.phase, iterations });
          case 'evaluation':
            return send({ type: 'evaluation', runId: runId!, evaluation: e.evaluation });
          case 'progress': {
            const p = e.progress;
            seen.push(p.metrics);
            // pure and in memory (no episodes: the store picks them at the end): cheap each iteration
            for (const f of healthFindings(seen, health)) {
              if (f.severity !== 'severe' || announced.has(f.id)) continue;
              announced.add(f.id);
              send({ type: 'finding', runId: runId!, finding: findingRecord(f) });
            }
            return send({
              type: 'progress',
              runId: runId!,
              iteration: p.iteration,
              iterations: p.iterations,
              rewardMean: p.rewardMean,
              successRate: p.successRate,
              etaMs: p.etaMs,
              loss: p.metrics.loss,
              ...(p.metrics.tokenAccuracy !== undefined ? { tokenAccuracy: p.metrics.tokenAccuracy } : {}),
            });
          }
          case 'checkpoint':
            return send({ type: 'log', level: 'info', message: `checkpoint written: ${e.file}` });
        }
      },
    });
    const findings = runFindings(start.db, start.busyTimeoutMs ?? 5000, r.runId);
    send({ type: 'finished', runId: r.runId, status: r.result.status, wallMs: r.result.wallMs, ...(findings ? { findings } : {}) });
  } catch (e) {
    send({ type: 'failed', ...(runId !== undefined ? { runId } : {}), error: e instanceof Error ? e.message : String(e) });
  }
}

/** The run's findings at its end, from the store (undefined when they cannot be read: the run's own outcome still reaches the host). */
function runFindings(db: string, busyTimeoutMs: number, runId: number): FindingRecord[] | undefined {
  try {
    return storedFindings(db, busyTimeoutMs, runId);
  } catch {
    return undefined;
  }
}

function main(): void {
  // first: the key the host hands a judged run's worker (SecretStorage's, judgeKeyCommand.ts) leaves
  // process.env for memory before anything can start a program that would inherit it
  takeJudgeKey(JUDGE_OPTION_SPECS.apiKeyEnv.default);
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
