// An agent framework from npm as the program of env "agent": the OpenAI Agents SDK (@openai/agents), its
// chat-completions model over the official client, one function tool with a zod schema
// (test/fixtures/agents/agentsSdk.mjs). The real endpoint and a real model serve every request: a
// scripted chat model (Qwen's tokenizer and chat template, weights set so that it answers every request
// with the same Hermes tool call, which a random model never writes), so the SDK's own tool loop runs
// end to end: it reads the call from the endpoint's answer, checks the arguments against the schema,
// runs the tool and sends the result back as a `tool` message, which continues the episode's sequence;
// the tool's result is the final output, rewarded, and the episode is stored as turns and trained.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { validateRunConfig, type RunConfig } from '../../src/shared/runConfig';
import type { AgentMessage, Trajectory } from '../../src/shared/types';
import { openEnvironment } from '../../src/rl/envs/registry';
import type { RunEnvironment } from '../../src/rl/envs/environment';
import { createPolicy } from '../../src/rl/policies/createPolicy';
import { initBackend } from '../../src/rl/policies/lm/models/tfjsBackend';
import { trajectorySequences, type TransformerPolicy } from '../../src/rl/policies/lm/transformerPolicy';
import { Rng } from '../../src/rl/random';
import { runEpisodes } from '../../src/rl/rollout/agentLoop';
import { Learner } from '../../src/rl/train/learner';
import { policyRunInfo } from '../../src/rl/train/trainingRun';
import { ROOT } from '../helpers/cli';
import { scriptedChatModel } from '../helpers/freshPolicy';

const AGENTS = path.join(ROOT, 'test', 'fixtures', 'agents');
/** What the scripted model answers every request with: a call of the program's `add` tool, in Qwen's (Hermes) format. */
const CALL = '<tool_call>{"name":"add","arguments":{"numbers":[2,3]}}</tool_call>';
let model = '';
let run: RunEnvironment | undefined;

before(async () => {
  await initBackend('wasm');
  model = scriptedChatModel(CALL);
});

after(async () => {
  await run?.dispose();
});

function config(): RunConfig {
  return validateRunConfig({
    env: 'agent',
    policy: 'transformer',
    method: 'grpo',
    seed: 5,
    groupSize: 2,
    groupsPerIteration: 1,
    algorithm: { warmupSteps: 0, minibatchSize: 0, skipZeroAdvantage: false, learningRate: 1e-2 },
    envOptions: { root: AGENTS, command: ['node', 'agentsSdk.mjs'], tasks: 'sums.jsonl' },
    policyOptions: { model, loraRank: 4, loraAlpha: 8, maxNewTokens: 32, contextLength: 2048 },
  });
}

interface Printed {
  readonly answer: string;
  readonly calls: number[][];
  readonly items: string[];
  readonly fetched: string[];
}

describe('an agent framework from npm as your agent program (the OpenAI Agents SDK)', () => {
  it('a function tool round trip through the SDK’s own loop: the tool schema reaches the template, the result comes back as a tool message continuing the sequence, and the episode is stored, rewarded and trained', async () => {
    const cfg = config();
    run = await openEnvironment(cfg);
    const policy = (await createPolicy(cfg, policyRunInfo(cfg), run)) as TransformerPolicy;
    const task = run.tasks().train[0]!;
    const ts: Trajectory[] = await runEpisodes(
      Array.from({ length: cfg.groupSize }, (_, i) => ({ task, group: 0, indexInGroup: i })),
      () => run!.create(),
      policy,
      { maxTurns: 6, sampleRng: new Rng(3), verifierRng: new Rng(4) },
    );
    for (const t of ts) {
      const details = JSON.stringify(t.outcome.details);
      assert.equal(t.termination, 'finished', details);
      assert.equal(t.turns.length, 2, `two requests: the question, then the tool's result (${details})`);
      const [first, second] = t.turns;
      // the SDK's first request: its instructions as the system message, the task, the zod schema as a function tool
      const stored = (
        first!.action as { args: { request?: { messages: AgentMessage[]; tools: { function: { name: string; parameters: { properties?: unknown } } }[] } } }
      ).args.request;
      assert.deepEqual(
        stored?.messages.map((m) => [m.role, m.content]),
        [
          ['system', 'Add the numbers of the question with the add tool, then answer with the sum alone.'],
          ['user', 'What is 2 + 3?'],
        ],
      );
      assert.equal(stored?.tools.length, 1);
      const fn = stored?.tools[0]?.function;
      assert.equal(fn?.name, 'add');
      assert.deepEqual(fn?.parameters.properties, {
        numbers: { type: 'array', items: { type: 'number' } },
      });
      const prompt = policy.tokenizer.decode(first!.policy.tokens!.context);
      assert.match(prompt, /"name": "add"/, 'the function tool is rendered by the chat template');
      assert.match(prompt, /"numbers": \{"type": "array"/);
      // the model's answer, as sampled, is the call; the endpoint answered it as tool_calls
      assert.equal(first!.actionText, CALL);
      assert.equal(policy.tokenizer.decode(first!.policy.tokens!.sampled), `${CALL}<|im_end|>`);
      const action = first!.action as { kind: string; name: string; args: { calls: { id: string; name: string; arguments: string }[] } };
      assert.equal(action.name, 'add');
      assert.deepEqual(JSON.parse(action.args.calls[0]!.arguments), { numbers: [2, 3] });
      // the SDK ran the tool and sent its result back under the call's id: the second request continues the first
      assert.equal(second!.policy.tokens!.segment, undefined, 'the second request continues the first sequence');
      const kept = (first!.observation.data as { request: { continuesFrom: number; messages: AgentMessage[] } }).request;
      assert.equal(kept.continuesFrom, 3, 'system, user and the call are already in context');
      assert.deepEqual(
        kept.messages.map((m) => [m.role, m.content, m.toolCallId]),
        [['tool', '5', action.args.calls[0]!.id]],
      );
      assert.match(policy.tokenizer.decode(second!.policy.tokens!.context), /<tool_response>\n5\n<\/tool_response>/);
      // what the program printed: the SDK parsed both calls, validated them and ran the tool; the final output is its result
      const printed = (t.outcome.details as { extras: Printed }).extras;
      assert.deepEqual(printed.calls, [
        [2, 3],
        [2, 3],
      ]);
      assert.deepEqual(printed.items, ['tool_call_item', 'tool_call_output_item', 'tool_call_item', 'tool_call_output_item']);
      assert.equal(printed.answer, '5');
      assert.equal(t.outcome.reward, 1);
      assert.equal((t.outcome.details as { toolCalls: number }).toolCalls, 2);
      // nothing but the episode's endpoint was asked (no Responses API, no traces to api.openai.com)
      assert.equal(printed.fetched.length, 2, printed.fetched.join(', '));
      assert.doesNotMatch(String((t.outcome.details as { stderr?: string }).stderr), /refused/, 'nor anything else once the reward was printed');
      for (const url of printed.fetched) assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/episodes\/[^/]+\/v1\/chat\/completions$/);
    }
    // one GRPO update: one sequence per episode (the tool round trip continues it), a finite loss
    ts.forEach((t) => (t.advantage = t.indexInGroup === 0 ? 1 : -1));
    const learner = new Learner(policy, { method: 'grpo', settings: cfg.algorithm, totalSteps: 1, seed: 1, imitate: 'all' });
    const report = await learner.update(ts);
    assert.equal(report.excluded.no_trainable_positions ?? 0, 0, 'every episode had tokens to train');
    assert.ok(Number.isFinite(report.loss), `a finite loss (${report.loss})`);
    assert.equal(
      ts.reduce((n, t) => n + trajectorySequences(t).length, 0),
      ts.length,
      'one sequence per episode',
    );
  });
});
