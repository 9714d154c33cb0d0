// `agent-rl train --fork RUN --at N`: real CLI processes on a real database file. A fork without
// changes continues exactly as its parent did from the kept state after N (same tasks, rewards,
// metrics, evaluations); its lineage is stored; bad arguments are refused with what to do, and
// nothing stored is lost or added.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { RunRecord } from '../../src/cli/runRecord';
import { RunReader } from '../../src/store/runReader';
import { runCli, tempDir } from '../helpers/cli';

/** An iteration's metrics without the fields that measure time. */
const untimed = (iterations: RunRecord['iterations']): unknown[] =>
  iterations.map((m) => Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'wallMs' && !k.startsWith('phase'))));

function query<T>(file: string, sql: string, ...params: unknown[]): T[] {
  const d = new Database(file, { readonly: true });
  try {
    return d.prepare(sql).all(...params) as T[];
  } finally {
    d.close();
  }
}

/** One iteration's episodes as stored: task, reward, advantage, success, and the actions taken. */
function episodes(file: string, runId: number, iteration: number): unknown[] {
  return query(
    file,
    `SELECT t.group_index, t.index_in_group, t.task_id, t.reward, t.advantage, t.success,
       (SELECT group_concat(action_text, '|') FROM turns WHERE trajectory_id = t.id) AS actions
     FROM trajectories t WHERE run_id = ? AND iteration = ? ORDER BY group_index, index_in_group`,
    runId,
    iteration,
  );
}

const dirSize = (dir: string): number =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .reduce((n, e) => n + (e.isDirectory() ? dirSize(path.join(dir, e.name)) : fs.statSync(path.join(dir, e.name)).size), 0);

/** A 12-iteration parent (run 1) with a saved state every 4 iterations. */
function parentRun(): { cwd: string; file: string; parent: RunRecord } {
  const cwd = tempDir();
  const file = path.join(cwd, 'runs.sqlite');
  fs.writeFileSync(path.join(cwd, 'c.json'), JSON.stringify({ checkpointEvery: 4 }));
  const r = runCli(['train', '--iterations', '12', '--eval-episodes', '64', '--seed', '5', '--config', 'c.json', '--db', file, '--output', 'parent.json'], cwd);
  assert.equal(r.code, 0, r.stderr);
  return { cwd, file, parent: JSON.parse(fs.readFileSync(path.join(cwd, 'parent.json'), 'utf8')) as RunRecord };
}

describe('agent-rl train --fork', () => {
  it('a fork without changes continues exactly as its parent: iteration N+1 on, to the episode; lineage stored; a fork of a fork too', (t) => {
    const { cwd, file, parent } = parentRun();
    const states = path.join(cwd, 'checkpoints', 'runs', 'run-1', 'resume');
    assert.deepEqual(
      fs
        .readdirSync(states)
        .filter((f) => f.startsWith('state-'))
        .sort(),
      ['state-12', 'state-4', 'state-8'],
    );
    t.diagnostic(`one kept state of the binary-search table policy: ${dirSize(path.join(states, 'state-4'))} bytes`);

    const fork = runCli(['train', '--fork', '1', '--at', '4', '--db', file, '--output', 'fork.json'], cwd);
    assert.equal(fork.code, 0, fork.stderr);
    assert.match(fork.stderr, /forking run 1 after iteration 4 into a new run \(iterations 5–12\)/);
    assert.match(fork.stdout, /run 2 ".*\(fork of run 1 @ 4\)" completed/);
    assert.match(fork.stdout, /forked from run 1 after iteration 4: this run stores iterations 5 on\n/);
    assert.match(fork.stdout, /evaluation after iteration 12: /);
    assert.doesNotMatch(fork.stdout, /before training/);
    const child = JSON.parse(fs.readFileSync(path.join(cwd, 'fork.json'), 'utf8')) as RunRecord;
    assert.deepEqual(child.forkedFrom, { runId: 1, iteration: 4 });
    assert.deepEqual(
      child.iterations.map((m) => m.iteration),
      [5, 6, 7, 8, 9, 10, 11, 12],
    );
    // the fork's first iteration is the parent's next one, metrics and loss to the last bit, and so on to the end
    assert.deepEqual(untimed(child.iterations), untimed(parent.iterations.slice(4)));
    for (const it of [5, 12]) assert.deepEqual(episodes(file, 2, it), episodes(file, 1, it), `iteration ${it}'s episodes`);
    assert.ok(episodes(file, 2, 5).length === 32);
    // the final evaluation is the parent's; the iteration-0 one is the parent's only
    assert.deepEqual(
      child.evaluations,
      parent.evaluations.filter((e) => e.iteration > 4),
    );
    // lineage: stored, and what show reads back
    assert.deepEqual(query(file, 'SELECT id, parent_run_id, fork_iteration FROM runs ORDER BY id'), [
      { id: 1, parent_run_id: null, fork_iteration: null },
      { id: 2, parent_run_id: 1, fork_iteration: 4 },
    ]);
    assert.deepEqual(query(file, 'SELECT min(iteration) AS lo, max(iteration) AS hi, count(*) AS n FROM iterations WHERE run_id = 2'), [
      { lo: 5, hi: 12, n: 8 },
    ]);
    const shown = runCli(['show', '2', '--db', file], cwd);
    assert.match(shown.stdout, /forked from run 1 after iteration 4: this run stores iterations 5 on/);
    assert.match(shown.stdout, /iterations: 12\/12/);

    // Compare Runs' shared tasks: the parent and the fork sampled the same tasks from iteration 5 on
    const db = new Database(file, { readonly: true });
    try {
      const shared = new RunReader(db).sharedTasks([1, 2], 1000);
      const childTasks = query<{ task_id: string }>(file, 'SELECT DISTINCT task_id FROM trajectories WHERE run_id = 2');
      assert.equal(shared.length, childTasks.length);
      for (const s of shared) {
        assert.deepEqual(
          s.runs.map((r) => r.runId),
          [1, 2],
        );
        const [p, c] = s.runs;
        assert.ok(p!.episodes >= c!.episodes, 'the parent sampled every task of the fork at least as often (its iterations 5–12 are the same)');
        assert.deepEqual(query(file, 'SELECT run_id, task_id FROM trajectories WHERE id IN (?, ?) ORDER BY run_id', p!.trajectoryId, c!.trajectoryId), [
          { run_id: 1, task_id: s.taskId },
          { run_id: 2, task_id: s.taskId },
        ]);
      }
      assert.deepEqual(new RunReader(db).sharedTasks([1], 10), []);
    } finally {
      db.close();
    }

    // the fork kept states of its own (8, 12): forking it at 8 is still the parent's path
    const again = runCli(['train', '--fork', '2', '--at', '8', '--db', file, '--output', 'fork2.json'], cwd);
    assert.equal(again.code, 0, again.stderr);
    const grandchild = JSON.parse(fs.readFileSync(path.join(cwd, 'fork2.json'), 'utf8')) as RunRecord;
    assert.deepEqual(untimed(grandchild.iterations), untimed(parent.iterations.slice(8)));
    assert.deepEqual(grandchild.forkedFrom, { runId: 2, iteration: 8 });
  });

  it("changes merge over the parent's config: the same state and tasks at N+1, then a different update", () => {
    const { cwd, file, parent } = parentRun();
    fs.writeFileSync(path.join(cwd, 'changes.json'), JSON.stringify({ iterations: 10, algorithm: { learningRate: 0.5 }, name: 'lr 0.5' }));
    const r = runCli(['train', '--fork', '1', '--at', '8', '--config', 'changes.json', '--db', file, '--output', 'fork.json'], cwd);
    assert.equal(r.code, 0, r.stderr);
    const child = JSON.parse(fs.readFileSync(path.join(cwd, 'fork.json'), 'utf8')) as RunRecord;
    assert.equal(child.name, 'lr 0.5');
    assert.equal(child.config.algorithm.learningRate, 0.5);
    assert.equal(child.config.iterations, 10);
    assert.deepEqual(
      { ...child.config, name: '', iterations: 0, algorithm: { ...child.config.algorithm, learningRate: 0 } },
      {
        ...parent.config,
        name: '',
        iterations: 0,
        algorithm: { ...parent.config.algorithm, learningRate: 0 },
      },
    );
    // iteration 9 samples from the same saved policy: the same tasks and rewards before the update differs
    const tasks = (rows: unknown[]): unknown[] => rows.map((x) => (x as { task_id: string; reward: number }).task_id + (x as { reward: number }).reward);
    assert.deepEqual(tasks(episodes(file, 2, 9)), tasks(episodes(file, 1, 9)));
    assert.equal(child.iterations[0]!.rewardMean, parent.iterations[8]!.rewardMean);
    assert.notDeepEqual(untimed(child.iterations.slice(1)), untimed(parent.iterations.slice(9, 10)));
  });

  it('bad forks say what to do and store nothing: unknown run, an iteration without a kept state, a change a fork cannot make', () => {
    const { cwd, file } = parentRun();
    const before = query(
      file,
      'SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM iterations) AS its, (SELECT count(*) FROM trajectories) AS trajs',
    );
    const fork = (at: string, changes?: object): ReturnType<typeof runCli> => {
      if (changes) fs.writeFileSync(path.join(cwd, 'changes.json'), JSON.stringify(changes));
      return runCli(['train', '--fork', '1', '--at', at, ...(changes ? ['--config', 'changes.json'] : []), '--db', file], cwd);
    };
    const unknown = runCli(['train', '--fork', '9', '--at', '4', '--db', file], cwd);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no run "9" in .*Fix: `agent-rl runs` lists the runs/);

    const noState = fork('6');
    assert.equal(noState.code, 2);
    assert.match(
      noState.stderr,
      /run 1 kept no saved state after iteration 6 \(states are kept every 4 iterations, its checkpointEvery; the nearest with one: 4 and 8\)\. Fix: fork at one of 4, 8, 12/,
    );
    assert.match(fork('13').stderr, /run 1 has no stored iteration 13 \(it has 12\)/);

    const env = fork('4', { env: 'calculator', seed: 1, algorithm: { clipLow: 0.1 } });
    assert.equal(env.code, 2);
    assert.match(env.stderr, /env = "calculator": cannot change at a fork: the saved state was trained in the parent's environment/);
    assert.match(env.stderr, /seed = 1: cannot change at a fork: a fork continues the parent's random streams/);
    assert.doesNotMatch(env.stderr, /clipLow/);
    assert.match(fork('4', { policyOptions: { backend: 'wasm' } }).stderr, /policyOptions\.backend = "wasm": cannot change at a fork/);
    assert.match(fork('8', { iterations: 8 }).stderr, /iterations = 8: leaves nothing to train after the fork iteration 8/);
    assert.match(fork('4', { learningRate: 0.1 }).stderr, /learningRate = 0\.1: has moved to algorithm\.learningRate/);
    assert.match(fork('4', { algorithm: { learningRate: -1 } }).stderr, /algorithm\.learningRate = -1/);
    const flags = runCli(['train', '--fork', '1', '--at', '4', '--seed', '3', '--db', file], cwd);
    assert.match(flags.stderr, /--fork takes the settings to change from --config CHANGES\.json .*; drop --seed/);
    assert.match(runCli(['train', '--fork', '1', '--db', file], cwd).stderr, /--fork RUN and --at N go together/);

    assert.deepEqual(
      query(file, 'SELECT (SELECT count(*) FROM runs) AS runs, (SELECT count(*) FROM iterations) AS its, (SELECT count(*) FROM trajectories) AS trajs'),
      before,
    );
    assert.deepEqual(query(file, 'SELECT status FROM runs WHERE id = 1'), [{ status: 'completed' }]);
  });
});
