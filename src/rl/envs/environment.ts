// The Environment contract. An environment owns one episode at a time: reset(task) → step(action)* →
// verify() → close(). Tool failures become observations, never exceptions that abort a batch.
import type { EpisodeOutcome, Observation, ParsedAction, TerminationReason } from '../../shared/types';
import type { Rng } from '../random';

/** One task instance: an id stable across runs, the prompt a policy reads, and hidden data for the verifier. */
export interface Task {
  readonly id: string;
  readonly prompt: string;
  readonly data: Readonly<Record<string, unknown>>;
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
  step(action: ParsedAction): Promise<StepResult>;
  /**
   * Scores the finished episode's artifact with the private verifier. Called by the trainer after the
   * episode, never by the agent; `rng` drives any random verifier inputs.
   */
  verify(rng: Rng): Promise<EpisodeOutcome>;
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

export interface EnvironmentFactory {
  readonly name: string;
  readonly description: string;
  create(options: Readonly<Record<string, unknown>>): Environment;
  tasks(options: Readonly<Record<string, unknown>>): TaskSource;
  /** Builds a task from an id outside the fixed sets (e.g. `calc:(3+4)*5`), for replay and debugging. */
  taskFromId?(id: string, options: Readonly<Record<string, unknown>>): Task | undefined;
  /**
   * Checks what the environment needs on this machine before a run (interpreter, sandbox level) and
   * describes it for the run record; throws an error that names the fix.
   */
  preflight?(options: Readonly<Record<string, unknown>>): string;
  /** Releases shared resources (sandbox pools) at the end of a run. */
  dispose?(): Promise<void>;
  /** Where a language model's action ends: stop strings, or a test on the decoded text. */
  readonly stop?: StopSpec;
  /** The stop rule when it depends on the run's options (it wins over `stop`). */
  stopFor?(options: Readonly<Record<string, unknown>>): StopSpec;
  /**
   * Loads what the environment reads from disk (task files, tool and reward files) and checks it,
   * before tasks(), create() or preflight(); throws an error naming the file and the fix.
   */
  prepare?(options: Readonly<Record<string, unknown>>): Promise<void>;
  /** Present when a table policy can drive this environment. */
  tabular?(options: Readonly<Record<string, unknown>>): TabularSpec;
}

export interface StopSpec {
  readonly strings: readonly string[];
  readonly when?: (text: string) => boolean;
  /** The name of an environment whose `stop.when` is this test: replica threads rebuild it from that name. */
  readonly whenOf?: string;
}

/** The stop rule of an environment for a run's options. */
export function stopOf(env: EnvironmentFactory, options: Readonly<Record<string, unknown>>): StopSpec | undefined {
  return env.stopFor?.(options) ?? env.stop;
}

/** A numeric environment option, or its default (options were validated against the spec table). */
export function numberOption(options: Readonly<Record<string, unknown>>, key: string, fallback: number): number {
  const v = options[key];
  return typeof v === 'number' ? v : fallback;
}
