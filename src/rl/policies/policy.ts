// The Policy contract. A policy samples actions with their behaviour log-probs and counts versions so
// every sample names the weights behind it; a trainable policy also provides what only it can for an
// update (its training view of a trajectory, its weights as rl/algo's passes take them and how much one
// pass may hold, an optimizer step, save and load). The algorithm itself (advantages, shaping,
// reference pass, epochs, minibatches, learning-rate schedule, the log-prob and gradient passes) is the
// learner's (rl/train/learner.ts over rl/algo/gradients.ts).
import type * as tf from '@tensorflow/tfjs';
import type { BaseWeights } from '../../shared/baseWeights';
import type { Observation, PolicyStep, Trajectory, Turn } from '../../shared/types';
import type { Task } from '../envs/environment';
import type { TrainSequence } from '../algo/trainSequence';
import type { Trainable } from '../algo/gradients';
import type { Rng } from '../random';

/** What a policy sees when it acts: the task, the latest observation and the episode so far. */
export interface PolicyContext {
  readonly task: Task;
  readonly observation: Observation;
  readonly turns: readonly Turn[];
  /**
   * The episode's own random stream (the concurrent schedule): a policy draws this context's action
   * from it rather than from the batch's stream, so the draw does not depend on the batch.
   */
  readonly rng?: Rng;
}

export interface PolicySample {
  /** Raw action text (the environment parses it). */
  readonly text: string;
  readonly step: PolicyStep;
  /** The context window is full: the episode ends without this action reaching the environment. */
  readonly exhausted?: boolean;
  /** A scripted demonstration's deliberate mistake (see PolicyStep.tokens.imitate). */
  readonly mistake?: boolean;
  /** An answer to an agent program's request: why it ended (OpenAI's finish_reason before tool calls). */
  readonly finish?: 'stop' | 'length';
  /** The policy's tokenizer, for an agent program's per-token log-probs (token texts). */
  readonly decode?: (ids: readonly number[]) => string;
  /** Why this context got no sample (an agent program's request the chat template cannot render): its episode fails, not the batch. */
  readonly refused?: string;
}

export interface Policy {
  /** Number of updates applied so far (0 = initial weights). */
  readonly version: number;
  /** Human-readable compute description, recorded with the run. */
  readonly compute: string;
  /** Why it computes there (a language model's compute path, chooseComputePath), recorded with the run beside `compute`. */
  readonly computeReason?: string;
  /** How a language model held its weights (its frozen base under LoRA; under full fine-tuning the trained weights, f32): recorded with the run; absent for a policy without a language model. */
  readonly baseWeights?: BaseWeights;
  /** One action per context, drawn from the current policy; behaviour log-probs recorded. */
  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]>;
  /** The same weights, sampling greedily (for greedy evaluation), where the policy samples at all. */
  greedy?(): Policy;
  /** Frees tensors and other resources. */
  dispose?(): void | Promise<void>;
}

/** The learner's handle on a policy's parameters. */
export interface TrainablePolicy extends Policy {
  /** Positions one sequence may have at most (a language model: its context length; a sequence of n ids has n − 1). */
  readonly maxPositions: number;
  /** Units a position chooses among (vocabulary size, or the table's action count). */
  readonly vocabularySize: number;
  /** The sampling temperature its log-probs are taken at (1 where it samples from the raw distribution). */
  readonly temperature: number;
  /** The trajectory as this policy trains on it (the learner sets the advantage it trains with), or undefined when it has nothing to train on. */
  sequence(t: Trajectory): TrainSequence | undefined;
  /** The trajectory as one training sequence per segment (an agent program that rewrote its history); absent: `sequence`. */
  sequences?(t: Trajectory): TrainSequence[];
  /**
   * Its weights as rl/algo/gradients.ts's passes take them: the current ones (trained, and scored for
   * π_old) or the frozen KL reference (scored only). Gradients are aligned with `trainable('current').weights`.
   */
  trainable(model: 'current' | 'reference'): Trainable;
  /**
   * What one pass may hold, in padded positions (a model that scores its own targets or its logits
   * outside tfjs packs by its own measure and ignores these): a training pass keeps every activation
   * for the backward pass; a forward-only log-prob pass frees them as it goes.
   */
  readonly passBudget: { readonly train: number; readonly logprobs: number };
  /** One optimizer step at learning rate `lr` (gradient-norm clipping and decay are the optimizer's settings); returns the norm before clipping. */
  applyGradients(grads: readonly tf.Tensor[], lr: number): Promise<number>;
  /** The update is complete: the next samples carry a new version. */
  completeUpdate(): void;
  /** Writes a checkpoint into `dir`; returns the file written. */
  save?(dir: string, note: string): Promise<string>;
  /**
   * A resume point: everything the policy needs to continue exactly (weights, optimizer state and
   * step, the KL reference, the version) into `dir`, and back.
   */
  saveState(dir: string): Promise<void>;
  /**
   * Scripted demonstrations as this policy's training data (method sft): the reference agent acts, and
   * its text becomes the token layout of a sample of this policy. Absent where the policy writes no text.
   */
  demonstrator?(agent: Policy): Policy;
  loadState(dir: string): Promise<void>;
}

/** A policy's greedy view: the same weights and version, sampling through `sample` (its argmax). */
export function greedyView(version: () => number, compute: string, sample: Policy['sample']): Policy {
  return {
    get version() {
      return version();
    },
    compute,
    sample,
  };
}

export function isTrainable(p: Policy): p is TrainablePolicy {
  return typeof (p as Partial<TrainablePolicy>).trainable === 'function';
}
