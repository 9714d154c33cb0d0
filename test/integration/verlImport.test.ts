import Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { fork } from 'node:child_process';
import { isImporterToHost, type ImporterToHost } from '../../src/shared/protocol/importProtocol';
import { ROOT, runCli, startCli, tempDir } from '../helpers/cli';

/** The fixtures copied to a fresh folder (the tests append to them). */
function fixtureCopy(): string {
  const dir = tempDir('agent-rl-verl-');
  fs.cpSync(path.join(ROOT, 'test/fixtures/verl'), dir, { recursive: true });
  return dir;
}

function query<T>(cwd: string, sql: string, ...params: unknown[]): T[] {
  const d = new Database(path.join(cwd, '.agent-rl/runs.sqlite'), { readonly: true });
  try {
    return d.prepare(sql).all(...params) as T[];
  } finally {
    d.close();
  }
}

const line = (input: string, output: string, score: number, step: number): string =>
  `${JSON.stringify({ input, output, gts: '1', score, step, acc: score > 0 })}\n`;

describe('agent-rl import verl', () => {
  it('imports the fixtures as a run: steps, groups from equal inputs, GRPO advantages, turns, extras, validation, config; re-import adds nothing', () => {
    const cwd = fixtureCopy();
    const r = runCli(['import', 'verl', 'rollout', '--validation', 'validation', '--config', 'config.yaml'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /rollout\/1\.jsonl:5: malformed line skipped: not JSON/);
    assert.match(r.stdout, /2 steps and 12 trajectories added, 2 evaluations; malformed lines: 1 in this import/);
    const [run] = query<{ name: string; env: string; policy: string; method: string; status: string; iterations_planned: number; config_json: string }>(
      cwd,
      'SELECT * FROM runs',
    );
    assert.deepEqual([run!.name, run!.policy, run!.method, run!.status, run!.iterations_planned], ['qwen2.5-3b-code-grpo', 'verl', 'grpo', 'completed', 2]);
    const config = JSON.parse(run!.config_json) as { verlConfig: { actor_rollout_ref: { rollout: { n: number } } }; verlConfigText: string };
    assert.equal(config.verlConfig.actor_rollout_ref.rollout.n, 4);
    assert.equal(config.verlConfigText, fs.readFileSync(path.join(cwd, 'config.yaml'), 'utf8'));

    // Step 1: two prompts × 4 samples, interleaved in the file; the first prompt's scores are 1, 0, 1, 1:
    // mean 0.75, sample std 0.5 → advantages 0.5, −1.5, 0.5, 0.5.
    const step1 = query<{ group_index: number; index_in_group: number; reward: number; advantage: number; success: number }>(
      cwd,
      'SELECT group_index, index_in_group, reward, advantage, success FROM trajectories WHERE iteration = 1 ORDER BY group_index, index_in_group',
    );
    assert.deepEqual(
      step1.map((t) => [t.group_index, t.index_in_group]),
      [
        [0, 0],
        [0, 1],
        [0, 2],
        [0, 3],
        [1, 0],
        [1, 1],
        [1, 2],
        [1, 3],
      ],
    );
    // verl divides by std + 1e-6: within 1e-5 of the hand-computed values
    assert.deepEqual(
      step1.slice(0, 4).map((t) => [t.reward, Math.round(t.advantage * 1e5) / 1e5]),
      [
        [1, 0.5],
        [0, -1.5],
        [1, 0.5],
        [1, 0.5],
      ],
    );
    const metrics = query<{ metrics_json: string }>(cwd, 'SELECT metrics_json FROM iterations WHERE iteration = 1')[0]!;
    const m = JSON.parse(metrics.metrics_json) as { trajectories: number; successRate: number; rewardMean: number };
    assert.deepEqual([m.trajectories, m.successRate, m.rewardMean], [8, 0.75, 0.75]);

    // Step 2: the repaired multi-turn sample: three turns, the first a code call answered by a traceback.
    const [repaired] = query<{ id: number; num_turns: number; outcome_json: string; public_pass: number }>(
      cwd,
      'SELECT id, num_turns, outcome_json, public_pass FROM trajectories WHERE iteration = 2 ORDER BY id LIMIT 1',
    );
    assert.equal(repaired!.num_turns, 3);
    const outcome = JSON.parse(repaired!.outcome_json) as { details: { metrics: Record<string, number>; input: string } };
    assert.deepEqual(outcome.details.metrics, { acc: 1, public_pass: 1, private_pass: 1 });
    assert.match(outcome.details.input, /Write a Python function mean/);
    const turns = query<{ action_json: string; observation_text: string }>(
      cwd,
      'SELECT action_json, observation_text FROM turns WHERE trajectory_id = ? ORDER BY turn_index',
      repaired!.id,
    );
    assert.equal((JSON.parse(turns[0]!.action_json) as { name: string }).name, 'code_interpreter');
    assert.match(turns[0]!.observation_text, /File "main.py", line 3/);
    const evals = query<{ iteration: number; episodes: number; success_rate: number }>(
      cwd,
      'SELECT iteration, episodes, success_rate FROM evaluations ORDER BY iteration',
    );
    assert.deepEqual(
      evals.map((e) => [e.iteration, e.episodes, e.success_rate]),
      [
        [0, 2, 0.5],
        [2, 2, 1],
      ],
    );

    const shown = runCli(['show', '1'], cwd);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /imported from verl: .*rollout/);
    assert.match(shown.stdout, /reward extras \(mean per trajectory\): acc 0\.667, private_pass 0\.500, public_pass 0\.500/);
    assert.match(shown.stdout, /malformed lines skipped: 1/);

    const again = runCli(['import', 'verl', 'rollout', '--validation', 'validation'], cwd);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /continuing run 1/);
    assert.match(again.stdout, /0 steps and 0 trajectories added, 0 evaluations; malformed lines: 0 in this import, 1 in all imports of this run/);
    assert.equal(again.stderr, '');
    assert.equal(query<{ n: number }>(cwd, 'SELECT count(*) AS n FROM trajectories')[0]!.n, 12);
  });

  it('reads complete lines only: a half-written line waits for its newline, then joins its group and the advantages are recomputed', () => {
    const cwd = fixtureCopy();
    assert.equal(runCli(['import', 'verl', 'rollout'], cwd).code, 0);
    const step3 = path.join(cwd, 'rollout', '3.jsonl');
    const third = line('Q', 'c', 0, 3);
    fs.writeFileSync(step3, line('Q', 'a', 1, 3) + line('Q', 'b', 1, 3) + third.slice(0, 20));
    const r = runCli(['import', 'verl', 'rollout'], cwd);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /step 3: \+2 trajectories/);
    assert.match(r.stderr, /3\.jsonl:3: no newline yet/);
    // equal scores: a zero-variance group, advantages 0
    assert.deepEqual(
      query<{ advantage: number }>(cwd, 'SELECT advantage FROM trajectories WHERE iteration = 3').map((t) => t.advantage),
      [0, 0],
    );
    fs.appendFileSync(step3, third.slice(20));
    const r2 = runCli(['import', 'verl', 'rollout'], cwd);
    assert.match(r2.stdout, /step 3: \+1 trajectories \(3 in the step\)/);
    const rows = query<{ group_index: number; index_in_group: number; advantage: number }>(
      cwd,
      'SELECT group_index, index_in_group, advantage FROM trajectories WHERE iteration = 3 ORDER BY index_in_group',
    );
    assert.deepEqual(
      rows.map((t) => [t.group_index, t.index_in_group]),
      [
        [0, 0],
        [0, 1],
        [0, 2],
      ],
    );
    // scores 1, 1, 0: mean 2/3, sample std √(1/3) → 1/√3, 1/√3, −2/√3
    rows.forEach((t, i) => assert.ok(Math.abs(t.advantage - [1, 1, -2][i]! / Math.sqrt(3)) < 1e-5, `advantage ${i}: ${t.advantage}`));
    const m = JSON.parse(query<{ metrics_json: string }>(cwd, 'SELECT metrics_json FROM iterations WHERE iteration = 3')[0]!.metrics_json) as {
      trajectories: number;
      zeroVarianceGroups: number;
    };
    assert.deepEqual([m.trajectories, m.zeroVarianceGroups], [3, 0]);
  });

  it('--follow picks up new files and appended lines while verl writes, and stops cleanly on SIGINT', async () => {
    const cwd = fixtureCopy();
    const child = startCli(['import', 'verl', 'rollout', '--follow', '--poll', '50'], cwd);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const waitFor = async (re: RegExp): Promise<void> => {
      for (let i = 0; i < 200 && !re.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      assert.match(out, re);
    };
    await waitFor(/step 2: \+4/);
    assert.equal(query<{ status: string }>(cwd, 'SELECT status FROM runs')[0]!.status, 'running');
    const step4 = path.join(cwd, 'rollout', '4.jsonl');
    const second = line('P', 'y', 0, 4);
    fs.writeFileSync(step4, line('P', 'x', 1, 4) + second.slice(0, 10));
    await waitFor(/step 4: \+1 trajectories \(1 in the step\)/);
    fs.appendFileSync(step4, second.slice(10));
    await waitFor(/step 4: \+1 trajectories \(2 in the step\)/);
    const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGINT');
    assert.equal(await exit, 0);
    assert.equal(query<{ status: string }>(cwd, 'SELECT status FROM runs')[0]!.status, 'completed');
    assert.equal(query<{ n: number }>(cwd, 'SELECT count(*) AS n FROM trajectories WHERE iteration = 4')[0]!.n, 2);
  });

  it('bad input: a missing folder or a broken config names the problem and the fix (exit 2), and writes nothing', () => {
    const cwd = fixtureCopy();
    const missing = runCli(['import', 'verl', 'nope'], cwd);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /DIR nope: no such folder\. Fix: pass the folder verl's trainer\.rollout_data_dir points at/);
    fs.writeFileSync(path.join(cwd, 'bad.yaml'), 'trainer:\n  experiment_name: [unclosed\n');
    const bad = runCli(['import', 'verl', 'rollout', '--config', 'bad.yaml'], cwd);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--config bad\.yaml: not valid YAML at line \d+, column \d+/);
    assert.equal(query<{ n: number }>(cwd, 'SELECT count(*) AS n FROM runs')[0]!.n, 0);
    assert.equal(runCli(['import', 'csv', 'rollout'], cwd).code, 2);
  });

  it("the workbench's import worker (dist/importWorker.js) reports every step, follows until stopped, and leaves the run completed", async () => {
    const cwd = fixtureCopy();
    const db = path.join(cwd, '.agent-rl/runs.sqlite');
    const child = fork(path.join(ROOT, 'dist', 'importWorker.js'), [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    const got: ImporterToHost[] = [];
    child.on('message', (m: unknown) => {
      if (isImporterToHost(m)) got.push(m);
    });
    const waitFor = async (f: (m: ImporterToHost) => boolean): Promise<void> => {
      for (let i = 0; i < 200 && !got.some(f); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(got.some(f), JSON.stringify(got));
    };
    child.send({ type: 'start', db, rolloutDir: path.join(cwd, 'rollout'), validationDir: path.join(cwd, 'validation'), follow: true });
    await waitFor((m) => m.type === 'step' && m.step === 2);
    fs.writeFileSync(path.join(cwd, 'rollout', '3.jsonl'), line('R', 'z', 1, 3));
    await waitFor((m) => m.type === 'step' && m.step === 3);
    const exit = new Promise((resolve) => child.on('exit', resolve));
    child.send({ type: 'stop' });
    await exit;
    assert.equal(got[0]!.type, 'run');
    assert.equal(got[got.length - 1]!.type, 'finished');
    assert.deepEqual(
      got.filter((m) => m.type === 'malformed').map((m) => m.type === 'malformed' && [path.basename(m.file), m.line]),
      [['1.jsonl', 5]],
    );
    assert.deepEqual(
      got.find((m) => m.type === 'finished'),
      { type: 'finished', runId: 1, steps: 3, trajectories: 13, malformed: 1 },
    );
    assert.equal(query<{ status: string }>(cwd, 'SELECT status FROM runs')[0]!.status, 'completed');
  });
});
