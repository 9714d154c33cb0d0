// The Policy contract. A policy samples actions with their behaviour log-probs and counts versions so
// every sample names the weights behind it; a trainable policy also provides what only it can for an
// update (its training view of a trajectory, log-probs, gradients of a loss it is handed, an
// optimizer step, save and load). The algorithm itself (advantages, shaping, reference pass, epochs,
// minibatches, learning-rate schedule, data-parallel shards) is the learner's (rl/train/learner.ts).
import type * as tf from '@tensorflow/tfjs';
import type { Observation, PolicyStep, Trajectory, Turn } from '../../shared/types';
import type { Task } from '../envs/environment';
import type { LossSpec } from '../algo/objective';
import type { LossInput, LossStats, TrainSequence } from '../algo/batch';
import type { SequenceLogprobs } from '../algo/gradients';
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
  /** One action per context, drawn from the current policy; behaviour log-probs recorded. */
  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]>;
  /** The same weights, sampling greedily (for greedy evaluation), where the policy samples at all. */
  greedy?(): Policy;
  /** Frees tensors and other resources. */
  dispose?(): void | Promise<void>;
}

/** The learner's handle on a policy's parameters. Parts (`part`) are its data-parallel compute units: 0 = this thread. */
export interface TrainablePolicy extends Policy {
  /** Data-parallel compute units that work at the same time (1 = this thread only). */
  readonly parallelism: number;
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
  /** Log-probs of each sequence's targets under the current weights or the frozen reference, on part `part`. */
  logprobs(
    part: number,
    seqs: readonly TrainSequence[],
    o: { readonly model: 'current' | 'reference'; readonly temperature: number; readonly rows: boolean },
  ): Promise<SequenceLogprobs>;
  /** Gradient of `spec`'s loss on these inputs, on part `part`, aligned with the policy's weights (the caller disposes it). */
  gradients(part: number, inputs: readonly LossInput[], spec: LossSpec): Promise<{ grads: tf.Tensor[]; stats: LossStats }>;
  /** One optimizer step at learning rate `lr` (gradient-norm clipping and decay are the optimizer's settings); returns the norm before clipping. */
  applyGradients(grads: readonly tf.Tensor[], lr: number): Promise<number>;
  /** The update is complete: the next samples carry a new version. */
  completeUpdate(): void;
  /** Writes a checkpoint into `dir`; returns the file written. */
  save?(dir: string, note: string): Promise<string>;
  /**
   * A resume point: everything the policy needs to continue exactly (weights, optimizer state and
   * step, the KL reference, the version) into `dir`, and back. The data-parallel parts get the loaded
   * weights before anything else is asked of them.
   */
  saveState(dir: string): Promise<void>;
  /**
   * Scripted demonstrations as this policy's training data (method sft): the reference agent acts, and
   * its text becomes the token layout of a sample of this policy. Absent where the policy writes no text.
   */
  demonstrator?(agent: Policy): Policy;
  /** Milliseconds spent sending new weights to helper replicas since the last call (data-parallel policies). */
  takeSyncMs?(): number;
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
  return typeof (p as Partial<TrainablePolicy>).gradients === 'function';
}
