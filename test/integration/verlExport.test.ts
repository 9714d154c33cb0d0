// `agent-rl export verl`: the parquet read back by an independent reader (DuckDB) with verl's column
// types, the command line's keys checked against verl's own config, and the emitted reward run by
// python3 against the sandbox server.
import { DuckDBInstance } from '@duckdb/node-api';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { readTaskRecords } from '../../src/rl/envs/workspace/taskFiles';
import { tasksOf } from '../../src/rl/envs/workspace/taskRecords';
import { startFusionServer, type RunningFusionServer } from '../../src/rl/sandbox/fusion/fusionServer';
import { chooseLevel, resolvePython } from '../../src/rl/sandbox/isolation';
import { WarmPool } from '../../src/rl/sandbox/warmPool';
import { ROOT, runCli, tempDir } from '../helpers/cli';

const python = resolvePython();

function exportConfig(config: Record<string, unknown>, extra: string[] = []): { out: string; stdout: string } {
  const dir = tempDir('agent-rl-export-');
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(config));
  const r = runCli(['export', 'verl', '--config', 'run.json', '--out', 'verl', ...extra], dir);
  assert.equal(r.code, 0, r.stderr);
  return { out: path.join(dir, 'verl'), stdout: r.stdout };
}

async function duck<T>(sql: string): Promise<T[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowObjectsJson() as T[];
  } finally {
    c.closeSync();
  }
}

/** `key=value` overrides of a generated script, in order. */
function overrides(script: string): [string, string][] {
  const body = script.slice(script.indexOf('verl.trainer.main_ppo') + 'verl.trainer.main_ppo'.length);
  return [...body.matchAll(/(?:^|\s)'?([\w.]+)=((?:[^'\s\\]|\\.)*)'?/g)].map((m) => [m[1]!, m[2]!]);
}

function pyRun(script: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`python exited ${code}: ${err}`))));
  });
}

describe('agent-rl export verl', () => {
  const code = exportConfig({
    env: 'code',
    policy: 'transformer',
    method: 'grpo',
    name: 'code-verl',
    seed: 3,
    groupSize: 8,
    groupsPerIteration: 16,
    iterations: 60,
    envOptions: { taskSet: 'formulas' },
  });

  it("writes the RL parquet that DuckDB reads back with verl's column types and values", async () => {
    const file = path.join(code.out, 'train.parquet');
    const types = await duck<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM read_parquet('${file}')`);
    assert.deepEqual(Object.fromEntries(types.map((t) => [t.column_name, t.column_type])), {
      data_source: 'VARCHAR',
      agent_name: 'VARCHAR',
      prompt: 'STRUCT("role" VARCHAR, "content" VARCHAR)[]',
      ability: 'VARCHAR',
      reward_model: 'STRUCT(style VARCHAR, ground_truth VARCHAR)',
      extra_info:
        'STRUCT(split VARCHAR, "index" BIGINT, task_id VARCHAR, need_tools_kwargs BOOLEAN, tools_kwargs STRUCT(code_interpreter STRUCT(create_kwargs STRUCT(ground_truth VARCHAR))))',
    });
    const [stats] = await duck<{ n: string; splits: string; first: string; last: string }>(
      `SELECT count(*) AS n, string_agg(DISTINCT extra_info.split, ',') AS splits, min(extra_info.index) AS first, max(extra_info.index) AS last FROM read_parquet('${file}')`,
    );
    assert.deepEqual(stats, { n: '304', splits: 'train', first: '0', last: '303' });
    const [row] = await duck<{ source: string; roles: string; user: string; truth: string; tool_truth: string; agent: string }>(
      `SELECT data_source AS source, list_transform(prompt, m -> m.role)::VARCHAR AS roles, prompt[2].content AS user, reward_model.ground_truth AS truth,
              extra_info.tools_kwargs.code_interpreter.create_kwargs.ground_truth AS tool_truth, agent_name AS agent FROM read_parquet('${file}') LIMIT 1`,
    );
    assert.deepEqual([row!.source, row!.roles, row!.agent], ['agent-rl/code', '[system, user]', 'tool_agent']);
    assert.match(row!.user, /^Write a Python function f that should return .* for an integer x\. For example, print\(f\(\d\)\) prints -?\d+\.$/);
    assert.equal(row!.tool_truth, row!.truth);
    assert.deepEqual(Object.keys(JSON.parse(row!.truth) as object), ['fn', 'public_args', 'public_output', 'hidden', 'reference']);
    const [held] = await duck<{ n: string; split: string }>(
      `SELECT count(*) AS n, any_value(extra_info.split) AS split FROM read_parquet('${path.join(code.out, 'test.parquet')}')`,
    );
    assert.deepEqual(held, { n: '101', split: 'test' });
  });

  it("the command line lists only keys of verl's config, with the run's settings", () => {
    const known = new Set(
      fs
        .readFileSync(path.join(ROOT, 'test/fixtures/verl/ppo_trainer_keys.txt'), 'utf8')
        .split('\n')
        .filter((l) => l && !l.startsWith('#')),
    );
    for (const script of ['main_ppo.sh', 'ray_job.sh']) {
      const o = overrides(fs.readFileSync(path.join(code.out, script), 'utf8'));
      assert.ok(o.length > 40, `${script}: ${o.length} overrides`);
      const unknown = o.map(([k]) => k).filter((k) => !known.has(k));
      assert.deepEqual(unknown, [], `${script} has keys verl does not know`);
      const v = Object.fromEntries(o);
      assert.deepEqual(
        [
          v['algorithm.adv_estimator'],
          v['actor_rollout_ref.rollout.n'],
          v['actor_rollout_ref.actor.clip_ratio_low'],
          v['actor_rollout_ref.actor.clip_ratio_high'],
          v['actor_rollout_ref.actor.use_kl_loss'],
          v['actor_rollout_ref.actor.kl_loss_type'],
          v['actor_rollout_ref.rollout.multi_turn.max_assistant_turns'],
          v['trainer.total_training_steps'],
        ],
        ['grpo', '8', '0.2', '0.28', 'true', 'low_var_kl', '5', '60'],
      );
      // verl 0.9.1's validate_config refuses a config without these (one GPU: mini-batches of 64 sequences,
      // 16 groups × 8 = 128 for log-probs; their largest divisors within the caps 4 and 8)
      assert.deepEqual(
        [
          v['actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu'],
          v['actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu'],
          v['actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu'],
        ],
        ['4', '8', '8'],
      );
      // 0.9.1's main_ppo reads the reward only under reward.; the top-level key of verl ≤ 0.8 would be ignored
      assert.equal(v['reward.custom_reward_function.path'], script === 'main_ppo.sh' ? path.join(code.out, 'agent_rl_reward.py') : 'agent_rl_reward.py');
      assert.equal(v['reward.custom_reward_function.name'], 'compute_score');
      assert.deepEqual(
        o.map(([k]) => k).filter((k) => k.startsWith('custom_reward_function')),
        [],
        `${script} sets verl ≤ 0.8's top-level reward key`,
      );
      assert.match(fs.readFileSync(path.join(code.out, script), 'utf8'), /^# The keys are verl 0\.9\.1's\./m);
      assert.equal(v['data.train_files'], script === 'main_ppo.sh' ? path.join(code.out, 'train.parquet') : 'train.parquet');
      assert.equal(v['trainer.rollout_data_dir'], path.join(code.out, 'dumps', 'rollout'));
    }
    assert.match(fs.readFileSync(path.join(code.out, 'ray_job.sh'), 'utf8'), /ray job submit --address .* --runtime-env-json='\{"working_dir":".*verl"\}' --/);
  });

  it("the tool config names the workbench's own code tool (verl 0.9.1 has no SandboxFusionTool), pointed at the sandbox server", () => {
    const tool = parse(fs.readFileSync(path.join(code.out, 'agent_rl_tools.yaml'), 'utf8')) as {
      tools: { class_name: string; config: { sandbox_url: string }; tool_schema: { function: { name: string } } }[];
    };
    assert.equal(tool.tools[0]!.class_name, 'agent_rl_tools.AgentRlCodeTool');
    assert.equal(tool.tools[0]!.config.sandbox_url, 'http://127.0.0.1:8080/run_code');
    assert.equal(tool.tools[0]!.tool_schema.function.name, 'code_interpreter');
    assert.ok(fs.existsSync(path.join(code.out, 'agent_rl_tools.py')));
    assert.ok(!fs.existsSync(path.join(code.out, 'sandbox_tool.yaml')));
    // the reward's settings are data beside it: the same URL
    const reward = JSON.parse(fs.readFileSync(path.join(code.out, 'agent_rl_reward.json'), 'utf8')) as { sandbox_url: string };
    assert.equal(reward.sandbox_url, 'http://127.0.0.1:8080/run_code');
    assert.ok(fs.existsSync(path.join(code.out, 'agent_rl_verifier.py')));
  });

  it("the scripts say how to start the sandbox so that it allows the tool's run timeout, and what a cluster needs for PYTHONPATH", () => {
    const header = (dir: string, name: string): string[] => fs.readFileSync(path.join(dir, name), 'utf8').split('\n').slice(0, 4);
    // the environment's 5 s default is within the server's 60 s default --max-timeout: nothing to add
    assert.equal(header(code.out, 'main_ppo.sh')[2], '#   agent-rl sandbox serve --port 8080');
    // 2 minutes a run: the server would cut run_timeout to 60 s without the flag
    const slow = exportConfig({ env: 'code', policy: 'transformer', method: 'grpo', envOptions: { taskSet: 'formulas', timeoutMs: 120_000 } });
    assert.equal(header(slow.out, 'main_ppo.sh')[2], '#   agent-rl sandbox serve --port 8080 --max-timeout 120');
    assert.equal(header(slow.out, 'ray_job.sh')[2], '# start it as agent-rl sandbox serve --port 8080 --max-timeout 120');
    const tool = parse(fs.readFileSync(path.join(slow.out, 'agent_rl_tools.yaml'), 'utf8')) as {
      tools: { config: { timeout_ms: number; num_workers: number } }[];
    };
    assert.deepEqual([tool.tools[0]!.config.timeout_ms, tool.tools[0]!.config.num_workers], [120_000, 32]);
    // an exported variable reaches only the workers this shell's Ray starts: the script says so, before it
    const script = fs.readFileSync(path.join(code.out, 'main_ppo.sh'), 'utf8');
    assert.match(script, /ray_job\.sh[^\n]*\n#[^\n]*ray start[^\n]*\nexport PYTHONPATH=/);
  });

  it('a workspace task set exports its prompts and ground truths, which read back through the verl preset and score by exact match', async () => {
    const dir = tempDir('agent-rl-export-');
    const tasks = Array.from({ length: 10 }, (_, i) => ({ id: `q${i}`, prompt: `What is ${i} + ${i}?`, answer: 2 * i, split: i < 7 ? 'train' : 'test' }));
    fs.writeFileSync(path.join(dir, 'tasks.jsonl'), tasks.map((t) => JSON.stringify(t)).join('\n'));
    const config = (extra: Record<string, unknown>) =>
      JSON.stringify({ env: 'workspace', policy: 'transformer', method: 'grpo', envOptions: { tasks: 'tasks.jsonl', ...extra } });
    fs.writeFileSync(path.join(dir, 'run.json'), config({}));
    const r = runCli(['export', 'verl', '--config', 'run.json', '--out', 'verl'], dir);
    assert.equal(r.code, 0, r.stderr);
    const back = tasksOf(await readTaskRecords(path.join(dir, 'verl'), ['*.parquet']), { preset: 'verl', fields: {}, heldOutFraction: 0.2, splitSeed: 0 });
    const user = (t: { data: Record<string, unknown> }) => (t.data.messages as { role: string; content: string }[]).find((m) => m.role === 'user')!.content;
    assert.deepEqual(
      back.train.map((t) => [user(t), t.data.groundTruth]),
      tasks.filter((t) => t.split === 'train').map((t) => [t.prompt, String(t.answer)]),
    );
    assert.deepEqual(
      back.heldOut.map((t) => [user(t), t.data.groundTruth]),
      tasks.filter((t) => t.split === 'test').map((t) => [t.prompt, String(t.answer)]),
    );
    const scored = await pyRun(
      `import json, sys\nsys.path.insert(0, ${JSON.stringify(path.join(dir, 'verl'))})\nimport agent_rl_reward as r\nprint(json.dumps([r.compute_score("agent-rl/workspace", s, "14")["score"] for s in ["so \\\\boxed{14}", "\\\\boxed{14.0}", "\\\\boxed{41}", "14"]]))`,
      {},
    );
    assert.deepEqual(JSON.parse(scored), [1, 1, 0, 0]);
    // a tool file or a reward file exports through the workspace route (test/integration/verlWorkspace.test.ts),
    // which reads and checks them first
    fs.writeFileSync(path.join(dir, 'tools.json'), config({ tools: 'tools.py' }));
    assert.match(
      runCli(['export', 'verl', '--config', 'tools.json', '--out', 'x'], dir).stderr,
      /envOptions\.tools: cannot read .*tools\.py .*Fix: check the path/,
    );
    fs.writeFileSync(path.join(dir, 'reward.json'), config({ reward: 'reward.py' }));
    assert.match(
      runCli(['export', 'verl', '--config', 'reward.json', '--out', 'x'], dir).stderr,
      /envOptions\.reward: cannot read .*reward\.py .*Fix: check the path/,
    );
    fs.writeFileSync(path.join(dir, 'code.json'), config({ reward: 'reward.py', toolFormat: 'code' }));
    assert.match(runCli(['export', 'verl', '--config', 'code.json', '--out', 'x'], dir).stderr, /envOptions\.toolFormat "code": .*Fix: use "hermes"/);
  });

  it('bad configs are refused with the field and the fix', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ env: 'code', policy: 'transformer', method: 'rs-sft' }));
    const a = runCli(['export', 'verl', '--config', 'a.json', '--out', 'x'], dir);
    assert.equal(a.code, 2);
    assert.match(a.stderr, /method rs-sft: .* Fix: export a config with "method": "grpo"/);
    fs.writeFileSync(path.join(dir, 'b.json'), JSON.stringify({ env: 'binary-search' }));
    assert.match(runCli(['export', 'verl', '--config', 'b.json', '--out', 'x'], dir).stderr, /env binary-search: no verl task set/);
    // a verifiers module's tasks are its own Python's: refused before anything runs it (the module does not even exist)
    fs.writeFileSync(
      path.join(dir, 'v.json'),
      JSON.stringify({
        env: 'verifiers',
        policy: 'transformer',
        method: 'grpo',
        envOptions: { module: 'no_such_env_module' },
        policyOptions: { model: path.join(ROOT, 'test/fixtures/hf/qwen3') },
      }),
    );
    const v = runCli(['export', 'verl', '--config', 'v.json', '--out', 'x'], dir);
    assert.equal(v.code, 2, v.stderr);
    assert.match(v.stderr, /env "verifiers": its tasks and rewards are the user's own program's.*Fix: export an environment whose tasks the workbench holds/);
    // an OpenEnv server's episodes: refused before its command would start (it does not even exist)
    fs.writeFileSync(
      path.join(dir, 'o.json'),
      JSON.stringify({ env: 'openenv', policy: 'transformer', method: 'grpo', envOptions: { command: ['no-such-openenv-server'] } }),
    );
    const o = runCli(['export', 'verl', '--config', 'o.json', '--out', 'x'], dir);
    assert.equal(o.code, 2, o.stderr);
    assert.match(o.stderr, /env "openenv": its episodes and rewards are an OpenEnv server's.*Fix: export an environment whose tasks the workbench holds/);
    // the exported calculator reward has no per-call or per-malformed-turn cost: a config with one is refused
    for (const [envOptions, message] of [
      [{ callCost: 0.05 }, /envOptions\.callCost 0\.05: .* Fix: set it to 0 to export/],
      [{ formatErrorCost: 0.1 }, /envOptions\.formatErrorCost 0\.1: .* Fix: set it to 0 to export/],
      [{ callCost: 0.05, formatErrorCost: 0.1 }, /envOptions\.callCost 0\.05, envOptions\.formatErrorCost 0\.1: .* Fix: set them to 0 to export/],
    ] as const) {
      fs.writeFileSync(path.join(dir, 'c.json'), JSON.stringify({ env: 'calculator', policy: 'transformer', method: 'grpo', envOptions }));
      const c = runCli(['export', 'verl', '--config', 'c.json', '--out', 'x'], dir);
      assert.equal(c.code, 2, c.stderr);
      assert.match(c.stderr, message);
      assert.doesNotMatch(c.stderr, /\n\s+at /, 'no stack trace');
    }
    // verl's rollout has no action grammar: a config that decodes under one is refused
    fs.writeFileSync(
      path.join(dir, 'd.json'),
      JSON.stringify({ env: 'calculator', policy: 'transformer', method: 'grpo', policyOptions: { constrainedDecoding: true } }),
    );
    const d = runCli(['export', 'verl', '--config', 'd.json', '--out', 'x'], dir);
    assert.equal(d.code, 2, d.stderr);
    assert.match(d.stderr, /policyOptions\.constrainedDecoding true: .* Fix: set it to false to export/);
    // the export writes verl's default policy loss with our token clip range: GSPO and CISPO are refused
    fs.writeFileSync(path.join(dir, 'e.json'), JSON.stringify({ env: 'calculator', policy: 'transformer', method: 'grpo', algorithm: { policyLoss: 'gspo' } }));
    const e = runCli(['export', 'verl', '--config', 'e.json', '--out', 'x'], dir);
    assert.equal(e.code, 2, e.stderr);
    assert.match(e.stderr, /algorithm\.policyLoss "gspo": .* Fix: use "clip"/);
    assert.ok(!fs.existsSync(path.join(dir, 'x')));
  });

  describe('the emitted reward, run by python3 against the sandbox server', () => {
    const pool = new WarmPool(chooseLevel('auto', python), python, 2);
    let server: RunningFusionServer;
    before(async () => {
      server = await startFusionServer({
        host: '127.0.0.1',
        port: 0,
        concurrency: 2,
        queueLimit: 16,
        executor: pool,
        maxRunTimeoutS: 30,
        defaultMemoryMB: 512,
        maxMemoryMB: 1024,
        outputCapBytes: 1 << 20,
      });
    });
    after(async () => {
      await server.close();
      await pool.close();
    });

    it('scores code by the private verifier and calculator answers like the environments', async () => {
      const calc = exportConfig({ env: 'calculator', policy: 'transformer', method: 'grpo', groupSize: 4, envOptions: { formatWeight: 0.1 } });
      const script = (out: string, calls: string): string =>
        ['import json, sys', `sys.path.insert(0, ${JSON.stringify(out)})`, 'from agent_rl_reward import compute_score', `print(json.dumps([${calls}]))`].join(
          '\n',
        );
      const truth = JSON.stringify({ fn: 'f', public_args: '2', public_output: '7', hidden: ['0', '1', '-3'], reference: 'def f(x):\n    return 3*x+1\n' });
      const right = '```python\ndef f(x):\n    return 3 * x + 1\n```';
      const memorised = 'Done.\n```python\ndef f(x):\n    return 7\n```';
      const codeScores = JSON.parse(
        await pyRun(
          script(
            code.out,
            [right, memorised, 'no code'].map((s) => `compute_score("agent-rl/code", ${JSON.stringify(s)}, ${JSON.stringify(truth)})`).join(', '),
          ),
          { AGENT_RL_SANDBOX_URL: server.url },
        ),
      ) as Record<string, unknown>[];
      assert.deepEqual(
        codeScores.map((s) => [s.score, s.public_pass, s.private_pass]),
        [
          [1, true, true],
          [0, true, false],
          [0, false, false],
        ],
      );
      const calcScores = JSON.parse(
        await pyRun(
          script(calc.out, ['"x \\\\boxed{35}"', '"\\\\boxed{36}"', '"35"'].map((s) => `compute_score("agent-rl/calculator", ${s}, "35")`).join(', ')),
          {},
        ),
      ) as Record<string, unknown>[];
      assert.deepEqual(
        calcScores.map((s) => [s.score, s.acc, s.pred]),
        [
          [1.1, true, '35'],
          [0.1, false, '36'],
          [0, false, ''],
        ],
      );
    });
  });
});
