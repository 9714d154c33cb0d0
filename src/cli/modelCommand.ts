// `agent-rl model`: the group of check, new (modelNewCommand.ts), list and export. `model check DIR`:
// what the workbench makes of a local Hugging Face checkpoint, before a run uses it — architecture,
// parameters, stored dtypes, tokenizer and chat template, the memory plan on the chosen backend (LoRA
// and full fine-tuning), whether seed 000's preset fits at q8 and at bfloat16, a greedy continuation,
// and with --logits the final position's top logits as JSON (to compare with PyTorch's numbers for the
// same text). `model list`: the checkpoints found.
// `model export` (modelExportCommand.ts): a run's adapters merged into its base model.
import * as tf from '@tensorflow/tfjs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { generationEos } from '../rl/policies/lm/generationConfig';
import { parameterCount } from '../rl/policies/lm/models/families/familyOf';
import { ModelLoadError, readHfConfig } from '../rl/policies/lm/models/hfConfig';
import { HfModel } from '../rl/policies/lm/models/hfModel';
import { describePlan, fittingPlan, formatBytes } from '../rl/policies/lm/models/memoryPlan';
import { fittingEnginePlan, planEngineMemory, type EnginePlan } from '../rl/policies/lm/models/engine/enginePlan';
import { engineQ8Unsupported, engineUnsupported, type WeightDtype } from '../rl/policies/lm/models/engine/engineWeights';
import { EngineMemoryError } from '../rl/policies/lm/models/engine/engineMemory';
import { EngineModel } from '../rl/policies/lm/models/engine/engineModel';
import { checkpointTensors } from '../rl/policies/lm/models/safetensors';
import { cacheRoots, findModels, seed000Fit } from '../rl/policies/lm/models/modelCache';
import { describeFit, describeSeed000 } from '../shared/foundModel';
import { optionDefaults, TRANSFORMER_OPTION_SPECS } from '../shared/runConfig';
import { loraOf } from '../rl/policies/createPolicy';
import { BACKEND_NAMES, describeBackend, initBackend, type BackendChoice } from '../rl/policies/lm/models/tfjsBackend';
import { assertBackendHealthy, BackendAllocationError } from '../rl/tfjsHealth';
import { sampleBatch } from '../rl/policies/lm/sampler';
import { HfTokenizer } from '../rl/policies/lm/tokenizer';
import { Rng } from '../rl/random';
import { count } from '../shared/format';
import { jsonText, showInvisibles } from '../shared/untrustedText';
import { defineCommand, defineGroup } from './command';
import { JSON_OUTPUT } from './optionSets';
import { modelExportCommand } from './modelExportCommand';
import { modelNewCommand } from './modelNewCommand';
import { UsageError } from './usageError';

const MODEL_CHECK_USAGE = `agent-rl model check DIR [--prompt TEXT] [--max-new-tokens N] [--logits TEXT | --ids 1,2,3] [--top K] [--backend B] [--lora-rank N] [--context N] [--weight-dtype D] [--json]
  DIR           a local Hugging Face checkpoint folder (config.json, model.safetensors or shards, tokenizer.json)
  --prompt      text to continue greedily (default "def fibonacci(n):"), encoded without the chat template
  --logits      print the final position's top logits for this text as JSON ({ ids, top: [{ id, token, logit }], dtype })
  --ids         the same for token ids as given (what a PyTorch check feeds the model)
  --max-new-tokens  length of the greedy continuation (default 24)
  --top         how many of the top logits --logits and --ids print (default 10)
  --backend     the tfjs backend the plan and the check use (${BACKEND_NAMES.join(', ')}; default auto)
  --lora-rank   the plan's LoRA rank (default 8; 0 = full fine-tuning)
  --context     the context length of the plan and the check (default 2048, at most the model's)
  --weight-dtype  how the engine holds the weights for the plan and the check (auto, bf16, f32, q8: Q8_0
                blocks of 32 with activations quantized per block; default auto); the JSON's dtype says which ran`;

const MODEL_LIST_USAGE = `agent-rl model list [--folder DIR]... [--backend B] [--json]
  the checkpoints in the Hugging Face cache ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub) and in
  each --folder (a checkpoint folder, or a folder of them): architecture, parameters, stored dtypes, and
  whether seed 000's preset fits the memory plan on the backend (default wasm; on the engine at q8 and at
  bfloat16, with --weight-dtype q8 advised where only q8 fits), or why the folder cannot load`;

const modelCheckCommand = defineCommand({
  name: 'model check',
  summary: 'what the workbench makes of a local Hugging Face checkpoint, before a run uses it',
  usage: MODEL_CHECK_USAGE,
  options: {
    prompt: { type: 'string' },
    ids: { type: 'string' },
    'max-new-tokens': { type: 'string' },
    logits: { type: 'string' },
    top: { type: 'string' },
    backend: { type: 'string' },
    'lora-rank': { type: 'string' },
    context: { type: 'string' },
    'weight-dtype': { type: 'string' },
  },
  sets: [JSON_OUTPUT],
  positionals: { min: 1, max: 1, error: 'model check needs exactly one DIR' },
  run: ({ values, positionals }) => modelCheck(values, path.resolve(positionals[0]!)),
});

const modelListCommand = defineCommand({
  name: 'model list',
  summary: 'the checkpoints in the Hugging Face cache and in given folders',
  usage: MODEL_LIST_USAGE,
  options: { folder: { type: 'string', multiple: true }, backend: { type: 'string' } },
  sets: [JSON_OUTPUT],
  positionals: { min: 0, max: 0, error: 'model list takes no folder positionally; use --folder DIR' },
  run: ({ values: v }) => {
    const backendName = v.backend ?? 'wasm';
    if (!BACKEND_NAMES.includes(backendName as BackendChoice)) throw new UsageError(`--backend ${v.backend}: use one of ${BACKEND_NAMES.join(', ')}`);
    const models = findModels({ folders: v.folder ?? [], backend: backendName === 'auto' ? 'wasm' : backendName });
    if (v.json) {
      process.stdout.write(`${jsonText(models)}\n`);
      return 0;
    }
    if (models.length === 0) {
      process.stdout.write(
        `no checkpoints found in ${[...cacheRoots(), ...(v.folder ?? [])].join(', ') || 'the Hugging Face cache (no $HF_HUB_CACHE, $HF_HOME/hub or ~/.cache/huggingface/hub)'}\n`,
      );
      return 0;
    }
    const lines = models.map((m) =>
      [
        `${m.name}${m.revision ? ` @ ${m.revision.slice(0, 12)}${m.main ? ' (main)' : ''}` : ''}`,
        m.problem ? '' : `  ${m.modelType}, ${count(m.parameters ?? 0)} parameters, ${m.dtypes}`,
        `  ${describeFit(m)}`,
        `  ${m.dir}`,
      ]
        .filter((l) => l !== '')
        .join('\n'),
    );
    process.stdout.write(`${showInvisibles(lines.join('\n'))}\n`);
    return 0;
  },
});

/** `agent-rl model check|list|new|export`. */
export const modelCommand = defineGroup({
  name: 'model',
  summary: 'check, list, create and export Hugging Face checkpoints',
  subcommands: [modelCheckCommand, modelNewCommand, modelListCommand, modelExportCommand],
});

/** `model check DIR`: architecture, parameters, tokenizer, memory plan, a greedy continuation, top logits. */
async function modelCheck(
  v: Readonly<Partial<Record<'prompt' | 'ids' | 'max-new-tokens' | 'logits' | 'top' | 'backend' | 'lora-rank' | 'context' | 'weight-dtype', string>>> & {
    readonly json?: boolean;
  },
  dir: string,
): Promise<number> {
  const whole = (flag: string, value: string | undefined, fallback: number, min: number): number => {
    const n = value === undefined ? fallback : Number(value);
    if (!Number.isInteger(n) || n < min) throw new UsageError(`--${flag} ${value}: use a whole number ≥ ${min}`);
    return n;
  };
  const backendChoice = (v.backend ?? 'auto') as BackendChoice;
  if (!BACKEND_NAMES.includes(backendChoice)) throw new UsageError(`--backend ${v.backend}: use one of ${BACKEND_NAMES.join(', ')}`);
  const maxNew = whole('max-new-tokens', v['max-new-tokens'], 24, 1);
  const top = whole('top', v.top, 10, 1);
  const rank = whole('lora-rank', v['lora-rank'], 8, 0);
  const dtypeChoice = v['weight-dtype'] ?? 'auto';
  const DTYPES = ['auto', 'bf16', 'f32', 'q8'] as const;
  if (!(DTYPES as readonly string[]).includes(dtypeChoice)) throw new UsageError(`--weight-dtype ${dtypeChoice}: use one of ${DTYPES.join(', ')}`);
  const askedDtype = dtypeChoice as (typeof DTYPES)[number];
  if (askedDtype === 'q8' && rank === 0)
    throw new UsageError('--weight-dtype q8 with --lora-rank 0: Q8_0 weights are a frozen base for LoRA. Fix: --lora-rank 8, or --weight-dtype f32');
  const arch = readHfConfig(dir);
  const stored = checkpointTensors(dir);
  const dtypes = [...new Set([...stored.values()].map((t) => t.dtype))].join(', ');
  const ids = v.ids !== undefined ? v.ids.split(',').map((x) => Number(x.trim())) : undefined;
  // ids need no tokenizer: without tokenizer.json the check still computes the logits of the ids given
  const hasTokenizer = fs.existsSync(path.join(dir, 'tokenizer.json'));
  if (!hasTokenizer && ids === undefined)
    throw new UsageError(
      `${dir}: no tokenizer.json, so no text can be encoded. Fix: add the tokenizer files saved with the checkpoint, or pass --ids 1,2,3 to check the model on token ids alone`,
    );
  const tokenizer = hasTokenizer ? HfTokenizer.fromDirectory(dir, 'model') : undefined;
  tokenizer?.checkFits(dir, arch.vocabSize);
  const backend = await initBackend(backendChoice);
  const contextLength = Math.min(arch.maxPositions, whole('context', v.context, 2048, 16));
  const lora = loraOf({ ...optionDefaults(TRANSFORMER_OPTION_SPECS), loraRank: rank });
  const onEngine = backend.name === 'wasm' && !engineUnsupported(arch);
  const q8Unsupported = askedDtype === 'q8' && onEngine ? engineQ8Unsupported(arch) : undefined;
  if (q8Unsupported) throw new UsageError(`--weight-dtype q8: ${dir}: ${q8Unsupported}. Fix: --weight-dtype bf16`);
  if (askedDtype === 'q8' && !onEngine)
    throw new UsageError(
      `--weight-dtype q8 runs on the wasm engine, and ${dir} runs on the tfjs decoder here (${backend.name}${engineUnsupported(arch) ? `: ${engineUnsupported(arch)}` : ''}). Fix: --backend wasm with a qwen2, qwen3 or llama checkpoint`,
    );
  const threads = Math.min(os.availableParallelism(), 14);
  // the plan of a run: seed 000's 12 rows sampled at once (3 groups of 4); on wasm the engine's
  const plan = onEngine
    ? fittingEnginePlan(arch, { ...(lora ? { lora } : {}), contextLength, sampleRows: 12, threads, dtype: askedDtype })
    : fittingPlan(arch, { ...(lora ? { lora } : {}), contextLength, sampleRows: 12, backend: backend.name });
  const engineDtype: WeightDtype = 'positionsPerPass' in plan ? (plan as EnginePlan).dtype : 'bf16';
  const eos = tokenizer ? generationEos(dir, tokenizer) : [];
  const engineNote = onEngine ? `; runs on the wasm engine (${threads} threads)` : '';
  const lines = [
    `${dir}`,
    `  architecture: ${arch.modelType}, ${arch.layers} layers, hidden ${arch.hidden}, ${arch.heads} heads (${arch.kvHeads} key/value, width ${arch.headDim}), MLP ${arch.intermediate}, vocabulary ${arch.vocabSize}, ${arch.maxPositions} positions` +
      (arch.modelType === 'gpt2' ? '' : `, rope θ ${arch.ropeTheta}${arch.ropeScaling ? ` (llama3 scaling ×${arch.ropeScaling.factor})` : ''}`) +
      (arch.tiedEmbeddings ? ', tied embeddings' : ''),
    `  parameters: ${count(parameterCount(arch))}; stored as ${dtypes} in ${new Set([...stored.values()].map((t) => t.file)).size} file(s) (config torch_dtype ${arch.torchDtype}); ${onEngine ? `held as ${engineDtype} on the engine, computed in float32` : 'computed in float32'}`,
    tokenizer
      ? `  tokenizer: ${tokenizer.vocabSize} ids (${tokenizer.library}), chat template ${tokenizer.chatTemplate ? 'yes' : 'none'}, end of sequence ${eos.map((id) => `${jsonText(tokenizer.decode([id]))} (${id})`).join(', ') || 'none'}`
      : '  tokenizer: none (no tokenizer.json in the folder; the check runs on the ids given)',
    `  backend: tfjs ${describeBackend(backend)}${backend.notes.length ? ` (${backend.notes.join('; ')})` : ''}${engineNote}`,
    `  memory plan of a run (${lora ? `LoRA rank ${rank}` : 'full fine-tuning'}, context ${contextLength}, ${'positionsPerPass' in plan ? `${(plan as EnginePlan).positionsPerPass} packed positions per pass` : `micro-batch ${plan.microBatchPositions} positions`}, 12 rows sampled at once): ${plan.fits ? 'fits' : 'DOES NOT FIT'}`,
    describePlan(plan),
    // what the Start Run preset a user reaches first would need, at each weight dtype (config.json only)
    `  seed 000's preset (LoRA rank 8, context 1024, 12 rows sampled at once): ${describeSeed000(seed000Fit(arch, backend.name, threads))}`,
  ];
  if (ids && (ids.length === 0 || ids.length > contextLength || !ids.every((id) => Number.isInteger(id) && id >= 0 && id < arch.vocabSize))) {
    throw new UsageError(
      `--ids ${v.ids}: give 1 to ${contextLength} comma-separated token ids, each in 0 … ${arch.vocabSize - 1} (config.json vocab_size ${arch.vocabSize})`,
    );
  }
  // the check itself needs forward passes only: on the engine, a plan without training
  const checkModel = async (): Promise<{ model: HfModel | EngineModel; note: string }> => {
    if (onEngine) {
      const checkPlan = planEngineMemory(arch, {
        lora: lora ?? { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] },
        contextLength,
        positionsPerPass: contextLength,
        sampleRows: 1,
        threads,
        dtype: engineDtype,
        inference: true,
      });
      if (!checkPlan.fits) throw new UsageError(`${dir} does not fit one wasm engine even for forward passes:\n${describePlan(checkPlan)}`);
      const m = await EngineModel.create({
        dir,
        arch,
        contextLength,
        lora: lora ?? { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] },
        seed: 0,
        threads,
        plan: checkPlan,
        planText: `Memory plan of this check:\n${describePlan(checkPlan)}`,
      });
      return {
        model: m,
        note: `  computed on the wasm engine (${m.engine.threads} threads, ${checkPlan.dtype === 'q8' ? 'q8 base (Q8_0 blocks of 32, 8-bit activations per block)' : `${checkPlan.dtype} weights`}; this check's plan ${formatBytes(checkPlan.total)})`,
      };
    }
    if (!plan.fits) throw new UsageError(`${dir} does not fit the ${backend.name} backend (plan above)`);
    return { model: HfModel.load(dir, { contextLength, ...(lora ? { lora } : {}) }), note: '' };
  };
  if (!plan.fits && !onEngine) {
    process.stdout.write(`${showInvisibles(lines.join('\n'))}\n`);
    return 1;
  }
  let checked: { model: HfModel | EngineModel; note: string } | undefined;
  try {
    checked = await checkModel();
    const model = checked.model;
    if (checked.note) lines.push(checked.note);
    if (tokenizer) {
      const prompt = v.prompt ?? 'def fibonacci(n):';
      const [out] = await sampleBatch(
        model,
        tokenizer,
        [tokenizer.encode(prompt)],
        { temperature: 0, topK: 0, topP: 1, maxNewTokens: maxNew, stop: eos.map((id) => tokenizer.decode([id])) },
        new Rng(0),
      );
      lines.push(`  greedy continuation of ${jsonText(prompt)}: ${jsonText(out!.text)}`);
    }
    if (v.logits !== undefined || ids !== undefined) {
      const input = ids ?? tokenizer!.encode(v.logits!);
      if (input.length === 0) throw new UsageError('--logits: the text encodes to no tokens; give some text');
      if (input.length > contextLength) throw new UsageError(`--logits: the text is ${input.length} tokens, more than --context ${contextLength}`);
      const last = await lastLogits(model, input, arch.vocabSize);
      const order = Array.from(last.keys())
        .sort((a, b) => last[b]! - last[a]!)
        .slice(0, top);
      const report = {
        ...(v.logits !== undefined ? { text: v.logits } : {}),
        ids: input,
        top: order.map((id) => ({ id, token: tokenizer ? tokenizer.decode([id]) : null, logit: last[id]! })),
        // how the weights were held when these logits were computed (the tfjs decoder: float32)
        dtype: onEngine ? engineDtype : 'f32',
      };
      if (v.json) {
        process.stdout.write(`${jsonText(report)}\n`);
        return 0;
      }
      lines.push(`  final position's top ${top} logits: ${jsonText(report)}`);
    }
  } catch (e) {
    if (e instanceof ModelLoadError || e instanceof EngineMemoryError || e instanceof BackendAllocationError) throw new UsageError(e.message);
    throw e;
  } finally {
    await checked?.model.dispose();
  }
  process.stdout.write(`${showInvisibles(lines.join('\n'))}\n`);
  return plan.fits ? 0 : 1;
}

/** The final position's logits [V] for `ids` (one row). */
async function lastLogits(model: HfModel | EngineModel, ids: readonly number[], V: number): Promise<Float32Array> {
  if (model instanceof EngineModel) return model.lastLogits([ids]);
  const input = tf.tensor2d([[...ids]], [1, ids.length], 'int32');
  const logits = model.forward(input);
  const all = (await logits.data()) as Float32Array;
  tf.dispose([input, logits]);
  assertBackendHealthy('the logits');
  return all.slice((ids.length - 1) * V, ids.length * V);
}
