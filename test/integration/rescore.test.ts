// Re-scoring stored trajectories (issue 29, part 3) on a real database file, real sandboxed reward
// sessions and the real CLI and backend processes: a tiny workspace run is trained, its reward.py is
// changed and `agent-rl rescore` stores and prints the new scores; a reward that raises on some
// trajectories records their errors and goes on; a reward that does not load fails with the file named
// and nothing written; an edited final answer is scored as an edit while the original stays as stored;
// the backend (the host's path) does the same; a built-in environment's verifier reproduces its rewards.
import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BackendClient } from '../../src/host/processes/backendClient';
import { resolveRuntime } from '../../src/host/processes/runtime';
import type { RescoreReport } from '../../src/shared/rescore';
import { ROOT, runCli, tempDir } from '../helpers/cli';

const TASKS = Array.from({ length: 12 }, (_, i) => ({
  id: i + 1,
  prompt: `Convert ${i + 2} km to m.`,
  answer: (i + 2) * 1000,
  split: i % 4 === 0 ? 'test' : 'train',
  demonstration: [`<call>bump(${i + 1})</call>`, `<answer>${(i + 2) * 1000}</answer>`],
}));
const TOOLS = '_count = 0\n\ndef bump(step: int = 1) -> int:\n    """Adds step to the counter."""\n    global _count\n    _count += step\n    return _count\n';
const REWARD_V1 =
  'def reward(task, trajectory):\n    ok = trajectory["answer"] == str(task["ground_truth"])\n    return {"score": float(ok), "calls": trajectory["tool_calls"]}\n';
/** Half credit, a quarter more on even task ids, and a raise on task 3. */
const REWARD_V2 = `def reward(task, trajectory):
    if task["id"] == "3":
        raise ValueError("no reward for task 3")
    ok = trajectory["answer"] == str(task["ground_truth"])
    return {"score": 0.5 * float(ok) + (0.25 if int(task["id"]) % 2 == 0 else 0)}
`;
const v2 = (taskId: string): number => 0.5 + (Number(taskId) % 2 === 0 ? 0.25 : 0);

function query<T>(db: string, sql: string, ...params: unknown[]): T[] {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare(sql).all(...params) as T[];
  } finally {
    d.close();
  }
}

/** A hash of every stored trajectory and turn: a re-score or an edit must leave it as it was. */
function storedHash(db: string): string {
  const rows = [
    ...query(db, 'SELECT * FROM trajectories ORDER BY id'),
    ...query(db, 'SELECT trajectory_id, turn_index, action_text, observation_text FROM turns ORDER BY trajectory_id, turn_index'),
  ];
  return crypto.createHash('sha256').update(JSON.stringify(rows)).digest('hex');
}

describe('agent-rl rescore on a workspace run', () => {
  const dir = tempDir('agent-rl-rescore-');
  const db = path.join(dir, 'runs.sqlite');
  let before0 = '';
  let trajectories: { id: number; iteration: number; task_id: string; reward: number }[] = [];

  before(() => {
    fs.writeFileSync(path.join(dir, 'tasks.jsonl'), `${TASKS.map((t) => JSON.stringify(t)).join('\n')}\n`);
    fs.writeFileSync(path.join(dir, 'tools.py'), TOOLS);
    fs.writeFileSync(path.join(dir, 'reward.py'), REWARD_V1);
    fs.writeFileSync(
      path.join(dir, 'run.agentrl.json'),
      JSON.stringify({
        env: 'workspace',
        policy: 'transformer',
        method: 'sft',
        iterations: 2,
        groupsPerIteration: 4,
        evalEpisodes: 4,
        policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 224, maxNewTokens: 24 },
        envOptions: { tasks: 'tasks.jsonl', tools: 'tools.py', reward: 'reward.py' },
      }),
    );
    const t = runCli(['train', '--config', path.join(dir, 'run.agentrl.json'), '--db', db, '--name', 'ws'], dir);
    assert.equal(t.code, 0, t.stderr);
    trajectories = query(db, 'SELECT id, iteration, task_id, reward FROM trajectories ORDER BY id');
    assert.ok(trajectories.length >= 4, 'the run stored trajectories');
    assert.ok(
      trajectories.every((x) => x.reward === 1),
      'every demonstration scored 1 under the first reward',
    );
    before0 = storedHash(db);
  });

  it('the current reward.py, changed since training, re-scores every trajectory: new scores stored, differences printed, errors counted', () => {
    fs.writeFileSync(path.join(dir, 'reward.py'), REWARD_V2);
    const started = Date.now();
    const r = runCli(['rescore', 'ws', '--db', db], dir);
    const ms = Date.now() - started;
    assert.equal(r.code, 0, r.stderr);
    const raising = trajectories.filter((x) => x.task_id === '3');
    const scored = trajectories.filter((x) => x.task_id !== '3');
    const newMean = scored.reduce((a, x) => a + v2(x.task_id), 0) / scored.length;
    assert.match(r.stdout, new RegExp(`^rescore 1: run 1 "ws", iterations 1\\.\\.2, with reward\\.py \\(sha256 [0-9a-f]{12}…\\)`, 'm'));
    assert.match(
      r.stdout,
      new RegExp(`trajectories re-scored: ${scored.length} of ${trajectories.length}${raising.length ? `; ${raising.length} could not be scored` : ''}`),
    );
    assert.match(r.stdout, new RegExp(`rewards changed: ${scored.length} of ${scored.length} .*mean reward 1\\.000 → ${newMean.toFixed(3)}`));
    assert.match(r.stdout, new RegExp(`success flips: 0 to success, ${scored.length} to failure`));
    assert.match(r.stdout, /^largest differences:$/m);
    // the largest |Δ| first: an odd task id lost 0.5
    const odd = scored.find((x) => Number(x.task_id) % 2 === 1);
    if (odd) assert.match(r.stdout, /^\d+\s+\d+\s+\d+\s+1\.000\s+0\.500\s+-0\.500\s+to failure$/m);
    if (raising.length) assert.match(r.stdout, /trajectory \d+: reward\.py: reward\(\) raised: … ValueError: no reward for task 3/);

    const results = query<{ trajectory_id: number; reward: number | null; success: number | null; error: string | null; task_id: string }>(
      db,
      'SELECT x.trajectory_id, x.reward, x.success, x.error, t.task_id FROM rescore_results x JOIN trajectories t ON t.id = x.trajectory_id WHERE x.rescore_id = 1 ORDER BY x.trajectory_id',
    );
    assert.equal(results.length, trajectories.length);
    for (const x of results) {
      if (x.task_id === '3') {
        assert.equal(x.reward, null);
        assert.match(x.error ?? '', /ValueError: no reward for task 3/);
      } else {
        assert.equal(x.reward, v2(x.task_id), `trajectory ${x.trajectory_id}`);
        assert.equal(x.success, 0);
        assert.equal(x.error, null);
      }
    }
    const [row] = query<{ reward_file: string; reward_sha256: string; iteration_from: number; iteration_to: number }>(
      db,
      'SELECT * FROM rescores WHERE id = 1',
    );
    assert.equal(row!.reward_file, path.join(dir, 'reward.py'));
    assert.equal(row!.reward_sha256, crypto.createHash('sha256').update(REWARD_V2).digest('hex'));
    assert.deepEqual([row!.iteration_from, row!.iteration_to], [1, 2]);
    assert.equal(storedHash(db), before0, 'the stored trajectories and turns are unchanged');
    process.stdout.write(`# re-scored ${trajectories.length} workspace trajectories (a sandboxed reward.py each) in ${ms} ms, CLI start included\n`);
  });

  it('--reward FILE scores with another file, --iterations picks a range, --json gives the whole report', () => {
    const other = path.join(dir, 'other.py');
    fs.writeFileSync(other, 'def reward(task, trajectory):\n    return 1\n');
    const r = runCli(['rescore', '1', '--db', db, '--reward', 'other.py', '--iterations', '2..2', '--json'], dir);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as RescoreReport;
    const second = trajectories.filter((x) => x.iteration === 2);
    assert.equal(report.items.length, second.length);
    assert.deepEqual(report.reward, { file: other, sha256: crypto.createHash('sha256').update(fs.readFileSync(other)).digest('hex'), label: 'other.py' });
    assert.equal(report.summary.changed, 0, 'the constant 1 equals every stored reward');
    assert.equal(report.summary.errors, 0);
  });

  it('a reward file that does not load, or raises on the recorded episode, fails with the file named and nothing written', () => {
    const count = (): number => query<{ n: number }>(db, 'SELECT count(*) AS n FROM rescores')[0]!.n;
    const n = count();
    fs.writeFileSync(path.join(dir, 'bad.py'), 'def reward(task, trajectory:\n    return 1\n');
    const a = runCli(['rescore', 'ws', '--db', db, '--reward', 'bad.py'], dir);
    assert.equal(a.code, 2, a.stderr);
    assert.match(a.stderr, /bad\.py: the reward file does not import: .*SyntaxError.*Fix: correct the file/s);
    assert.ok(!/ at .*\.js:\d+/.test(a.stderr), 'no stack trace');
    fs.writeFileSync(path.join(dir, 'raises.py'), 'def reward(task, trajectory):\n    raise RuntimeError("always")\n');
    const b = runCli(['rescore', 'ws', '--db', db, '--reward', 'raises.py'], dir);
    assert.equal(b.code, 2, b.stderr);
    assert.match(b.stderr, /raises\.py: reward\(\) raised:.*RuntimeError: always/s);
    const c = runCli(['rescore', 'ws', '--db', db, '--reward', 'missing.py'], dir);
    assert.equal(c.code, 2);
    assert.match(c.stderr, /--reward missing\.py: no file at .*missing\.py\. Fix:/);
    assert.equal(count(), n, 'no re-score stored');
    assert.equal(storedHash(db), before0, 'no stored data changed');
  });

  it('a stored run does not choose which files run: its tools and reward run only from inside the folder the re-score runs in', () => {
    const elsewhere = tempDir();
    const r = runCli(['rescore', 'ws', '--db', db], elsewhere);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /envOptions\.tools is .*tools\.py, which is not a file inside .*: a stored run does not choose which files run\. Fix: re-score from the workspace folder/,
    );
    // --reward replaces the stored reward, never the stored tools
    const withReward = runCli(['rescore', 'ws', '--db', db, '--reward', path.join(dir, 'reward.py')], elsewhere);
    assert.equal(withReward.code, 2, withReward.stderr);
    assert.match(withReward.stderr, /envOptions\.tools is /);
    assert.equal(storedHash(db), before0, 'no stored data changed');
  });

  it('an edited final answer is scored and stored as an edit; the original trajectory reads back unchanged', () => {
    const t = trajectories.find((x) => x.task_id !== '3')!;
    const original = runCli(['trajectory', String(t.id), '--db', db, '--json'], dir).stdout;
    const answer = `<answer>${Number(t.task_id) * 1000 + 1000}</answer>`;
    fs.writeFileSync(path.join(dir, 'reward.py'), REWARD_V1);
    const wrong = runCli(['rescore', 'ws', '--db', db, '--trajectory', String(t.id), '--final-answer', '<answer>7</answer>'], dir);
    assert.equal(wrong.code, 0, wrong.stderr);
    assert.match(wrong.stdout, /stored: reward 1\.000, success.*\n {2}edited: reward 0\.000, failure/);
    fs.writeFileSync(path.join(dir, 'answer.txt'), answer);
    const right = runCli(['rescore', 'ws', '--db', db, '--trajectory', String(t.id), '--final-answer-file', 'answer.txt'], dir);
    assert.equal(right.code, 0, right.stderr);
    const edits = query<{ trajectory_id: number; turn_index: number; action_text: string; reward: number; success: number }>(
      db,
      'SELECT * FROM trajectory_edits ORDER BY id',
    );
    assert.deepEqual(
      edits.map((e) => [e.trajectory_id, e.turn_index, e.action_text, e.reward, e.success]),
      [
        [t.id, 1, '<answer>7</answer>', 0, 0],
        [t.id, 1, answer, 1, 1],
      ],
    );
    assert.equal(runCli(['trajectory', String(t.id), '--db', db, '--json'], dir).stdout, original, 'the original reads back as stored');
    assert.equal(storedHash(db), before0);
    const misuse = runCli(['rescore', 'ws', '--db', db, '--final-answer', 'x'], dir);
    assert.equal(misuse.code, 2);
    assert.match(misuse.stderr, /--final-answer edits one trajectory: give it with --trajectory ID/);
  });

  it('the backend process (the host commands) re-scores one trajectory, edits one, lists both for the inspector; deleting the run deletes them', async () => {
    const resolution = await resolveRuntime(
      { configured: '', execPath: process.execPath, versions: process.versions, pathEnv: '', platform: process.platform },
      path.join(ROOT, 'dist', 'probe.js'),
    );
    assert.ok(resolution.runtime, resolution.rejected.join(' '));
    const backend = new BackendClient({ runtime: resolution.runtime, script: path.join(ROOT, 'dist', 'backend.js') }, db);
    try {
      fs.writeFileSync(path.join(dir, 'reward.py'), REWARD_V2);
      const t = trajectories.find((x) => x.task_id !== '3')!;
      const report = await backend.request('rescore', { runId: 1, trajectoryId: t.id, rewardFile: null, python: '', sandbox: 'auto', folders: [dir] }, 120_000);
      assert.equal(report.trajectoryId, t.id);
      assert.equal(report.items.length, 1);
      assert.equal(report.items[0]!.new?.reward, v2(t.task_id));
      assert.deepEqual(await backend.request('rescoreReport', { rescoreId: report.id }), report);
      const e = await backend.request(
        'editFinalAnswer',
        { trajectoryId: t.id, text: '<answer>0</answer>', rewardFile: null, python: '', sandbox: 'auto', folders: [dir] },
        120_000,
      );
      assert.equal(e.edit.score?.reward, 0.5 * 0 + (Number(t.task_id) % 2 === 0 ? 0.25 : 0));
      const listed = await backend.request('trajectoryRescores', { trajectoryId: t.id });
      assert.equal(listed.rescores[0]?.rescoreId, report.id, 'newest first');
      assert.ok(listed.rescores.some((x) => x.rescoreId === 1));
      assert.equal(listed.edits[0]?.id, e.edit.id);
      await assert.rejects(
        backend.request('rescore', { runId: 999, trajectoryId: null, rewardFile: null, python: '', sandbox: 'auto', folders: [dir] }),
        /no run "999"/,
      );
      assert.equal(storedHash(db), before0);
      // a deleted run takes its re-scores and edits with it (foreign keys, ON DELETE CASCADE)
      assert.equal(await backend.request('deleteRun', { runId: 1 }), true);
      for (const table of ['rescores', 'rescore_results', 'trajectory_edits'])
        assert.equal(query<{ n: number }>(db, `SELECT count(*) AS n FROM ${table}`)[0]!.n, 0, table);
    } finally {
      backend.dispose();
    }
  });
});

describe('agent-rl rescore on a built-in environment', () => {
  const dir = tempDir('agent-rl-rescore-bs-');
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('the binary-search verifier, replayed on every stored episode, reproduces the stored rewards; --reward is refused', () => {
    const t = runCli(['train', '--iterations', '3', '--eval-episodes', '8', '--name', 'bs'], dir);
    assert.equal(t.code, 0, t.stderr);
    const started = Date.now();
    const r = runCli(['rescore', 'bs', '--json'], dir);
    const ms = Date.now() - started;
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as RescoreReport;
    assert.equal(report.reward.label, 'built-in binary-search verifier');
    assert.equal(report.items.length, 96);
    assert.equal(report.summary.errors, 0);
    assert.equal(report.summary.changed, 0, JSON.stringify(report.summary.largest));
    for (const it of report.items) assert.deepEqual(it.new, it.old, `trajectory ${it.trajectoryId}`);
    process.stdout.write(`# re-scored ${report.items.length} binary-search trajectories in ${ms} ms, CLI start included (${report.wallMs} ms inside)\n`);
    const refused = runCli(['rescore', 'bs', '--reward', 'x.py'], dir);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--reward x\.py: run 1 uses the binary-search environment, whose reward is its built-in verifier.*Fix: drop --reward/);
  });
});
