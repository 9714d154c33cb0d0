// Your own agent program as the environment (env "agent"), with real clients against the real endpoint
// and a real model (a fresh one-layer Qwen3-shaped checkpoint with Qwen's tokenizer and chat template):
// the official `openai` npm client (the example's calculator agent with a function tool; a follow-up
// program streaming and not, asking for log-probs) and a Python program using only `requests`. Each
// episode is stored as turns with the exact ids, and trained. Where the program keeps its history, the
// ids the model saw for its last request are the chat template's rendering of that conversation
// (never re-encoded turns); where it rewrites its history, the request starts a new segment, trained
// as its own sequence. A program that prints no reward line, or dies, is the environment's failure, and
// so is a request its chat template refuses (that episode alone); a config without a model, or for
// imitation, is refused; a stored agent run is never forked or rescored.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { storedRequest } from '../../src/shared/agentRequestView';
import { validateRunConfig, type RunConfig } from '../../src/shared/runConfig';
import type { Trajectory } from '../../src/shared/types';
import { openEnvironment } from '../../src/rl/envs/registry';
import type { RunEnvironment } from '../../src/rl/envs/environment';
import { createPolicy } from '../../src/rl/policies/createPolicy';
import { referenceAgentFor } from '../../src/rl/policies/scripted/demonstrations';
import { initBackend } from '../../src/rl/policies/lm/models/tfjsBackend';
import { HfTokenizer } from '../../src/rl/policies/lm/tokenizer';
import { trajectorySequences, type TransformerPolicy } from '../../src/rl/policies/lm/transformerPolicy';
import { Rng } from '../../src/rl/random';
import { runEpisodes } from '../../src/rl/rollout/agentLoop';
import { Learner } from '../../src/rl/train/learner';
import { policyRunInfo } from '../../src/rl/train/trainingRun';
import { ROOT, runCli, tempDir } from '../helpers/cli';
import { freshChatModel } from '../helpers/freshPolicy';

const AGENTS = path.join(ROOT, 'test', 'fixtures', 'agents');
let model = '';

before(async () => {
  await initBackend('wasm');
  model = freshChatModel();
});

const opened: RunEnvironment[] = [];
after(async () => {
  await Promise.all(opened.map((e) => e.dispose()));
});

function configFor(command: readonly string[], root = AGENTS, extra: Record<string, unknown> = {}): RunConfig {
  return validateRunConfig({
    env: 'agent',
    policy: 'transformer',
    method: 'grpo',
    seed: 11,
    groupSize: 2,
    groupsPerIteration: 1,
    algorithm: { warmupSteps: 0, minibatchSize: 0, skipZeroAdvantage: false, learningRate: 1e-2 },
    envOptions: { root, command, tasks: 'tasks.jsonl', ...extra },
    policyOptions: { model, loraRank: 4, loraAlpha: 8, maxNewTokens: 16, contextLength: 2048 },
  });
}

/** Runs G episodes of the first training task through the agent loop; returns the trajectories, the policy and the environment. */
async function episodes(config: RunConfig, env?: Record<string, string>) {
  const saved = { ...process.env };
  Object.assign(process.env, env ?? {});
  try {
    const run = await openEnvironment(config);
    opened.push(run);
    const policy = (await createPolicy(config, policyRunInfo(config), run)) as TransformerPolicy;
    const task = run.tasks().train[0]!;
    const ts = await runEpisodes(
      Array.from({ length: config.groupSize }, (_, i) => ({ task, group: 0, indexInGroup: i })),
      () => run.create(),
      policy,
      { maxTurns: 6, sampleRng: new Rng(3), verifierRng: new Rng(4) },
    );
    return { ts, policy, run };
  } finally {
    process.env = saved;
  }
}

/** One GRPO update on the trajectories (advantages from their rewards); the number of sequences trained. */
async function train(policy: TransformerPolicy, config: RunConfig, ts: Trajectory[]): Promise<number> {
  const rewards = ts.map((t) => t.outcome.reward);
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  ts.forEach((t) => (t.advantage = t.outcome.reward - mean || (t.indexInGroup === 0 ? 1 : -1)));
  const learner = new Learner(policy, { method: 'grpo', settings: config.algorithm, totalSteps: 1, seed: 1, imitate: 'all' });
  const report = await learner.update(ts);
  assert.equal(report.excluded.no_trainable_positions ?? 0, 0, 'every episode had tokens to train');
  assert.ok(Number.isFinite(report.loss), `a finite loss (${report.loss})`);
  return ts.reduce((n, t) => n + trajectorySequences(t).length, 0);
}

describe('your own agent program (env "agent")', () => {
  it('the example calculator agent (openai client, a function tool) runs unchanged: the tools reach the template, the episode is stored as turns with its reward, and it trains', async () => {
    const config = configFor(['node', 'agent.ts'], path.join(ROOT, 'examples', 'own-agent'));
    const { ts, policy } = await episodes(config);
    for (const t of ts) {
      assert.notEqual(t.termination, 'env_error', JSON.stringify(t.outcome.details));
      assert.ok(t.turns.length >= 1);
      const first = t.turns[0]!.policy.tokens!;
      const prompt = policy.tokenizer.decode(first.context);
      assert.match(prompt, /"name": "calculate"/, 'the request’s function tool is rendered by the chat template');
      assert.match(prompt, /What is \(/, 'the task reached the program and its request');
      // the first request is kept with the first turn (each later one is the observation of the turn before it)
      const stored = (t.turns[0]!.action as { args: { request?: { messages: { role: string }[]; tools: unknown[] } } }).args.request;
      assert.deepEqual(
        stored?.messages.map((m) => m.role),
        ['system', 'user'],
      );
      assert.equal(stored?.tools.length, 1);
      assert.deepEqual(Object.keys(t.outcome.details ?? {}).includes('extras'), true, 'the program’s printed extras are kept');
      assert.ok([0, 1].includes(t.outcome.reward));
    }
    assert.ok((await train(policy, config, ts)) >= 2);
  });

  it('a program that keeps its history continues one sequence: the ids of its last request are the template’s rendering of that conversation', async () => {
    const config = configFor(['node', 'followUp.mjs']);
    const { ts, policy } = await episodes(config, { AGENT_MODE: 'keep' });
    const tok = HfTokenizer.fromDirectory(model);
    for (const t of ts) {
      assert.equal(t.turns.length, 2, JSON.stringify(t.outcome.details));
      const [a, b] = t.turns.map((u) => u.policy.tokens!);
      assert.ok(!b!.segment, 'the second request continues the first');
      // the second request is what the environment answered the first turn with
      const second = t.turns[0]!.observation.request!;
      assert.equal(second.continuesFrom, 3, 'system, user and the answer are already in context');
      // stored with the turn (its data): only what the request added to the context
      const kept = (t.turns[0]!.observation.data as { request: { continuesFrom: number; messages: { role: string; content: string }[] } }).request;
      assert.equal(kept.continuesFrom, 3);
      assert.deepEqual(
        kept.messages.map((m) => [m.role, m.content]),
        [['user', 'Say it again, shorter.']],
      );
      const rendered = tok.renderChat(
        second.messages.map((m) => ({
          role: m.role,
          content: m.content,
          ...(m.toolCalls
            ? {
                tool_calls: m.toolCalls.map((c) => ({
                  id: c.id,
                  type: 'function' as const,
                  function: { name: c.name, arguments: JSON.parse(c.arguments) as unknown },
                })),
              }
            : {}),
          ...(m.toolCallId ? { tool_call_id: m.toolCallId } : {}),
        })),
        { addGenerationPrompt: true, tools: second.tools },
      );
      assert.equal(tok.decode([...a!.context, ...a!.sampled, ...b!.context]), rendered, 'token for token: nothing re-encoded, nothing lost');
      // replay rebuilds the same conversation from what the turns store (compact: only what each request added)
      const rebuilt = storedRequest(
        t.turns.map((u) => ({ action: u.action, observation: u.observation.data })),
        1,
      );
      assert.ok(typeof rebuilt !== 'string', typeof rebuilt === 'string' ? rebuilt : '');
      assert.deepEqual(rebuilt.messages, second.messages);
      assert.deepEqual(rebuilt.tools, second.tools);
      assert.equal(rebuilt.maxTokens, 12);
      const printed = (t.outcome.details as { extras: { logprobs: number; second: string } }).extras;
      assert.equal(printed.logprobs, b!.sampled.length, 'logprobs: one per sampled token of the answer');
      assert.ok(b!.sampled.length <= 12, 'max_tokens 12 held');
    }
    assert.equal(await train(policy, config, ts), ts.length, 'one sequence per episode');
  });

  it('a program that rewrites its history starts a new segment, trained as its own sequence; streaming answers the same way', async () => {
    const config = configFor(['node', 'followUp.mjs']);
    const { ts, policy } = await episodes(config, { AGENT_MODE: 'rewrite' });
    for (const t of ts) {
      assert.equal(t.turns.length, 2);
      const b = t.turns[1]!.policy.tokens!;
      assert.equal(b.segment, true);
      const why = t.turns[0]!.observation.request?.rewrite;
      assert.match(String(why), /message 1 \(user\) differs/);
      const text = policy.tokenizer.decode(b.context);
      assert.match(text, /^<\|im_start\|>system\nAnswer briefly\./, 'the new segment renders the whole conversation afresh');
    }
    assert.equal(await train(policy, config, ts), 2 * ts.length, 'two sequences per episode');
    const streamed = await episodes(config, { AGENT_MODE: 'stream' });
    for (const t of streamed.ts) {
      assert.equal(t.turns.length, 2, JSON.stringify(t.outcome.details));
      const printed = (t.outcome.details as { extras: { second: string } }).extras;
      assert.equal(printed.second, t.turns[1]!.actionText, 'the streamed text is the answer');
    }
  });

  it(
    'a Python program with only requests: a function tool, and a wrong key refused in OpenAI’s shape',
    { skip: !hasRequests() && 'python3 with requests is not installed (apt-get install python3-requests)' },
    async () => {
      const config = configFor(['python3', 'requests_agent.py']);
      const { ts } = await episodes(config);
      for (const t of ts) {
        assert.equal(t.outcome.reward, 1, JSON.stringify(t.outcome.details));
        const extras = (t.outcome.details as { extras: { finish: string; usage: { completion_tokens: number } } }).extras;
        assert.ok(['stop', 'length', 'tool_calls'].includes(extras.finish));
        assert.equal(extras.usage.completion_tokens, t.turns[0]!.policy.tokens!.sampled.length);
      }
    },
  );

  it('method sft: the task file’s demonstration answers each request through the program; the student imitates each answer, closed by the end-of-turn token', async () => {
    const grpo = configFor(['node', 'followUp.mjs']);
    const config = validateRunConfig({ ...grpo, method: 'sft', algorithm: { learningRate: 1e-2, minibatchSize: 0, warmupSteps: 0 } });
    const run = await openEnvironment(config);
    opened.push(run);
    const policy = (await createPolicy(config, policyRunInfo(config), run)) as TransformerPolicy;
    const demonstrator = policy.demonstrator(referenceAgentFor(config)!);
    const task = run.tasks().train[0]!;
    const ts = await runEpisodes(
      [0, 1].map((i) => ({ task, group: 0, indexInGroup: i })),
      () => run.create(),
      demonstrator,
      { maxTurns: 6, sampleRng: new Rng(3), verifierRng: new Rng(4) },
    );
    const eos = policy.tokenizer.encode('<|im_end|>');
    for (const t of ts) {
      assert.deepEqual(
        t.turns.map((u) => u.actionText),
        ['red', 'Red.'],
        JSON.stringify(t.outcome.details),
      );
      const printed = (t.outcome.details as { extras: { first: string; second: string } }).extras;
      assert.deepEqual([printed.first, printed.second], ['red', 'Red.'], 'the program got the demonstration as the answers');
      const [a, b] = t.turns.map((u) => u.policy.tokens!);
      assert.deepEqual(a!.sampled, [...policy.tokenizer.encode('red'), ...eos], 'an answer ends with the end-of-turn token');
      assert.ok(!b!.segment, 'the second request continues the first');
      // the same ids the policy's own sampling would have had as context: the template's rendering
      const second = t.turns[0]!.observation.request!;
      assert.equal(
        policy.tokenizer.decode([...a!.context, ...a!.sampled, ...b!.context]),
        HfTokenizer.fromDirectory(model).renderChat(
          second.messages.map((m) => ({ role: m.role, content: m.content })),
          { addGenerationPrompt: true, tools: second.tools },
        ),
      );
    }
    const learner = new Learner(policy, { method: 'sft', settings: config.algorithm, totalSteps: 1, seed: 1, imitate: 'all' });
    const report = await learner.update(ts);
    assert.ok(Number.isFinite(report.loss) && report.loss > 0, `a finite imitation loss (${report.loss})`);
  });

  it('envOptions.concurrency caps the programs running at once: more episodes than that run on the concurrent schedule', async () => {
    const dir = tempDir('agent-rl-agent-cap-');
    fs.copyFileSync(path.join(AGENTS, 'tasks.jsonl'), path.join(dir, 'tasks.jsonl'));
    const log = path.join(dir, 'open.log');
    fs.writeFileSync(
      path.join(dir, 'logged.mjs'),
      [
        "import fs from 'node:fs';",
        `fs.appendFileSync(${JSON.stringify(log)}, '+\\n');`,
        "const r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST', headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }) });",
        `fs.appendFileSync(${JSON.stringify(log)}, '-\\n');`,
        'console.log(JSON.stringify({ reward: r.status === 200 ? 1 : 0 }));',
        '',
      ].join('\n'),
    );
    const config = configFor(['node', 'logged.mjs'], dir, { concurrency: 2 });
    const run = await openEnvironment(config);
    opened.push(run);
    assert.equal(run.maxOpen, 2);
    const policy = (await createPolicy(config, policyRunInfo(config), run)) as TransformerPolicy;
    const task = run.tasks().train[0]!;
    const ts = await runEpisodes(
      Array.from({ length: 6 }, (_, i) => ({ task, group: 0, indexInGroup: i })),
      () => run.create(),
      policy,
      { maxTurns: 4, sampleRng: new Rng(3), verifierRng: new Rng(4), maxOpen: run.maxOpen },
    );
    assert.deepEqual(
      ts.map((t) => t.outcome.reward),
      [1, 1, 1, 1, 1, 1],
    );
    let open = 0;
    let most = 0;
    for (const e of fs.readFileSync(log, 'utf8').trim().split('\n')) {
      open += e === '+' ? 1 : -1;
      most = Math.max(most, open);
    }
    assert.equal(most, 2, 'never more than two programs at once, and two at once');
  });

  it('a reward file scores the final conversation in the sandbox (the program’s printed line reaches it as data); one that cannot score is refused before the run', async () => {
    const config = configFor(['node', 'followUp.mjs'], AGENTS, { reward: 'reward.py' });
    const { ts, run } = await episodes(config, { AGENT_MODE: 'keep' });
    assert.match(run.preflight?.() ?? '', /reward reward\.py \(sandbox level/);
    for (const t of ts) {
      assert.equal(t.turns.length, 2, JSON.stringify(t.outcome.details));
      const d = t.outcome.details as { answer: string | null; extras: { messages: number; roles: string; printed_second: string; exit_code: number } };
      // system, user, answer, user, then the policy's last answer: the final conversation
      assert.equal(d.extras.roles, 'suaua');
      assert.equal(d.extras.messages, 5);
      assert.equal(d.extras.printed_second, t.turns[1]!.actionText, 'the program’s printed JSON line is the reward’s data');
      assert.equal(d.extras.exit_code, 0);
      assert.equal(t.outcome.reward, (d.answer ?? '').includes('red') ? 1 : 0, 'the reward is the file’s score, not the program’s line');
    }
    const dir = tempDir('agent-rl-agent-reward-');
    fs.copyFileSync(path.join(AGENTS, 'tasks.jsonl'), path.join(dir, 'tasks.jsonl'));
    fs.writeFileSync(path.join(dir, 'raises.py'), 'def reward(task, trajectory):\n    return trajectory["nope"]\n');
    fs.writeFileSync(path.join(dir, 'none.py'), 'def score(task, trajectory):\n    return 1\n');
    await assert.rejects(
      openEnvironment(configFor(['node', 'followUp.mjs'], dir, { reward: 'raises.py' })),
      /raises\.py: reward\(\) raised:[\s\S]*KeyError[\s\S]*checked on an empty episode of task/,
    );
    await assert.rejects(
      openEnvironment(configFor(['node', 'followUp.mjs'], dir, { reward: 'none.py' })),
      /none\.py defines no function reward\(task, trajectory\)/,
    );
    await assert.rejects(
      openEnvironment(configFor(['node', 'followUp.mjs'], dir, { reward: 'missing.py' })),
      /envOptions\.reward: cannot read .*missing\.py \(ENOENT\)/,
    );
    assert.throws(() => configFor(['node', 'followUp.mjs'], dir, { reward: 'score.txt' }), /envOptions\.reward/);
  });

  it('a program that prints no reward line, or dies before asking, is the environment’s failure, with its stderr; stored runs never start a program', async () => {
    const dir = tempDir('agent-rl-agent-bad-');
    fs.copyFileSync(path.join(AGENTS, 'tasks.jsonl'), path.join(dir, 'tasks.jsonl'));
    fs.writeFileSync(path.join(dir, 'silent.mjs'), "process.stdin.resume(); process.stdin.on('end', () => console.log('no reward here'));\n");
    fs.writeFileSync(path.join(dir, 'dies.mjs'), "console.error('boom: no model today'); process.exit(3);\n");
    // a request the chat template refuses (raise_exception): that episode fails, the batch goes on. The
    // model's template, copied, refuses a message whose text is RAISE.
    const strict = path.join(dir, 'strict-model');
    fs.cpSync(model, strict, { recursive: true });
    const tc = JSON.parse(fs.readFileSync(path.join(strict, 'tokenizer_config.json'), 'utf8')) as { chat_template: string };
    tc.chat_template = `{%- for m in messages %}{%- if m.content == 'RAISE' %}{{ raise_exception('no such conversation') }}{%- endif %}{%- endfor %}${tc.chat_template}`;
    fs.writeFileSync(path.join(strict, 'tokenizer_config.json'), JSON.stringify(tc));
    fs.writeFileSync(
      path.join(dir, 'raises.mjs'),
      `const content = process.env.AGENT_RAISE === '1' ? 'RAISE' : 'hello';\nconst r = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', { method: 'POST', headers: { authorization: 'Bearer ' + process.env.OPENAI_API_KEY, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content }] }) });\nconsole.log(JSON.stringify({ reward: r.status === 200 ? 1 : 0 }));\n`,
    );
    const strictConfig = validateRunConfig({
      ...configFor(['node', 'raises.mjs'], dir),
      policyOptions: { ...configFor(['node', 'raises.mjs'], dir).policyOptions, model: strict },
    });
    const refused = await episodes(strictConfig, { AGENT_RAISE: '1' });
    for (const t of refused.ts) {
      assert.equal(t.termination, 'env_error');
      assert.match(String((t.outcome.details as { envError?: unknown }).envError), /the chat template cannot render this request \(.*no such conversation/);
    }
    const answered = await episodes(strictConfig, { AGENT_RAISE: '0' });
    assert.deepEqual(
      answered.ts.map((t) => t.outcome.reward),
      [1, 1],
      'the same template answers other requests',
    );
    for (const [file, why] of [
      ['silent.mjs', /ended before its first request to the policy \(exit code 0\)/],
      ['dies.mjs', /ended before its first request to the policy \(exit code 3\); its stderr ends: boom: no model today/],
    ] as const) {
      const { ts } = await episodes(configFor(['node', file], dir));
      for (const t of ts) {
        assert.equal(t.termination, 'env_error');
        assert.equal(t.turns.length, 0);
        assert.equal(t.outcome.reward, 0);
        assert.match(String((t.outcome.details as { envError?: unknown } | undefined)?.envError), why);
      }
    }
    // a config without a model, or asking for imitation, is refused before anything starts
    assert.throws(
      () => validateRunConfig({ env: 'agent', policy: 'transformer', envOptions: { command: ['node', 'a.mjs'], tasks: 't.jsonl' } }),
      /policyOptions\.model/,
    );
    // the CLI: a whole run, then forking or rescoring it is refused without starting anything
    const db = path.join(dir, 'runs.db');
    const cfg = path.join(dir, 'run.json');
    fs.writeFileSync(
      cfg,
      JSON.stringify({
        env: 'agent',
        policy: 'transformer',
        iterations: 1,
        groupsPerIteration: 1,
        groupSize: 2,
        evalEpisodes: 0,
        envOptions: { root: AGENTS, command: ['node', 'followUp.mjs'], tasks: 'tasks.jsonl' },
        policyOptions: { model, loraRank: 4, maxNewTokens: 8, contextLength: 2048 },
      }),
    );
    const r = runCli(['train', '--config', cfg, '--db', db], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /completed/);
    const forked = runCli(['train', '--fork', '1', '--at', '1', '--db', db], dir);
    assert.notEqual(forked.code, 0);
    assert.match(
      forked.stderr,
      /run 1 ran your own code \(an agent program, a verifiers environment or an OpenEnv server's command\), and such code is never started from what a run stored .* cannot be forked/,
    );
    const rescored = runCli(['rescore', '1', '--db', db], dir);
    assert.notEqual(rescored.code, 0);
    assert.match(rescored.stderr, /cannot be rescored from its record/);
    // replay of one request: sent again to the run's saved checkpoint, no program started (the fixture
    // program, run, would print "followUp:" to stderr; nothing here reads a stderr the program wrote)
    const again = runCli(['request', '1', '--turn', '1', '--greedy', '--db', db, '--json'], dir);
    assert.equal(again.code, 0, again.stderr);
    const answer = JSON.parse(again.stdout) as {
      turn: number;
      messages: number;
      checkpoint: string;
      stored: string;
      completionTokens: number;
      greedy: boolean;
    };
    assert.equal(answer.turn, 1);
    assert.equal(answer.messages, 4, 'system, user, the answer, the follow-up: the whole conversation rebuilt from the stored turns');
    assert.equal(answer.checkpoint, path.join(dir, 'checkpoints', 'runs', 'run-1'));
    assert.ok(answer.completionTokens >= 1 && answer.completionTokens <= 12, 'the stored max_tokens (12) holds');
    const twice = runCli(['request', '1', '--turn', '1', '--greedy', '--db', db, '--json'], dir);
    assert.equal((JSON.parse(twice.stdout) as { text: string }).text, (JSON.parse(again.stdout) as { text: string }).text, 'greedy: the same answer twice');
    const printed = runCli(['request', '1', '--db', db], dir);
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^trajectory 1 turn 1 \(run 1\): 4 messages, tools lookup, sent again to .* \(sampled\)\n {2}stored answer: /);
    const beyond = runCli(['request', '1', '--turn', '9', '--db', db], dir);
    assert.equal(beyond.code, 2);
    assert.match(beyond.stderr, /^agent-rl: trajectory 1: turn 9 is not one of the trajectory's 2 turns\n$/);
    fs.rmSync(path.join(dir, 'checkpoints'), { recursive: true });
    const gone = runCli(['request', '1', '--db', db], dir);
    assert.equal(gone.code, 2);
    assert.match(gone.stderr, /run 1 has no saved checkpoint at .*Fix: give a checkpoint folder \(--checkpoint DIR\)/);
  });
});

function hasRequests(): boolean {
  return spawnSync('python3', ['-c', 'import requests'], { stdio: 'ignore' }).status === 0;
}
