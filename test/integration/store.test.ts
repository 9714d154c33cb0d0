import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { readStoredRunConfig, validateRunConfig } from '../../src/shared/runConfig';
import type { Trajectory } from '../../src/shared/types';
import { migrate, SCHEMA_VERSION, SchemaTooNewError } from '../../src/store/migrations';
import { APPLICATION_ID, checkpointDirFor, explainSqliteError, openStore, resumeDirFor, StoreError } from '../../src/store/openStore';
import { RunReader } from '../../src/store/runReader';
import { deleteRun, markOrphanedRuns, RunWriter } from '../../src/store/runWriter';
import { prepareResume } from '../../src/store/resume';
import { prepareFork } from '../../src/store/fork';
import { MemorySink } from '../../src/rl/train/sink';
import { train } from '../../src/rl/train/trainer';
import { sha256, tempDir } from '../helpers/cli';

const runtime = { workbench: 't', node: 't', platform: 't', arch: 't', cpu: 't', compute: 't' };

function metrics(iteration: number) {
  return {
    iteration,
    rewardMean: 0.5,
    rewardMax: 1,
    rewardMin: 0,
    successRate: 0.5,
    publicPassRate: 1,
    privatePassRate: 0.5,
    meanTurns: 1,
    zeroVarianceGroups: 0,
    trajectories: 1,
    loss: 0,
    policyLoss: 0,
    kl: 0,
    clipFraction: 0,
    entropy: 0,
    gradNorm: 0,
    ratioMin: 1,
    ratioMax: 1,
    updated: 1,
    trainedTrajectories: 1,
    policyVersion: iteration,
    wallMs: 1,
  };
}

function trajectory(taskId: string): Trajectory {
  return {
    taskId,
    group: 0,
    indexInGroup: 0,
    termination: 'finished',
    policyVersion: 0,
    advantage: 0.5,
    outcome: { reward: 1, success: true, publicPass: true, privatePass: true },
    turns: [
      {
        index: 0,
        actionText: 'finish',
        action: { kind: 'tool', name: 'finish', args: {} },
        observation: { text: 'ok', data: {} },
        policy: { behaviourLogprob: -1, policyVersion: 0 },
      },
    ],
  };
}

describe('run store: opening and migrations', () => {
  it('a fresh database gets every migration, WAL, foreign keys and our application id', () => {
    const file = path.join(tempDir(), 'sub', 'runs.sqlite');
    const db = openStore(file);
    assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    assert.equal(db.pragma('application_id', { simple: true }), APPLICATION_ID);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    assert.deepEqual(tables, [
      'evaluations',
      'import_files',
      'iterations',
      'judge_exchanges',
      'rescore_results',
      'rescores',
      'runs',
      'token_stats',
      'trajectories',
      'trajectory_edits',
      'turns',
    ]);
    db.close();
  });

  it('processes that open one new database at the same moment all succeed (each migration applied once)', async () => {
    // Before: the workers of an extension session (or CLI runs) racing on a new file applied migrations
    // twice ("table runs already exists") or saw tables without their version ("another application").
    const store = path.join(__dirname, '..', '..', 'src', 'store', 'openStore.js');
    for (let round = 0; round < 4; round++) {
      const file = path.join(tempDir(), 'runs.sqlite');
      // every child loads the module, then waits for one shared instant, so the opens collide
      const at = Date.now() + 1500;
      const code = `const { openStore } = require(${JSON.stringify(store)}); while (Date.now() < ${at}); try { openStore(${JSON.stringify(file)}).close(); } catch (e) { console.error(e.message); process.exit(1); }`;
      const results = await Promise.all(
        Array.from(
          { length: 6 },
          () =>
            new Promise<{ code: number | null; stderr: string }>((resolve) => {
              const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'ignore', 'pipe'] });
              let stderr = '';
              child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
              child.on('close', (c) => resolve({ code: c, stderr }));
            }),
        ),
      );
      assert.deepEqual(
        results.filter((r) => r.code !== 0),
        [],
        `round ${round}`,
      );
      const db = new Database(file, { readonly: true });
      assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
      assert.equal(db.pragma('application_id', { simple: true }), APPLICATION_ID);
      db.close();
    }
  });

  it('waits out another process writing a new file while switching it to WAL (SQLite runs no busy handler there)', async () => {
    // A new file in rollback mode with another process's write transaction open for 400 ms: the switch
    // to WAL failed at once with SQLITE_BUSY, whatever the busy timeout. That is what processes opening
    // one new database together ran into, now and then (2 of 180 opens in a probe).
    const file = path.join(tempDir(), 'runs.sqlite');
    const boot = new Database(file);
    boot.pragma(`application_id = ${APPLICATION_ID}`);
    boot.close();
    const code = `const D = require(${JSON.stringify(require.resolve('better-sqlite3'))}); const db = new D(${JSON.stringify(file)});
      db.exec('BEGIN IMMEDIATE'); db.exec('CREATE TABLE other_writer (x)'); console.log('writing');
      setTimeout(() => { db.exec('ROLLBACK'); db.close(); }, 400);`;
    const writer = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    const closed = new Promise((resolve) => writer.once('close', resolve));
    await new Promise<void>((resolve) => writer.stdout.once('data', () => resolve()));
    const t0 = Date.now();
    const db = openStore(file);
    const waited = Date.now() - t0;
    assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    db.close();
    assert.ok(waited >= 200, `the open waited ${waited} ms for the writer`);
    await closed;
  });

  it('upgrades a version-1 database in place and keeps its data', () => {
    const file = path.join(tempDir(), 'runs.sqlite');
    const old = new Database(file);
    old.pragma('journal_mode = WAL');
    migrate(old, file, 1);
    old
      .prepare(
        `INSERT INTO runs (name, status, env, policy, method, seed, iterations_planned, config_json, runtime_json, created_at)
                 VALUES ('old', 'completed', 'binary-search', 'table', 'grpo', 7, 100, '{}', '{}', '2026-01-01')`,
      )
      .run();
    old.close();
    const db = openStore(file);
    assert.equal(db.pragma('user_version', { simple: true }), SCHEMA_VERSION);
    const row = db.prepare('SELECT name, heartbeat_at, wall_ms FROM runs').get() as Record<string, unknown>;
    assert.deepEqual(row, { name: 'old', heartbeat_at: null, wall_ms: null });
    db.close();
  });

  it('refuses a database from a newer version and leaves it untouched', () => {
    const file = path.join(tempDir(), 'runs.sqlite');
    const db = openStore(file);
    db.pragma('user_version = 99');
    db.close();
    const before = sha256(file);
    assert.throws(
      () => openStore(file),
      (e: unknown) => e instanceof SchemaTooNewError && new RegExp(`schema version 99.*understands up to ${SCHEMA_VERSION}.*upgrade`, 's').test(e.message),
    );
    assert.equal(sha256(file), before);
  });

  it('refuses a corrupt file with a clear error and never overwrites it', () => {
    const dir = tempDir();
    for (const [name, bytes] of [
      ['garbage.sqlite', Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919) % 251))],
      ['text.sqlite', Buffer.from('this is not a database\n'.repeat(300))],
    ] as const) {
      const file = path.join(dir, name);
      fs.writeFileSync(file, bytes);
      assert.throws(
        () => openStore(file),
        (e: unknown) => e instanceof StoreError && e.code === 'not_a_database' && e.message.includes('left untouched') && e.message.includes('--db'),
      );
      assert.ok(fs.readFileSync(file).equals(bytes), `${name} changed`);
      assert.ok(!fs.existsSync(`${file}-wal`), 'no WAL file created next to it');
    }
  });

  it("refuses another application's SQLite database", () => {
    const file = path.join(tempDir(), 'other.sqlite');
    const other = new Database(file);
    other.exec('CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES (1)');
    other.close();
    const before = sha256(file);
    assert.throws(
      () => openStore(file),
      (e: unknown) => e instanceof StoreError && e.code === 'foreign',
    );
    assert.equal(sha256(file), before);
  });

  it('a write blocked by another writer past the busy timeout becomes a "locked" StoreError', () => {
    const file = path.join(tempDir(), 'runs.sqlite');
    openStore(file).close();
    const holder = new Database(file);
    holder.exec('BEGIN EXCLUSIVE');
    try {
      const db = openStore(file, { busyTimeoutMs: 50 });
      const writer = new RunWriter(db);
      assert.throws(
        () => {
          try {
            writer.begin(validateRunConfig({}), runtime);
          } catch (e) {
            explainSqliteError(e, file);
          }
        },
        (e: unknown) => e instanceof StoreError && e.code === 'locked' && /locked by another process/.test(e.message),
      );
      db.close();
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });
});

describe('run store: writing', () => {
  it('an iteration is one transaction: a failure inside it leaves none of its rows', () => {
    const db = openStore(path.join(tempDir(), 'runs.sqlite'));
    const writer = new RunWriter(db);
    writer.begin(validateRunConfig({}), runtime);
    writer.iteration({ metrics: metrics(1), trajectories: [trajectory('t')] });
    const bad = trajectory(null as unknown as string); // violates NOT NULL on the trajectory insert, after the iteration row
    assert.throws(() => writer.iteration({ metrics: metrics(2), trajectories: [trajectory('t'), bad] }), /NOT NULL/);
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    assert.equal(count('SELECT count(*) AS n FROM iterations'), 1);
    assert.equal(count('SELECT count(*) AS n FROM trajectories'), 1);
    assert.equal(count('SELECT count(*) AS n FROM turns'), 1);
    writer.end('completed', { wallMs: 12 });
    const detail = new RunReader(db).detail(writer.runId)!;
    assert.equal(detail.summary.status, 'completed');
    assert.equal(detail.wallMs, 12);
    assert.deepEqual(detail.iterations, [metrics(1)]);
    db.close();
  });

  it("a deleted run's kept resume points go with it (its final checkpoint stays), and a new run that gets its id starts with none", () => {
    const file = path.join(tempDir(), 'runs.sqlite');
    const db = openStore(file);
    const first = new RunWriter(db, file);
    first.begin(validateRunConfig({}), runtime);
    const resume = resumeDirFor(file, first.runId);
    fs.mkdirSync(path.join(resume, 'state-4'), { recursive: true });
    fs.writeFileSync(path.join(resume, 'resume.json'), '{}');
    fs.writeFileSync(path.join(checkpointDirFor(file, first.runId), 'checkpoint.json'), '{}');
    first.end('completed', { wallMs: 1 });
    assert.equal(deleteRun(db, first.runId), true);
    assert.ok(!fs.existsSync(resume), 'the kept states are removed');
    assert.ok(fs.existsSync(path.join(checkpointDirFor(file, first.runId), 'checkpoint.json')), 'the final checkpoint stays (other runs may --init from it)');
    // the id is free again (no AUTOINCREMENT): a leftover state of the deleted run is not the new run's
    fs.mkdirSync(path.join(resume, 'state-2'), { recursive: true });
    const second = new RunWriter(db, file);
    second.begin(validateRunConfig({}), runtime);
    assert.equal(second.runId, first.runId);
    assert.ok(!fs.existsSync(resume), 'no resume point of the deleted run is left for the new one');
    db.close();
  });

  it('runs whose process died are marked failed with the reason', () => {
    const db = openStore(path.join(tempDir(), 'runs.sqlite'));
    const writer = new RunWriter(db);
    writer.begin(validateRunConfig({}), runtime);
    db.prepare('UPDATE runs SET pid = 999999').run();
    assert.equal(
      markOrphanedRuns(db, () => false),
      1,
    );
    const run = new RunReader(db).findRun(String(writer.runId))!;
    assert.equal(run.status, 'failed');
    assert.match(run.error!, /pid 999999.*exited without finishing/);
    assert.equal(
      markOrphanedRuns(db, () => false),
      0,
    );
    db.close();
  });
});

describe('run store: reading', () => {
  it("latestFailedWithCode: a run's newest failed trajectory that ran code, past successes, failures without code and actions that are not JSON", () => {
    const db = openStore(path.join(tempDir(), 'runs.sqlite'));
    const episode = (taskId: string, success: boolean, action: unknown): Trajectory => ({
      ...trajectory(taskId),
      outcome: { reward: success ? 1 : 0, success, publicPass: success, privatePass: success },
      turns: [{ ...trajectory(taskId).turns[0]!, action: action as Trajectory['turns'][number]['action'] }],
    });
    const code = { kind: 'tool', name: 'execute_code', args: { code: 'print(1 / 0)' } };
    const writer = new RunWriter(db);
    writer.begin(validateRunConfig({}), runtime);
    const reader = new RunReader(db);
    writer.iteration({ metrics: metrics(1), trajectories: [episode('no-code', false, { kind: 'tool', name: 'finish', args: {} })] });
    assert.equal(reader.latestFailedWithCode(writer.runId), undefined, 'a failure without code is not replayable');
    writer.iteration({
      metrics: metrics(2),
      trajectories: [
        episode('failed-code', false, code),
        episode('passed-code', true, code),
        episode('code-not-text', false, { kind: 'tool', name: 'execute_code', args: { code: 7 } }),
        episode('broken', false, code),
      ],
    });
    // a hand-edited database: the newest failure's action is no longer JSON, and counts as no code
    db.prepare("UPDATE turns SET action_json = '{not json' WHERE trajectory_id = (SELECT id FROM trajectories WHERE task_id = 'broken')").run();
    const found = reader.latestFailedWithCode(writer.runId);
    assert.equal(found?.taskId, 'failed-code');
    assert.equal(found?.iteration, 2);
    assert.equal(found?.success, false);
    const other = new RunWriter(db);
    other.begin(validateRunConfig({}), runtime);
    assert.equal(reader.latestFailedWithCode(other.runId), undefined, "another run's episodes are not its own");
    db.close();
  });
});

describe('run store: a full disk', () => {
  it('fails only the write in progress: stored iterations stay whole, the error says what to do, and the run continues once there is room', async () => {
    const file = path.join(tempDir(), 'runs.sqlite');
    const config = validateRunConfig({ seed: 3, iterations: 30, evalEpisodes: 40, evalInterval: 10, checkpointEvery: 5 });
    const whole = new MemorySink();
    await train(config, { sink: whole });

    const db = openStore(file);
    const writer = new RunWriter(db, file);
    let limited = false;
    const failure = await train(config, {
      sink: writer,
      // SQLite's page limit stands in for a full disk: after iteration 12 there is room for a few more pages only
      onEvent: (e) => {
        if (e.kind === 'progress' && e.progress.iteration === 12 && !limited) {
          limited = true;
          db.pragma(`max_page_count = ${Number(db.pragma('page_count', { simple: true })) + 3}`);
        }
      },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(limited);
    assert.equal((failure as { code?: string }).code, 'SQLITE_FULL', String(failure));
    assert.throws(
      () => explainSqliteError(failure, file),
      (e: unknown) => e instanceof StoreError && e.code === 'full' && /full.*Fix: free space.*--resume/s.test(e.message),
    );
    db.close();

    const again = openStore(file);
    const count = (sql: string) => (again.prepare(sql).get() as { n: number }).n;
    const stored = count('SELECT count(*) AS n FROM iterations');
    assert.ok(stored >= 12 && stored < 30, `${stored} iterations stored`);
    assert.equal(count('SELECT count(*) AS n FROM trajectories'), stored * 32, 'every stored iteration whole');
    assert.equal(count('SELECT count(*) AS n FROM turns'), count('SELECT sum(num_turns) AS n FROM trajectories'));
    const plan = prepareResume(again, file, '1');
    assert.equal(plan.point.state.iteration, 10);
    const resumedWriter = new RunWriter(again, file);
    resumedWriter.attach(plan.runId);
    const result = await train(plan.config, { sink: resumedWriter, resume: plan.point });
    assert.equal(result.status, 'completed');
    const detail = new RunReader(again).detail(plan.runId)!;
    assert.equal(detail.summary.status, 'completed');
    assert.equal(count('SELECT count(DISTINCT iteration) AS n FROM iterations'), 30);
    assert.equal(count('SELECT count(*) AS n FROM trajectories'), 30 * 32);
    assert.deepEqual(detail.evaluations, whole.evaluations, 'the same evaluations as a run that never stopped');
    again.close();
  });
});

describe('run store: a run of the small GPT of earlier versions', () => {
  it('stays readable; resuming or forking it is refused with why; its stored options that are gone do not stop rescoring', () => {
    const file = path.join(tempDir(), 'runs.sqlite');
    const db = openStore(file);
    const writer = new RunWriter(db, file);
    writer.begin(validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'grpo', iterations: 5 }), runtime);
    writer.iteration({ metrics: metrics(1), trajectories: [trajectory('t')] });
    writer.end('failed', { wallMs: 12, error: 'killed' });
    // the config as that release stored it: the small GPT's shape, its replicas, no architecture
    const old = {
      ...validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'grpo', iterations: 5 }),
      policyOptions: {
        dModel: 64,
        nLayers: 2,
        nHeads: 4,
        mlpRatio: 4,
        tiedHead: true,
        replicas: 0,
        model: '',
        init: '',
        tokenizer: '',
        constrainedDecoding: false,
      },
    };
    db.prepare('UPDATE runs SET config_json = ? WHERE id = ?').run(JSON.stringify(old), writer.runId);
    const detail = new RunReader(db).detail(writer.runId)!;
    assert.equal(detail.summary.iterationsDone, 1, 'its iterations stay readable');
    assert.throws(
      () => prepareResume(db, file, String(writer.runId)),
      /trained the small character-level GPT of earlier versions; .* cannot be resumed\. Its iterations, episodes and metrics stay readable/,
    );
    assert.throws(() => prepareFork(db, file, String(writer.runId), 1), /trained the small character-level GPT of earlier versions; .* cannot be forked/);
    // what rescoring reads: the stored config without the options that are gone
    assert.equal(readStoredRunConfig(old).env, 'calculator');
    assert.throws(() => validateRunConfig(old), /policyOptions\.replicas.*is gone: it held the small GPT's data-parallel helper threads.*Fix: remove it/s);
    db.close();
  });
});
