// Where a run's language model computes, chosen once, with its reason: the wasm engine (the wasm
// backend and an architecture the engine builds; llama.cpp may sample beside it: enginePath.ts), else
// the tfjs decoder on the run's tfjs backend (tfjsPath.ts). A path checks its memory plan before any
// weight is read, then loads the model; everything after it (tokenizer, chat format, sampling, the
// policy, the warm start: policyStages.ts) is the same on either path.
import type { TransformerOptions } from '../../shared/runConfig';
import type { Trainable } from '../algo/gradients';
import { engineUnsupported } from './hf/engine/engineWeights';
import { ModelLoadError, type HfArchitecture } from './hf/hfConfig';
import type { LoraOptions } from './hf/hfModel';
import type { LlamaCppRollout } from './hf/llamaCpp';
import type { CandidateScorer } from './hf/scoringPolicy';
import type { SerialisableModel } from './transformer/modelPolicy';
import type { Tokenizer } from './transformer/tokenizer';

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
  /** Why the run computes there (recorded in the run's compute string on the tfjs decoder). */
  readonly reason: string;
}

/**
 * wasm: the model runs on the engine (every core, vocabulary-chunked head; LoRA over bfloat16 weights
 * or full fine-tuning in float32), candidate scoring included, unless the engine has no builder for the
 * architecture (gpt2): that one, and every model on another backend, runs on tfjs ops. llama.cpp
 * sampling loads its weights from the engine, so it is refused on the tfjs decoder.
 */
export function chooseComputePath(o: Pick<TransformerOptions, 'rolloutEngine'>, backend: string, arch: HfArchitecture): PathChoice {
  const unsupported = engineUnsupported(arch);
  if (backend === 'wasm' && !unsupported) return { kind: 'engine', reason: `the wasm backend, and the engine builds ${arch.modelType}` };
  if (o.rolloutEngine === 'llama.cpp') {
    throw new ModelLoadError(
      `policyOptions.rolloutEngine "llama.cpp" loads the policy's weights from the wasm engine, and this model runs on the tfjs decoder (${backend}${unsupported ? `: ${unsupported}` : ''}). Fix: rolloutEngine "engine", or the wasm backend`,
    );
  }
  return { kind: 'tfjs', reason: `not the wasm engine: ${backend === 'wasm' ? unsupported : `it runs on the wasm backend, this run's is ${backend}`}` };
}
