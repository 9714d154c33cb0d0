// The wasm engine as a run's compute path: a Hugging Face checkpoint on every core, its memory plan
// (weights in bfloat16 or float32, the KV cache of the rows sampled at once, a training pass's
// activations) sizing the engine's memory before anything is read; tfjs holds only the optimizer. With
// policyOptions.rolloutEngine "llama.cpp", llama.cpp samples beside it from the same weights.
import * as os from 'node:os';
import type { TransformerOptions } from '../../shared/runConfig';
import { bytes as formatBytes } from '../../shared/format';
import { engineCandidateScorer } from './hf/engine/engineCandidates';
import { EngineModel } from './hf/engine/engineModel';
import { fittingEnginePlan } from './hf/engine/enginePlan';
import { ModelLoadError } from './hf/hfConfig';
import { checkLoraTargets } from './hf/hfModel';
import { ggufCachePath, LlamaCppRollout, LlamaCppSampler } from './hf/llamaCpp';
import { describePlan } from './hf/memoryPlan';
import { freshModelsRoot } from './hf/newCheckpoint';
import { describeBackend, type BackendInfo } from './transformer/backend';
import type { Tokenizer } from './transformer/tokenizer';
import type { ComputePath, ModelSource, PathRunInfo } from './computePath';

/** The engine for model `m`, refused (with the ways out) where the options or the plan cannot run on it. */
export function enginePath(o: TransformerOptions, run: PathRunInfo, backend: BackendInfo, m: ModelSource): ComputePath<EngineModel> {
  if (m.lora) checkLoraTargets(m.arch, m.lora.targets);
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
  if (!plan.fits) {
    throw new ModelLoadError(
      `policyOptions.model: ${m.dir} does not fit one wasm engine:\n${describePlan(plan)}\nWays out: ${m.lora ? '' : 'LoRA (policyOptions.loraRank 8), which trains adapters over the frozen weights; '}a smaller contextLength or fewer rows sampled at once (groupSize × groupsPerIteration); ${m.lora ? 'policyOptions.weightDtype "bf16"; ' : ''}the tfjs-node backend (npm install @tensorflow/tfjs-node), whose memory is the machine's; a smaller checkpoint.`,
    );
  }
  return {
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
      `wasm engine (${e.threads} threads, ${e.relaxed ? 'relaxed SIMD' : 'SIMD'}, ${plan.dtype} weights, plan ${formatBytes(plan.total)}; tfjs ${describeBackend(backend)} for the optimizer)`,
    differentiable: (x) => x.scorer(),
    rollout: (model, tokenizer) =>
      o.rolloutEngine === 'llama.cpp' ? llamaCppRollout(model, m, tokenizer, run.sampleRows, threads) : Promise.resolve(undefined),
  };
}

/**
 * llama.cpp as the rollout engine of a model on the engine: the checkpoint's GGUF (written once, under
 * the models cache, named by the digest of the base weights), the policy's adapters or weights loaded
 * before each sample after a change. Refused with the reason and the fix where llama.cpp cannot run.
 */
async function llamaCppRollout(model: EngineModel, m: ModelSource, tokenizer: Tokenizer, rows: number, threads: number): Promise<LlamaCppRollout> {
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
