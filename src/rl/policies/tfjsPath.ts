// The tfjs decoder (HfModel) as a run's compute path: every architecture, on the run's tfjs backend
// (tfjs-node, WebGPU, wasm, cpu), its memory plan checked against that backend's limits before any
// weight is read; candidate scoring through tfjs autodiff. The engine is the other path (enginePath.ts).
import type { TransformerOptions } from '../../shared/runConfig';
import { HfModel, hfDifferentiable } from './hf/hfModel';
import { assertFits, fittingPlan } from './hf/memoryPlan';
import { tfjsCandidateScorer } from './hf/scoringPolicy';
import { describeBackend, type BackendInfo } from './transformer/backend';
import type { ComputePath, ModelSource, PathRunInfo } from './computePath';

/**
 * The tfjs decoder for model `m`; `reason` (why not the engine, from chooseComputePath) is recorded in
 * the run's compute string: "tfjs wasm (not the wasm engine: gpt2 … runs on tfjs ops) (gpt2 …)".
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
    describe: () => `tfjs ${describeBackend(backend)} (${reason})`,
    microBatchPositions: plan.microBatchPositions,
    scorer: tfjsCandidateScorer,
    load: () => Promise.resolve(HfModel.load(m.dir, { contextLength: m.contextLength, ...(lora ? { lora } : {}), seed: run.seed })),
    differentiable: hfDifferentiable,
    // llama.cpp loads its weights from the engine: chooseComputePath refused it here
    rollout: () => Promise.resolve(undefined),
  };
}
