// Host ⇄ query backend: request/response with ids. Each method is declared once with its params and
// result; the client and the server are typed from this table.
import type { ResendResult } from '../agentRequestView';
import type { BaseWeights } from '../baseWeights';
import type { FoundModel } from '../foundModel';
import type { TokenRow, TokenStatsJson, WorstBy } from '../tokenStatsRows';
import type { RescoreReport, Score, TrajectoryEdit, TrajectoryRescores } from '../rescore';
import type { FindingView } from '../health/findings';
import type { EvaluationResult, IterationMetrics, RunSummary } from '../types';
import { isNumber, isObject, isString, type Guard } from './guards';

/** One run's findings, the most severe first. */
export interface RunFindings {
  readonly runId: number;
  readonly findings: readonly FindingView[];
}

export interface TrajectorySummary {
  readonly id: number;
  readonly iteration: number;
  readonly group: number;
  readonly indexInGroup: number;
  readonly taskId: string;
  readonly reward: number;
  readonly advantage: number;
  readonly success: boolean;
  readonly publicPass: boolean;
  readonly privatePass: boolean;
  readonly termination: string;
  readonly turns: number;
  /** Why the learner left it out of its update (absent: it was trained on, or the run predates the record). */
  readonly excluded?: string;
}

export interface TurnRecord {
  readonly index: number;
  readonly actionText: string;
  readonly action: unknown;
  readonly observationText: string;
  readonly observation: Record<string, unknown>;
  readonly policy: Record<string, unknown>;
}

export interface TrajectoryDetail extends TrajectorySummary {
  readonly runId: number;
  readonly outcome: Record<string, unknown>;
  readonly turnList: TurnRecord[];
  /** The learner's per-token numbers (absent: not trained on, or stored before they were recorded). */
  readonly tokenStats?: TokenStatsJson;
  /** Each turn's generated tokens as text, decoded one by one with the run's tokenizer (absent: it could not be read). */
  readonly pieces?: string[][];
  /** Its group's exchange with the judge (reward.judge; absent: no judge, or the environment failed the episode). */
  readonly judge?: JudgeExchangeRecord;
}

/** A group's exchange with the judge as stored (judge_exchanges): all of it untrusted text. */
export interface JudgeExchangeRecord {
  /** The chat-completions body sent (JSON text; no key). */
  readonly request: string;
  /** The answer body received (up to the 1 MB limit). */
  readonly answer?: string;
  readonly error?: string;
  /** The scores by trajectory id, as JSON text. */
  readonly scores?: string;
  readonly latencyMs: number;
  readonly tokens: number;
  readonly tries: number;
  readonly cached: boolean;
}

/** A run and its newest failed trajectory that ran code (backend method failedCodeEpisodes). */
export interface FailedCodeEpisode {
  readonly run: RunSummary;
  readonly trajectory: TrajectorySummary | null;
}

/** A worst token with where it is (store/tokenStatsReader.ts). */
export interface WorstToken extends TokenRow {
  readonly trajectoryId: number;
  readonly iteration: number;
  readonly advantage: number;
  readonly by: WorstBy;
  readonly value: number;
}

/** A task that every compared run sampled (Compare Runs), with each run's episodes of it. */
export interface SharedTask {
  readonly taskId: string;
  /** One entry per compared run, in the order asked: its episodes of the task, and the latest of them to open. */
  readonly runs: readonly {
    readonly runId: number;
    readonly episodes: number;
    readonly rewardMean: number;
    readonly successRate: number;
    readonly trajectoryId: number;
  }[];
}

export interface Page<T> {
  readonly items: T[];
  readonly total: number;
  readonly offset: number;
}

export interface BackendMethods {
  listRuns: { params: Record<string, never>; result: RunSummary[] };
  /** A run: its row, config, evaluations, stored compute string, and how its model held its base weights (absent: not recorded). */
  getRun: {
    params: { runId: number };
    result: { summary: RunSummary; config: unknown; evaluations: EvaluationResult[]; compute: string; baseWeights?: BaseWeights } | null;
  };
  iterations: { params: { runId: number; offset: number; limit: number }; result: Page<IterationMetrics> };
  /** Each run's health findings (shared/health/findings.ts) with the episodes that show them: the dashboard's Health section, the tree's badge. */
  findings: { params: { runIds: number[] }; result: RunFindings[] };
  trajectories: { params: { runId: number; iteration: number; offset: number; limit: number }; result: Page<TrajectorySummary> };
  trajectory: { params: { trajectoryId: number }; result: TrajectoryDetail | null };
  /**
   * Of the `limit` newest runs, newest first: each one's newest failed trajectory that ran code (null:
   * none), what Replay Episode opens without a tree row (the walkthrough's button).
   */
  failedCodeEpisodes: { params: { limit: number }; result: FailedCodeEpisode[] };
  /** A worker the host saw die: record the run as failed with the reason (only if still running). */
  markFailed: { params: { runId: number; reason: string }; result: boolean };
  deleteRun: { params: { runId: number }; result: boolean };
  /** Writes the run's record (config, runtime, every iteration's metrics, every evaluation, wall time) as JSON to `file`. */
  exportRun: { params: { runId: number; file: string }; result: { file: string; bytes: number } };
  /**
   * Runs a recorded execute_code action again now and compares the observation. `python` and `sandbox`
   * are the user's settings (agentRl.pythonPath, agentRl.sandboxLevel): a stored run never chooses what
   * runs on the host. `notes` say what the stored run had asked for that was not used.
   */
  rerun: {
    params: { trajectoryId: number; turn: number; python: string; sandbox: string };
    result: { observationText: string; same: boolean; level: string; python: string; notes: string[] };
  };
  /** The worst tokens of a run, an iteration or a trajectory by |mismatch|, |log ratio| or KL, worst first. */
  worstTokens: { params: { runId: number; iteration?: number; trajectoryId?: number; by: WorstBy; limit: number }; result: WorstToken[] };
  /** An iteration's histogram of |train − sampling log-prob| over its trained tokens. */
  mismatchHistogram: {
    params: { runId: number; iteration: number; bins: number };
    result: { edges: number[]; counts: number[]; tokens: number; unknown: number };
  };
  /** Tasks every run of `runIds` (2 to 20) sampled in training, those whose mean rewards differ most first, at most `limit`. */
  sharedTasks: { params: { runIds: number[]; limit: number }; result: SharedTask[] };
  /** The checkpoints in the Hugging Face cache and in `folders` (agentRl.modelFolders), with seed 000's plan on the wasm engine. */
  listModels: { params: { folders: string[] }; result: FoundModel[] };
  /**
   * Scores a run's stored trajectories (or one: `trajectoryId`) again with its reward as it is now, or
   * with `rewardFile` (workspace runs), and stores the re-score beside them. `python` and `sandbox` are
   * the user's settings, as for rerun. Long: the host gives it its own timeout.
   */
  rescore: {
    params: { runId: number; trajectoryId: number | null; rewardFile: string | null; python: string; sandbox: string; folders: string[] };
    result: RescoreReport;
  };
  rescoreReport: { params: { rescoreId: number }; result: RescoreReport | null };
  /** Scores a copy of the trajectory with its last action replaced by `text`; stored as an edit, the trajectory untouched. */
  editFinalAnswer: {
    params: { trajectoryId: number; text: string; rewardFile: string | null; python: string; sandbox: string; folders: string[] };
    result: { edit: TrajectoryEdit; old: Score; originalText: string };
  };
  /** A trajectory's stored re-scores and edits (the inspector shows them beside its stored reward). */
  trajectoryRescores: { params: { trajectoryId: number }; result: TrajectoryRescores };
  /** An agent program's stored request (a turn of a run of env "agent") sent again to the run's saved checkpoint; no program runs. Long: its own timeout. */
  resendRequest: { params: { trajectoryId: number; turn: number; greedy: boolean }; result: ResendResult };
  /**
   * Start Run's check of a distillation teacher before the run starts: why `teacher` cannot score
   * `model`'s token ids (another tokenizer: the message the run would fail with), or null when it can.
   */
  checkTeacher: { params: { model: string; teacher: string }; result: string | null };
  /**
   * Start Run's check of a verifiers environment's interpreter before the run starts: the Python the run
   * would use (`python`: agentRl.verifiersPythonPath or empty for the machine's default; `root`: the
   * module's folder) and verifiers' version there, or why it cannot import verifiers (`problem`).
   */
  checkVerifiers: { params: { python: string; root: string }; result: { python: string; version: string | null; problem: string | null } };
}
export type BackendMethod = keyof BackendMethods;
export const BACKEND_METHODS: readonly BackendMethod[] = [
  'listRuns',
  'getRun',
  'iterations',
  'findings',
  'trajectories',
  'trajectory',
  'failedCodeEpisodes',
  'markFailed',
  'deleteRun',
  'exportRun',
  'rerun',
  'worstTokens',
  'mismatchHistogram',
  'listModels',
  'sharedTasks',
  'rescore',
  'rescoreReport',
  'editFinalAnswer',
  'trajectoryRescores',
  'resendRequest',
  'checkTeacher',
  'checkVerifiers',
];

export interface BackendRequest<M extends BackendMethod = BackendMethod> {
  readonly id: number;
  readonly method: M;
  readonly params: BackendMethods[M]['params'];
}

export type BackendResponse =
  { readonly id: number; readonly ok: true; readonly result: unknown } | { readonly id: number; readonly ok: false; readonly error: string };

export const isBackendRequest: Guard<BackendRequest> = (x: unknown): x is BackendRequest =>
  isObject(x) && isNumber(x.id) && isString(x.method) && (BACKEND_METHODS as readonly string[]).includes(x.method) && isObject(x.params);

export const isBackendResponse: Guard<BackendResponse> = (x: unknown): x is BackendResponse =>
  isObject(x) && isNumber(x.id) && ((x.ok === true && 'result' in x) || (x.ok === false && isString(x.error)));
