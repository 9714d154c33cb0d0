// Where a run's language model computes, chosen once, with its reason (chooseComputePath): the wasm
// engine (the wasm backend and an architecture the engine builds; llama.cpp may sample beside it,
// loading the engine's weights), else the tfjs decoder on the run's tfjs backend (tfjs-node, WebGPU,
// wasm for what the engine does not build, cpu). A path checks its memory plan before any weight is
// read, then loads the model and gives the policy its view of it; everything after it (tokenizer, chat
// format, sampling, the policy, the warm start: policyStages.ts) is the same on either path.
import * as os from 'node:os';
import { bytes as formatBytes } from '../../shared/format';
import type { TransformerOptions } from '../../shared/runConfig';
import type { Trainable } from '../algo/gradients';
import { engineCandidateScorer } from './lm/models/engine/engineCandidates';
import { EngineModel } from './lm/models/engine/engineModel';
import { MAX_WASM32_BYTES, MEMORY64_FIX } from './lm/models/engine/engineAddress';
import { fittingEnginePlan } from './lm/models/engine/enginePlan';
import { engineQ8Unsupported, engineUnsupported } from './lm/models/engine/engineWeights';
import { ModelLoadError, type HfArchitecture } from './lm/models/hfConfig';
import { checkLoraTargets, HfModel, hfDifferentiable, type LoraOptions } from './lm/models/hfModel';
import { ggufCachePath, LlamaCppRollout, LlamaCppSampler } from './lm/rolloutEngines/llamaCpp';
import type { GgufWeightDtype } from './lm/models/gguf';
import { assertFits, describePlan, fittingPlan } from './lm/models/memoryPlan';
import { freshModelsRoot } from './lm/newCheckpoint';
import type { CandidateScorer } from './lm/models/candidateScorer';
import { tfjsCandidateScorer } from './lm/scoringPolicy';
import { describeBackend, type BackendInfo } from './lm/models/tfjsBackend';
import type { SerialisableModel } from './lm/modelPolicy';
import type { Tokenizer } from './lm/tokenizer';

/** The model a run trains, as its folder (or its warm start's checkpoint) gives it. */
export interface ModelSource {
  /** The Hugging Face folder (absolute). */
  readonly dir: string;
  readonly arch: HfArchitecture;
  /** Absent: full fine-tuning. */
  readonly lora: LoraOptions | undefined;
  /** Positions the policy uses (≤ the model's max_position_embeddings). */
  readonly contextLength: number;
}

/** What the stages after the compute path need of its model. */
export type PathModel<M> = SerialisableModel & {
  /** The frozen KL reference: the same base with frozen adapters under LoRA, a frozen copy under full fine-tuning. */
  reference(): M;
  parameterCount(): number;
  trainableCount(): number;
};

/** A compute path whose memory plan fits: it loads the model and gives the policy its view of it. */
export interface ComputePath<M extends PathModel<M>> {
  /** Why the run computes here (chooseComputePath's), recorded with the run as its computeReason. */
  readonly reason: string;
  /** Padded positions per forward and backward pass of the language-model policy's training. */
  readonly microBatchPositions: number;
  /** How candidate scoring (actionMode "score") scores on this path. */
  readonly scorer: CandidateScorer<M>;
  /** Reads the weights: called once, after the tokenizer is known to fit the model. */
  load(): Promise<M>;
  /** What computes, for the run's compute string: "wasm engine (8 threads, …)", "tfjs tensorflow (not the wasm engine: …)". */
  describe(model: M): string;
  /** The learner's view of the model or its reference. */
  differentiable(model: M): Trainable;
  /** Another engine that samples for the policy (policyOptions.rolloutEngine "llama.cpp"), when it asks for one. */
  rollout(model: M, tokenizer: Tokenizer): Promise<LlamaCppRollout | undefined>;
}

/** What a path needs of the run besides the policy options. */
export interface PathRunInfo {
  readonly seed: number;
  readonly sampleRows: number;
  readonly fullDistributions: boolean;
}

/** The compute path of a run and why: the first stage of createPolicy, before any weight is read. */
export interface PathChoice {
  readonly kind: 'engine' | 'tfjs';
  /** Why the run computes there: recorded with the run (its computeReason), and in its compute string on the tfjs decoder. */
  readonly reason: string;
}

/**
 * wasm: the model runs on the engine (every core, vocabulary-chunked head; LoRA over bfloat16 weights
 * or full fine-tuning in float32), candidate scoring included, unless the engine has no builder for the
 * architecture (gpt2): that one, and every model on another backend, runs on tfjs ops. llama.cpp
 * sampling loads its weights from the engine, so it is refused on the tfjs decoder.
 */
export function chooseComputePath(
  o: Pick<TransformerOptions, 'rolloutEngine'> & Partial<Pick<TransformerOptions, 'weightDtype'>>,
  backend: string,
  arch: HfArchitecture,
): PathChoice {
  const unsupported = engineUnsupported(arch);
  if (backend === 'wasm' && !unsupported) return { kind: 'engine', reason: `the wasm backend, and the engine builds ${arch.modelType}` };
  // (configRules' q8-on-the-engine refuses a backend named off wasm; this is "auto" resolving elsewhere, or gpt2)
  if (o.weightDtype === 'q8') {
    throw new ModelLoadError(
      `policyOptions.weightDtype "q8" runs on the wasm engine, and this model runs on the tfjs decoder (${backend}${unsupported ? `: ${unsupported}` : ''}), which holds float32 weights. Fix: backend "wasm" with a qwen2, qwen3 or llama checkpoint, or weightDtype "auto"`,
    );
  }
  if (o.rolloutEngine === 'llama.cpp') {
    throw new ModelLoadError(
      `policyOptions.rolloutEngine "llama.cpp" loads the policy's weights from the wasm engine, and this model runs on the tfjs decoder (${backend}${unsupported ? `: ${unsupported}` : ''}). Fix: rolloutEngine "engine", or the wasm backend`,
    );
  }
  return {
    kind: 'tfjs',
    reason: `not the wasm engine: ${backend === 'wasm' ? unsupported : `the engine runs only on the wasm backend; this run's is ${backend}`}`,
  };
}

/**
 * The engine for model `m` (`reason`: why, from chooseComputePath), refused (with the ways out) where
 * the options or the plan cannot run on it.
 */
export function enginePath(o: TransformerOptions, run: PathRunInfo, backend: BackendInfo, m: ModelSource, reason: string): ComputePath<EngineModel> {
  if (m.lora) checkLoraTargets(m.arch, m.lora.targets);
  // candidate scoring's distributions are over the A actions, which the learner holds whole
  if (run.fullDistributions && o.actionMode !== 'score') {
    throw new ModelLoadError(
      `algorithm.klEstimator "exact" needs every position's whole distribution (${m.arch.vocabSize.toLocaleString('en')} log-probs per token), which the wasm engine never holds. Fix: use klEstimator "k3" (or k1, k2)`,
    );
  }
  if (!m.lora && (o.weightDtype === 'bf16' || o.weightDtype === 'q8')) {
    throw new ModelLoadError(
      `policyOptions.weightDtype "${o.weightDtype}" with full fine-tuning (loraRank 0): the engine updates the weights themselves, in float32. Fix: weightDtype "auto" or "f32", or LoRA (loraRank 8)`,
    );
  }
  const q8Unsupported = o.weightDtype === 'q8' ? engineQ8Unsupported(m.arch) : undefined;
  if (q8Unsupported) throw new ModelLoadError(`policyOptions.weightDtype "q8": ${m.dir}: ${q8Unsupported}. Fix: weightDtype "bf16"`);
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
  if (!plan.fits) {
    throw new ModelLoadError(
      `policyOptions.model: ${m.dir} does not fit one wasm engine:\n${describePlan(plan)}\nWays out: ${m.lora ? '' : 'LoRA (policyOptions.loraRank 8), which trains adapters over the frozen weights; '}a smaller contextLength or fewer rows sampled at once (groupSize × groupsPerIteration); ${m.lora ? `policyOptions.weightDtype ${plan.dtype === 'q8' ? '"q8" is the smallest' : '"q8" (Q8_0 blocks, 0.56× bf16)'}; ` : ''}the tfjs-node backend (npm install @tensorflow/tfjs-node), whose memory is the machine's; a smaller checkpoint.${plan.total > MAX_WASM32_BYTES && plan.address.mode === 'wasm32' ? `\nThis runtime has no 64-bit WebAssembly memory for plans past 4 GiB. Fix: ${MEMORY64_FIX}.` : ''}`,
    );
  }
  return {
    reason,
    microBatchPositions: plan.positionsPerPass,
    scorer: engineCandidateScorer,
    load: () =>
      EngineModel.create({
        dir: m.dir,
        arch: m.arch,
        contextLength: m.contextLength,
        ...(m.lora ? { lora: m.lora } : {}),
        seed: run.seed,
        threads,
        plan,
        planText: `Memory plan:\n${describePlan(plan)}`,
      }),
    // the threads the engine started and the SIMD it found
    describe: ({ engine: e }) =>
      `wasm engine (${e.threads} threads, ${e.relaxed ? 'relaxed SIMD' : 'SIMD'}, ${plan.address.mode} memory${plan.keepsActivations ? ', activations kept (no recompute)' : ''}, ${plan.dtype === 'q8' ? 'q8 base (Q8_0 blocks of 32, 8-bit activations per block)' : `${plan.dtype} weights`}, plan ${formatBytes(plan.total)}; tfjs ${describeBackend(backend)} for the optimizer)`,
    differentiable: (x) => x.scorer(),
    rollout: (model, tokenizer) =>
      o.rolloutEngine === 'llama.cpp'
        ? llamaCppRollout(model, m, tokenizer, run.sampleRows, threads, plan.dtype === 'q8' ? 'q8' : 'stored')
        : Promise.resolve(undefined),
  };
}

/**
 * llama.cpp as the rollout engine of a model on the engine: the checkpoint's GGUF (written once, under
 * the models cache, named by the digest of the base weights and, at weightDtype "q8", written as the
 * engine's Q8_0 blocks under a name of its own), the policy's adapters or weights loaded before each
 * sample after a change. Refused with the reason and the fix where llama.cpp cannot run.
 */
async function llamaCppRollout(
  model: EngineModel,
  m: ModelSource,
  tokenizer: Tokenizer,
  rows: number,
  threads: number,
  weightDtype: GgufWeightDtype,
): Promise<LlamaCppRollout> {
  let sampler: LlamaCppSampler;
  try {
    const gguf = ggufCachePath(freshModelsRoot(), model.engine.baseDigest(), weightDtype);
    sampler = await LlamaCppSampler.open({ dir: m.dir, gguf, contextLength: m.contextLength, rows, threads, tokenizer, weightDtype });
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

/**
 * The tfjs decoder for model `m`; `reason` (why not the engine, from chooseComputePath) is recorded
 * with the run, and in its compute string too: "tfjs wasm (not the wasm engine: gpt2 … runs on tfjs
 * ops) (gpt2 …)".
 */
export function tfjsPath(
  o: Pick<TransformerOptions, 'microBatchPositions'>,
  run: PathRunInfo,
  backend: BackendInfo,
  m: ModelSource,
  reason: string,
): ComputePath<HfModel> {
  const lora = m.lora;
  const plan = fittingPlan(m.arch, {
    ...(lora ? { lora } : {}),
    contextLength: m.contextLength,
    microBatchPositions: o.microBatchPositions,
    sampleRows: run.sampleRows,
    backend: backend.name,
  });
  assertFits(plan, m.dir, { lora: lora !== undefined, backend: backend.name });
  return {
    reason,
    describe: () => `tfjs ${describeBackend(backend)} (${reason})`,
    microBatchPositions: plan.microBatchPositions,
    scorer: tfjsCandidateScorer,
    load: () => Promise.resolve(HfModel.load(m.dir, { contextLength: m.contextLength, ...(lora ? { lora } : {}), seed: run.seed })),
    differentiable: hfDifferentiable,
    // llama.cpp loads its weights from the engine: chooseComputePath refused it here
    rollout: () => Promise.resolve(undefined),
  };
}
