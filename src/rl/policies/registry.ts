// Builds the policy a config names, with its optimizer settings from the config's algorithm section
// (the learner decides the learning rate of every step). Impossible combinations were rejected by
// validateRunConfig already; the checks here guard programmatic callers.
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunConfig } from '../../shared/runConfig';
import { ADAM_DEFAULTS, type AdamWOptions } from '../algo/adamw';
import { stopOf, type EnvironmentFactory, type StopSpec } from '../envs/environment';
import { ChatFormat } from './hf/chatFormat';
import { generationEos } from './hf/generationConfig';
import { ModelLoadError, readHfConfig } from './hf/hfConfig';
import { checkLoraTargets, HfModel, hfDifferentiable, type HfModelConfig, type LoraOptions } from './hf/hfModel';
import { assertFits, describePlan, fittingPlan, formatBytes } from './hf/memoryPlan';
import { fittingEnginePlan } from './hf/engine/enginePlan';
import { EngineModel } from './hf/engine/engineModel';
import { engineUnsupported } from './hf/engine/engineWeights';
import { CandidateScoringPolicy } from './hf/scoringPolicy';
import type { TrainablePolicy } from './policy';
import { TablePolicy } from './table/tablePolicy';
import { describeBackend, initBackend, type BackendChoice, type BackendInfo } from './transformer/backend';
import { readCheckpoint, restoreCheckpoint, type LoadedCheckpoint } from './transformer/checkpoint';
import { Gpt, type GptConfig } from './transformer/model';
import { autoReplicas, ReplicaPool } from './transformer/replicas';
import { CharTokenizer, HfTokenizer } from './transformer/tokenizer';
import type { SampleOptions } from './transformer/sampler';
import { TransformerPolicy } from './transformer/transformerPolicy';

/** A Hugging Face checkpoint on the wasm engine: its plan sizes the engine's memory before anything is read. */
async function createEngineTransformer(config: RunConfig, env: EnvironmentFactory, backendInfo: BackendInfo, init: LoadedCheckpoint | undefined, m: { dir: string; arch: ReturnType<typeof readHfConfig>; lora: LoraOptions; contextLength: number }): Promise<TrainablePolicy> {
  const o = config.policyOptions as Record<string, number | string | boolean>;
  if (config.method === 'grpo' && config.algorithm.klCoef > 0 && config.algorithm.klEstimator === 'exact') {
    throw new ModelLoadError(`algorithm.klEstimator "exact" needs every position's whole distribution (${m.arch.vocabSize.toLocaleString('en')} log-probs per token), which the wasm engine never holds. Fix: use klEstimator "k3" (or k1, k2)`);
  }
  const threads = (o.threads as number) > 0 ? (o.threads as number) : Math.min(os.availableParallelism(), 14);
  const plan = fittingEnginePlan(m.arch, { lora: m.lora, contextLength: m.contextLength, sampleRows: config.groupSize * config.groupsPerIteration, threads, dtype: (o.weightDtype as 'auto' | 'bf16' | 'f32' | undefined) ?? 'auto', positions: o.microBatchPositions as number });
  const planText = `Memory plan:\n${describePlan(plan)}`;
  if (!plan.fits) {
    throw new ModelLoadError(`policyOptions.model: ${m.dir} does not fit one wasm engine:\n${describePlan(plan)}\nWays out: a smaller contextLength or fewer rows sampled at once (groupSize × groupsPerIteration); policyOptions.weightDtype "bf16"; the tfjs-node backend (npm install @tensorflow/tfjs-node), whose memory is the machine's; a smaller checkpoint.`);
  }
  const tokenizer = HfTokenizer.fromDirectory(m.dir, 'model');
  tokenizer.checkFits(m.dir, m.arch.vocabSize);
  const model = await EngineModel.create({ dir: m.dir, arch: m.arch, contextLength: m.contextLength, lora: m.lora, seed: config.seed, threads, plan, planText });
  const reference = model.reference();
  try {
    const eos = generationEos(m.dir, tokenizer);
    const chat = o.chatTemplate !== 'none' && tokenizer.chatTemplate ? chatFormatOf(tokenizer, eos, config.policyOptions) : undefined;
    const stop = stopOf(env, config.envOptions);
    const eosTexts = chat ? [...chat.eosTexts] : eos.map((id) => tokenizer.decode([id]));
    const e = model.engine;
    const compute = `wasm engine (${e.threads} threads, ${e.relaxed ? 'relaxed SIMD' : 'SIMD'}, ${plan.dtype} weights, plan ${formatBytes(plan.total)}; tfjs ${describeBackend(backendInfo)} for the optimizer) (${m.arch.modelType} ${model.parameterCount().toLocaleString('en')} parameters, LoRA rank ${m.lora.rank}, ${model.trainableCount().toLocaleString('en')} trained${chatNote(chat)})`;
    const lm = new TransformerPolicy<EngineModel>(model, tokenizer, samplingOf(o, stop, eosTexts), optimizerOptions(config), compute, {
      reference, differentiable: (x) => x.scorer(), ...(chat ? { chat } : {}), microBatchPositions: plan.positionsPerPass,
    });
    if (init) {
      restoreCheckpoint(init, model);
      lm.resetReference();
    }
    return lm;
  } catch (e) {
    reference.dispose();
    model.dispose();
    throw e;
  }
}

/** The chat format of a run: the template with the system prompt and the template variables the config gives. */
function chatFormatOf(tokenizer: HfTokenizer, eos: readonly number[], o: RunConfig['policyOptions']): ChatFormat {
  const vars = o.chatTemplateVariables;
  return new ChatFormat(tokenizer, eos, typeof o.systemPrompt === 'string' ? o.systemPrompt : '', vars && typeof vars === 'object' && !Array.isArray(vars) ? (vars as Record<string, unknown>) : {});
}

/** How the run's record names its chat template, and a template's rewriting of earlier turns that an episode does not apply. */
function chatNote(chat: ChatFormat | undefined): string {
  if (!chat) return '';
  return chat.rewritesHistory ? ', chat template (its rewriting of earlier turns not applied: within an episode the model reads its turns as it wrote them)' : ', chat template';
}

/** contextLength 0: the small GPT's (a calculator episode fits) and a pretrained model's (at most its own). */
const GPT_CONTEXT_LENGTH = 192;
const HF_CONTEXT_LENGTH = 2048;

/** The optimizer's settings of a run (Adam's betas and epsilon are PyTorch's defaults). */
export function optimizerOptions(config: RunConfig): AdamWOptions {
  return { ...ADAM_DEFAULTS, weightDecay: config.algorithm.weightDecay, maxGradNorm: config.algorithm.maxGradNorm };
}

export async function createPolicy(config: RunConfig, env: EnvironmentFactory): Promise<TrainablePolicy> {
  switch (config.policy) {
    case 'table': {
      if (!env.tabular) throw new Error(`policy "table" needs a tabular environment; "${env.name}" is not`);
      const backend = await initBackend((config.policyOptions.backend as BackendChoice | undefined) ?? 'cpu');
      return new TablePolicy(env.tabular(config.envOptions), optimizerOptions(config), backend.name);
    }
    case 'transformer':
      return createTransformer(config, env);
  }
}

async function createTransformer(config: RunConfig, env: EnvironmentFactory): Promise<TrainablePolicy> {
  const o = config.policyOptions as Record<string, number | string | boolean>;
  const backend = await initBackend(o.backend as BackendChoice);
  const init = typeof o.init === 'string' && o.init !== '' ? readCheckpoint(o.init) : undefined;
  if (init?.manifest.model && 'kind' in init.manifest.model) return createHfTransformer(config, env, backend, init);
  if (!init && typeof o.model === 'string' && o.model !== '') return createHfTransformer(config, env, backend, undefined);
  const tokenizer = init?.tokenizer ?? (typeof o.tokenizer === 'string' && o.tokenizer !== '' ? HfTokenizer.fromDirectory(o.tokenizer) : new CharTokenizer());
  const modelConfig: GptConfig = (init?.manifest.model as GptConfig | undefined) ?? {
    vocabSize: tokenizer.vocabSize,
    contextLength: (o.contextLength as number) > 0 ? (o.contextLength as number) : GPT_CONTEXT_LENGTH,
    dModel: o.dModel as number,
    nLayers: o.nLayers as number,
    nHeads: o.nHeads as number,
    mlpRatio: o.mlpRatio as number,
    tiedHead: o.tiedHead as boolean,
  };
  const model = new Gpt(modelConfig, config.seed);
  const stop = stopOf(env, config.envOptions);
  const policy = new TransformerPolicy(
    model,
    tokenizer,
    samplingOf(o, stop),
    optimizerOptions(config),
    `tfjs ${describeBackend(backend)} (${model.parameterCount().toLocaleString('en')} parameters)`,
    config.seed,
  );
  if (init) {
    // Weights only: a warm start's optimizer moments belong to another objective. The KL reference
    // is the warm-started model, so RL stays close to what SFT taught.
    restoreCheckpoint(init, model);
    policy.resetReference();
  }
  // Data parallelism: helper replicas on the other cores, for the single-threaded backends.
  const replicas = (o.replicas as number) > 0 ? (o.replicas as number) : autoReplicas(backend.name);
  if (replicas > 1) {
    try {
      policy.attachReplicas(await ReplicaPool.start(replicas - 1, backend.name, model, policy.reference, tokenizer), stop?.when ? (stop.whenOf ?? env.name) : undefined);
    } catch (e) {
      await policy.dispose();
      throw e;
    }
  }
  return policy;
}

/** The sampling options of a run: the policy options' settings, the environment's stop, and a model's own end tokens. */
function samplingOf(o: Record<string, number | string | boolean>, stop: StopSpec | undefined, endTexts: readonly string[] = []): SampleOptions {
  return {
    temperature: o.temperature as number, topK: o.topK as number, topP: o.topP as number, maxNewTokens: o.maxNewTokens as number,
    stop: [...(stop?.strings ?? []), ...endTexts], ...(stop?.when ? { stopWhen: stop.when } : {}),
  };
}

/** LoRA settings of the policy options (rank 0: full fine-tuning). */
export function loraOf(o: Record<string, unknown>): LoraOptions | undefined {
  const rank = typeof o.loraRank === 'number' ? o.loraRank : 8;
  if (rank <= 0) return undefined;
  const targets = (typeof o.loraTargets === 'string' ? o.loraTargets : 'all-linear').split(',').map((t) => t.trim()).filter((t) => t !== '');
  return { rank, alpha: typeof o.loraAlpha === 'number' && o.loraAlpha > 0 ? o.loraAlpha : 2 * rank, dropout: typeof o.loraDropout === 'number' ? o.loraDropout : 0, targets: targets.length ? targets : ['all-linear'] };
}

/**
 * A Hugging Face checkpoint as the policy: its memory plan checked against the backend before any
 * weight is read, its tokenizer and chat template, LoRA adapters (or full fine-tuning), and the base
 * model (with frozen adapters) as the KL reference. A warm start (init) names its base folder.
 */
async function createHfTransformer(config: RunConfig, env: EnvironmentFactory, backendInfo: BackendInfo, init: LoadedCheckpoint | undefined): Promise<TrainablePolicy> {
  const backend = backendInfo.name;
  const o = config.policyOptions as Record<string, number | string | boolean>;
  const stored = init?.manifest.model as HfModelConfig | undefined;
  const dir = stored?.dir ?? path.resolve(String(o.model));
  const arch = readHfConfig(dir);
  const lora = stored ? stored.lora : loraOf(o);
  const contextLength = stored?.contextLength ?? Math.min(arch.maxPositions, (o.contextLength as number) > 0 ? (o.contextLength as number) : HF_CONTEXT_LENGTH);
  // wasm: the model runs on the engine (bfloat16 weights, every core, vocabulary-chunked head), unless
  // it needs what only tfjs ops do: full fine-tuning, gpt2, candidate scoring
  const tfjsOnly = !lora ? 'full fine-tuning' : o.actionMode === 'score' ? 'candidate scoring' : engineUnsupported(arch);
  if (backend === 'wasm' && !tfjsOnly) {
    checkLoraTargets(arch, lora!.targets);
    return createEngineTransformer(config, env, backendInfo, init, { dir, arch, lora: lora!, contextLength });
  }
  const plan = fittingPlan(arch, { ...(lora ? { lora } : {}), contextLength, microBatchPositions: o.microBatchPositions as number, sampleRows: config.groupSize * config.groupsPerIteration, backend });
  assertFits(plan, dir, { lora: lora !== undefined, backend });
  const tokenizer = HfTokenizer.fromDirectory(dir, 'model');
  tokenizer.checkFits(dir, arch.vocabSize);
  const model = HfModel.load(dir, { contextLength, ...(lora ? { lora } : {}), seed: config.seed });
  let reference: HfModel | undefined;
  let policy: TrainablePolicy & { dispose(): unknown } | undefined;
  try {
    const eos = generationEos(dir, tokenizer);
    const trained = lora ? `LoRA rank ${lora.rank}, ${model.trainableCount().toLocaleString('en')} trained` : 'full fine-tuning';
    const compute = `tfjs ${describeBackend(backendInfo)} (${arch.modelType} ${model.parameterCount().toLocaleString('en')} parameters, ${trained}`;
    reference = model.reference();
    if (o.actionMode === 'score') {
      if (!env.tabular) throw new ModelLoadError(`policyOptions.actionMode "score" needs an environment with a fixed action set; "${env.name}" has none`);
      const scoring = new CandidateScoringPolicy(model, reference, tokenizer, env.tabular(config.envOptions), eos[0], optimizerOptions(config), `${compute})`, (o.temperature as number) > 0 ? (o.temperature as number) : 1, o.scoreNormalization === 'mean' ? 'mean' : 'sum');
      policy = scoring;
      if (init) {
        restoreCheckpoint(init, model);
        restoreCheckpoint(init, reference);
      }
      return scoring;
    }
    const chat = o.chatTemplate !== 'none' && tokenizer.chatTemplate ? chatFormatOf(tokenizer, eos, config.policyOptions) : undefined;
    const stop = stopOf(env, config.envOptions);
    const eosTexts = chat ? [...chat.eosTexts] : eos.map((id) => tokenizer.decode([id]));
    const lm = new TransformerPolicy<HfModel>(
      model,
      tokenizer,
      samplingOf(o, stop, eosTexts),
      optimizerOptions(config),
      `${compute}${chatNote(chat)})`,
      { reference, differentiable: hfDifferentiable, ...(chat ? { chat } : {}), microBatchPositions: plan.microBatchPositions },
    );
    policy = lm;
    if (init) {
      restoreCheckpoint(init, model);
      lm.resetReference();
    }
    return lm;
  } catch (e) {
    // the policy owns the model, its reference and the optimizer's moments once it exists
    if (policy) await policy.dispose();
    else {
      reference?.dispose();
      model.dispose();
    }
    throw e;
  }
}
