// reasoning-gym task sets (a workspace environment's envOptions.taskSet "reasoning-gym:<dataset>"),
// against the real reasoning-gym from PyPI in its cached virtual environment (scripts/pythonVenv.mjs
// reasoning-gym-0.1.25; .ci/run makes it, and without it these tests are skipped, saying so). Two
// datasets, an arithmetic one and a word-sorting one: the tasks are the datasets' own entries, the
// held-out split's settings differ from training's (harder by the curriculum, unless the config says
// otherwise), episodes are scored by the dataset's score_answer (a right, a wrong and a malformed
// answer), the generated set is read back without Python, a bad dataset or config key is an error
// naming it, and a short run through the CLI completes. The config rules need no venv.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { validateRunConfig, type RunConfig } from '../../src/shared/runConfig';
import type { RunEnvironment, Task } from '../../src/rl/envs/environment';
import { openEnvironment } from '../../src/rl/envs/registry';
import { taskSetFile } from '../../src/rl/envs/reasoningGym/reasoningGymTasks';
import { Rng } from '../../src/rl/random';
import { runCli, tempDir } from '../helpers/cli';

const VENV = path.join(process.env.AGENT_RL_VENVS || path.join(os.homedir(), '.cache', 'agent-rl-workbench', 'venvs'), 'reasoning-gym-0.1.25');
// made whole: the stamp is written after pip install succeeds, so a venv left by a killed install is absent here
const SKIP =
  !(fs.existsSync(path.join(VENV, 'bin', 'python')) && fs.existsSync(path.join(VENV, 'agent-rl-requirements.txt'))) &&
  `the reasoning-gym venv is absent or unfinished (${VENV}): node scripts/pythonVenv.mjs reasoning-gym-0.1.25 makes it, as .ci/run does`;

const ARITHMETIC = { size: 6, min_terms: 2, max_terms: 2, min_digits: 1, max_digits: 1 };

function config(envOptions: Record<string, unknown>): RunConfig {
  return validateRunConfig({ env: 'workspace', policy: 'transformer', envOptions });
}

const metaOf = (t: Task): { entry: { metadata: { difficulty: Record<string, [number, number]> } } } =>
  (t.data as { metadata: { entry: { metadata: { difficulty: Record<string, [number, number]> } } } }).metadata;

describe('reasoning-gym task sets: the config rules', () => {
  it('a task set is "reasoning-gym:<dataset>", scored by score_answer unless another reward is named; tasks and a task set exclude each other', () => {
    const c = config({ taskSet: 'reasoning-gym:basic_arithmetic' });
    assert.equal(c.env === 'workspace' && c.envOptions.reward, 'score_answer');
    const exact = config({ taskSet: 'reasoning-gym:basic_arithmetic', reward: 'exact_match' });
    assert.equal(exact.env === 'workspace' && exact.envOptions.reward, 'exact_match');
    const files = config({ tasks: 't.jsonl' });
    assert.equal(files.env === 'workspace' && files.envOptions.reward, 'exact_match', 'task files keep exact_match');
    assert.throws(() => config({ taskSet: 'gym:basic_arithmetic' }), /envOptions\.taskSet.*is not a task set this knows.*reasoning-gym:<dataset>/s);
    assert.throws(() => config({ taskSet: 'reasoning-gym:basic_arithmetic', tasks: 't.jsonl' }), /envOptions\.taskSet.*keep one/s);
    assert.throws(() => config({ tasks: 't.jsonl', taskConfig: { size: 3 } }), /envOptions\.taskConfig.*envOptions\.taskSet is empty/s);
    assert.throws(() => config({ tasks: 't.jsonl', reward: 'score_answer' }), /envOptions\.reward.*score_answer.*taskSet is empty/s);
    assert.throws(() => config({}), /envOptions\.tasks.*or a generated set in envOptions\.taskSet/s);
  });
});

describe('reasoning-gym task sets against the real reasoning-gym', { skip: SKIP }, () => {
  const opened: RunEnvironment[] = [];
  let sets: string;
  const saved = process.env.AGENT_RL_TASK_SETS;
  before(() => {
    // a fresh folder: every set here is made by the harness, none read from an earlier run's
    sets = tempDir('agent-rl-rg-sets-');
    process.env.AGENT_RL_TASK_SETS = sets;
  });
  after(async () => {
    await Promise.all(opened.map((e) => e.dispose()));
    if (saved === undefined) delete process.env.AGENT_RL_TASK_SETS;
    else process.env.AGENT_RL_TASK_SETS = saved;
    fs.rmSync(sets, { recursive: true, force: true });
  });
  const open = async (envOptions: Record<string, unknown>): Promise<RunEnvironment> => {
    const e = await openEnvironment(config(envOptions));
    opened.push(e);
    return e;
  };
  /** One episode of `task` whose turns are `actions`; its reward and the answer the environment read. */
  const episode = async (env: RunEnvironment, task: Task, ...actions: string[]): Promise<{ reward: number; success: boolean; answer: unknown }> => {
    const e = env.create();
    await e.reset(task);
    for (const a of actions) if ((await e.step(e.parseAction(a))).done) break;
    const o = await e.verify(new Rng(1));
    await e.close();
    return { reward: o.reward, success: o.success, answer: (o.details as { answer?: unknown }).answer };
  };

  it('basic_arithmetic: the entries are the tasks, the held-out split one curriculum level harder, and score_answer scores a right, a wrong and a malformed answer', async () => {
    const env = await open({ taskSet: 'reasoning-gym:basic_arithmetic', taskConfig: ARITHMETIC, heldOutConfig: { size: 4 } });
    const { train, heldOut } = env.tasks();
    assert.equal(train.length, 6);
    assert.equal(heldOut.length, 4);
    assert.match(train[0]!.id, /^rg:basic_arithmetic:train:0$/);
    assert.match(train[0]!.prompt, /^Calculate .*\nGive your final answer as <answer>your answer<\/answer>\.$/s);
    // training at 2 terms of 1 digit; held out at the curriculum's next level: 3 terms of 2 digits
    for (const t of train) assert.deepEqual(metaOf(t).entry.metadata.difficulty, { num_terms: [2, 2], num_digits: [1, 1] });
    for (const t of heldOut) assert.deepEqual(metaOf(t).entry.metadata.difficulty, { num_terms: [3, 3], num_digits: [2, 2] });
    assert.match(
      env.preflight!(),
      /reasoning-gym 0\.1\.25 basic_arithmetic: train .*held out harder: \{"num_terms":\[3,3\],"num_digits":\[2,2\]\}.*reward score_answer of reasoning-gym/,
    );
    const task = train[0]!;
    const answer = String((task.data as { groundTruth: unknown }).groundTruth);
    const wrong = String(Number(answer) + 1);
    const [right, off, malformed] = await Promise.all([
      episode(env, task, `<answer>${answer}</answer>`),
      episode(env, task, `<answer>${wrong}</answer>`),
      episode(env, task, '<answer>the sum of the numbers</answer>'),
    ]);
    assert.deepEqual(right, { reward: 1, success: true, answer });
    assert.deepEqual(off, { reward: 0, success: false, answer: wrong });
    assert.deepEqual(malformed, { reward: 0, success: false, answer: 'the sum of the numbers' });
    // no <answer> at all: format errors until maxCalls, then scored as no answer
    assert.deepEqual(await episode(env, task, ...Array<string>(6).fill(answer)), { reward: 0, success: false, answer: null });
  });

  it('word_sorting (not arithmetic): its own settings raised for the held-out split, and its score_answer with its partial credit', async () => {
    const env = await open({ taskSet: 'reasoning-gym:word_sorting', taskConfig: { size: 3, seed: 5 }, heldOutConfig: { size: 3 } });
    const { train, heldOut } = env.tasks();
    assert.deepEqual([train.length, heldOut.length], [3, 3]);
    const words = (t: Task): number => (metaOf(t).entry.metadata as unknown as { num_words: number }).num_words;
    // trained on 3–10 words (the dataset's default); held out 11–25, the curriculum's next level
    for (const t of train) assert.ok(words(t) >= 3 && words(t) <= 10, `${words(t)} training words`);
    for (const t of heldOut) assert.ok(words(t) >= 11 && words(t) <= 25, `${words(t)} held-out words`);
    const task = heldOut[0]!;
    const answer = String((task.data as { groundTruth: unknown }).groundTruth);
    const sorted = answer.split(', ');
    const reversed = [...sorted].reverse();
    // word_sorting's own partial credit: the share of words in their place, at least 0.2 for the right words in another order
    const partial = Math.max(reversed.filter((w, i) => w === sorted[i]).length / sorted.length, 0.2);
    const [right, outOfOrder, malformed] = await Promise.all([
      episode(env, task, `<answer>${answer}</answer>`),
      episode(env, task, `<answer>${reversed.join(', ')}</answer>`),
      episode(env, task, '<answer>sorted!</answer>'),
    ]);
    assert.deepEqual([right.reward, right.success], [1, true]);
    assert.deepEqual([outOfOrder.reward, outOfOrder.success], [partial, false]);
    assert.deepEqual([malformed.reward, malformed.success], [0, false]);
  });

  it('the set is made once: read back by its settings without Python, the same tasks; {"harder": false} keeps the training settings', async () => {
    const options = { taskSet: 'reasoning-gym:basic_arithmetic', taskConfig: ARITHMETIC, heldOutConfig: { size: 4 } };
    assert.ok(fs.existsSync(taskSetFile('basic_arithmetic', options)));
    // (reward exact_match in both: nothing to score with Python, so neither opening starts one)
    const first = (await open({ ...options, reward: 'exact_match' })).tasks();
    const savedPython = process.env.AGENT_RL_REASONING_GYM_PYTHON;
    process.env.AGENT_RL_REASONING_GYM_PYTHON = '/nonexistent/python3';
    try {
      const again = (await open({ ...options, reward: 'exact_match' })).tasks();
      assert.deepEqual(
        again.train.map((t) => t.prompt),
        first.train.map((t) => t.prompt),
      );
      await assert.rejects(
        open({ ...options, taskConfig: { ...ARITHMETIC, seed: 9 } }),
        /\/nonexistent\/python3 \(\$AGENT_RL_REASONING_GYM_PYTHON\) does not exist/,
      );
    } finally {
      if (savedPython === undefined) delete process.env.AGENT_RL_REASONING_GYM_PYTHON;
      else process.env.AGENT_RL_REASONING_GYM_PYTHON = savedPython;
    }
    const same = (await open({ ...options, heldOutConfig: { harder: false, size: 4 } })).tasks();
    for (const t of same.heldOut) assert.deepEqual(metaOf(t).entry.metadata.difficulty, { num_terms: [2, 2], num_digits: [1, 1] });
  });

  it('an unknown dataset, a config key it lacks, a config it refuses, or no harder level: errors naming the dataset and the key', async () => {
    await assert.rejects(open({ taskSet: 'reasoning-gym:basic_arithmetc' }), /reasoning-gym has no dataset "basic_arithmetc".*did you mean basic_arithmetic/);
    await assert.rejects(
      open({ taskSet: 'reasoning-gym:basic_arithmetic', taskConfig: { max_term: 3 } }),
      /reasoning-gym dataset basic_arithmetic: its config has no field "max_term" \(envOptions\.taskConfig\)\. Fix: did you mean 'max_terms'\?/,
    );
    await assert.rejects(
      open({ taskSet: 'reasoning-gym:basic_arithmetic', taskConfig: { size: 2, min_terms: 5, max_terms: 2 } }),
      /reasoning-gym dataset basic_arithmetic: its config .* \(envOptions\.taskConfig\) was refused: AssertionError: max_terms must be >= min_terms/,
    );
    await assert.rejects(
      open({ taskSet: 'reasoning-gym:basic_arithmetic', taskConfig: { size: 2 } }),
      /reasoning-gym dataset basic_arithmetic is at the top of its curriculum in the training config.*heldOutConfig/,
    );
  });

  it('a short GRPO run through the CLI completes on a reasoning-gym set', () => {
    const dir = tempDir();
    const db = path.join(dir, 'runs.db');
    const cfg = path.join(dir, 'run.agentrl.json');
    fs.writeFileSync(
      cfg,
      JSON.stringify({
        env: 'workspace',
        policy: 'transformer',
        method: 'grpo',
        iterations: 1,
        groupsPerIteration: 2,
        groupSize: 2,
        evalEpisodes: 2,
        maxTurns: 2,
        envOptions: { taskSet: 'reasoning-gym:basic_arithmetic', taskConfig: ARITHMETIC, heldOutConfig: { size: 4 }, maxCalls: 2 },
        policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 160, maxNewTokens: 12 },
      }),
    );
    const r = runCli(['train', '--config', cfg, '--db', db], dir, { AGENT_RL_TASK_SETS: sets });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /completed/);
    const check = runCli(['env', 'check', '--config', cfg], dir, { AGENT_RL_TASK_SETS: sets });
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, /^tasks: 6 training, 4 held out \(reasoning-gym 0\.1\.25 basic_arithmetic: /m);
    assert.match(check.stdout, /reward: score_answer, on a recorded episode of rg:basic_arithmetic:train:0 \(its demonstration\): reward 1, success true/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
