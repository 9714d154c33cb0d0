// The Policy contract: sample actions with their behaviour log-probs, update on a batch of scored
// trajectories, keep a frozen reference, and count versions so every sample names the weights behind it.
import type { Observation, PolicyStep, Trajectory, Turn } from '../../shared/types';
import type { Task } from '../envs/environment';
import type { Rng } from '../random';

/** What a policy sees when it acts: the task, the latest observation and the episode so far. */
export interface PolicyContext {
  readonly task: Task;
  readonly observation: Observation;
  readonly turns: readonly Turn[];
}

export interface PolicySample {
  /** Raw action text (the environment parses it). */
  readonly text: string;
  readonly step: PolicyStep;
  /** The context window is full: the episode ends without this action reaching the environment. */
  readonly exhausted?: boolean;
  /** A scripted demonstration's deliberate mistake (see PolicyStep.tokens.imitate). */
  readonly mistake?: boolean;
}

/** The training objective of one update call. */
export type Objective =
  /** GRPO: clipped surrogate on the trajectory advantage + β·KL(π‖π_ref). */
  | { readonly kind: 'clipped-pg'; readonly clipEpsilon: number; readonly klCoef: number }
  /** Supervised negative log-likelihood of the taken actions (RS-SFT, warm starts). */
  | { readonly kind: 'nll' };

export interface UpdateStats {
  /** Means over epochs of the batch loss and its parts; clip fractions over all action terms. */
  readonly loss: number;
  readonly policyLoss: number;
  readonly kl: number;
  readonly clipFraction: number;
  readonly entropy: number;
  readonly gradNorm: number;
  readonly ratioMin: number;
  readonly ratioMax: number;
  readonly clipFractionLow?: number;
  readonly clipFractionHigh?: number;
  readonly logprobMismatch?: number;
  /** Optimizer steps taken; 0 when nothing was left to train on (e.g. only zero-advantage groups). */
  readonly optimizerSteps: number;
}

export interface Policy {
  /** Number of optimizer updates applied so far (0 = initial weights). */
  readonly version: number;
  /** Human-readable compute description, recorded with the run. */
  readonly compute: string;
  /** One action per context, drawn from the current policy; behaviour log-probs recorded. */
  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]>;
  /**
   * `epochs` optimizer steps on the whole batch. Trajectory losses are averaged over their own
   * steps first, then over trajectories ("per-trajectory mean, then batch mean").
   */
  update(trajectories: readonly Trajectory[], objective: Objective, epochs: number): UpdateStats | Promise<UpdateStats>;
  /** The same weights, sampling greedily (for greedy evaluation), where the policy samples at all. */
  greedy?(): Policy;
  /** Writes a checkpoint into `dir`; returns the file written. */
  save?(dir: string, note: string): string;
  /** Frees tensors and other resources. */
  dispose?(): void | Promise<void>;
}
