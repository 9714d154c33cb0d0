// A verifiers environment trained unchanged (env "verifiers"), against the real verifiers library from
// PyPI in its cached virtual environment (scripts/pythonVenv.mjs verifiers-0.3.1; .ci/run makes it, and
// without it these tests are skipped, saying so). Two environments written with verifiers' own API
// (test/fixtures/verifiers): a single-turn one whose rubric has two weighted reward functions, and a
// multi-turn ToolEnv with a Python function as its tool. The policy is a scripted chat model (Qwen's
// tokenizer and chat template; it answers every request with one fixed text), so what verifiers'
// rubric makes of the answer is known: its reward and components become the episode's reward and
// extras, on the right task and not on the others. The tool environment's call is parsed by the
// endpoint, run by verifiers' ToolEnv, and its result continues the episode's sequence. Failures are
// errors naming the module: an import error, a dataset larger than maxTasks, a rubric that raises, an
// interpreter without verifiers. One short run through the CLI, whose record is never resumed.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { validateRunConfig } from '../../src/shared/runConfig';
import type { AgentMessage } from '../../src/shared/types';
import { openEnvironment } from '../../src/rl/envs/registry';
import type { TransformerPolicy } from '../../src/rl/policies/lm/transformerPolicy';
import { createPolicy } from '../../src/rl/policies/createPolicy';
import { initBackend } from '../../src/rl/policies/lm/models/tfjsBackend';
import { verifiersPython } from '../../src/rl/envs/verifiers/verifiersEnv';
import { Learner } from '../../src/rl/train/learner';
import { policyRunInfo } from '../../src/rl/train/trainingRun';
import { runCli, tempDir } from '../helpers/cli';
import { extrasOf, VERIFIERS_FIXTURES, verifiersRuns, verifiersSkip, verifiersVenv } from '../helpers/verifiersRun';
import { scriptedChatModel } from '../helpers/freshPolicy';

const FIXTURES = VERIFIERS_FIXTURES;
const PYTHON = verifiersVenv('verifiers-0.3.1') ?? '';
const SKIP = verifiersSkip('verifiers-0.3.1');
/** The tool environment's scripted answer: a call of its `add` tool in Qwen's (Hermes) format. */
const CALL = '<tool_call>{"name":"add","arguments":{"numbers":[2,3]}}</tool_call>';

const { configFor, open, play, disposeAll } = verifiersRuns(PYTHON);
after(disposeAll);

describe('a verifiers environment (env "verifiers")', { skip: SKIP }, () => {
  before(async () => {
    await initBackend('wasm');
  });

  it('a single-turn environment: its dataset rows are the tasks, its eval dataset the held-out set, and its rubric’s reward and components the episode’s reward and extras', async () => {
    const model = scriptedChatModel('apple');
    const cfg = configFor(model, 'vf_echo');
    const run = await open(cfg);
    const { train, heldOut } = run.tasks();
    assert.deepEqual(
      train.map((t) => t.id),
      [0, 1, 2, 3, 4, 5].map((i) => `vf_echo:train:${i}`),
    );
    assert.deepEqual(
      heldOut.map((t) => [t.id, t.prompt]),
      [
        ['vf_echo:eval:0', 'Say the word piano.'],
        ['vf_echo:eval:1', 'Say the word maple.'],
      ],
    );
    assert.match(run.preflight?.() ?? '', /vf_echo\.load_environment\(\*\*\{\}\).*6 training and 2 held-out rows \(its eval dataset\)/);
    const policy = (await createPolicy(cfg, policyRunInfo(cfg), run)) as TransformerPolicy;
    // "apple" is task 0's word: said_it 1 × 1 + short 1 × 0.5; on task 1 ("river") only short counts
    for (const [task, reward, saidIt] of [
      [train[0]!, 1.5, 1],
      [train[1]!, 0.5, 0],
    ] as const) {
      const ts = await play(run, policy, task);
      for (const t of ts) {
        assert.equal(t.termination, 'finished', JSON.stringify(t.outcome.details));
        assert.equal(t.turns.length, 1);
        const prompt = policy.tokenizer.decode(t.turns[0]!.policy.tokens!.context);
        assert.match(prompt, /Answer with one word\./, "the environment's system prompt reached the template");
        assert.ok(prompt.includes(task.prompt), 'the row’s question is the request');
        assert.equal(t.turns[0]!.actionText, 'apple');
        assert.equal(t.outcome.reward, reward);
        // num_turns: the metric verifiers adds to every rubric
        assert.deepEqual(extrasOf(t), { said_it: saidIt, short: 1, num_turns: 1 });
        assert.equal(t.outcome.success, reward >= 1, 'success is the reward against successThreshold (1)');
      }
      // one GRPO update on the group (a finite loss, every episode trained)
      ts.forEach((t) => (t.advantage = t.indexInGroup === 0 ? 1 : -1));
      const report = await new Learner(policy, { method: 'grpo', settings: cfg.algorithm, totalSteps: 1, seed: 1, imitate: 'all' }).update(ts);
      assert.equal(report.excluded.no_trainable_positions ?? 0, 0);
      assert.ok(Number.isFinite(report.loss));
    }
  });

  it('a multi-turn tool environment (vf.ToolEnv): the tool reaches the template, verifiers runs the parsed call, and its result continues the sequence', async () => {
    const model = scriptedChatModel(CALL);
    const cfg = configFor(model, 'vf_tools', { heldOutFraction: 0 });
    const run = await open(cfg);
    assert.equal(run.tasks().train.length, 4);
    assert.equal(run.tasks().heldOut.length, 0, 'no eval dataset and heldOutFraction 0: nothing held out');
    const policy = (await createPolicy(cfg, policyRunInfo(cfg), run)) as TransformerPolicy;
    const ts = await play(run, policy, run.tasks().train[0]!);
    for (const t of ts) {
      const details = JSON.stringify(t.outcome.details);
      assert.equal(t.termination, 'finished', details);
      assert.equal(t.turns.length, 2, `max_turns 2: the call, its result, the call again (${details})`);
      const [first, second] = t.turns;
      const stored = (first!.action as { args: { request?: { messages: AgentMessage[]; tools: { function: { name: string } }[] } } }).args.request;
      assert.deepEqual(
        stored?.tools.map((x) => x.function.name),
        ['add'],
      );
      assert.match(policy.tokenizer.decode(first!.policy.tokens!.context), /"name": "add"/, 'the tool is rendered by the chat template');
      assert.equal(first!.actionText, CALL);
      // verifiers ran add([2, 3]) and sent the result back as a tool message: the second request continues the first
      assert.equal(second!.policy.tokens!.segment, undefined, 'one sequence');
      const kept = (first!.observation.data as { request: { continuesFrom: number; messages: AgentMessage[] } }).request;
      assert.deepEqual(
        kept.messages.map((m) => [m.role, m.content]),
        [['tool', '5']],
      );
      assert.match(policy.tokenizer.decode(second!.policy.tokens!.context), /<tool_response>\n5\n<\/tool_response>/);
      assert.ok('correct' in extrasOf(t), details);
      assert.equal(t.outcome.reward, extrasOf(t).correct, 'one reward function of weight 1: the reward is its score');
    }
  });

  it('failures are errors naming the module: an import error, a dataset too large, a rubric that raises, a Python without verifiers', async () => {
    const model = scriptedChatModel('apple');
    await assert.rejects(
      openEnvironment(configFor(model, 'vf_broken_import')),
      /verifiers environment vf_broken_import: import failed \(ModuleNotFoundError: No module named 'a_package_that_is_not_installed'\)\. Fix:/,
    );
    await assert.rejects(openEnvironment(configFor(model, 'vf_missing')), /verifiers environment vf_missing: import failed \(ModuleNotFoundError/);
    await assert.rejects(
      openEnvironment(configFor(model, 'vf_echo', { maxTasks: 5 })),
      /verifiers environment vf_echo: its train dataset has 6 rows, more than the 5 the run takes \(envOptions\.maxTasks.*Fix: load fewer rows/,
    );
    await assert.rejects(
      openEnvironment(configFor(model, 'vf_echo', { python: path.join(FIXTURES, 'no-python') })),
      /the Python .*no-python \(envOptions\.python\) does not exist/,
    );
    // the system's Python, without verifiers (where it has none)
    if (fs.existsSync('/usr/bin/python3') && spawnSync('/usr/bin/python3', ['-c', 'import verifiers']).status !== 0)
      await assert.rejects(
        openEnvironment(configFor(model, 'vf_echo', { python: '/usr/bin/python3' })),
        /verifiers environment vf_echo: this Python \(\/usr\/bin\/python3\) cannot import verifiers .*Fix: install it there/,
      );
    const broken = configFor(model, 'vf_echo', { args: { broken_rubric: true } });
    const run = await open(broken);
    const policy = (await createPolicy(broken, policyRunInfo(broken), run)) as TransformerPolicy;
    for (const t of await play(run, policy, run.tasks().train[0]!)) {
      assert.equal(t.termination, 'env_error');
      assert.equal(t.outcome.reward, 0);
      assert.match(
        String((t.outcome.details as { verifierError?: unknown }).verifierError),
        /verifiers environment vf_echo printed no \{"reward": number\} line .*its stderr ends: verifiers environment vf_echo: its rubric raised on task vf_echo:train:0 \(Error calling reward function said_it: the scorer's table is missing/,
      );
    }
    // no interpreter named: this machine's setting, else the cached venv
    const saved = process.env.AGENT_RL_VERIFIERS_PYTHON;
    delete process.env.AGENT_RL_VERIFIERS_PYTHON;
    assert.equal(verifiersPython({ python: '' }, FIXTURES), PYTHON);
    process.env.AGENT_RL_VERIFIERS_PYTHON = process.execPath;
    assert.equal(verifiersPython({ python: '' }, FIXTURES), process.execPath);
    if (saved === undefined) delete process.env.AGENT_RL_VERIFIERS_PYTHON;
    else process.env.AGENT_RL_VERIFIERS_PYTHON = saved;
    assert.throws(() => validateRunConfig({ env: 'verifiers', policy: 'transformer', policyOptions: { model } }), /envOptions\.module/);
    assert.throws(() => validateRunConfig({ env: 'verifiers', policy: 'transformer', envOptions: { module: 'vf_echo' } }), /policyOptions\.model/);
  });

  it('a short run through the CLI completes; its record is never forked (that would start the module again)', () => {
    const dir = tempDir();
    const db = path.join(dir, 'runs.db');
    const cfg = path.join(dir, 'run.agentrl.json');
    fs.writeFileSync(
      cfg,
      JSON.stringify({
        env: 'verifiers',
        policy: 'transformer',
        iterations: 1,
        groupsPerIteration: 1,
        groupSize: 2,
        evalEpisodes: 2,
        envOptions: { root: FIXTURES, module: 'vf_echo', python: PYTHON },
        policyOptions: { model: scriptedChatModel('apple'), loraRank: 4, maxNewTokens: 8, contextLength: 2048 },
      }),
    );
    const r = runCli(['train', '--config', cfg, '--db', db], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /completed/);
    const forked = runCli(['train', '--fork', '1', '--at', '1', '--db', db], dir);
    assert.notEqual(forked.code, 0);
    assert.match(forked.stderr, /run 1 ran your own code \(an agent program, a verifiers environment or an OpenEnv server's command\).* cannot be forked/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
