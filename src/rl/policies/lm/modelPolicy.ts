// What every language-model policy shares, whichever way it acts (free text: TransformerPolicy; one of
// a fixed action set: CandidateScoringPolicy): the trained model, its frozen KL reference, AdamW over
// the model's trainable weights, and the count of completed updates; and what only those need — the
// optimizer step, the checkpoint and the resume point (checkpoint.ts's formats), the reference reset of
// a warm start, and dispose. A subclass samples and scores; the learner owns the update.
import type * as tf from '@tensorflow/tfjs';
import type { BaseWeights } from '../../../shared/baseWeights';
import { AdamW, type AdamWOptions } from '../../algo/adamw';
import { writeHfFolder } from './models/hfFolder';
import type { HfModelConfig } from './models/hfModel';
import { loadPolicyState, saveCheckpoint, savePolicyState } from './checkpoint';
import type { PolicyModel } from './models/policyModel';
import type { Tokenizer } from './tokenizer';

/** A decoder a policy trains: its weights and the config a checkpoint's manifest stores (which folder, LoRA or full). */
export type SerialisableModel = PolicyModel & { readonly config: HfModelConfig };

/**
 * Another holder of the policy's weights (llama.cpp's rollout engine): told when they change (an
 * optimizer step, a loaded resume point), and disposed with the policy.
 */
export interface WeightsFollower {
  weightsChanged(): void;
  dispose(): Promise<void>;
}

export abstract class ModelPolicy<M extends SerialisableModel> {
  readonly optimizer: AdamW;
  /** Updates completed (0: the initial or warm-started weights); every sample names it. */
  protected versionCounter = 0;

  protected constructor(
    readonly model: M,
    /** The frozen KL reference: the base model with frozen adapters under LoRA, a frozen copy under full fine-tuning. */
    readonly reference: M,
    readonly tokenizer: Tokenizer,
    optimizer: AdamWOptions,
    private readonly follower?: WeightsFollower,
  ) {
    this.optimizer = new AdamW([...model.weights], optimizer);
  }

  get version(): number {
    return this.versionCounter;
  }

  /** How the model holds its weights (the frozen base under LoRA: q8 blocks, bf16, f32): recorded with the run and in its checkpoints. */
  get baseWeights(): BaseWeights | undefined {
    return this.model.baseWeights;
  }

  /** Makes the current weights the KL reference (a warm start's reference is the warm-started model). */
  resetReference(): void {
    this.reference.copyFrom(this.model);
  }

  /** One AdamW step at learning rate `lr`; returns the gradient norm before clipping. */
  async applyGradients(grads: readonly tf.Tensor[], lr: number): Promise<number> {
    const norm = await this.optimizer.apply(grads, lr);
    this.model.weightsChanged?.();
    this.follower?.weightsChanged();
    return norm;
  }

  completeUpdate(): void {
    this.versionCounter += 1;
  }

  /** A checkpoint; under full fine-tuning it is a Hugging Face folder too (policyOptions.model reads it). */
  async save(dir: string, note: string): Promise<string> {
    const file = await saveCheckpoint(dir, this.model, this.tokenizer, this.optimizer, this.versionCounter, note);
    const weights = await this.model.hfTensors?.();
    if (weights) writeHfFolder(dir, this.model.config.dir, weights);
    return file;
  }

  /** A resume point: the weights, the optimizer's moments and step, the KL reference and the version. */
  async saveState(dir: string): Promise<void> {
    await savePolicyState(dir, this.model, this.reference, this.tokenizer, this.optimizer, this.versionCounter);
  }

  /** Restores a resume point of this model; one of another model (or folder) is a rejection, not a throw. */
  loadState(dir: string): Promise<void> {
    return Promise.resolve().then(() => {
      this.versionCounter = loadPolicyState(dir, this.model, this.reference, this.optimizer, this.tokenizer);
      this.follower?.weightsChanged();
    });
  }

  async dispose(): Promise<void> {
    await this.follower?.dispose();
    await this.reference.dispose();
    await this.model.dispose();
    this.optimizer.dispose();
  }
}
