// The import worker: forked by the workbench's "Import Run…" on the host's resolved runtime. It owns its database
// connection, runs importVerl (following the folder until told to stop), and reports each step so the
// views refresh while verl writes. Any error becomes a `failed` message; the process then exits.
import '../store/nodeFloorGuard'; // first: refuses a Node older than the floor before better-sqlite3 loads
import { isHostToImporter, type HostToImporter, type ImporterToHost } from '../shared/protocol/importProtocol';
import { importVerl } from '../importers/verl/verlImporter';
import { openStore } from '../store/openStore';
import { markOrphanedRuns } from '../store/runWriter';
import { runtimeInfo } from '../store/runtimeInfo';

function send(msg: ImporterToHost): void {
  process.send?.(msg);
}

async function run(start: Extract<HostToImporter, { type: 'start' }>, signal: AbortSignal): Promise<void> {
  try {
    const store = openStore(start.db);
    try {
      markOrphanedRuns(store);
      const s = await importVerl(store, {
        rolloutDir: start.rolloutDir,
        ...(start.validationDir ? { validationDir: start.validationDir } : {}),
        ...(start.configFile ? { configFile: start.configFile } : {}),
        follow: start.follow,
        signal,
        runtime: runtimeInfo(store, 'imported from verl'),
        onEvent: (e) => {
          if (e.type === 'run') send({ type: 'run', runId: e.runId, name: e.name, created: e.created });
          if (e.type === 'step') send({ type: 'step', runId: e.runId, step: e.step, added: e.added });
          if (e.type === 'evaluation') send({ type: 'evaluation', runId: e.runId, step: e.step });
          if (e.type === 'malformed') send({ type: 'malformed', file: e.file, line: e.line, reason: e.reason });
        },
      });
      send({ type: 'finished', runId: s.runId, steps: s.steps, trajectories: s.trajectories, malformed: s.malformed });
    } finally {
      store.close();
    }
  } catch (e) {
    send({ type: 'failed', error: e instanceof Error ? e.message : String(e) });
  }
}

function main(): void {
  if (!process.send) {
    process.stderr.write('agent-rl import worker: start me with child_process.fork (an IPC channel is required)\n');
    process.exit(2);
  }
  const controller = new AbortController();
  let started = false;
  process.on('message', (msg: unknown) => {
    if (!isHostToImporter(msg)) return;
    if (msg.type === 'stop') {
      controller.abort();
      return;
    }
    if (started) return;
    started = true;
    void run(msg, controller.signal).finally(() => setTimeout(() => process.exit(0), 50));
  });
  process.on('disconnect', () => controller.abort());
}

main();
