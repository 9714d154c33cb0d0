// A Hugging Face checkpoint as the policy, on the random-weight fixtures (test/fixtures/hf): GRPO with
// LoRA through the code environment's sandbox, checkpoints, the memory plan, and the chat template
// token for token.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Observation, Trajectory } from '../../src/shared/types';
import { validateRunConfig, type RunConfig } from '../../src/shared/runConfig';
import { policyRunInfo } from '../../src/rl/train/trainingRun';
import { calculatorEnv, codeEnv, disposeOpened } from '../helpers/environments';
import { ChatFormat } from '../../src/rl/policies/lm/chatFormat';
import { generationEos } from '../../src/rl/policies/lm/generationConfig';
import { HfModel } from '../../src/rl/policies/lm/models/hfModel';
import { EngineModel } from '../../src/rl/policies/lm/models/engine/engineModel';
import { modelExport } from '../../src/cli/modelExportCommand';
import { createPolicy } from '../../src/rl/policies/createPolicy';
import { readCheckpoint } from '../../src/rl/policies/lm/checkpoint';
import { initBackend } from '../../src/rl/policies/lm/models/tfjsBackend';
import { HfTokenizer, renderChatTemplate } from '../../src/rl/policies/lm/tokenizer';
import { trajectorySequence, type TransformerPolicy } from '../../src/rl/policies/lm/transformerPolicy';
import { runEpisodes } from '../../src/rl/rollout/agentLoop';
import { Learner } from '../../src/rl/train/learner';
import { Rng } from '../../src/rl/random';
import { runCli, tempDir } from '../helpers/cli';
import { HF_FIXTURES, hfFixtureConfig } from '../helpers/hfFixtureConfig';

const FIXTURES = HF_FIXTURES;

const configFor = (family: string, extra: Record<string, unknown> = {}): RunConfig => hfFixtureConfig(family, extra);

async function data(t: tf.Tensor): Promise<Float32Array> {
  return (await t.data()) as Float32Array;
}

async function logitsOf(model: HfModel | EngineModel, ids: number[]): Promise<Float32Array> {
  if (model instanceof EngineModel) return model.positionLogits(ids);
  const input = tf.tensor2d([ids], [1, ids.length], 'int32');
  const out = model.forward(input);
  const d = await data(out);
  tf.dispose([input, out]);
  return d;
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

before(async () => {
  await initBackend('auto');
});
after(() => disposeOpened());

describe('a Hugging Face checkpoint as the policy', () => {
  for (const family of ['qwen2', 'llama', 'gpt2']) {
    it(`${family}: a GRPO update with LoRA on code-environment episodes changes only the adapters; its checkpoint round-trips`, async () => {
      const config = configFor(family);
      const env = codeEnv();
      const policy = (await createPolicy(config, policyRunInfo(config), env)) as TransformerPolicy<HfModel | EngineModel>;
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-policy-'));
      try {
        assert.match(policy.compute, new RegExp(`${family} [\\d,]+ parameters, LoRA rank 4, [\\d,]+ trained`));
        const model = policy.model;
        // qwen2 and llama run on the wasm engine (its base weights in the engine's memory), gpt2 on tfjs ops
        assert.equal(model instanceof EngineModel, family !== 'gpt2');
        if (model instanceof EngineModel) assert.match(policy.compute, /^wasm engine \(\d+ threads/);
        const base = new Map<string, Float32Array>();
        const baseDigest = model instanceof EngineModel ? model.engine.baseDigest() : '';
        if (model instanceof HfModel) for (const [name, t] of model.baseTensors()) base.set(name, await data(t));
        const adaptersBefore = await Promise.all(model.weights.map(data));
        const task = env.tasks().train[0]!;
        const trajectories = await runEpisodes(
          Array.from({ length: 4 }, (_, i) => ({ task, group: 0, indexInGroup: i })),
          () => env.create(),
          policy,
          { maxTurns: 2, sampleRng: new Rng(11), verifierRng: new Rng(0) },
        );
        // the episodes ran in the sandbox: every turn holds the ids it was sampled as
        assert.ok(trajectories.every((t) => t.turns.length > 0 && t.turns.every((turn) => turn.policy.tokens && turn.policy.tokens.sampled.length > 0)));
        // random weights never pass a code task, so every group's rewards would be equal (advantage 0):
        // the advantages are set by hand to give the update something to push
        const pushed: Trajectory[] = trajectories.map((t, i) => ({ ...t, advantage: i % 2 === 0 ? 1 : -1 }));
        const probe = trajectorySequence(pushed[0]!)!.inputs.slice(0, 40);
        const referenceBefore = await logitsOf(policy.reference, probe);
        const modelBefore = await logitsOf(model, probe);
        const learner = new Learner(policy, { method: 'grpo', settings: config.algorithm, imitate: 'all', totalSteps: 10, seed: 1 });
        const report = await learner.update(pushed);
        assert.ok(report.optimizerSteps >= 1, JSON.stringify(report));
        assert.ok(Number.isFinite(report.loss));
        assert.ok(report.logprobMismatch !== undefined && report.logprobMismatch < 1e-4, `sampling and training log-probs differ by ${report.logprobMismatch}`);
        const adaptersAfter = await Promise.all(model.weights.map(data));
        assert.ok(
          adaptersAfter.some((a, i) => maxDiff(a, adaptersBefore[i]!) > 0),
          'the adapters moved',
        );
        if (model instanceof HfModel)
          for (const [name, t] of model.baseTensors()) assert.equal(maxDiff(await data(t), base.get(name)!), 0, `base weight ${name} changed`);
        else assert.equal(model.engine.baseDigest(), baseDigest, 'the base weights in the engine changed');
        assert.ok(maxDiff(await logitsOf(model, probe), modelBefore) > 1e-5, 'the policy changed');
        assert.equal(maxDiff(await logitsOf(policy.reference, probe), referenceBefore), 0, 'the KL reference stayed the base model');

        // checkpoint: the adapters and their AdamW moments only, and the base folder by name
        const ckDir = path.join(tmp, 'ck');
        await policy.save(ckDir, 'test');
        const ck = readCheckpoint(ckDir);
        assert.equal((ck.manifest.model as { kind: string }).kind, 'hf');
        assert.equal((ck.manifest.model as { dir: string }).dir, path.join(FIXTURES, family));
        assert.ok(
          ck.manifest.tensors.every((t) => /lora_[AB]$/.test(t.name)),
          'only adapter tensors are stored',
        );
        assert.equal(ck.manifest.tensors.length, 3 * model.weights.length);
        const again = (await createPolicy(configFor(family, { init: ckDir }), policyRunInfo(config), env)) as TransformerPolicy<HfModel | EngineModel>;
        try {
          assert.ok(maxDiff(await logitsOf(again.model, probe), await logitsOf(model, probe)) < 1e-6, 'the restored policy computes what the trained one does');
          // a warm start's reference is the warm-started model
          assert.ok(maxDiff(await logitsOf(again.reference, probe), await logitsOf(model, probe)) < 1e-6);
        } finally {
          await again.dispose();
        }
        // export: the adapters merged into the weights, a folder any Hugging Face loader reads
        const exported = path.join(tmp, 'merged');
        await modelExport(ckDir, exported);
        const merged = HfModel.load(exported);
        try {
          assert.ok(maxDiff(await logitsOf(merged, probe), await logitsOf(model, probe)) < 1e-4, 'the merged model computes what the adapted one does');
        } finally {
          merged.dispose();
        }
      } finally {
        await policy.dispose();
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    });
  }

  it('a LoRA target that is not a layer of the model is refused with the layers it has', async () => {
    await assert.rejects(
      createPolicy(configFor('qwen2', { loraTargets: 'q_proj,vproj' }), policyRunInfo(configFor('qwen2')), codeEnv()),
      /policyOptions\.loraTargets: "vproj" is not a linear layer of a qwen2 model\. Fix: use some of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, or all-linear/,
    );
  });

  it('constrained decoding runs on a Hugging Face model through its chat template (the end-of-turn token closes each action), and is refused for an environment without an action grammar', async () => {
    const config = validateRunConfig({
      env: 'calculator',
      policy: 'transformer',
      method: 'grpo',
      policyOptions: { model: path.join(FIXTURES, 'qwen2'), constrainedDecoding: true, backend: 'wasm', contextLength: 256 },
    });
    const policy = (await createPolicy(config, policyRunInfo(config), calculatorEnv())) as TransformerPolicy;
    try {
      const c = policy.sampling.constraint!;
      const end = policy.tokenizer.encode('<|im_end|>');
      assert.equal(end.length, 1);
      let s = c.start();
      for (const id of [...policy.tokenizer.encode('<call>add(1,2)</call>'), ...end]) s = c.advance(s, id)!;
      assert.ok(c.finished(s), 'an action and its end-of-turn token end the row');
    } finally {
      await policy.dispose();
    }
    const small = validateRunConfig({ env: 'code', policy: 'transformer', method: 'grpo', policyOptions: { constrainedDecoding: true } });
    await assert.rejects(
      createPolicy(small, policyRunInfo(small), codeEnv()),
      /policyOptions\.constrainedDecoding: the environment "code" declares no action grammar \(the calculator does\)\. Fix: set it to false/,
    );
  });

  it('refuses a plan that cannot fit the backend before reading any weight, with the numbers and the ways out', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-big-'));
    try {
      // Qwen2.5-7B's config.json, no weights at all: the refusal comes before anything is read
      fs.writeFileSync(
        path.join(dir, 'config.json'),
        JSON.stringify({
          model_type: 'qwen2',
          hidden_size: 3584,
          intermediate_size: 18944,
          num_hidden_layers: 28,
          num_attention_heads: 28,
          num_key_value_heads: 4,
          vocab_size: 152064,
          max_position_embeddings: 32768,
          rope_theta: 1e6,
          rms_norm_eps: 1e-6,
          tie_word_embeddings: false,
        }),
      );
      const config = validateRunConfig({ env: 'code', policy: 'transformer', policyOptions: { model: dir, loraRank: 0, backend: 'wasm' } });
      await assert.rejects(createPolicy(config, policyRunInfo(config), codeEnv()), (e: Error) => {
        assert.match(e.message, /policyOptions\.model: .* does not fit one wasm engine/);
        assert.match(e.message, /full fine-tuning: the frozen reference's copy of every weight and their gradients/);
        // past wasm32's 4 GiB the plan is on a 64-bit memory where the runtime has one (16 GiB), and 7B does not fit that either
        assert.match(
          e.message,
          /total, of (16\.00 GiB \(one engine memory: memory64: |4\.00 GiB \(one engine memory: wasm32 only: this runtime has no 64-bit memory)/,
        );
        assert.match(e.message, /Ways out: LoRA \(policyOptions\.loraRank 8\).*tfjs-node/);
        assert.doesNotMatch(e.message, /weightDtype "bf16"/);
        return true;
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('chat templates, token in and token out', () => {
  it("a multi-turn Hermes episode's training sequence is, token for token, the template's rendering; mask 1 exactly on the assistant's tokens", () => {
    const dir = path.join(FIXTURES, 'qwen2');
    const tokenizer = HfTokenizer.fromDirectory(dir);
    const eos = generationEos(dir, tokenizer);
    assert.equal(tokenizer.decode([eos[0]!]), '<|im_end|>');
    const chat = new ChatFormat(tokenizer, eos);
    const tools = [
      {
        type: 'function',
        function: {
          name: 'add',
          description: 'Adds two integers.',
          parameters: { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'integer' } }, required: ['a', 'b'] },
        },
      },
    ];
    const first: Observation = { text: 'unused', data: {}, chat: { role: 'user', content: 'What is 2+3, then times 4?', tools } };
    const replies = [
      '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>',
      '<tool_call>\n{"name": "mul", "arguments": {"a": 5, "b": 4}}\n</tool_call>',
      'The answer is 20.',
    ];
    const results: Observation[] = [
      { text: '', data: {}, chat: { role: 'tool', content: '5' } },
      { text: '', data: {}, chat: { role: 'tool', content: 'error: unknown tool "mul"' } },
    ];
    // the policy's record: contexts from the chat format, the sampled ids as they were sampled (content, then the end of turn)
    const turns = replies.map((reply) => {
      const sampled = [...tokenizer.encode(reply), eos[0]!];
      return { sampled, reply };
    });
    const contexts: number[][] = [chat.first(first)];
    for (let i = 1; i < turns.length; i++) contexts.push(chat.next(results[i - 1]!, turns[i - 1]!.sampled));
    const trajectory = {
      taskId: 't',
      group: 0,
      indexInGroup: 0,
      termination: 'finished',
      advantage: 1,
      policyVersion: 0,
      outcome: { reward: 1, success: true, publicPass: true, privatePass: true },
      turns: turns.map((t, i) => ({
        index: i,
        observation: i === 0 ? first : results[i - 1]!,
        action: t.reply,
        parsed: { kind: 'format_error', message: '' },
        policy: { behaviourLogprob: 0, policyVersion: 0, tokens: { context: contexts[i]!, sampled: t.sampled, logprobs: t.sampled.map(() => -1) } },
      })),
    } as unknown as Trajectory;
    const seq = trajectorySequence(trajectory)!;
    const ids = [seq.inputs[0]!, ...seq.targets];
    // the same conversation through the template, encoded whole
    const conversation = [
      { role: 'user' as const, content: 'What is 2+3, then times 4?' },
      { role: 'assistant' as const, content: replies[0]! },
      { role: 'tool' as const, content: '5' },
      { role: 'assistant' as const, content: replies[1]! },
      { role: 'tool' as const, content: 'error: unknown tool "mul"' },
      { role: 'assistant' as const, content: replies[2]! },
    ];
    const text = tokenizer.renderChat(conversation, { addGenerationPrompt: false, tools });
    // where @huggingface/transformers does not load (the .vsix), @huggingface/jinja renders the same text
    assert.equal(renderChatTemplate(tokenizer.chatTemplate!, tokenizer.tokenizerConfig, conversation, { addGenerationPrompt: false, tools }), text);
    for (const family of ['qwen2', 'llama']) {
      const t = HfTokenizer.fromDirectory(path.join(FIXTURES, family));
      const plain = [{ role: 'user' as const, content: 'hi' }];
      assert.equal(
        renderChatTemplate(t.chatTemplate!, t.tokenizerConfig, plain, { addGenerationPrompt: true }),
        t.renderChat(plain, { addGenerationPrompt: true }),
        `${family} without tools`,
      );
    }
    const rendered = tokenizer.encode(text);
    // the template closes the last assistant message with "<|im_end|>\n": the episode ends at the end of turn
    assert.deepEqual(ids, rendered.slice(0, ids.length));
    assert.equal(tokenizer.decode(rendered.slice(ids.length)), '\n');
    // mask 1 exactly on the assistant's tokens (content and end of turn)
    const maskedIds = seq.targets.filter((_, i) => seq.mask[i] === 1);
    assert.deepEqual(
      maskedIds,
      turns.flatMap((t) => t.sampled),
    );
    // a reply the environment's stop string ended before the end of turn: the template's close is context
    const glue = chat.nextText(results[0]!, undefined);
    assert.ok(glue.startsWith('<|im_end|>\n<|im_start|>user\n<tool_response>\n5\n</tool_response><|im_end|>\n<|im_start|>assistant\n'), JSON.stringify(glue));
    assert.equal(chat.actionText('abc<|im_end|>'), 'abc');
    // a reply that ended with another end-of-sequence token keeps it, and the template's close follows
    assert.ok(chat.nextText(results[0]!, '<|endoftext|>').startsWith('<|im_end|>\n<|im_start|>user\n'));
    assert.equal(chat.endOfTurn, '<|im_end|>');
    const llama = HfTokenizer.fromDirectory(path.join(FIXTURES, 'llama'));
    assert.equal(new ChatFormat(llama, generationEos(path.join(FIXTURES, 'llama'), llama)).endOfTurn, '<|eot_id|>');
  });

  it("the policy prompts through the template: the first context is the template's rendering of the task", async () => {
    const config = configFor('llama');
    const env = codeEnv();
    const policy = (await createPolicy(config, policyRunInfo(config), env)) as TransformerPolicy<HfModel>;
    try {
      assert.ok(policy.chat, 'the llama fixture has a chat template');
      const task = env.tasks().train[0]!;
      const [t] = await runEpisodes([{ task, group: 0, indexInGroup: 0 }], () => env.create(), policy, {
        maxTurns: 1,
        sampleRng: new Rng(3),
        verifierRng: new Rng(0),
      });
      const context = t!.turns[0]!.policy.tokens!.context;
      const text = policy.tokenizer.decode(context);
      assert.ok(text.startsWith('<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n'), text.slice(0, 80));
      assert.ok(text.endsWith('<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n'), text.slice(-80));
    } finally {
      await policy.dispose();
    }
  });
});

describe('agent-rl model check and train --model', () => {
  it("model check prints the architecture, the plan and a continuation; --ids gives the reference's top logits", () => {
    const dir = tempDir();
    for (const family of ['qwen2', 'llama', 'gpt2']) {
      const r = runCli(['model', 'check', path.join(FIXTURES, family), '--max-new-tokens', '4'], dir);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, new RegExp(`architecture: ${family}, 2 layers, hidden 64`));
      assert.match(r.stdout, /memory plan of a run \(LoRA rank 8, .*, 12 rows sampled at once\): fits/);
      if (family !== 'gpt2') assert.match(r.stdout, /computed on the wasm engine \(\d+ threads, f32 weights; this check's plan [\d.]+ MiB\)/);
      assert.match(r.stdout, /greedy continuation of "def fibonacci\(n\):": /);
      const ref = JSON.parse(fs.readFileSync(path.join(FIXTURES, family, 'reference.json'), 'utf8')) as { ids: number[][]; logits: number[][][] };
      const j = runCli(['model', 'check', path.join(FIXTURES, family), '--ids', ref.ids[1]!.join(','), '--top', '5', '--json'], dir);
      assert.equal(j.code, 0, j.stderr);
      const got = JSON.parse(j.stdout) as { top: { id: number; logit: number }[] };
      const last = ref.logits[1]![ref.ids[1]!.length - 1]!;
      const expected = Array.from(last.keys())
        .sort((a, b) => last[b]! - last[a]!)
        .slice(0, 5);
      assert.deepEqual(
        got.top.map((t) => t.id),
        expected,
      );
      for (const t of got.top) assert.ok(Math.abs(t.logit - last[t.id]!) < 1e-4, `${family} id ${t.id}: ${t.logit} vs ${last[t.id]}`);
    }
    // --weight-dtype q8: the engine's Q8_0 logits, the JSON saying so; against PyTorch on the same blocks
    // (hfReference.py --q8 block) where Debian's torch is installed; refused off the engine (gpt2)
    const ids = [0, 17, 45, 120, 7, 300, 22, 81];
    const q8 = runCli(['model', 'check', path.join(FIXTURES, 'qwen2'), '--ids', ids.join(','), '--top', '5', '--weight-dtype', 'q8', '--json'], dir);
    assert.equal(q8.code, 0, q8.stderr);
    const got8 = JSON.parse(q8.stdout) as { top: { id: number; logit: number }[]; dtype: string };
    assert.equal(got8.dtype, 'q8');
    const py = spawnSync(
      '/usr/bin/python3',
      [path.join(FIXTURES, '..', 'hfReference.py'), path.join(FIXTURES, 'qwen2'), '--ids', ids.join(','), '--q8', 'block'],
      {
        encoding: 'utf8',
      },
    );
    if (py.status === 0) {
      const want = (JSON.parse(py.stdout) as { logits: number[] }).logits;
      const order = Array.from(want.keys())
        .sort((a, b) => want[b]! - want[a]!)
        .slice(0, 5);
      assert.deepEqual(
        got8.top.map((t) => t.id),
        order,
      );
      for (const t of got8.top) assert.ok(Math.abs(t.logit - want[t.id]!) < 1e-4, `q8 id ${t.id}: ${t.logit} vs ${want[t.id]}`);
    }
    const off = runCli(['model', 'check', path.join(FIXTURES, 'gpt2'), '--ids', '1,2', '--weight-dtype', 'q8', '--json'], dir);
    assert.equal(off.code, 2);
    assert.match(off.stderr, /--weight-dtype q8 runs on the wasm engine, and .*gpt2 runs on the tfjs decoder here/);
    const bad = runCli(['model', 'check', path.join(dir, 'nowhere')], dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /policyOptions\.model: .*nowhere does not exist\. Fix: point it at a local Hugging Face checkpoint folder/);
  });

  it('train --model runs GRPO iterations on a checkpoint folder and stores the run; a folder that is not a checkpoint is refused with the fix', () => {
    const dir = tempDir();
    const r = runCli(
      [
        'train',
        '--env',
        'code',
        '--policy',
        'transformer',
        '--model',
        path.join(FIXTURES, 'qwen2'),
        '--iterations',
        '1',
        '--groups',
        '1',
        '--group-size',
        '2',
        '--eval-episodes',
        '2',
        '--output',
        'out.json',
      ],
      dir,
    );
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'out.json'), 'utf8')) as { runtime: { compute: string }; iterations: unknown[] };
    assert.match(rec.runtime.compute, /qwen2 111,168 parameters, LoRA rank 8, [\d,]+ trained, chat template/);
    assert.equal(rec.iterations.length, 1);
    // seed 000's preset: its settings, the model folder the one required input
    const none = runCli(['train', '--preset', 'seed000'], dir);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--preset seed000 runs a local Hugging Face checkpoint: give its folder with --model DIR/);
    const seed = runCli(
      [
        'train',
        '--preset',
        'seed000',
        '--model',
        path.join(FIXTURES, 'gpt2'),
        '--iterations',
        '1',
        '--groups',
        '1',
        '--eval-episodes',
        '2',
        '--output',
        'seed.json',
      ],
      dir,
    );
    assert.equal(seed.code, 0, seed.stderr);
    const s = JSON.parse(fs.readFileSync(path.join(dir, 'seed.json'), 'utf8')) as { config: RunConfig };
    assert.deepEqual(
      [
        s.config.env,
        s.config.method,
        s.config.groupSize,
        s.config.maxTurns,
        s.config.algorithm.klCoef,
        s.config.algorithm.learningRate,
        s.config.algorithm.klEstimator,
      ],
      ['code', 'grpo', 4, 3, 0.04, 5e-5, 'k3'],
    );
    assert.ok(s.config.policy === 'transformer');
    assert.equal(s.config.policyOptions.model, path.join(FIXTURES, 'gpt2'));
    fs.mkdirSync(path.join(dir, 'empty'));
    const bad = runCli(['train', '--env', 'code', '--policy', 'transformer', '--model', 'empty', '--iterations', '1'], dir);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /policyOptions\.model: no config\.json in .*empty\. Fix: point it at the folder save_pretrained wrote/);
    assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
  });
});

describe("candidate scoring (seed 002's mode) on a fixture", () => {
  it("GRPO with LoRA raises the binary-search success rate of a scored random-weight qwen2 (same run's iteration-0 evaluation as the baseline)", () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'score.json'),
      JSON.stringify({
        env: 'binary-search',
        policy: 'transformer',
        method: 'grpo',
        seed: 7,
        iterations: 6,
        groupsPerIteration: 4,
        groupSize: 8,
        evalEpisodes: 64,
        algorithm: { learningRate: 0.02, warmupSteps: 0 },
        policyOptions: {
          model: path.join(FIXTURES, 'qwen2'),
          actionMode: 'score',
          scoreNormalization: 'mean',
          temperature: 5,
          contextLength: 128,
          loraRank: 8,
        },
      }),
    );
    const r = runCli(['train', '--config', 'score.json', '--output', 'out.json'], dir);
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'out.json'), 'utf8')) as {
      runtime: { compute: string };
      evaluations: { iteration: number; successRate: number }[];
    };
    assert.match(rec.runtime.compute, /candidate scoring over 6 actions \(mean log-prob per candidate token, temperature 5\)/);
    const first = rec.evaluations[0]!;
    const last = rec.evaluations[rec.evaluations.length - 1]!;
    assert.equal(first.iteration, 0);
    console.log(`candidate scoring: held-out success ${(100 * first.successRate).toFixed(1)} % → ${(100 * last.successRate).toFixed(1)} %`);
    assert.ok(last.successRate >= first.successRate + 0.2, `success ${first.successRate} → ${last.successRate}`);
  });
});
