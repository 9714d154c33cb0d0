import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { RunRecord } from '../../src/cli/runRecord';
import { runCli, sha256, startCli, tempDir } from '../helpers/cli';
import { HOSTILE, rawInvisible } from '../unit/shared/hostileInputs';
import { asStored } from '../helpers/hostileText';

const SMALL = ['--iterations', '6', '--eval-episodes', '64'];

function count(db: string, sql: string, ...params: unknown[]): number {
  const d = new Database(db, { readonly: true });
  try {
    return (d.prepare(sql).get(...params) as { n: number }).n;
  } finally {
    d.close();
  }
}

/** Iterations stored so far; 0 while the database or its schema does not exist yet. */
function storedIterations(file: string): number {
  try {
    return count(file, 'SELECT count(*) AS n FROM iterations');
  } catch {
    return 0;
  }
}

describe('agent-rl CLI', () => {
  it('train → runs → show: the JSON record equals what show reads back from the database', () => {
    const cwd = tempDir();
    const r = runCli(['train', '--seed', '3', '--method', 'grpo', ...SMALL, '--output', 'rec.json', '--name', 'small'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /run 1 "small" completed/);
    assert.match(r.stdout, /database: .*\.agent-rl\/runs\.sqlite/);
    // Not a terminal: plain progress lines, no carriage returns.
    assert.match(r.stderr, /^iteration 6\/6 {2}reward/m);
    assert.ok(!r.stderr.includes('\r'));

    const record = JSON.parse(fs.readFileSync(path.join(cwd, 'rec.json'), 'utf8')) as RunRecord;
    assert.equal(record.iterations.length, 6);
    assert.deepEqual(
      record.evaluations.map((e) => e.iteration),
      [0, 6],
    );
    assert.equal(record.config.seed, 3);
    assert.match(record.runtime.node, /^v\d+/);
    assert.ok(record.wallMs! > 0);

    const shown = runCli(['show', '1', '--json'], cwd);
    assert.equal(shown.code, 0, shown.stderr);
    const fromDb = JSON.parse(shown.stdout) as RunRecord;
    assert.deepEqual(fromDb.config, record.config);
    assert.deepEqual(fromDb.runtime, record.runtime);
    assert.deepEqual(fromDb.iterations, record.iterations);
    assert.deepEqual(fromDb.evaluations, record.evaluations);
    assert.equal(fromDb.wallMs, record.wallMs);

    const text = runCli(['show', 'small'], cwd);
    assert.equal(text.code, 0, text.stderr);
    for (const e of record.evaluations) {
      assert.ok(text.stdout.includes(`${(100 * e.successRate).toFixed(1)}%`), `show lacks ${e.successRate}`);
      assert.ok(text.stdout.includes(`${e.successes}/${e.episodes}`));
      assert.ok(text.stdout.includes(e.meanActions.toFixed(3)));
    }
    assert.match(text.stdout, /trajectories stored: 192; turns: \d+/);

    const runs = runCli(['runs'], cwd);
    assert.match(runs.stdout, /^1\s+small\s+completed\s+binary-search\s+table\s+GRPO\s+3\s+6\/6/m); // the method column is the honest label

    const db = path.join(cwd, '.agent-rl', 'runs.sqlite');
    assert.equal(count(db, 'SELECT count(*) AS n FROM trajectories'), 6 * 32);
    assert.equal(count(db, 'SELECT count(*) AS n FROM turns'), count(db, 'SELECT sum(num_turns) AS n FROM trajectories'));
  });

  it('flags override the config file; --db picks the database', () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, 'run.json'), JSON.stringify({ $schema: './schema.json', method: 'rs-sft', seed: 5, iterations: 50, evalEpisodes: 32 }));
    const r = runCli(['train', '--config', 'run.json', '--iterations', '3', '--db', 'other.sqlite', '--output', 'o.json'], cwd);
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(fs.readFileSync(path.join(cwd, 'o.json'), 'utf8')) as RunRecord;
    assert.deepEqual([rec.config.method, rec.config.seed, rec.config.iterations, rec.config.evalEpisodes], ['rs-sft', 5, 3, 32]);
    assert.ok(fs.existsSync(path.join(cwd, 'other.sqlite')));
    assert.ok(!fs.existsSync(path.join(cwd, '.agent-rl')));
  });

  it('invalid configs fail before anything runs, naming the field, value and fix', () => {
    const cwd = tempDir();
    const bad = runCli(['train', '--group-size', '1', '--lr', 'fast'], cwd);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /groupSize = 1: GRPO normalises rewards within a group.*Fix: set groupSize ≥ 2/);
    assert.match(bad.stderr, /algorithm\.learningRate = "fast": must be a finite number/);
    fs.writeFileSync(path.join(cwd, 'c.json'), '{"seed": 1, "iteratons": 3}');
    const typo = runCli(['train', '--config', 'c.json'], cwd);
    assert.equal(typo.code, 2);
    assert.match(typo.stderr, /iteratons = 3: is not a known config key\. Fix: did you mean "iterations"\?/);
    fs.writeFileSync(path.join(cwd, 'broken.json'), '{"seed": 1,');
    const broken = runCli(['train', '--config', 'broken.json'], cwd);
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /--config broken\.json: not valid JSON/);
    const flag = runCli(['train', '--sed', '4'], cwd);
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /Unknown option '--sed'/);
    assert.ok(!fs.existsSync(path.join(cwd, '.agent-rl')), 'nothing was created');
  });

  it('train --help lists every algorithm setting with the default that run would use, and what it trades', () => {
    const cwd = tempDir();
    const r = runCli(['train', '--help', '--env', 'calculator', '--policy', 'transformer'], cwd);
    assert.equal(r.code, 0, r.stderr);
    // a language model's GRPO defaults are not plain GRPO, and the name says how
    assert.match(
      r.stdout,
      /Algorithm settings for env calculator, policy transformer, method grpo \(GRPO \+ clip-higher 0\.2\/0\.28 \+ zero-advantage filtering\)/,
    );
    assert.match(r.stdout, /learningRate = 0\.0002\n.*\n\s+Trades: /);
    assert.match(r.stdout, /klEstimator = "k3"/);
    fs.writeFileSync(path.join(cwd, 'p.json'), JSON.stringify({ env: 'calculator', policy: 'transformer', algorithm: { negativeAdvantageScale: 0 } }));
    const mine = runCli(['train', '--help', '--config', 'p.json'], cwd);
    assert.match(mine.stdout, /\(positive-only GRPO \(failures not pushed down\) \+ clip-higher 0\.2\/0\.28 \+ zero-advantage filtering\)/);
    assert.match(mine.stdout, /negativeAdvantageScale = 0 \(from your config\)/);
    assert.match(runCli(['train', '--help'], cwd).stdout, /learningRate = 0\.08/);
  });

  it('a corrupt database is reported and left byte-for-byte as it was', () => {
    const cwd = tempDir();
    const file = path.join(cwd, 'runs.sqlite');
    fs.writeFileSync(file, 'SQLite format 2\0 definitely not a database'.repeat(100));
    const before = sha256(file);
    for (const args of [
      ['train', ...SMALL, '--db', file],
      ['runs', '--db', file],
      ['show', '1', '--db', file],
    ]) {
      const r = runCli(args, cwd);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /is not a readable SQLite database .* left untouched/);
      assert.equal(sha256(file), before);
    }
  });

  it('a locked database gives a clear error and no partial run', () => {
    const cwd = tempDir();
    const file = path.join(cwd, 'runs.sqlite');
    assert.equal(runCli(['train', ...SMALL, '--db', file], cwd).code, 0);
    const holder = new Database(file);
    holder.exec('BEGIN EXCLUSIVE');
    let r;
    try {
      r = runCli(['train', ...SMALL, '--db', file, '--busy-timeout', '200'], cwd);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /locked by another process/);
    assert.equal(count(file, 'SELECT count(*) AS n FROM runs'), 1);
  });

  it('show names a missing run and how to list them', () => {
    const cwd = tempDir();
    assert.equal(runCli(['train', ...SMALL], cwd).code, 0);
    const r = runCli(['show', 'nope'], cwd);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no run "nope".*agent-rl runs/);
  });

  it('a killed run leaves whole iterations only and is then reported as failed', async () => {
    const cwd = tempDir();
    const file = path.join(cwd, 'runs.sqlite');
    const child = startCli(['train', '--iterations', '100000', '--eval-episodes', '16', '--db', file], cwd);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      // Wait until a few iterations are stored, then kill without warning.
      for (let i = 0; i < 400 && storedIterations(file) < 5; i++) await new Promise((r) => setTimeout(r, 50));
    } finally {
      child.kill('SIGKILL');
    }
    await exited;
    const iterations = count(file, 'SELECT count(*) AS n FROM iterations');
    assert.ok(iterations >= 5, `only ${iterations} iterations stored`);
    assert.equal(count(file, 'SELECT count(*) AS n FROM trajectories'), iterations * 32);
    assert.equal(count(file, 'SELECT count(*) AS n FROM (SELECT iteration FROM trajectories GROUP BY iteration HAVING count(*) <> 32)'), 0);
    assert.equal(count(file, 'SELECT count(*) AS n FROM turns'), count(file, 'SELECT sum(num_turns) AS n FROM trajectories'));
    const runs = runCli(['runs', '--db', file, '--json'], cwd);
    const [run] = JSON.parse(runs.stdout) as { status: string; error: string }[];
    assert.equal(run!.status, 'failed');
    assert.match(run!.error, /exited without finishing the run/);
  });

  it('SIGINT cancels at an iteration boundary and records the run as cancelled', async () => {
    const cwd = tempDir();
    const file = path.join(cwd, 'runs.sqlite');
    const child = startCli(['train', '--iterations', '100000', '--eval-episodes', '16', '--db', file], cwd);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    let code: number | null;
    try {
      for (let i = 0; i < 400 && storedIterations(file) < 2; i++) await new Promise((r) => setTimeout(r, 50));
      child.kill('SIGINT');
      code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000).unref())]).then((c) =>
        c === 'timeout' ? -1 : c,
      );
    } finally {
      child.kill('SIGKILL');
    }
    assert.equal(code, 130, stderr.slice(-500));
    assert.match(stderr, /cancelling after this iteration/);
    const d = new Database(file, { readonly: true });
    const run = d.prepare('SELECT status, wall_ms FROM runs').get() as { status: string; wall_ms: number };
    d.close();
    assert.equal(run.status, 'cancelled');
    assert.ok(run.wall_ms > 0);
  });

  it('stored text is shown, never obeyed: hostile names, task ids and turns through runs, show and trajectory', () => {
    const cwd = tempDir();
    const r = runCli(['train', '--iterations', '1', '--eval-episodes', '4', '--groups', '1', '--group-size', '2', '--name', 'plain'], cwd);
    assert.equal(r.code, 0, r.stderr);
    const file = path.join(cwd, '.agent-rl', 'runs.sqlite');
    // Each CLI start loads the whole bundle: the short entries go in together (joined), the long one alone.
    const short = HOSTILE.filter((h) => h.text.length < 1000);
    const cases = [{ name: short.map((h) => h.name).join(', '), text: short.map((h) => h.text).join('\n') }, ...HOSTILE.filter((h) => h.text.length >= 1000)];
    for (const h of cases) {
      const db = new Database(file);
      db.prepare('UPDATE runs SET name = ?, error = ?, env = ? WHERE id = 1').run(h.text, h.text, h.text);
      db.prepare('UPDATE trajectories SET task_id = ?, termination = ?').run(h.text, h.text);
      db.prepare('UPDATE turns SET action_text = ?, observation_text = ?').run(h.text, h.text);
      db.close();
      const outputs = {
        runs: runCli(['runs'], cwd),
        show: runCli(['show', '1'], cwd),
        trajectory: runCli(['trajectory', '1'], cwd),
        json: runCli(['trajectory', '1', '--json'], cwd),
      };
      for (const [command, out] of Object.entries(outputs)) {
        assert.equal(out.code, 0, `${h.name}, ${command}: ${out.stderr}`);
        assert.equal(rawInvisible(out.stdout), undefined, `${h.name}: agent-rl ${command} printed a raw invisible or control character`);
      }
      assert.equal(outputs.runs.stdout.trimEnd().split('\n').length, 3, `${h.name}: one row`);
      assert.ok(outputs.show.stdout.length < 20_000, `${h.name}: show cuts long names`);
      const stored = JSON.parse(outputs.json.stdout) as { taskId: string; turnList: { actionText: string }[] };
      // exactly as stored: SQLite keeps text as UTF-8, where a lone surrogate is U+FFFD
      assert.equal(stored.taskId, asStored(h.text), `${h.name}: --json keeps the data exactly`);
      assert.equal(stored.turnList[0]!.actionText, asStored(h.text));
    }
  });
});

describe('agent-rl train --resume', () => {
  /** Every iteration's metrics without the fields that measure time. */
  const untimed = (rec: RunRecord): unknown[] =>
    rec.iterations.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'wallMs' && !k.startsWith('phase'))));
  const ARGS = ['train', '--iterations', '400', '--eval-episodes', '200', '--eval-interval', '100', '--seed', '9'];

  it('a seed-002 run killed with SIGKILL continues from its last resume point and ends exactly as an uninterrupted run', async () => {
    const cwd = tempDir();
    const file = path.join(cwd, 'runs.sqlite');
    fs.writeFileSync(path.join(cwd, 'c.json'), JSON.stringify({ checkpointEvery: 25 }));
    const whole = runCli([...ARGS, '--config', 'c.json', '--db', path.join(cwd, 'whole.sqlite'), '--output', 'whole.json'], cwd);
    assert.equal(whole.code, 0, whole.stderr);

    const child = startCli([...ARGS, '--config', 'c.json', '--db', file], cwd);
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      // past the first resume points, then killed without warning in the middle of the run
      for (let i = 0; i < 600 && storedIterations(file) < 60; i++) await new Promise((r) => setTimeout(r, 25));
    } finally {
      child.kill('SIGKILL');
    }
    await exited;
    const before = storedIterations(file);
    assert.ok(before >= 60 && before < 400, `${before} iterations stored when killed`);

    const resumed = runCli(['train', '--resume', '1', '--db', file, '--output', 'resumed.json'], cwd);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, /continuing run 1 after iteration (\d+)/);
    const after = Number(/after iteration (\d+)/.exec(resumed.stderr)![1]);
    assert.equal(after % 25, 0);
    assert.ok(after <= before);
    const a = JSON.parse(fs.readFileSync(path.join(cwd, 'whole.json'), 'utf8')) as RunRecord;
    const b = JSON.parse(fs.readFileSync(path.join(cwd, 'resumed.json'), 'utf8')) as RunRecord;
    assert.equal(b.status, 'completed');
    assert.deepEqual(b.evaluations, a.evaluations, 'the same evaluations, to the episode');
    assert.deepEqual(untimed(b), untimed(a));
    // every iteration exactly once, no orphaned trajectory or turn
    assert.equal(count(file, 'SELECT count(*) AS n FROM iterations'), 400);
    assert.equal(count(file, 'SELECT count(DISTINCT iteration) AS n FROM iterations'), 400);
    assert.equal(count(file, 'SELECT count(*) AS n FROM trajectories'), 400 * 32);
    assert.equal(count(file, 'SELECT count(*) AS n FROM trajectories WHERE iteration NOT IN (SELECT iteration FROM iterations)'), 0);
    assert.equal(count(file, 'SELECT count(*) AS n FROM turns'), count(file, 'SELECT sum(num_turns) AS n FROM trajectories'));
    assert.equal(count(file, 'SELECT count(*) AS n FROM evaluations'), 5);
    assert.equal(count(file, "SELECT count(*) AS n FROM runs WHERE status = 'completed'"), 1);
  });

  it('says why a run cannot continue: completed, unknown, no resume point; flags that would change it are refused', () => {
    const cwd = tempDir();
    const file = path.join(cwd, 'runs.sqlite');
    assert.equal(runCli(['train', '--iterations', '3', '--eval-episodes', '8', '--db', file], cwd).code, 0);
    const done = runCli(['train', '--resume', '1', '--db', file], cwd);
    assert.equal(done.code, 2);
    assert.match(done.stderr, /run 1 completed all its 3 iterations: nothing to continue/);
    assert.match(runCli(['train', '--resume', '7', '--db', file], cwd).stderr, /no run "7" in .*Fix: `agent-rl runs` lists the runs/);
    assert.match(
      runCli(['train', '--resume', '1', '--seed', '3', '--db', file], cwd).stderr,
      /--resume continues a stored run with its own config; drop --seed/,
    );
  });
});
