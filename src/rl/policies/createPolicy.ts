// Builds the policy a run chose from that policy's own options (typed by its table) and the few facts
// of the run it needs (PolicyRunInfo): the seed, the optimizer's settings (the learner decides the
// learning rate of every step), how many episodes are sampled at once, whether the objective reads
// whole distributions. A language model is one pipeline: its source (a folder, a warm start's
// checkpoint, or a fresh model written as a folder) → the compute path, chosen once with its reason,
// which the run records (the wasm engine, with llama.cpp sampling beside it when asked, or the tfjs
// decoder: computePath.ts) → tokenizer → chat format → sampling → policy → warm start
// (policyStages.ts), the stages after the path the same on every path. Impossible combinations were
// rejected by validateRunConfig already; the checks here guard programmatic callers.
import * as path from 'node:path';
import type { AlgorithmSettings } from '../../shared/algorithm';
import type { PolicyChoice, TransformerOptions } from '../../shared/runConfig';
import { ADAM_DEFAULTS, type AdamWOptions } from '../algo/adamw';
import type { RunEnvironment } from '../envs/environment';
import { ModelLoadError, readHfConfig } from './lm/models/hfConfig';
import type { LoraOptions } from './lm/models/hfModel';
import { freshModelFolder, type NewModelSpec } from './lm/newCheckpoint';
import { chooseComputePath, enginePath, tfjsPath, type ComputePath, type ModelSource, type PathModel } from './computePath';
import type { TrainablePolicy } from './policy';
import { candidateScoring, chatFormatOf, chatNote, samplingFor, tokenizerOf, warmStart } from './policyStages';
import { TablePolicy } from './table/tablePolicy';
import { initBackend } from './lm/models/tfjsBackend';
import { readCheckpoint, smallGptGone, type LoadedCheckpoint } from './lm/checkpoint';
import type { ModelPolicy } from './lm/modelPolicy';
import { TransformerPolicy } from './lm/transformerPolicy';

/** What a policy needs to know of the run besides its own options. */
export interface PolicyRunInfo {
  readonly seed: number;
  readonly optimizer: AdamWOptions;
  /** Episodes sampled at once (groupSize × groupsPerIteration): a model's memory plan sizes its KV cache for them. */
  readonly sampleRows: number;
  /** The objective reads every position's whole distribution (the exact KL), which the wasm engine never holds. */
  readonly fullDistributions: boolean;
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
      return createLanguageModel(choice.policyOptions, run, env);
  }
}

/**
 * A Hugging Face checkpoint as the policy: its memory plan checked on its compute path before any
 * weight is read, its tokenizer and chat template, LoRA adapters (or full fine-tuning), and the base
 * model (with frozen adapters) as the KL reference. A warm start (init) names its base folder; without
 * a model or a warm start, a fresh model is written as a folder like any other, every weight trained.
 */
async function createLanguageModel(options: TransformerOptions, run: PolicyRunInfo, env: RunEnvironment): Promise<TrainablePolicy> {
  const backend = await initBackend(options.backend);
  const init = options.init !== '' ? readCheckpoint(options.init) : undefined;
  if (init && !('kind' in init.manifest.model)) throw new ModelLoadError(smallGptGone(`policyOptions.init: ${options.init}`));
  const o =
    init || options.model !== ''
      ? options
      : { ...options, model: freshModelFolder(freshModelSpec(options, run.seed), undefined, (f) => FRESH_MODEL_FIELDS[f]), loraRank: 0 };
  const source = modelSource(o, init);
  const chosen = chooseComputePath(o, backend.name, source.arch);
  return chosen.kind === 'engine'
    ? buildPolicy(enginePath(o, run, backend, source, chosen.reason), o, run, env, source, init)
    : buildPolicy(tfjsPath(o, run, backend, source, chosen.reason), o, run, env, source, init);
}

/** The model a run trains: a warm start's checkpoint names its folder, LoRA and context length; else the options do. */
export function modelSource(o: TransformerOptions, init: LoadedCheckpoint | undefined): ModelSource {
  const stored = init?.manifest.model;
  const dir = stored?.dir ?? path.resolve(o.model);
  const arch = readHfConfig(dir);
  return {
    dir,
    arch,
    lora: stored ? stored.lora : loraOf(o),
    contextLength: stored?.contextLength ?? Math.min(arch.maxPositions, o.contextLength > 0 ? o.contextLength : HF_CONTEXT_LENGTH),
  };
}

/** The stages after the compute path, the same on each: tokenizer → model → chat format → sampling → policy → warm start. */
async function buildPolicy<M extends PathModel<M>>(
  path: ComputePath<M>,
  o: TransformerOptions,
  run: PolicyRunInfo,
  env: RunEnvironment,
  source: ModelSource,
  init: LoadedCheckpoint | undefined,
): Promise<TrainablePolicy> {
  const { tokenizer, eos } = tokenizerOf(source.dir, source.arch.vocabSize);
  const model = await path.load();
  let reference: M | undefined;
  let policy: (ModelPolicy<M> & TrainablePolicy) | undefined;
  try {
    reference = model.reference();
    const trained = source.lora ? `LoRA rank ${source.lora.rank}, ${model.trainableCount().toLocaleString('en')} trained` : 'full fine-tuning';
    const described = `${path.describe(model)} (${source.arch.modelType} ${model.parameterCount().toLocaleString('en')} parameters, ${trained}`;
    if (o.actionMode === 'score') {
      const scoringInputs = {
        model,
        reference,
        scorer: path.scorer,
        tokenizer,
        eos,
        optimizer: run.optimizer,
        computeBase: `${described})`,
        computeReason: path.reason,
      };
      policy = candidateScoring(o, env, scoringInputs);
    } else {
      const chat = chatFormatOf(o, tokenizer, eos);
      const sampling = samplingFor(o, env, tokenizer, eos, chat);
      const rollout = await path.rollout(model, tokenizer);
      const note = `${chatNote(chat)}${rollout ? `; sampling on ${rollout.sampler.describe()}` : ''}`;
      policy = new TransformerPolicy<M>(model, tokenizer, sampling, run.optimizer, `${described}${note})`, {
        reference,
        differentiable: (x) => path.differentiable(x),
        ...(chat ? { chat } : {}),
        microBatchPositions: path.microBatchPositions,
        computeReason: path.reason,
        ...(rollout ? { rollout } : {}),
      });
    }
    warmStart(policy, init);
    return policy;
  } catch (e) {
    // the policy owns the model, its reference and the optimizer's moments once it exists
    if (policy) await policy.dispose();
    else {
      await reference?.dispose();
      await model.dispose();
    }
    throw e;
  }
}

/** contextLength 0: a fresh model's (a calculator episode fits) and a pretrained model's (at most its own). */
const FRESH_CONTEXT_LENGTH = 192;
const HF_CONTEXT_LENGTH = 2048;

/** The optimizer's settings of a run's algorithm (Adam's betas and epsilon are PyTorch's defaults). */
export function optimizerOptions(a: Pick<AlgorithmSettings, 'weightDecay' | 'maxGradNorm'>): AdamWOptions {
  return { ...ADAM_DEFAULTS, weightDecay: a.weightDecay, maxGradNorm: a.maxGradNorm };
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
