// A verifiers 0.4 environment trained unchanged (env "verifiers"), against the real verifiers 0.4.0 from
// PyPI in its cached virtual environment (scripts/pythonVenv.mjs verifiers-0.4.0; .ci/run makes it, and
// without it these tests are skipped, saying so). 0.4 moved verifiers' stack to verifiers.v1: a module
// exports a vf.Taskset whose tasks' @vf.reward methods score, and verifiers' own SingleAgentEnv plays an
// episode with its chat harness (a uv script of its own), relaying each model call through its
// interception server to the policy's endpoint. Two tasksets written with that API
// (test/fixtures/verifiers/vf04_*.py): a single-turn one with two weighted rewards, and a tool one whose
// tool is a vf.Toolset (an MCP server verifiers starts) and whose @vf.stop ends it after two turns. The
// policy is a scripted chat model (it answers every request with one fixed text), so the rewards are
// known. Failures are errors naming the module: a 0.3 module on 0.4, a 0.4 module on 0.3.1, arguments
// the taskset's config refuses, a taskset larger than maxTasks, a reward that raises.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AgentMessage } from '../../src/shared/types';
import { openEnvironment } from '../../src/rl/envs/registry';
import type { TransformerPolicy } from '../../src/rl/policies/lm/transformerPolicy';
import { createPolicy } from '../../src/rl/policies/createPolicy';
import { initBackend } from '../../src/rl/policies/lm/models/tfjsBackend';
import { Learner } from '../../src/rl/train/learner';
import { policyRunInfo } from '../../src/rl/train/trainingRun';
import { runCli, tempDir } from '../helpers/cli';
import { extrasOf, VERIFIERS_FIXTURES, verifiersRuns, verifiersSkip, verifiersVenv } from '../helpers/verifiersRun';
import { scriptedChatModel } from '../helpers/freshPolicy';

const FIXTURES = VERIFIERS_FIXTURES;
const PYTHON = verifiersVenv('verifiers-0.4.0') ?? '';
const SKIP = verifiersSkip('verifiers-0.4.0');
/** The tool taskset's scripted answer: a call of its tool (verifiers names it <toolset>_<tool>) in Qwen's (Hermes) format. */
const CALL = '<tool_call>{"name":"add_toolset_add","arguments":{"numbers":[2,3]}}</tool_call>';

const { configFor, open, play, disposeAll } = verifiersRuns(PYTHON, { heldOutFraction: 0 });
after(disposeAll);

describe('a verifiers 0.4 environment (env "verifiers", verifiers.v1)', { skip: SKIP }, () => {
  before(async () => {
    await initBackend('wasm');
  });

  it('a single-turn taskset: its tasks are the rows, and its @vf.reward scores the episode’s reward and extras', async () => {
    const model = scriptedChatModel('apple');
    const cfg = configFor(model, 'vf04_echo', { args: { num_tasks: 6 } });
    const run = await open(cfg);
    const { train, heldOut } = run.tasks();
    assert.deepEqual(
      train.map((t) => [t.id, t.prompt]),
      ['apple', 'river', 'stone', 'cloud', 'lemon', 'tiger'].map((w, i) => [`vf04_echo:train:${i}`, `Say the word ${w}.`]),
    );
    assert.equal(heldOut.length, 0, 'no eval split in 0.4 and heldOutFraction 0: nothing held out');
    assert.match(
      run.preflight?.() ?? '',
      /vf04_echo\.EchoTaskset\(\*\*\{"num_tasks": 6\}\) \(a verifiers 0\.4\.0 taskset; harness null on verifiers' subprocess runtime\).*each episode verifiers' run_episode.*reward the weighted sum of its tasks' @vf\.reward methods$/,
    );
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
        assert.match(prompt, /Answer with one word\./, "the task's system prompt reached the template");
        assert.ok(prompt.includes(task.prompt), 'the task’s prompt is the request');
        assert.equal(t.turns[0]!.actionText, 'apple');
        assert.equal(t.outcome.reward, reward);
        assert.deepEqual(extrasOf(t), { said_it: saidIt, short: 1, num_turns: 1 });
        assert.equal(t.outcome.success, reward >= 1, 'success is the reward against successThreshold (1)');
      }
      ts.forEach((t) => (t.advantage = t.indexInGroup === 0 ? 1 : -1));
      const report = await new Learner(policy, { method: 'grpo', settings: cfg.algorithm, totalSteps: 1, seed: 1, imitate: 'all' }).update(ts);
      assert.equal(report.excluded.no_trainable_positions ?? 0, 0);
      assert.ok(Number.isFinite(report.loss));
    }
  });

  it('a tool taskset (a vf.Toolset): verifiers runs the parsed call on its MCP server, and its result continues the sequence', async () => {
    const model = scriptedChatModel(CALL);
    const cfg = configFor(model, 'vf04_tools');
    // the harness's self-check: each reward line counts the model clients verifiers' interception still
    // holds for episodes that have ended (one per episode, for the whole run, before the harness released them)
    process.env.AGENT_RL_VERIFIERS_SELF_CHECK = '1';
    const run = await open(cfg).finally(() => delete process.env.AGENT_RL_VERIFIERS_SELF_CHECK);
    assert.equal(run.tasks().train.length, 4);
    const policy = (await createPolicy(cfg, policyRunInfo(cfg), run)) as TransformerPolicy;
    const ts = await play(run, policy, run.tasks().train[0]!);
    for (const t of ts) {
      const details = JSON.stringify(t.outcome.details);
      assert.equal(t.termination, 'finished', details);
      assert.equal(t.turns.length, 2, `its @vf.stop after 2 turns: the call, its result, the call again (${details})`);
      const [first, second] = t.turns;
      const stored = (first!.action as { args: { request?: { tools: { function: { name: string } }[] } } }).args.request;
      assert.deepEqual(
        stored?.tools.map((x) => x.function.name),
        ['add_toolset_add'],
      );
      assert.equal(first!.actionText, CALL);
      assert.equal(second!.policy.tokens!.segment, undefined, 'one sequence');
      const kept = (first!.observation.data as { request: { messages: AgentMessage[] } }).request;
      assert.deepEqual(
        kept.messages.map((m) => [m.role, m.content]),
        [['tool', '5']],
      );
      assert.match(policy.tokenizer.decode(second!.policy.tokens!.context), /<tool_response>\n5\n<\/tool_response>/);
      assert.equal(extrasOf(t).correct, 0, 'its last reply is the call, not the sum');
      assert.equal(extrasOf(t).interception_clients_left, 0, 'each ended episode’s model client released');
      assert.equal(t.outcome.reward, 0);
    }
  });

  it('failures are errors naming the module: the other version’s module, arguments its config refuses, too many rows, a reward that raises', async () => {
    const model = scriptedChatModel('apple');
    await assert.rejects(
      openEnvironment(configFor(model, 'vf_echo')),
      /verifiers environment vf_echo: it is a verifiers 0\.3 environment \(load_environment.*has verifiers 0\.4\.0, whose API moved to verifiers\.v1\. Fix: install verifiers==0\.3\.1/,
    );
    await assert.rejects(
      openEnvironment(configFor(model, 'vf04_echo', { args: { nope: 1 } })),
      /verifiers environment vf04_echo: loading its taskset EchoTaskset with \{"nope": 1\} raised ValidationError.*Fix: check envOptions\.args/,
    );
    await assert.rejects(
      openEnvironment(configFor(model, 'vf04_echo', { maxTasks: 5 })),
      /verifiers environment vf04_echo: its taskset has more than the 5 rows the run takes \(envOptions\.maxTasks\)\. Fix: load fewer rows/,
    );
    const broken = configFor(model, 'vf04_echo', { args: { task: { broken_reward: true } } });
    const run = await open(broken);
    const policy = (await createPolicy(broken, policyRunInfo(broken), run)) as TransformerPolicy;
    for (const t of await play(run, policy, run.tasks().train[0]!, 1)) {
      assert.equal(t.termination, 'env_error');
      assert.equal(t.outcome.reward, 0);
      assert.match(
        String((t.outcome.details as { verifierError?: unknown }).verifierError),
        /verifiers environment vf04_echo: its rewards raised on task vf04_echo:train:0 \(TaskError: task EchoTask scoring: ValueError: the scorer's table is missing/,
      );
    }
  });

  const old = verifiersVenv('verifiers-0.3.1');
  it(
    'a 0.4 taskset on a 0.3.1 interpreter is an error naming the version it needs, a module or a package',
    {
      skip: verifiersSkip('verifiers-0.3.1'),
    },
    async () => {
      await assert.rejects(
        openEnvironment(configFor(scriptedChatModel('apple'), 'vf04_echo', { python: old })),
        /verifiers environment vf04_echo: it is a verifiers 0\.4 environment \(a verifiers\.v1 taskset\), and this Python .* has verifiers 0\.3\.1.*Fix: install verifiers==0\.4\.0/,
      );
      // a package whose __init__.py only re-exports the taskset from a submodule: read by its files
      await assert.rejects(
        openEnvironment(configFor(scriptedChatModel('apple'), 'vf04_pkg', { python: old })),
        /verifiers environment vf04_pkg: it is a verifiers 0\.4 environment .*has verifiers 0\.3\.1.*Fix: install verifiers==0\.4\.0/,
      );
    },
  );

  it('refused before the run: a harness that executes code (a bash subclass under another name), a tool server off this machine', async () => {
    const model = scriptedChatModel('apple');
    await assert.rejects(
      openEnvironment(configFor(model, 'vf04_shell')),
      /verifiers environment vf04_shell: its harness 'vf04_shell' \(ShellHarness\) hands the model code execution \(EXECUTES_CODE\).*Fix: train a taskset whose harness is a tool-less chat loop/,
    );
    await assert.rejects(
      openEnvironment(configFor(model, 'vf04_tools', { args: { task: { tools: { runtime: { type: 'docker' } } } } })),
      /verifiers environment vf04_tools: its tool server AddToolset asks for the docker runtime.*Fix: leave the tool servers' runtime at subprocess/,
    );
  });

  it('a short run through the CLI completes', () => {
    const dir = tempDir();
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
        envOptions: { root: FIXTURES, module: 'vf04_echo', python: PYTHON, heldOutFraction: 0.5 },
        policyOptions: { model: scriptedChatModel('apple'), loraRank: 4, maxNewTokens: 8, contextLength: 2048 },
      }),
    );
    const r = runCli(['train', '--config', cfg, '--db', path.join(dir, 'runs.db')], dir, undefined, 300_000);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /completed/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
