// Builds the policy a run chose from that policy's own options (typed by its table) and the few facts
// of the run it needs (PolicyRunInfo): the seed, the optimizer's settings (the learner decides the
// learning rate of every step), how many episodes are sampled at once, whether the objective reads
// whole distributions. Impossible combinations were rejected by validateRunConfig already; the checks
// here guard programmatic callers.
import * as os from 'node:os';
import * as path from 'node:path';
import type { AlgorithmSettings } from '../../shared/algorithm';
import type { PolicyChoice, TransformerOptions } from '../../shared/runConfig';
import { ADAM_DEFAULTS, type AdamWOptions } from '../algo/adamw';
import type { RunEnvironment, StopSpec } from '../envs/environment';
import { STOP_TESTS } from '../envs/parsers';
import { ChatFormat } from './hf/chatFormat';
import { generationEos } from './hf/generationConfig';
import { ModelLoadError, readHfConfig } from './hf/hfConfig';
import { checkLoraTargets, HfModel, hfDifferentiable, type LoraOptions } from './hf/hfModel';
import { assertFits, describePlan, fittingPlan } from './hf/memoryPlan';
import { bytes as formatBytes } from '../../shared/format';
import { fittingEnginePlan } from './hf/engine/enginePlan';
import { EngineModel } from './hf/engine/engineModel';
import { engineUnsupported } from './hf/engine/engineWeights';
import { engineCandidateScorer } from './hf/engine/engineCandidates';
import { CandidateScoringPolicy, tfjsCandidateScorer, type CandidateScorer, type ScoringModel } from './hf/scoringPolicy';
import { freshModelFolder, freshModelsRoot, type NewModelSpec } from './hf/newCheckpoint';
import { ggufCachePath, LlamaCppRollout, LlamaCppSampler } from './hf/llamaCpp';
import type { TrainablePolicy } from './policy';
import { TablePolicy } from './table/tablePolicy';
import { describeBackend, initBackend, type BackendInfo } from './transformer/backend';
import { readCheckpoint, restoreCheckpoint, smallGptGone, type LoadedCheckpoint } from './transformer/checkpoint';
import { TokenConstraint } from './transformer/constraint';
import { HfTokenizer, type Tokenizer } from './transformer/tokenizer';
import type { SampleOptions } from './transformer/sampler';
import { TransformerPolicy } from './transformer/transformerPolicy';

/** What a policy needs to know of the run besides its own options. */
export interface PolicyRunInfo {
  readonly seed: number;
  readonly optimizer: AdamWOptions;
  /** Episodes sampled at once (groupSize × groupsPerIteration): a model's memory plan sizes its KV cache for them. */
  readonly sampleRows: number;
  /** The objective reads every position's whole distribution (the exact KL), which the wasm engine never holds. */
  readonly fullDistributions: boolean;
}

/**
 * llama.cpp as the rollout engine of a model on the engine: the checkpoint's GGUF (written once, under
 * the models cache, named by the digest of the base weights), the policy's adapters or weights loaded
 * before each sample after a change. Refused with the reason and the fix where llama.cpp cannot run.
 */
async function llamaCppRollout(
  model: EngineModel,
  m: { dir: string; arch: ReturnType<typeof readHfConfig>; lora: LoraOptions | undefined; contextLength: number },
  tokenizer: Tokenizer,
  rows: number,
  threads: number,
): Promise<LlamaCppRollout> {
  let sampler: LlamaCppSampler;
  try {
    const gguf = ggufCachePath(freshModelsRoot(), model.engine.baseDigest());
    sampler = await LlamaCppSampler.open({ dir: m.dir, gguf, contextLength: m.contextLength, rows, threads, tokenizer });
  } catch (e) {
    throw new ModelLoadError(`policyOptions.rolloutEngine "llama.cpp": ${(e as Error).message}. Fix: rolloutEngine "engine"`);
  }
  const lora = m.lora;
  const heads = { q: m.arch.heads, kv: m.arch.kvHeads };
  return new LlamaCppRollout(sampler, async (s) => {
    if (lora) {
      const tensors = await model.loraTensors();
      await s.setAdapters({ rank: lora.rank, alpha: lora.alpha, tensors: tensors!, modelType: m.arch.modelType, heads });
    } else {
      const weights = await model.hfTensors();
      if (weights) await s.setWeights(weights);
    }
  });
}

/** A Hugging Face checkpoint on the wasm engine: its plan sizes the engine's memory before anything is read. */
async function createEngineTransformer(
  o: TransformerOptions,
  run: PolicyRunInfo,
  env: RunEnvironment,
  backendInfo: BackendInfo,
  init: LoadedCheckpoint | undefined,
  m: { dir: string; arch: ReturnType<typeof readHfConfig>; lora: LoraOptions | undefined; contextLength: number },
): Promise<TrainablePolicy> {
  // candidate scoring's distributions are over the A actions, which the learner holds whole
  if (run.fullDistributions && o.actionMode !== 'score') {
    throw new ModelLoadError(
      `algorithm.klEstimator "exact" needs every position's whole distribution (${m.arch.vocabSize.toLocaleString('en')} log-probs per token), which the wasm engine never holds. Fix: use klEstimator "k3" (or k1, k2)`,
    );
  }
  if (!m.lora && o.weightDtype === 'bf16') {
    throw new ModelLoadError(
      'policyOptions.weightDtype "bf16" with full fine-tuning (loraRank 0): the engine updates the weights themselves, in float32. Fix: weightDtype "auto" or "f32", or LoRA (loraRank 8)',
    );
  }
  const threads = o.threads > 0 ? o.threads : Math.min(os.availableParallelism(), 14);
  const plan = fittingEnginePlan(m.arch, {
    ...(m.lora ? { lora: m.lora } : {}),
    contextLength: m.contextLength,
    // candidate scoring never decodes: its sampling is scoring passes, so no KV cache is planned for it
    sampleRows: o.actionMode === 'score' ? 1 : run.sampleRows,
    threads,
    dtype: o.weightDtype,
    positions: o.microBatchPositions,
  });
  const planText = `Memory plan:\n${describePlan(plan)}`;
  if (!plan.fits) {
    throw new ModelLoadError(
      `policyOptions.model: ${m.dir} does not fit one wasm engine:\n${describePlan(plan)}\nWays out: ${m.lora ? '' : 'LoRA (policyOptions.loraRank 8), which trains adapters over the frozen weights; '}a smaller contextLength or fewer rows sampled at once (groupSize × groupsPerIteration); ${m.lora ? 'policyOptions.weightDtype "bf16"; ' : ''}the tfjs-node backend (npm install @tensorflow/tfjs-node), whose memory is the machine's; a smaller checkpoint.`,
    );
  }
  const tokenizer = HfTokenizer.fromDirectory(m.dir, 'model');
  tokenizer.checkFits(m.dir, m.arch.vocabSize);
  const model = await EngineModel.create({
    dir: m.dir,
    arch: m.arch,
    contextLength: m.contextLength,
    ...(m.lora ? { lora: m.lora } : {}),
    seed: run.seed,
    threads,
    plan,
    planText,
  });
  const reference = model.reference();
  let policy: { dispose(): Promise<void> } | undefined;
  try {
    const eos = generationEos(m.dir, tokenizer);
    const e = model.engine;
    const compute = `wasm engine (${e.threads} threads, ${e.relaxed ? 'relaxed SIMD' : 'SIMD'}, ${plan.dtype} weights, plan ${formatBytes(plan.total)}; tfjs ${describeBackend(backendInfo)} for the optimizer) (${m.arch.modelType} ${model.parameterCount().toLocaleString('en')} parameters, ${m.lora ? `LoRA rank ${m.lora.rank}, ${model.trainableCount().toLocaleString('en')} trained` : 'full fine-tuning'}`;
    if (o.actionMode === 'score') {
      const scoring = candidateScoring(o, run, env, { model, reference, scorer: engineCandidateScorer, tokenizer, eos, computeBase: `${compute})` });
      policy = scoring;
      if (init) {
        restoreCheckpoint(init, model);
        scoring.resetReference();
      }
      return scoring;
    }
    const chat = o.chatTemplate !== 'none' && tokenizer.chatTemplate ? chatFormatOf(tokenizer, eos, o) : undefined;
    const eosTexts = chat ? [...chat.eosTexts] : eos.map((id) => tokenizer.decode([id]));
    const sampling = { ...samplingOf(o, env.stop, eosTexts), ...constraintOf(o, env, tokenizer, chat?.eosIds) };
    const rollout = o.rolloutEngine === 'llama.cpp' ? await llamaCppRollout(model, m, tokenizer, run.sampleRows, threads) : undefined;
    const lm = new TransformerPolicy<EngineModel>(
      model,
      tokenizer,
      sampling,
      run.optimizer,
      `${compute}${chatNote(chat)}${rollout ? `; sampling on ${rollout.sampler.describe()}` : ''})`,
      {
        reference,
        differentiable: (x) => x.scorer(),
        ...(chat ? { chat } : {}),
        microBatchPositions: plan.positionsPerPass,
        ...(rollout ? { rollout } : {}),
      },
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
      await reference.dispose();
      await model.dispose();
    }
    throw e;
  }
}

/** Seed 002's candidate scoring over the environment's fixed action set, on either decoder. */
function candidateScoring<M extends ScoringModel>(
  o: TransformerOptions,
  run: PolicyRunInfo,
  env: RunEnvironment,
  m: { model: M; reference: M; scorer: CandidateScorer<M>; tokenizer: Tokenizer; eos: readonly number[]; computeBase: string },
): CandidateScoringPolicy<M> {
  if (!env.tabular) throw new ModelLoadError(`policyOptions.actionMode "score" needs an environment with a fixed action set; "${env.name}" has none`);
  return new CandidateScoringPolicy<M>({
    model: m.model,
    reference: m.reference,
    scorer: m.scorer,
    tokenizer: m.tokenizer,
    spec: env.tabular(),
    eosId: m.eos[0],
    optimizer: run.optimizer,
    computeBase: m.computeBase,
    temperature: o.temperature > 0 ? o.temperature : 1,
    normalization: o.scoreNormalization,
  });
}

/** The chat format of a run: the template with the system prompt and the template variables the config gives. */
function chatFormatOf(tokenizer: HfTokenizer, eos: readonly number[], o: TransformerOptions): ChatFormat {
  return new ChatFormat(tokenizer, eos, o.systemPrompt, o.chatTemplateVariables);
}

/** How the run's record names its chat template, and a template's rewriting of earlier turns that an episode does not apply. */
function chatNote(chat: ChatFormat | undefined): string {
  if (!chat) return '';
  return chat.rewritesHistory
    ? ', chat template (its rewriting of earlier turns not applied: within an episode the model reads its turns as it wrote them)'
    : ', chat template';
}

/** contextLength 0: a fresh model's (a calculator episode fits) and a pretrained model's (at most its own). */
const FRESH_CONTEXT_LENGTH = 192;
const HF_CONTEXT_LENGTH = 2048;

/** The optimizer's settings of a run's algorithm (Adam's betas and epsilon are PyTorch's defaults). */
export function optimizerOptions(a: Pick<AlgorithmSettings, 'weightDecay' | 'maxGradNorm'>): AdamWOptions {
  return { ...ADAM_DEFAULTS, weightDecay: a.weightDecay, maxGradNorm: a.maxGradNorm };
}

/** The policy a run chose, built from its own options, acting in `env`. */
export async function createPolicy(choice: PolicyChoice, run: PolicyRunInfo, env: RunEnvironment): Promise<TrainablePolicy> {
  switch (choice.policy) {
    case 'table': {
      if (!env.tabular) throw new Error(`policy "table" needs a tabular environment; "${env.name}" is not`);
      const backend = await initBackend(choice.policyOptions.backend);
      return new TablePolicy(env.tabular(), run.optimizer, backend.name);
    }
    case 'transformer':
      return createTransformer(choice.policyOptions, run, env);
  }
}

async function createTransformer(o: TransformerOptions, run: PolicyRunInfo, env: RunEnvironment): Promise<TrainablePolicy> {
  const backend = await initBackend(o.backend);
  const init = o.init !== '' ? readCheckpoint(o.init) : undefined;
  if (init && !('kind' in init.manifest.model)) {
    throw new ModelLoadError(smallGptGone(`policyOptions.init: ${o.init}`));
  }
  if (init || o.model !== '') return createHfTransformer(o, run, env, backend, init);
  // a fresh model: a Hugging Face folder like any other, every weight trained
  const dir = freshModelFolder(freshModelSpec(o, run.seed), undefined, (f) => FRESH_MODEL_FIELDS[f]);
  return createHfTransformer({ ...o, model: dir, loraRank: 0 }, run, env, backend, undefined);
}

/** The run-config field behind each part of a fresh model's spec (errors name it). */
const FRESH_MODEL_FIELDS: Record<keyof NewModelSpec, string> = {
  architecture: 'policyOptions.architecture',
  layers: 'policyOptions.nLayers',
  hidden: 'policyOptions.dModel',
  heads: 'policyOptions.nHeads',
  kvHeads: 'policyOptions.nHeads',
  headDim: 'policyOptions.nHeads',
  intermediate: 'policyOptions.mlpRatio',
  tiedHead: 'policyOptions.tiedHead',
  maxPositions: 'policyOptions.contextLength',
  ropeTheta: 'policyOptions.architecture',
  tokenizer: 'policyOptions.tokenizer',
  seed: 'seed',
  dtype: 'policyOptions.weightDtype',
};

/** The fresh model a run without policyOptions.model trains: its shape options, seeded by the run. */
export function freshModelSpec(o: TransformerOptions, seed: number): NewModelSpec {
  return {
    architecture: o.architecture,
    layers: o.nLayers,
    hidden: o.dModel,
    heads: o.nHeads,
    // a SwiGLU MLP with the parameters of a GELU MLP of mlpRatio × dModel
    intermediate: Math.max(8, Math.round((o.mlpRatio * o.dModel * 2) / 3 / 8) * 8),
    tiedHead: o.tiedHead,
    maxPositions: o.contextLength > 0 ? o.contextLength : FRESH_CONTEXT_LENGTH,
    tokenizer: o.tokenizer !== '' ? path.resolve(o.tokenizer) : 'char',
    seed,
    dtype: 'float32',
  };
}

/**
 * Constrained decoding, when the options ask for it: the environment's action grammar over the
 * tokenizer's vocabulary, ended by a chat model's end-of-turn tokens (`end`) where it has a template.
 */
function constraintOf(
  o: Pick<TransformerOptions, 'constrainedDecoding'>,
  env: RunEnvironment,
  tokenizer: Tokenizer,
  end: readonly number[] = [],
): { constraint?: TokenConstraint } {
  if (!o.constrainedDecoding) return {};
  const grammar = env.stop?.grammar;
  if (!grammar) {
    throw new ModelLoadError(
      `policyOptions.constrainedDecoding: the environment "${env.name}" declares no action grammar (the calculator does). Fix: set it to false`,
    );
  }
  return { constraint: TokenConstraint.named(grammar, tokenizer, end) };
}

/** The sampling options of a run: the policy options' settings, the environment's stop, and a model's own end tokens. */
function samplingOf(
  o: Pick<TransformerOptions, 'temperature' | 'topK' | 'topP' | 'maxNewTokens'>,
  stop: StopSpec | undefined,
  endTexts: readonly string[] = [],
): SampleOptions {
  return {
    temperature: o.temperature,
    topK: o.topK,
    topP: o.topP,
    maxNewTokens: o.maxNewTokens,
    stop: [...(stop?.strings ?? []), ...endTexts],
    ...(stop?.test ? { stopWhen: STOP_TESTS[stop.test] } : {}),
  };
}

/** LoRA settings of the policy options (rank 0: full fine-tuning). */
export function loraOf(o: Pick<TransformerOptions, 'loraRank' | 'loraAlpha' | 'loraDropout' | 'loraTargets'>): LoraOptions | undefined {
  const rank = o.loraRank;
  if (rank <= 0) return undefined;
  const targets = o.loraTargets
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  return { rank, alpha: o.loraAlpha > 0 ? o.loraAlpha : 2 * rank, dropout: o.loraDropout, targets: targets.length ? targets : ['all-linear'] };
}

/**
 * A Hugging Face checkpoint as the policy: its memory plan checked against the backend before any
 * weight is read, its tokenizer and chat template, LoRA adapters (or full fine-tuning), and the base
 * model (with frozen adapters) as the KL reference. A warm start (init) names its base folder.
 */
async function createHfTransformer(
  o: TransformerOptions,
  run: PolicyRunInfo,
  env: RunEnvironment,
  backendInfo: BackendInfo,
  init: LoadedCheckpoint | undefined,
): Promise<TrainablePolicy> {
  const backend = backendInfo.name;
  const stored = init?.manifest.model;
  const dir = stored?.dir ?? path.resolve(o.model);
  const arch = readHfConfig(dir);
  const lora = stored ? stored.lora : loraOf(o);
  const contextLength = stored?.contextLength ?? Math.min(arch.maxPositions, o.contextLength > 0 ? o.contextLength : HF_CONTEXT_LENGTH);
  // wasm: the model runs on the engine (every core, vocabulary-chunked head; LoRA over bfloat16 weights
  // or full fine-tuning in float32), candidate scoring included, unless the engine has no builder for
  // the architecture (gpt2): that one runs on tfjs ops
  if (backend === 'wasm' && !engineUnsupported(arch)) {
    if (lora) checkLoraTargets(arch, lora.targets);
    return createEngineTransformer(o, run, env, backendInfo, init, { dir, arch, lora, contextLength });
  }
  if (o.rolloutEngine === 'llama.cpp') {
    throw new ModelLoadError(
      `policyOptions.rolloutEngine "llama.cpp" loads the policy's weights from the wasm engine, and this model runs on the tfjs decoder (${backend}${engineUnsupported(arch) ? `: ${engineUnsupported(arch)}` : ''}). Fix: rolloutEngine "engine", or the wasm backend`,
    );
  }
  const plan = fittingPlan(arch, { ...(lora ? { lora } : {}), contextLength, microBatchPositions: o.microBatchPositions, sampleRows: run.sampleRows, backend });
  assertFits(plan, dir, { lora: lora !== undefined, backend });
  const tokenizer = HfTokenizer.fromDirectory(dir, 'model');
  tokenizer.checkFits(dir, arch.vocabSize);
  const model = HfModel.load(dir, { contextLength, ...(lora ? { lora } : {}), seed: run.seed });
  let reference: HfModel | undefined;
  let policy: (TrainablePolicy & { dispose(): unknown }) | undefined;
  try {
    const eos = generationEos(dir, tokenizer);
    const trained = lora ? `LoRA rank ${lora.rank}, ${model.trainableCount().toLocaleString('en')} trained` : 'full fine-tuning';
    const compute = `tfjs ${describeBackend(backendInfo)} (${arch.modelType} ${model.parameterCount().toLocaleString('en')} parameters, ${trained}`;
    reference = model.reference();
    if (o.actionMode === 'score') {
      const scoring = candidateScoring(o, run, env, { model, reference, scorer: tfjsCandidateScorer, tokenizer, eos, computeBase: `${compute})` });
      policy = scoring;
      if (init) {
        restoreCheckpoint(init, model);
        restoreCheckpoint(init, reference);
      }
      return scoring;
    }
    const chat = o.chatTemplate !== 'none' && tokenizer.chatTemplate ? chatFormatOf(tokenizer, eos, o) : undefined;
    const eosTexts = chat ? [...chat.eosTexts] : eos.map((id) => tokenizer.decode([id]));
    const sampling = { ...samplingOf(o, env.stop, eosTexts), ...constraintOf(o, env, tokenizer, chat?.eosIds) };
    const lm = new TransformerPolicy<HfModel>(model, tokenizer, sampling, run.optimizer, `${compute}${chatNote(chat)})`, {
      reference,
      differentiable: hfDifferentiable,
      ...(chat ? { chat } : {}),
      microBatchPositions: plan.microBatchPositions,
    });
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
