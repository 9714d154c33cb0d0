// The host's process model with real processes: run workers and the query backend over one database
// file, forked on the runtime the host's resolution picks with no agentRl.nodePath — this Node taken
// as "VS Code's own", forked the way the host forks on Electron (ELECTRON_RUN_AS_NODE=1).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { BackendClient, BackendError } from '../../src/host/processes/backendClient';
import { RunManager } from '../../src/host/processes/runManager';
import { resolveRuntime, type Runtime } from '../../src/host/processes/runtime';
import type { WorkerToHost } from '../../src/shared/protocol/workerProtocol';
import { ROOT, tempDir } from '../helpers/cli';

const worker = path.join(ROOT, 'dist', 'worker.js');
const backendScript = path.join(ROOT, 'dist', 'backend.js');
const small = { env: 'binary-search', policy: 'table', method: 'grpo', seed: 3, iterations: 5, evalEpisodes: 32 };

let resolved: Promise<Runtime> | undefined;
/** The runtime the host would pick here with agentRl.nodePath empty (probed once for the file). */
function hostRuntime(): Promise<Runtime> {
  resolved ??= resolveRuntime(
    { configured: '', execPath: process.execPath, versions: process.versions, pathEnv: '', platform: process.platform },
    path.join(ROOT, 'dist', 'probe.js'),
  ).then((r) => {
    if (!r.runtime) throw new Error(`no runtime: ${r.rejected.join(' ')}`);
    return r.runtime;
  });
  return resolved;
}

async function setup() {
  const runtime = await hostRuntime();
  assert.equal(runtime.source, 'vscode');
  assert.equal(runtime.env.ELECTRON_RUN_AS_NODE, '1');
  const dir = tempDir();
  const db = path.join(dir, 'runs.sqlite');
  const stderr: string[] = [];
  const backend = new BackendClient({ runtime, script: backendScript, onStderr: (l) => stderr.push(l) }, db);
  const messages: WorkerToHost[] = [];
  const manager = new RunManager({
    fork: { runtime, script: worker, onStderr: (l) => stderr.push(l) },
    backend,
    onMessage: (m) => messages.push(m),
    heartbeatTimeoutMs: 10_000,
  });
  return { db, backend, manager, messages, stderr };
}

const cleanups: (() => void)[] = [];
after(() => cleanups.forEach((c) => c()));

describe('run worker and query backend', () => {
  it('a run started through the manager streams progress, finishes, and the backend serves it page by page', async () => {
    const { db, backend, manager, messages } = await setup();
    cleanups.push(
      () => backend.dispose(),
      () => manager.dispose(),
    );
    const handle = manager.start(small, db);
    const outcome = await handle.done;
    // the worker reads the run's health findings from the store at the end (this short run has none)
    assert.deepEqual(outcome, { kind: 'finished', runId: 1, status: 'completed', findings: [] });
    assert.deepEqual(await backend.request('findings', { runIds: [1] }), [{ runId: 1, findings: [] }]);
    const types = messages.map((m) => m.type).filter((t) => t !== 'heartbeat' && t !== 'log' && t !== 'phase');
    // the final evaluation runs inside the last iteration, before its progress event
    assert.deepEqual(types, ['started', 'evaluation', 'progress', 'progress', 'progress', 'progress', 'evaluation', 'progress', 'finished']);
    // what the run is doing, from its first message on (before it is stored: no run id yet)
    const phases = messages.flatMap((m) =>
      m.type === 'phase' ? [`${m.phase.kind}${'iteration' in m.phase ? ` ${m.phase.iteration}` : ''}${m.runId === undefined ? ' (no id)' : ''}`] : [],
    );
    // the last iteration's resume point is saved after its evaluation (a fork may train the run on)
    assert.deepEqual(phases, [
      'loading (no id)',
      'evaluating 0',
      'iteration 1',
      'iteration 2',
      'iteration 3',
      'iteration 4',
      'iteration 5',
      'evaluating 5',
      'saving',
    ]);
    assert.equal(messages.find((m) => m.type !== 'heartbeat' && m.type !== 'log')?.type, 'phase');
    // the ETA only once three iterations are done, from their own times
    const etas = messages.flatMap((m) => (m.type === 'progress' ? [m.etaMs] : []));
    assert.deepEqual(etas.slice(0, 2), [-1, -1]);
    assert.ok(
      etas.slice(2).every((e) => e >= 0),
      JSON.stringify(etas),
    );
    const runs = await backend.request('listRuns', {});
    assert.equal(runs[0]!.status, 'completed');
    assert.equal(runs[0]!.iterationsDone, 5);
    const its = await backend.request('iterations', { runId: 1, offset: 2, limit: 2 });
    assert.deepEqual([its.total, its.offset, its.items.map((m) => m.iteration)], [5, 2, [3, 4]]);
    const trajs = await backend.request('trajectories', { runId: 1, iteration: 1, offset: 0, limit: 10 });
    assert.equal(trajs.total, 32);
    assert.equal(trajs.items.length, 10);
    const t = await backend.request('trajectory', { trajectoryId: trajs.items[0]!.id });
    assert.equal(t!.turnList.length, t!.turns);
    assert.ok(t!.turnList.every((x) => typeof x.actionText === 'string' && typeof x.observationText === 'string'));
    const run = await backend.request('getRun', { runId: 1 });
    assert.equal(run!.evaluations.length, 2);
    const file = path.join(path.dirname(db), 'export.json');
    const exported = await backend.request('exportRun', { runId: 1, file });
    const record = JSON.parse(fs.readFileSync(exported.file, 'utf8')) as {
      iterations: unknown[];
      evaluations: unknown[];
      config: { seed: number };
      runtime: { compute: string };
    };
    assert.ok(run!.compute.length > 0);
    assert.equal(run!.compute, record.runtime.compute, "the record's compute string, which the inspector shows");
    assert.deepEqual([record.iterations.length, record.evaluations.length, record.config.seed], [5, 2, 3]);
    assert.deepEqual(record.evaluations, run!.evaluations);
    await assert.rejects(backend.request('exportRun', { runId: 99, file }), /no run 99/);
  });

  it('a severe finding reaches the host once, when the iterations first show it, and again with the outcome', async () => {
    const { db, backend, manager, messages } = await setup();
    cleanups.push(
      () => backend.dispose(),
      () => manager.dispose(),
    );
    // a one-step budget: every group's rewards equal from the first iteration (no signal)
    const outcome = await manager.start({ ...small, envOptions: { stepBudget: 1 } }, db).done;
    const findings = messages.flatMap((m) => (m.type === 'finding' ? [m] : []));
    assert.deepEqual(
      findings.map((m) => [m.runId, m.finding.id, m.finding.severity]),
      [[1, 'no-signal', 'severe']],
      'one message, not one per iteration',
    );
    // sent with the third iteration (just before its progress event): the bar wants three iterations in a row
    const at = messages.findIndex((m) => m.type === 'finding');
    assert.equal(messages.slice(0, at).filter((m) => m.type === 'progress').length, 2);
    const next = messages[at + 1];
    assert.equal(next?.type === 'progress' ? next.iteration : undefined, 3);
    assert.ok(outcome.kind === 'finished' && outcome.findings?.some((f) => f.id === 'no-signal' && f.episodes.length === 3));
    // what the dashboard and the tree get from the backend: the same finding, with its series for the sparkline
    const [served] = await backend.request('findings', { runIds: [1] });
    const f = served!.findings.find((x) => x.id === 'no-signal')!;
    assert.deepEqual([f.severity, f.iterations, f.episodes.length, f.spark], ['severe', [1, 5], 3, [1, 1, 1, 1, 1]]);
  });

  it('cancel stops at an iteration boundary; a killed worker is recorded failed; other runs go on', async () => {
    const { db, backend, manager } = await setup();
    cleanups.push(
      () => backend.dispose(),
      () => manager.dispose(),
    );
    const long = { ...small, iterations: 100_000, evalEpisodes: 16 };
    const a = manager.start(long, db);
    const b = manager.start(long, db);
    const c = manager.start(small, db);
    // Both long runs must have started (a run id) before they are stopped; one that ends first fails the
    // test at once instead of leaving it waiting while the other trains for 100,000 iterations.
    const started = (h: typeof a): Promise<void> =>
      new Promise((resolve, reject) => {
        const poll = (): void => void (h.runId !== undefined ? resolve() : setTimeout(poll, 20));
        poll();
        void h.done.then((o) => reject(new Error(`a long run ended before it was stopped: ${JSON.stringify(o)}`)));
      });
    try {
      await Promise.all([started(a), started(b)]);
    } catch (e) {
      a.cancel();
      b.cancel();
      throw e;
    }
    await new Promise((r) => setTimeout(r, 300));
    a.cancel();
    process.kill(b.pid!, 'SIGKILL');
    const [oa, ob, oc] = await Promise.all([a.done, b.done, c.done]);
    assert.equal(oa.kind === 'finished' && oa.status, 'cancelled');
    assert.equal(ob.kind, 'failed');
    assert.match(ob.kind === 'failed' ? ob.reason : '', /killed \(SIGKILL\)/);
    assert.equal(oc.kind === 'finished' && oc.status, 'completed');
    const killed = await backend.request('getRun', { runId: b.runId! });
    assert.equal(killed!.summary.status, 'failed');
    // recorded by the host (killed (SIGKILL)), or first by another process that opened the database
    // after the kill (run c's worker starting late on a loaded machine): both say it did not finish
    assert.match(killed!.summary.error!, /killed \(SIGKILL\)|exited without finishing the run/);
  });

  it('an invalid config fails in the worker with the field named, and nothing is stored', async () => {
    const { db, backend, manager } = await setup();
    cleanups.push(
      () => backend.dispose(),
      () => manager.dispose(),
    );
    const outcome = await manager.start({ ...small, groupSize: 1 }, db).done;
    assert.equal(outcome.kind, 'failed');
    assert.match(outcome.kind === 'failed' ? outcome.reason : '', /groupSize = 1: GRPO normalises rewards within a group/);
    assert.deepEqual(await backend.request('listRuns', {}), []);
  });

  it('the backend answers bad requests with errors, and restarts after it dies', async () => {
    const { backend } = await setup();
    cleanups.push(() => backend.dispose());
    assert.equal(await backend.request('getRun', { runId: 42 }), null);
    await assert.rejects(backend.request('nope' as 'listRuns', {}), (e: unknown) => e instanceof BackendError);
    const pid = backend.pid!;
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await backend.request('listRuns', {}), []);
    assert.notEqual(backend.pid, pid);
  });

  it('re-runs a recorded code turn in the sandbox and compares the observation', async () => {
    const { db, backend, manager } = await setup();
    cleanups.push(
      () => backend.dispose(),
      () => manager.dispose(),
    );
    const outcome = await manager.start(
      {
        env: 'code',
        policy: 'transformer',
        method: 'sft',
        iterations: 1,
        groupsPerIteration: 1,
        groupSize: 2,
        evalEpisodes: 1,
        envOptions: { maxExecutions: 3 },
        policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 1024, maxNewTokens: 8 },
        algorithm: { minibatchSize: 2 },
        demonstrations: { mistakeRate: 1 },
      },
      db,
    ).done;
    assert.equal(outcome.kind === 'finished' && outcome.status, 'completed', JSON.stringify(outcome));
    const page = await backend.request('trajectories', { runId: 1, iteration: 1, offset: 0, limit: 10 });
    const id = page.items[0]!.id;
    const settings = { python: '', sandbox: 'auto' };
    const failed = await backend.request('rerun', { trajectoryId: id, turn: 0, ...settings });
    assert.equal(failed.same, true, failed.observationText);
    assert.match(failed.observationText, /NameError/);
    assert.match(failed.level, /strict|landlock|network|process/);
    assert.deepEqual(failed.notes, []);
    await assert.rejects(backend.request('rerun', { trajectoryId: id, turn: 2, ...settings }), /ran no code/);

    // A stored run is data, not instructions: a database that names another interpreter (here a script
    // that leaves a marker when run) and the weakest level gets neither; the answer says so.
    const dir = path.dirname(db);
    const marker = path.join(dir, 'interpreter-ran');
    const fake = path.join(dir, 'python3');
    fs.writeFileSync(fake, `#!/bin/sh\ntouch '${marker}'\nexec /usr/bin/python3 "$@"\n`, { mode: 0o755 });
    const store = new Database(db);
    const row = store.prepare('SELECT config_json FROM runs WHERE id = 1').get() as { config_json: string };
    const config = JSON.parse(row.config_json) as { envOptions: Record<string, unknown> };
    store
      .prepare('UPDATE runs SET config_json = ? WHERE id = 1')
      .run(JSON.stringify({ ...config, envOptions: { ...config.envOptions, python: fake, sandbox: 'process' } }));
    store.prepare("UPDATE turns SET observation_json = json_set(observation_json, '$.level', 'process') WHERE trajectory_id = ?").run(id);
    store.close();
    const best = await backend.request('rerun', { trajectoryId: id, turn: 0, ...settings });
    assert.equal(fs.existsSync(marker), false, 'the stored interpreter never ran');
    assert.equal(best.python, fs.realpathSync('/usr/bin/python3'));
    assert.equal(best.level, failed.level, 'the strongest level available, as the setting auto asks');
    assert.ok(
      best.notes.some((n) => n.includes(fake) && /not used/.test(n)),
      best.notes.join('\n'),
    );
    if (best.level !== 'process')
      assert.ok(
        best.notes.some((n) => /weaker sandbox level "process"/.test(n)),
        best.notes.join('\n'),
      );
  });

  it('a missing Node is reported with the setting to fix', async () => {
    const backend = new BackendClient({ runtime: { execPath: '/nonexistent/node', env: {} }, script: backendScript }, path.join(tempDir(), 'x.sqlite'));
    cleanups.push(() => backend.dispose());
    await assert.rejects(backend.request('listRuns', {}), /Could not start the runtime at "\/nonexistent\/node".*agentRl\.nodePath/);
  });
});
