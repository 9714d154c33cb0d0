// The Environment contract. An environment owns one episode at a time: reset(task) → step(action)* →
// verify() → close(). Tool failures become observations, never exceptions that abort a batch.
import type { EpisodeOutcome, Observation, ParsedAction, PolicyStep, TerminationReason } from '../../shared/types';
import type { EnvName } from '../../shared/runConfig';
import type { Rng } from '../random';
import type { ActionGrammarName } from './actionGrammar';
import type { StopTest } from './parsers';

/** One task instance: an id stable across runs, the prompt a policy reads, and hidden data for the verifier. */
export interface Task {
  readonly id: string;
  readonly prompt: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** What the policy sampled for an action (a policy's sample is one), for an environment that answers with its tokens. */
export interface SampledAction {
  readonly step: PolicyStep;
  /** Why the sample ended: its stop (an end-of-turn token or a stop string) or its length. */
  readonly finish?: 'stop' | 'length';
  /** The policy's tokenizer: token ids to text. */
  readonly decode?: (ids: readonly number[]) => string;
}

export interface StepResult {
  readonly observation: Observation;
  readonly done: boolean;
  /** Set when done. */
  readonly termination?: TerminationReason;
}

export interface Environment {
  /** Starts an episode; returns the first observation (the task as the policy sees it). */
  reset(task: Task): Promise<Observation>;
  /** Raw policy text → action; never throws (malformed text becomes a format_error action). */
  parseAction(text: string): ParsedAction;
  /** Applies an action; `sample` is what the policy sampled for it (an agent program's answer needs its tokens). */
  step(action: ParsedAction, sample?: SampledAction): Promise<StepResult>;
  /**
   * Scores the finished episode's artifact with the private verifier. Called by the trainer after the
   * episode, never by the agent; `rng` drives any random verifier inputs.
   */
  verify(rng: Rng): Promise<EpisodeOutcome>;
  /**
   * The loop took the episode's last turn (it is to be verified, maybe later, with its batch): stop what
   * need not run until then (an agent program left waiting on a request after the turn cap).
   */
  end?(): void;
  /** Releases resources (sandboxes, processes); safe to call twice and after a failure. */
  close(): Promise<void>;
}

/** A finite visible state and action set, for tabular policies. */
export interface TabularSpec {
  readonly stateCount: number;
  readonly actions: readonly string[];
  /** Visible state index of an observation, in [0, stateCount). */
  stateOf(observation: Observation): number;
}

/** Where tasks come from: a fixed training split and a held-out split. */
export interface TaskSource {
  readonly train: readonly Task[];
  readonly heldOut: readonly Task[];
}

/**
 * An environment opened for one run with its options (parsed once, when it was opened): it makes the
 * run's episodes and owns what they share — sandbox pools, tool processes, loaded task files — until
 * dispose(), which closes those and nothing of any other run.
 */
export interface RunEnvironment {
  /** The environment's name (a registered one's EnvName; a test's own). */
  readonly name: string;
  readonly description: string;
  /** A fresh episode. */
  create(): Environment;
  tasks(): TaskSource;
  /** Builds a task from an id outside the fixed sets (e.g. `calc:(3+4)*5`), for replay and debugging. */
  taskFromId?(id: string): Task | undefined;
  /**
   * Checks what the environment needs on this machine before a run (interpreter, sandbox level) and
   * describes it for the run record; throws an error that names the fix.
   */
  preflight?(): string;
  /** Where a language model's action ends. */
  readonly stop?: StopSpec;
  /** Present when a table policy can drive this environment. */
  tabular?(): TabularSpec;
  /** The most episodes it can hold open at once (an agent program is a process per episode); absent = no limit. */
  readonly maxOpen?: number;
  /** Releases what the run's episodes shared (sandbox pools, tool processes). Safe to call twice. */
  dispose(): Promise<void>;
}

/** An environment's definition: its name, and how it opens for a run with its own options. */
export interface EnvironmentDefinition<O> {
  readonly name: EnvName;
  readonly description: string;
  /**
   * Reads what the environment needs from disk (task files, tool and reward files), checks it and
   * opens it for a run; throws an error naming the file and the fix.
   */
  open(options: O): Promise<RunEnvironment>;
}

/** Where a language model's action ends: stop strings, or a named test on the decoded text (envs/parsers STOP_TESTS). */
export interface StopSpec {
  readonly strings: readonly string[];
  readonly test?: StopTest;
  /** The grammar of a well-formed action (envs/actionGrammar ACTION_GRAMMARS), for constrained decoding. */
  readonly grammar?: ActionGrammarName;
}
