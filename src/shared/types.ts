// The records that cross every boundary (engine → store → CLI → host → webview). One documented
// record per concept; no vscode and no Node built-ins here, so every runtime can import it.
import type { BaseWeights } from './baseWeights';

/** One tool over one iteration's episodes (computed by shared/toolHealth.ts). */
export interface ToolHealth {
  /** Calls over the iteration (what the rates are shares of). */
  readonly calls: number;
  /** Mean calls per episode (over every episode of the iteration, calling or not). */
  readonly callsPerEpisode: number;
  /** Share of calls the tool refused or failed (bad arguments, an exception, a crash; not a format error). */
  readonly errorRate: number;
  /** Share of calls that ran out of time. */
  readonly timeoutRate: number;
  /** Latency percentiles over the calls that reported a duration (ms); absent when none did. */
  readonly latencyP50Ms?: number;
  readonly latencyP95Ms?: number;
  readonly latencyMaxMs?: number;
}

/** Why an episode ended. */
export type TerminationReason =
  /** The agent submitted (a `finish` / answer action) within its budget. */
  | 'finished'
  /** The environment's own step budget ran out before the agent submitted. */
  | 'budget_exhausted'
  /** The agent loop's turn cap was reached (a guard above any environment budget). */
  | 'turn_cap'
  /** The environment failed in a way that is not the agent's fault (recorded, reward 0). */
  | 'env_error'
  /** The policy's context window is full: no room to write another action. */
  | 'context_exhausted';

/** Terminations of an episode that ran out of room rather than ending (overlong filtering's set). */
export const TRUNCATED_TERMINATIONS: ReadonlySet<string> = new Set(['context_exhausted', 'turn_cap']);

/** What the environment returns after one action. Structured data plus the text a model would read. */
export interface Observation {
  /** The text shown to the policy (for language models this is what gets tokenized). */
  readonly text: string;
  /** Machine-readable fields (exit code, public-test result, code variant, ...). JSON-serialisable. */
  readonly data: Readonly<Record<string, unknown>>;
  /**
   * The message a chat-template policy makes of it, where it differs from a user message holding
   * `text`: a tool result (the template wraps it its own way) or a first prompt whose tools go to the
   * template's `tools` instead of the text.
   */
  readonly chat?: ChatMessagePart;
  /** An agent program's chat-completions request (env "agent"): what the policy answers, rendered by its chat template. */
  readonly request?: AgentRequest;
}

/** One message of an agent program's conversation, as its OpenAI client sent it. */
export interface AgentMessage {
  readonly role: 'system' | 'user' | 'assistant' | 'tool';
  readonly content: string;
  /** An assistant message's calls: arguments as the JSON text the program sent. */
  readonly toolCalls?: readonly { readonly id: string; readonly name: string; readonly arguments: string }[];
  readonly toolCallId?: string;
  readonly name?: string;
}

/**
 * A request of an agent program (rl/envs/agent). `continuesFrom` > 0: its first `continuesFrom` messages
 * are the conversation already in the episode's context (the earlier request and the policy's answer,
 * as generated), so only the messages after them enter the context; 0: a new segment, the whole
 * conversation rendered afresh (the first request, or a program that rewrote its history: `rewrite`
 * says where).
 */
export interface AgentRequest {
  readonly messages: readonly AgentMessage[];
  /** Function schemas ({ type: "function", function: { name, description, parameters } }) for the template. */
  readonly tools: readonly Readonly<Record<string, unknown>>[];
  readonly continuesFrom: number;
  readonly rewrite?: string;
  /** The request's max_tokens / max_completion_tokens (the policy's own cap applies too). */
  readonly maxTokens?: number;
  /** The request's stop strings: the answer ends before the first one. */
  readonly stop?: readonly string[];
}

export interface ChatMessagePart {
  readonly role: 'user' | 'tool';
  readonly content: string;
  /** Function schemas ({ type: "function", function: { name, description, parameters } }) for the template. */
  readonly tools?: readonly Readonly<Record<string, unknown>>[];
}

/** An action after parsing the policy's raw output. */
export type ParsedAction =
  | { readonly kind: 'tool'; readonly name: string; readonly args: Readonly<Record<string, unknown>> }
  /** Raw output that could not be parsed: the environment answers with a format-error observation. */
  | { readonly kind: 'format_error'; readonly message: string };

/**
 * The policy-side record of one sampled action, kept so the update can recompute the same
 * probabilities. `behaviourLogprob` is log π_behaviour(action | state) taken at sampling time
 * (never recomputed later), `policyVersion` the version that sampled it.
 */
export interface PolicyStep {
  readonly behaviourLogprob: number;
  readonly policyVersion: number;
  /** Table policy: the visible state index and the chosen action index. */
  readonly stateIndex?: number;
  readonly actionIndex?: number;
  /**
   * Language-model policies, token in / token out: `context` = ids of the text that entered the
   * context before this action (prompt or observation, each encoded once, loss mask 0), `sampled` =
   * the ids the policy generated (loss mask 1), `logprobs` = their behaviour log-probs. The episode's
   * training sequence is the concatenation over turns of context + sampled — never re-tokenized.
   */
  readonly tokens?: {
    readonly context: readonly number[];
    readonly sampled: readonly number[];
    readonly logprobs: readonly number[];
    /**
     * false: a demonstration's deliberate mistake. It stays in the context (the student sees the error
     * being read and repaired) but is not imitated: its tokens get loss mask 0.
     */
    readonly imitate?: boolean;
    /**
     * Sampled under the environment's action grammar (constrained decoding): `logprobs` are over the
     * tokens the grammar allowed, and the learner renormalises over the same tokens.
     */
    readonly constrained?: boolean;
    /**
     * The first turn of a new training sequence (an agent program that rewrote its history): the turns
     * before it form one sequence, this one and the next another, each trained on its own tokens.
     */
    readonly segment?: boolean;
  };
}

/** One turn of an episode: what the policy wrote, how it parsed, what the environment answered. */
export interface Turn {
  readonly index: number;
  /** The policy's raw output for this turn (untrusted text). */
  readonly actionText: string;
  readonly action: ParsedAction;
  readonly observation: Observation;
  readonly policy: PolicyStep;
}

/** The verified outcome of a finished episode (computed after the episode, by the verifier). */
export interface EpisodeOutcome {
  /** Scalar reward used for training. */
  readonly reward: number;
  /** Task solved according to the private verifier within the rules (e.g. finish within budget). */
  readonly success: boolean;
  /** Outcome of the public check the agent can see (may pass for wrong solutions). */
  readonly publicPass: boolean;
  /** Outcome of the hidden verifier. publicPass && !privatePass is the reward-hacking gap. */
  readonly privatePass: boolean;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** Why a stored trajectory did not enter the update's loss. */
export type ExclusionReason =
  /** The environment or the verifier failed (not the agent's fault): no advantage, no update. */
  | 'env_error'
  /** Its advantage was 0 (its group's rewards were all equal) and the algorithm skips those. */
  | 'zero_advantage'
  /** Positive-only reinforcement (negativeAdvantageScale 0): a failure, which it does not push down. */
  | 'failure_not_pushed'
  /** Dynamic sampling: its group's rewards were all equal, and a newly sampled group took its place. */
  | 'replaced'
  /** Cut off by the context window or the turn cap, and the overlong filter is on. */
  | 'overlong'
  /** RS-SFT, or SFT imitating accepted demonstrations only: it did not succeed. */
  | 'unsuccessful'
  /** It has no position the policy generated (nothing to train). */
  | 'no_trainable_positions';

/**
 * What the learner saw at each trained position of a trajectory, from the position's first pass in the
 * update (epoch 0), for the inspector's token heat map. Column k is the k-th trained position: the
 * sampled tokens of the turns the policy trains on, in order (a sequence cut at the context window has
 * fewer). Stored packed (store/tokenStatsCodec.ts), never in outcome_json.
 */
export interface TokenStats {
  /** Optimizer steps of this update taken before the trajectory's first pass (0: it saw the weights that sampled it). */
  readonly stepsBefore: number;
  /** What the ratio is taken to: the behaviour log-probs, or π_old recomputed before the update. */
  readonly old: 'behaviour' | 'recomputed';
  /**
   * Policy versions between the oldest turn's sampler and the weights the update started from (async
   * mode: up to maxStaleness; 0 in sync mode). Above 0, training − sampling log-prob is lag, not the
   * train–inference mismatch, and is not reported as one.
   */
  readonly lag: number;
  /**
   * The training log-prob before the update, where known (policy-gradient objectives): π_old when
   * recomputed, else the first pass's own log-prob when stepsBefore is 0; absent otherwise (the first
   * pass came after other steps, or a supervised objective, whose positions were not sampled by the policy).
   */
  readonly before?: Float32Array;
  /** The log-prob the loss trained on at the first pass. */
  readonly logp: Float32Array;
  /** π / π_old at the first pass (1 for supervised objectives). */
  readonly ratio: Float32Array;
  /** Which clip held the position: 0 none, 1 low (A < 0), 2 high (A > 0), 3 the dual clip. */
  readonly clipSide: Uint8Array;
  /** Entropy of the position's distribution (nats). */
  readonly entropy: Float32Array;
  /** KL estimate to the reference (the run's estimator), absent when the objective has no reference. */
  readonly kl?: Float32Array;
  /**
   * On-policy distillation's teacher (method distill, or GRPO with a teacher term; absent otherwise):
   * log π_teacher of the sampled token at the policy's temperature (nats), scored before the update.
   */
  readonly teacher?: Float32Array;
  /**
   * The per-token reverse-KL term the learner used, log π_student − log π_teacher (nats; π_student the
   * behaviour log-prob at sampling): the token's advantage was the trajectory's minus w × it. Present
   * exactly when `teacher` is.
   */
  readonly reverseKl?: Float32Array;
}

/**
 * One episode, as trained on and as stored.
 * - `group`: index of its GRPO group in the iteration; trajectories of a group share `taskId`.
 * - `advantage`: group-normalised advantage (0 for zero-variance groups and in evaluation).
 * - `turns[i].policy.behaviourLogprob`: log-prob of the sampled action at sampling time.
 */
export interface Trajectory {
  readonly taskId: string;
  readonly group: number;
  readonly indexInGroup: number;
  readonly turns: readonly Turn[];
  readonly termination: TerminationReason;
  readonly outcome: EpisodeOutcome;
  advantage: number;
  /** Policy version that sampled the episode (all turns share it in the synchronous trainer). */
  readonly policyVersion: number;
  /** Set by the learner when the episode was left out of the update, with the reason. */
  excluded?: ExclusionReason;
  /** Set by the learner for a trajectory it trained on: each trained position's numbers. */
  tokenStats?: TokenStats;
}

/** Metrics of one training iteration; every field is a plain number so stores and charts stay generic. */
export interface IterationMetrics {
  readonly iteration: number;
  readonly rewardMean: number;
  readonly rewardMax: number;
  readonly rewardMin: number;
  readonly successRate: number;
  readonly publicPassRate: number;
  readonly privatePassRate: number;
  readonly meanTurns: number;
  /** Groups whose rewards were all equal (advantage 0 for all their trajectories). */
  readonly zeroVarianceGroups: number;
  readonly trajectories: number;
  /** Update statistics (0 where the method has none, e.g. a skipped RS-SFT update). */
  readonly loss: number;
  readonly policyLoss: number;
  readonly kl: number;
  readonly clipFraction: number;
  readonly entropy: number;
  readonly gradNorm: number;
  readonly ratioMin: number;
  /**
   * Means per episode of the numbers a workspace reward function returned beside its score (its
   * extras, by name), a map rather than a plain number, absent where the reward has none.
   */
  readonly rewardExtras?: Readonly<Record<string, number>>;
  /** Per tool: calls per episode, error and timeout rates, latency percentiles (shared/toolHealth.ts); absent when no tool was called. */
  readonly toolHealth?: Readonly<Record<string, ToolHealth>>;
  readonly ratioMax: number;
  /** 1 if the optimizer stepped this iteration, 0 if the update was skipped. */
  readonly updated: number;
  /** Optimizer steps taken this iteration (epochs × minibatches). */
  readonly optimizerSteps?: number;
  /** Trajectories whose positions entered the loss (after every exclusion below). */
  readonly trainedTrajectories: number;
  /** Trajectories left out of the update, by reason (see ExclusionReason). */
  readonly envErrorTrajectories?: number;
  readonly zeroAdvantageSkipped?: number;
  readonly overlongFiltered?: number;
  readonly unsuccessfulSkipped?: number;
  readonly failuresNotPushed?: number;
  readonly replacedTrajectories?: number;
  readonly noTrainablePositions?: number;
  /** Minibatches whose loss or gradient was NaN or infinite: their optimizer step was skipped. */
  readonly nonFiniteSteps?: number;
  /** Sequences cut to the policy's context (their later positions not trained). */
  readonly truncatedSequences?: number;
  /**
   * Sampled episodes that ran out of room — ended by the context window or the turn cap — and episodes
   * with at least one malformed action (a format error), of `trajectories`: whether sampling degrades
   * as training goes on.
   */
  readonly truncatedEpisodes?: number;
  readonly malformedEpisodes?: number;
  /** Dynamic sampling: groups sampled beyond groupsPerIteration to replace zero-variance ones. */
  readonly resampledGroups?: number;
  /**
   * How many policy versions behind the learner the groups it trained on were (mean and max, every
   * run that samples itself; 0 in sync mode). Asynchronous mode also: counts of groups 0, 1, 2 and ≥ 3 behind, groups dropped as too stale, groups
   * waiting in the queue when the learner came, its time waiting for them, and the rollout side's time
   * with groups in flight and held back (a full queue or the staleness bound), in ms.
   */
  readonly stalenessMean?: number;
  readonly stalenessMax?: number;
  readonly staleness0?: number;
  readonly staleness1?: number;
  readonly staleness2?: number;
  readonly staleness3plus?: number;
  readonly droppedStaleGroups?: number;
  readonly queueDepth?: number;
  readonly learnerIdleMs?: number;
  readonly rolloutBusyMs?: number;
  readonly rolloutBlockedMs?: number;
  /**
   * A judge's reward (reward.judge, issue 51): groups sent to the judge or read from its cache, groups
   * it failed (each an error with its reason, its trajectories not trained on), groups answered from the
   * cache, the tokens its answers say they used, the mean time of a request that went out (ms, retries
   * included), and where the verifier decided too, the share of the pairs of a group whose verifier
   * outcomes differ that the judge ordered the same way (a tie counts half; shared/judgeMetrics.ts).
   */
  readonly judgeGroups?: number;
  readonly judgeFailures?: number;
  readonly judgeCachedGroups?: number;
  readonly judgeTokens?: number;
  readonly judgeLatencyMs?: number;
  readonly judgeVerifierAgreement?: number;
  /** Off-policy correction: the mean truncated importance weight and the share of tokens at its cap. */
  readonly importanceWeightMean?: number;
  readonly importanceTruncated?: number;
  /** Learning rate of the iteration's last optimizer step. */
  readonly learningRate?: number;
  /**
   * The policy loss's own numbers by name, means over the iteration's optimizer steps (what each is:
   * shared/lossMetrics.ts); absent where the update took no step or its loss reports none (SFT).
   */
  readonly lossMetrics?: Readonly<Record<string, number>>;
  /**
   * Runs stored before lossMetrics kept four of its names here (language-model policies only); read
   * them through lossMetric(), which looks in both places. New runs do not write them.
   */
  readonly dualClipFraction?: number;
  readonly approxKl?: number;
  readonly clipFractionLow?: number;
  readonly clipFractionHigh?: number;
  readonly policyVersion: number;
  readonly wallMs: number;
  /** Mean |log π_train − log π_behaviour| over generated tokens, before the first optimizer step. */
  readonly logprobMismatch?: number;
  /** Mean generated tokens per trajectory. */
  readonly responseTokens?: number;
  /** Mean tool calls (non-final actions) per trajectory. */
  readonly toolCalls?: number;
  /**
   * Seed 001's acceptance metrics, means per trajectory (shared/episodeStats.ts): format errors, tool
   * calls the tool refused, actions repeated with the same observation back, time in tools and the
   * sandbox (ms), and actions the sandbox blocked (timeouts, output caps, network, file system,
   * processes, memory).
   */
  readonly formatErrors?: number;
  readonly badToolCalls?: number;
  readonly repeatedActions?: number;
  readonly toolMs?: number;
  readonly blockedActions?: number;
  /** SFT: share of imitated demonstration tokens (loss mask 1) that are the model's most likely token. */
  readonly tokenAccuracy?: number;
  /**
   * Where the iteration's time went, in ms (verl's marked timers), each phase timed on its own:
   * sampling by the policy, environment steps with sandbox runs and verification, the reference and
   * old-log-prob pre-pass, gradient and optimizer steps, the evaluation after this iteration (0 when
   * none ran), and the store write of the previous iteration.
   */
  readonly phaseGenerateMs?: number;
  readonly phaseEnvMs?: number;
  readonly phaseReferenceMs?: number;
  readonly phaseUpdateMs?: number;
  readonly phaseEvaluateMs?: number;
  readonly phaseStoreMs?: number;
}

/** Result of one evaluation pass (fixed evaluation seed, independent of the training seed). */
export interface EvaluationResult {
  /** Iteration after which it ran (0 = before training). */
  readonly iteration: number;
  readonly episodes: number;
  readonly successes: number;
  readonly successRate: number;
  readonly meanActions: number;
  readonly publicPassRate: number;
  readonly privatePassRate: number;
  readonly rewardMean: number;
  readonly seed: number;
  readonly policyVersion: number;
  /** Language-model policies: success rate of greedy decoding, each held-out task once (greedy is deterministic per task). */
  readonly greedySuccessRate?: number;
  /** Held-out tasks in the greedy pass. */
  readonly greedyEpisodes?: number;
  /**
   * Sampled pass@k: the chance that at least one of k samples of a task succeeds, averaged over tasks,
   * from the unbiased estimator 1 − C(n−c, k)/C(n, k) with n samples and c successes per task.
   */
  readonly passAtK?: number;
  readonly passK?: number;
  /** Mean tool calls per episode, sampled and greedy. */
  readonly toolCalls?: number;
  readonly greedyToolCalls?: number;
  /** The acceptance metrics of IterationMetrics, over the sampled episodes. */
  readonly formatErrors?: number;
  readonly badToolCalls?: number;
  readonly repeatedActions?: number;
  readonly toolMs?: number;
  readonly blockedActions?: number;
  /** Mean turns and generated tokens per sampled episode. */
  readonly meanTokens?: number;
  /** Per held-out task, its sampled episodes (sums), in task order: paired comparisons between runs. */
  readonly perTask?: readonly TaskEvaluation[];
}

/** One held-out task's sampled episodes in an evaluation (sums, so runs can be compared task by task). */
export interface TaskEvaluation {
  readonly task: string;
  readonly episodes: number;
  readonly successes: number;
  /** Sum of the episodes' rewards. */
  readonly reward: number;
  /** Sum of the episodes' tool calls, and of their repeated actions (a call repeated with the same answer back). */
  readonly toolCalls: number;
  readonly repeatedActions: number;
  /** Whether greedy decoding solved the task (1 or 0), when the evaluation decoded greedily too. */
  readonly greedySuccesses?: number;
}

/** Checks a stored per-task list (untrusted JSON): undefined unless every entry has the right types. */
export function taskEvaluations(x: unknown): TaskEvaluation[] | undefined {
  if (!Array.isArray(x)) return undefined;
  const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
  const ok = x.every(
    (t: unknown) =>
      typeof t === 'object' &&
      t !== null &&
      typeof (t as TaskEvaluation).task === 'string' &&
      [
        (t as TaskEvaluation).episodes,
        (t as TaskEvaluation).successes,
        (t as TaskEvaluation).reward,
        (t as TaskEvaluation).toolCalls,
        (t as TaskEvaluation).repeatedActions,
      ].every(num) &&
      ((t as TaskEvaluation).greedySuccesses === undefined || num((t as TaskEvaluation).greedySuccesses)),
  );
  return ok ? (x as TaskEvaluation[]) : undefined;
}

/** EvaluationResult fields stored in evaluations.metrics_json (the rest have columns). */
export const EVALUATION_EXTRAS = [
  'greedyEpisodes',
  'passAtK',
  'passK',
  'toolCalls',
  'greedyToolCalls',
  'formatErrors',
  'badToolCalls',
  'repeatedActions',
  'toolMs',
  'blockedActions',
  'meanTokens',
] as const satisfies readonly (keyof EvaluationResult)[];

export type RunStatus = 'running' | 'completed' | 'failed' | 'cancelled';

/** Software and machine a run used, recorded with the run so results can be compared honestly. */
export interface RuntimeInfo {
  readonly workbench: string;
  readonly node: string;
  readonly platform: string;
  readonly arch: string;
  readonly cpu: string;
  readonly sqlite?: string;
  readonly betterSqlite3?: string;
  readonly compute: string;
  /** Why the policy computes there (a language model's compute path: the wasm engine or the tfjs decoder); absent before it was recorded. */
  readonly computeReason?: string;
  /**
   * How the language model held its weights — under LoRA the frozen base: q8 (8-bit Q8_0 blocks,
   * policyOptions.weightDtype "q8"), bf16 or f32; under full fine-tuning the trained weights, f32
   * (shared/baseWeights.ts); absent for a policy without a language model and for runs recorded before it was.
   */
  readonly baseWeights?: BaseWeights;
  /** What the environment uses on this machine (e.g. the sandbox level and interpreter), if anything. */
  readonly environment?: string;
  /** On-policy distillation's frozen teacher: what computes it, its model and folder; absent without one. */
  readonly teacher?: string;
}

/** One row of the runs list. */
export interface RunSummary {
  readonly id: number;
  readonly name: string;
  readonly status: RunStatus;
  readonly env: string;
  readonly policy: string;
  readonly method: string;
  /** The honest name of what the run trained with (e.g. "positive-only GRPO (failures not pushed down)"), from its config. */
  readonly methodLabel: string;
  readonly seed: number;
  readonly iterationsPlanned: number;
  readonly iterationsDone: number;
  readonly latestRewardMean: number | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly error: string | null;
  /**
   * A forked run: the run (null when it was deleted since) and iteration it started after. Its own
   * iterations are numbered on from there (iteration + 1 ...); the parent's up to it stay the parent's.
   */
  readonly forkedFrom?: { readonly runId: number | null; readonly iteration: number };
}
