// A run config's algorithm settings as verl Hydra overrides for `python3 -m verl.trainer.main_ppo`, and
// the same as a `ray job submit`. The keys are verl 0.9.1's (VERL_VERSION): every one exists in its
// trainer config (a test checks them against test/fixtures/verl/ppo_trainer_keys.txt, extracted from
// 0.9.1's generated reference config), and `validate_config` accepts them (bench/peers_verl.py). For
// older verl: ≤ 0.8 read the reward from the top-level `custom_reward_function.*` (0.9.1 reads
// `reward.custom_reward_function.*` only), and did not demand the micro-batch sizes written here.
import { optionDefaults, TRANSFORMER_OPTION_SPECS, type RunConfig, type TransformerOptions } from '../../shared/runConfig';
import { VerlExportError } from './verlTasks';

export interface VerlPaths {
  readonly trainFile: string;
  readonly valFile: string;
  readonly toolConfig: string;
  readonly rewardFile: string;
  /** Where verl dumps generations (trainer.rollout_data_dir / validation_data_dir): what `agent-rl import verl` reads. */
  readonly rolloutDir: string;
  readonly validationDir: string;
}

export interface VerlLaunch {
  readonly model: string;
  /** sglang or vllm (actor_rollout_ref.rollout.name has no default). */
  readonly rollout: string;
  readonly gpusPerNode: number;
  readonly nodes: number;
  readonly trainRows: number;
  /** Tool calls a task allows; max_assistant_turns = this + 1 (the answer), capped by the run's maxTurns. */
  readonly toolCalls: number;
  /** multi_turn.max_tool_response_length when verl's default (256 characters) would cut the environment's tool responses. */
  readonly toolResponseChars?: number;
}

/** The verl release whose config keys the command line is written for. */
export const VERL_VERSION = '0.9.1';

/**
 * Micro-batch caps (sequences per GPU per forward/backward pass): verl 0.9.1 refuses a config without
 * them, and its engine needs them to divide each GPU's share of the batch. They only set memory use
 * (gradient accumulation): verl normalises the loss over the whole mini-batch (agg_loss's global batch
 * size), so the update does not depend on them. Caps of 4 training and 8 log-prob sequences (of up to
 * 1024 + 2048 tokens, data.max_prompt_length + max_response_length) keep a GPU's activations modest;
 * raise them in the command line on a large GPU for speed.
 */
const TRAIN_MICRO_CAP = 4;
const LOG_PROB_MICRO_CAP = 8;

/** The largest divisor of n that is ≤ cap (1 when n is not a positive whole number: verl refuses that split itself). */
export function largestDivisorAtMost(n: number, cap: number): number {
  if (!Number.isInteger(n) || n < 1) return 1;
  for (let d = Math.min(n, cap); d > 1; d--) if (n % d === 0) return d;
  return 1;
}

const KL_TYPES: Record<string, string> = { k1: 'kl', k2: 'mse', k3: 'low_var_kl' };

/** The rollout's sampling: a language model's own settings, else (a table policy) verl's plain sampling at its options' defaults. */
const samplingOf = (config: RunConfig): Pick<TransformerOptions, 'temperature' | 'topP' | 'topK'> =>
  config.policy === 'transformer' ? config.policyOptions : optionDefaults(TRANSFORMER_OPTION_SPECS);

/** [key, value] overrides, in the order a person reads them. */
export function verlOverrides(config: RunConfig, paths: VerlPaths, launch: VerlLaunch): [string, string | number | boolean][] {
  if (config.method !== 'grpo') {
    throw new VerlExportError(
      `method ${config.method}: verl runs GRPO here (algorithm.adv_estimator=grpo); RS-SFT and SFT have no verl trainer. Fix: export a config with "method": "grpo".`,
    );
  }
  if (config.groupSize < 2)
    throw new VerlExportError(`groupSize ${config.groupSize}: GRPO needs at least 2 samples per prompt (actor_rollout_ref.rollout.n). Fix: set groupSize ≥ 2.`);
  const a = config.algorithm;
  // Settings with no counterpart in verl's main_ppo: refuse rather than export a different algorithm.
  const unsupported: [boolean, string][] = [
    [
      a.klEstimator === 'exact' && a.klCoef > 0,
      'algorithm.klEstimator "exact": verl estimates the KL from the sampled token (kl, mse, low_var_kl). Fix: use "k3" (low_var_kl)',
    ],
    [
      a.negativeAdvantageScale !== 1,
      `algorithm.negativeAdvantageScale ${a.negativeAdvantageScale}: verl trains on negative advantages as they are. Fix: use 1 (plain GRPO)`,
    ],
    [a.dynamicSampling > 0, "algorithm.dynamicSampling: main_ppo has no dynamic sampling (verl's DAPO recipe does). Fix: use 0"],
    [a.overlongFilter, 'algorithm.overlongFilter: main_ppo has no overlong filter. Fix: use false'],
    [
      a.policyLoss === 'gspo' || a.policyLoss === 'cispo',
      `algorithm.policyLoss "${a.policyLoss}": this export writes verl's default (vanilla) policy loss and our token clip range. Fix: use "clip"`,
    ],
  ];
  // (verl's grpo std is the sample one, torch.std; a population-std config exports with that small difference)
  const problem = unsupported.find(([bad]) => bad);
  if (problem) throw new VerlExportError(`${problem[1]}.`);
  const groups = config.groupsPerIteration;
  // ppo_mini_batch_size counts prompts (verl multiplies by rollout.n); ours counts trajectories, 0 = the whole batch.
  const miniPrompts = Math.max(1, Math.min(groups, a.minibatchSize > 0 ? Math.round(a.minibatchSize / config.groupSize) : groups));
  const { temperature, topP, topK } = samplingOf(config);
  // each GPU's share of a mini-batch (training) and of the whole batch (old and reference log-probs), in sequences
  const gpus = Math.max(1, launch.gpusPerNode * launch.nodes);
  const trainMicro = largestDivisorAtMost((miniPrompts * config.groupSize) / gpus, TRAIN_MICRO_CAP);
  const logProbMicro = largestDivisorAtMost((groups * config.groupSize) / gpus, LOG_PROB_MICRO_CAP);
  return [
    ['algorithm.adv_estimator', a.advantageEstimator === 'rloo' ? 'rloo' : 'grpo'],
    // Dr. GRPO is verl's grpo estimator without the std division
    ['algorithm.norm_adv_by_std_in_grpo', a.advantageEstimator === 'grpo'],
    ['algorithm.use_kl_in_reward', false],
    ['data.train_files', paths.trainFile],
    ['data.val_files', paths.valFile],
    ['data.train_batch_size', groups],
    ['data.max_prompt_length', 1024],
    ['data.max_response_length', 2048],
    ['data.return_raw_chat', true],
    ['data.seed', config.seed],
    ['actor_rollout_ref.model.path', launch.model],
    ['actor_rollout_ref.actor.optim.lr', a.learningRate],
    ['actor_rollout_ref.actor.optim.lr_warmup_steps', a.warmupSteps],
    ['actor_rollout_ref.actor.optim.weight_decay', a.weightDecay],
    ['actor_rollout_ref.actor.grad_clip', a.maxGradNorm],
    ['actor_rollout_ref.actor.ppo_mini_batch_size', miniPrompts],
    ['actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', trainMicro],
    ['actor_rollout_ref.actor.ppo_epochs', a.epochs],
    ['actor_rollout_ref.actor.clip_ratio_low', a.clipLow],
    ['actor_rollout_ref.actor.clip_ratio_high', a.clipHigh],
    // verl always applies the dual clip (default c = 3); ours is off at 0, where verl's default stands
    ...(a.dualClip > 0 ? [['actor_rollout_ref.actor.clip_ratio_c', a.dualClip] as [string, number]] : []),
    ['actor_rollout_ref.actor.use_kl_loss', a.klCoef > 0],
    ['actor_rollout_ref.actor.kl_loss_coef', a.klCoef],
    ['actor_rollout_ref.actor.kl_loss_type', KL_TYPES[a.klEstimator] ?? 'low_var_kl'],
    ['actor_rollout_ref.actor.loss_agg_mode', a.lossAggregation],
    // Dr. GRPO's constant divisor (verl divides a mini-batch's token sums by it; ours also by the
    // number of sequences, a constant factor that Adam's step does not see)
    ...(a.lossAggregation === 'seq-mean-token-sum-norm' ? [['actor_rollout_ref.actor.loss_scale_factor', a.lossNormTokens] as [string, number]] : []),
    ['actor_rollout_ref.actor.entropy_coeff', 0],
    ['actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', logProbMicro],
    ['actor_rollout_ref.rollout.name', launch.rollout],
    ['actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', logProbMicro],
    ['actor_rollout_ref.rollout.mode', 'async'],
    ['actor_rollout_ref.rollout.n', config.groupSize],
    ['actor_rollout_ref.rollout.temperature', temperature],
    ['actor_rollout_ref.rollout.top_p', topP],
    ['actor_rollout_ref.rollout.top_k', topK > 0 ? topK : -1],
    ['actor_rollout_ref.rollout.multi_turn.enable', true],
    ['actor_rollout_ref.rollout.multi_turn.format', 'hermes'],
    ['actor_rollout_ref.rollout.multi_turn.max_assistant_turns', Math.min(config.maxTurns, launch.toolCalls + 1)],
    ...(launch.toolResponseChars !== undefined
      ? [['actor_rollout_ref.rollout.multi_turn.max_tool_response_length', launch.toolResponseChars] as [string, number]]
      : []),
    ['actor_rollout_ref.rollout.multi_turn.tool_config_path', paths.toolConfig],
    ['actor_rollout_ref.rollout.agent.default_agent_loop', 'tool_agent'],
    // verl 0.9.1's main_ppo reads the reward here only (verl ≤ 0.8 read the top-level custom_reward_function)
    ['reward.custom_reward_function.path', paths.rewardFile],
    ['reward.custom_reward_function.name', 'compute_score'],
    ['trainer.project_name', 'agent-rl'],
    ['trainer.experiment_name', config.name || `${config.env}-grpo-${config.seed}`],
    ['trainer.logger', '[console]'],
    ['trainer.total_training_steps', config.iterations],
    // total_training_steps caps the run; the epochs only have to be enough to reach it
    ['trainer.total_epochs', Math.max(1, Math.ceil((config.iterations * groups) / Math.max(1, launch.trainRows)))],
    ['trainer.test_freq', config.evalInterval > 0 ? config.evalInterval : config.iterations],
    ['trainer.val_before_train', true],
    ['trainer.save_freq', -1],
    ['trainer.rollout_data_dir', paths.rolloutDir],
    ['trainer.validation_data_dir', paths.validationDir],
    ['trainer.n_gpus_per_node', launch.gpusPerNode],
    ['trainer.nnodes', launch.nodes],
  ];
}

/** POSIX shell quoting (single quotes). */
export function shellQuote(s: string): string {
  return /^[\w@%+=:,./[\]-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function mainPpoCommand(overrides: readonly [string, string | number | boolean][]): string {
  return ['python3 -m verl.trainer.main_ppo', ...overrides.map(([k, v]) => shellQuote(`${k}=${String(v)}`))].join(' \\\n    ');
}

/**
 * The same job through the Ray Jobs API: the export folder is the job's working_dir (uploaded to the
 * cluster; data, tool config and reward are read from there, by relative paths), the dumps go to
 * `dumpDir`, a path every node writes and `agent-rl import verl` can read afterwards.
 */
export function rayJobCommand(overrides: readonly [string, string | number | boolean][], workingDir: string): string {
  const runtimeEnv = JSON.stringify({ working_dir: workingDir });
  return [`ray job submit --address "\${RAY_ADDRESS:-http://127.0.0.1:8265}" --runtime-env-json=${shellQuote(runtimeEnv)} --`, mainPpoCommand(overrides)].join(
    ' \\\n  ',
  );
}
