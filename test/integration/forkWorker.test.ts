// Fork Run from Here's path with real processes: the host's run manager forks a run worker that forks
// a stored run, and the query backend serves the lineage, the fork's own iterations and the shared
// tasks Compare Runs lists. A fork the worker refuses fails with the reason and stores nothing.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { BackendClient } from '../../src/host/processes/backendClient';
import { RunManager } from '../../src/host/processes/runManager';
import { resolveRuntime } from '../../src/host/processes/runtime';
import { ROOT, tempDir } from '../helpers/cli';

const sandbox = { python: '', sandbox: 'auto' };

async function setup() {
  const r = await resolveRuntime(
    { configured: '', execPath: process.execPath, versions: process.versions, pathEnv: '', platform: process.platform },
    path.join(ROOT, 'dist', 'probe.js'),
  );
  if (!r.runtime) throw new Error(`no runtime: ${r.rejected.join(' ')}`);
  const db = path.join(tempDir(), 'runs.sqlite');
  const backend = new BackendClient({ runtime: r.runtime, script: path.join(ROOT, 'dist', 'backend.js'), onStderr: () => undefined }, db);
  const manager = new RunManager({
    fork: { runtime: r.runtime, script: path.join(ROOT, 'dist', 'worker.js'), onStderr: () => undefined },
    backend,
    heartbeatTimeoutMs: 10_000,
  });
  return { db, backend, manager };
}

const cleanups: (() => void)[] = [];
after(() => cleanups.forEach((c) => c()));

describe('fork through the run worker', () => {
  it('forks a stored run after a kept iteration; the backend serves its lineage, its own iterations and the shared tasks', async () => {
    const { db, backend, manager } = await setup();
    cleanups.push(
      () => backend.dispose(),
      () => manager.dispose(),
    );
    const parent = { env: 'binary-search', policy: 'table', seed: 3, iterations: 6, evalEpisodes: 32, checkpointEvery: 3 };
    // a healthy six-iteration run and its fork finish with no severe health finding (the findings the worker
    // sends with `finished` are issue 52's; what they are is tested in processes.test.ts and health.test.ts)
    const finished = (o: unknown): unknown => {
      const { findings, ...rest } = o as { findings?: readonly { severity: string }[] };
      assert.ok(findings !== undefined && findings.every((f) => f.severity !== 'severe'), JSON.stringify(findings));
      return rest;
    };
    assert.deepEqual(finished(await manager.start(parent, db).done), { kind: 'finished', runId: 1, status: 'completed' });
    assert.deepEqual(finished(await manager.fork(1, 3, {}, db, sandbox).done), { kind: 'finished', runId: 2, status: 'completed' });

    const [child] = await backend.request('listRuns', {});
    assert.deepEqual([child!.id, child!.forkedFrom, child!.iterationsDone, child!.iterationsPlanned], [2, { runId: 1, iteration: 3 }, 6, 6]);
    const page = await backend.request('iterations', { runId: 2, offset: 0, limit: 100 });
    assert.deepEqual([page.total, page.items.map((m) => m.iteration)], [3, [4, 5, 6]]);
    const fromParent = await backend.request('iterations', { runId: 1, offset: 3, limit: 100 });
    assert.deepEqual(
      page.items.map((m) => m.loss),
      fromParent.items.map((m) => m.loss),
    );
    const shared = await backend.request('sharedTasks', { runIds: [1, 2], limit: 10 });
    assert.ok(shared.length > 0 && shared.every((t) => t.runs.length === 2));

    // refused in the worker, before anything is stored: an iteration without a kept state, a forbidden change
    const noState = await manager.fork(1, 4, {}, db, sandbox).done;
    assert.equal(noState.kind, 'failed');
    assert.match(noState.kind === 'failed' ? noState.reason : '', /kept no saved state after iteration 4 .*the nearest with one: 3 and 6/);
    const forbidden = await manager.fork(1, 3, { policy: 'transformer' }, db, sandbox).done;
    assert.match(forbidden.kind === 'failed' ? forbidden.reason : '', /policy = "transformer": cannot change at a fork/);
    assert.equal((await backend.request('listRuns', {})).length, 2);
  });
});
