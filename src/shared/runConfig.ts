// The run configuration: typed, every default with its reason, one validator whose errors name the
// field, the value and the fix. Declared as data (FIELD_SPECS, ALGORITHM_SPECS and the option tables)
// so the CLI, the VS Code settings and a JSON schema can all be generated from the same tables.
import { ALGORITHM_SPECS, algorithmDefaults, type AlgorithmSettings } from './algorithm';
import { checkField, type ConfigIssue, type FieldSpec } from './fieldSpec';

export type { ConfigIssue, FieldSpec };
export { STD_MODES, type StdMode } from './algorithm';

export const ENV_NAMES = ['binary-search', 'calculator', 'code', 'workspace'] as const;
export const SANDBOX_LEVELS = ['auto', 'strict', 'network', 'process'] as const;
export type EnvName = (typeof ENV_NAMES)[number];
export const POLICY_NAMES = ['table', 'transformer'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];
export const METHOD_NAMES = ['grpo', 'rs-sft', 'sft'] as const;
export type MethodName = (typeof METHOD_NAMES)[number];

export interface RunConfig {
  /** Human-readable run name (shown in the runs list). */
  name: string;
  env: EnvName;
  policy: PolicyName;
  method: MethodName;
  /** Training seed: sampling during rollouts and the verifier's random inputs in training. */
  seed: number;
  /** Evaluation seed: the same evaluation stream before and after training, for every training seed. */
  evalSeed: number;
  iterations: number;
  groupsPerIteration: number;
  groupSize: number;
  evalEpisodes: number;
  /** Evaluate every N iterations as well as before and after training; 0 = before and after only. */
  evalInterval: number;
  /** k of the sampled pass@k every evaluation reports (0 = none). */
  evalPassK: number;
  /** Write a resume point every N iterations (and when cancelled); 0 = only when cancelled. */
  checkpointEvery: number;
  /** Training rollouts: at most this many episodes in flight on the concurrent schedule; 0 = lockstep (sync), no bound but the queue's (async). */
  maxInFlight: number;
  /** sync: rollout, then update, in turn; async: a rollout stream and the learner at their own paces. */
  mode: 'sync' | 'async';
  /** async: a group sampled more than this many policy versions ago is dropped, not trained on. */
  maxStaleness: number;
  /** async: groups queued and in flight at most; 0 = (maxStaleness + 1) × groupsPerIteration. */
  queueGroups: number;
  /** Stop the run (failed) after this many iterations in a row whose loss was not finite. */
  maxNonFiniteIterations: number;
  /** Agent-loop turn cap, a guard above the environment's own budget. */
  maxTurns: number;
  /** The training algorithm's settings (shared/algorithm.ts), defaults resolved per (env, policy, method). */
  algorithm: AlgorithmSettings;
  /** How the reference agent demonstrates (method sft only), validated against the environment's table. */
  demonstrations: Record<string, unknown>;
  /** Environment-specific options, validated against the environment's own table below. */
  envOptions: Record<string, unknown>;
  /** Policy-specific options (model size, sampling), validated against the policy's table below. */
  policyOptions: Record<string, unknown>;
}

/** Defaults reproduce seed 002's binary-search experiment; each reason says where a value comes from. */
export const DEFAULT_RUN_CONFIG: Readonly<Omit<RunConfig, 'algorithm'>> = Object.freeze({
  name: '',
  env: 'binary-search',
  policy: 'table',
  method: 'grpo',
  seed: 7,
  evalSeed: 20260928,
  iterations: 100,
  groupsPerIteration: 4,
  groupSize: 8,
  evalEpisodes: 500,
  evalInterval: 0,
  evalPassK: 0,
  checkpointEvery: 10,
  maxInFlight: 0,
  mode: 'sync',
  maxStaleness: 1,
  queueGroups: 0,
  maxNonFiniteIterations: 3,
  maxTurns: 16,
  demonstrations: {},
  envOptions: {},
  policyOptions: {},
});

/**
 * Run-shape defaults that depend on the policy, applied where the config leaves the field out (the
 * algorithm's are in shared/algorithm.ts). The top-level defaults above are seed 002's for the table.
 */
export const POLICY_DEFAULTS: Readonly<Record<PolicyName, Partial<RunConfig>>> = {
  table: {},
  // RL on a warm-started small model: 32 groups × 8 per iteration (fewer were too noisy to improve
  // held-out accuracy); pass@8 needs 8 samples of every held-out task (200 tasks: 1,600 episodes)
  transformer: { evalEpisodes: 1600, evalPassK: 8, iterations: 50, groupsPerIteration: 32, groupSize: 8 },
};

/** Per policy and method, on top of POLICY_DEFAULTS. */
export const METHOD_DEFAULTS: Readonly<Partial<Record<`${PolicyName}/${MethodName}`, Partial<RunConfig>>>> = {
  // SFT of the calculator protocol: about 800 steps of 16 (notes/calculator-feasibility.md). One
  // demonstration per task (groups only matter to GRPO), so every step sees 16 different tasks. Its
  // evaluations report the sampled and greedy rates; the RL runs that continue from it report pass@k.
  'transformer/sft': { iterations: 200, groupsPerIteration: 64, groupSize: 1, evalEpisodes: 200, evalPassK: 0 },
};

const SECTION = { kind: 'object' } as const;

export const FIELD_SPECS: Readonly<Record<keyof RunConfig, FieldSpec>> = {
  name: { kind: 'string', maxLength: 200, description: 'Run name shown in lists.', reason: 'empty = derived from env, method and seed' },
  env: { kind: 'enum', values: ENV_NAMES, description: 'Environment the agent acts in.', reason: 'binary-search is the fully checkable experiment of seed 002' },
  policy: { kind: 'enum', values: POLICY_NAMES, description: 'Policy parameterisation.', reason: 'the table policy makes every probability inspectable' },
  method: { kind: 'enum', values: METHOD_NAMES, description: 'grpo: group-relative clipped policy gradient (algorithm.* chooses the estimator and any shaping); rs-sft: fine-tune on its own successful samples only; sft: imitate the reference agent\'s demonstrations.', reason: 'GRPO is the method under study; RS-SFT is its control' },
  seed: { kind: 'integer', min: 0, max: 2 ** 31 - 1, description: 'Training seed.', reason: 'seed 002 reports seeds 7, 19 and 42' },
  evalSeed: { kind: 'integer', min: 0, max: 2 ** 31 - 1, description: 'Evaluation seed, independent of the training seed.', reason: 'fixed so every run is evaluated on the same stream' },
  iterations: { kind: 'integer', min: 1, max: 1_000_000, description: 'Training iterations (rollout + update).', reason: 'seed 002: 100' },
  groupsPerIteration: { kind: 'integer', min: 1, max: 10_000, description: 'Groups (tasks) sampled per iteration.', reason: 'seed 002: 4 groups' },
  groupSize: { kind: 'integer', min: 1, max: 10_000, description: 'Trajectories per group (same task); GRPO needs at least 2.', reason: 'seed 002: 8; a group needs at least 2 to have a spread' },
  evalEpisodes: { kind: 'integer', min: 1, max: 1_000_000, description: 'Sampled episodes per evaluation, dealt round-robin over the held-out tasks; greedy decoding runs every task once besides.', reason: 'seed 002: 500' },
  evalInterval: { kind: 'integer', min: 0, max: 1_000_000, description: 'Also evaluate every N iterations (0 = only before and after training).', reason: 'seed 002 evaluates at start and end' },
  evalPassK: { kind: 'integer', min: 0, max: 1000, description: 'k of the sampled pass@k every evaluation reports (0 = none); evalEpisodes should give each held-out task at least k samples.', reason: 'a gain in sampled pass@1 with a flat pass@k and greedy is mostly sharpening; all three are reported' },
  checkpointEvery: { kind: 'integer', min: 0, max: 1_000_000, description: 'Write a resume point (weights, optimizer, KL reference, random generator states, the iteration) every N iterations and when the run is cancelled; 0 = only when cancelled. `agent-rl train --resume RUN` continues from the last one.', reason: 'a killed run repeats at most 9 iterations; a small model\'s resume point takes milliseconds' },
  maxInFlight: { kind: 'integer', min: 0, max: 100_000, description: 'Training rollouts on the concurrent schedule: at most this many episodes in flight, an episode whose tool or sandbox call is done joins the next sampling batch at once and a finished one makes room for the next; each episode draws from its own random stream. 0 = lockstep: every live episode sampled together, the next batch waiting for the slowest step (in mode "async", 0 = no bound but the queue\'s).', reason: 'lockstep is the measured default; the concurrent schedule pays off when tools are slow and uneven (npm run bench)' },
  mode: { kind: 'enum', values: ['sync', 'async'], description: 'sync: every iteration samples its groups with the current policy, then updates it (on-policy, exactly reproducible). async: a rollout stream fills a bounded queue of finished groups while the learner takes groupsPerIteration of them per update, each at its own pace, sharing the engines (the stream samples between the learner\'s steps and fills its tools\' waits); samples may be up to maxStaleness versions old, and the algorithm defaults to recomputing π_old with a truncated importance correction. Not reproducible to the episode; no dynamic sampling.', reason: 'sync is the measured, reproducible default' },
  maxStaleness: { kind: 'integer', min: 0, max: 1000, description: 'async: the most policy versions a group may be behind the learner when it is taken; older groups are dropped (counted).', reason: 'one version: the rollout may use the weights of the update before, no older' },
  queueGroups: { kind: 'integer', min: 0, max: 100_000, description: 'async: groups queued and in flight at most (the rollout waits for room); 0 = (maxStaleness + 1) × groupsPerIteration. Besides this, a group starts only while it could still be taken within maxStaleness versions.', reason: 'as far ahead as the staleness bound lets the rollout run' },
  maxNonFiniteIterations: { kind: 'integer', min: 1, max: 1000, description: 'A NaN or infinite loss skips its optimizer step (recorded); this many iterations in a row with one stop the run as failed.', reason: 'one bad batch is noise; three in a row mean the run has diverged' },
  maxTurns: { kind: 'integer', min: 1, max: 1000, description: 'Agent-loop turn cap, above the environment budget.', reason: 'a guard: the environment budget (6 for binary-search) normally ends episodes first' },
  algorithm: { ...SECTION, description: 'The training algorithm: advantages, loss, KL, optimizer and schedule (see its fields).', reason: 'defaults per environment, policy and method' },
  demonstrations: { ...SECTION, description: 'How the reference agent demonstrates for method sft: its deliberate habits and mistakes.', reason: 'each environment documents its own' },
  envOptions: { ...SECTION, description: 'Options of the chosen environment.', reason: 'each environment documents its own' },
  policyOptions: { ...SECTION, description: 'Options of the chosen policy (model and sampling).', reason: 'each policy documents its own' },
};

export type OptionSpecs = Readonly<Record<string, FieldSpec & { default: number | string | boolean | Readonly<Record<string, unknown>> }>>;

/** Policy option tables, validated under `policyOptions.<key>`. */
export const POLICY_OPTION_SPECS: Readonly<Record<PolicyName, OptionSpecs>> = {
  table: {
    backend: { kind: 'enum', values: ['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'], default: 'cpu', description: 'Compute backend for the table\'s tensors.', reason: 'a 24 × 6 table is fastest on plain JS: every other backend spends more on each call than the arithmetic costs' },
  },
  transformer: {
    backend: { kind: 'enum', values: ['auto', 'tensorflow-gpu', 'webgpu', 'tensorflow', 'wasm', 'cpu'], default: 'auto', description: 'Compute backend; auto = tfjs-node-gpu, then WebGPU (Dawn, the optional webgpu package) on a hardware adapter, then tfjs-node, then wasm (SIMD), then cpu; webgpu forced takes a software adapter too.', reason: 'the fastest one that loads' },
    init: { kind: 'string', maxLength: 4096, default: '', description: 'Checkpoint to start from (a checkpoint directory or its checkpoint.json); empty = fresh weights.', reason: 'GRPO continues from an SFT warm start' },
    replicas: { kind: 'integer', min: 0, max: 64, default: 0, description: 'Model replicas computing shards of each batch in parallel threads (data parallelism); 0 = one per core (up to 4) on the wasm and cpu backends, 1 on tfjs-node, which threads itself.', reason: 'the wasm backend uses one core; the second one doubles the throughput' },
    tokenizer: { kind: 'string', maxLength: 4096, default: '', description: 'Directory holding a Hugging Face tokenizer.json (and tokenizer_config.json); empty = the character-level tokenizer. A checkpoint given as init brings its own.', reason: 'characters suit the small models trained here' },
    model: { kind: 'string', maxLength: 4096, default: '', description: 'A local Hugging Face checkpoint folder (config.json with model_type qwen2, qwen3, llama or gpt2; model.safetensors or its shards and index; tokenizer.json, tokenizer_config.json, generation_config.json): the policy is that model, with its tokenizer and chat template; dModel, nLayers, nHeads, mlpRatio, tiedHead and tokenizer are then unused. Nothing is downloaded. Empty = the small GPT.', reason: 'the small GPT trains from scratch in minutes on a CPU' },
    loraRank: { kind: 'integer', min: 0, max: 1024, default: 8, description: 'With model: LoRA rank of the adapters (only they are trained and checkpointed; the KL reference is the base model); 0 = full fine-tuning.', reason: 'rank 8 is PEFT\'s and verl\'s usual start, and the only way a 0.5B model trains within wasm\'s 4 GiB' },
    loraAlpha: { kind: 'number', min: 0, max: 4096, default: 0, description: 'With model: LoRA scale numerator (the update is alpha / rank · A·B); 0 = twice the rank.', reason: 'twice the rank, as usual' },
    loraDropout: { kind: 'number', min: 0, max: 0.9, default: 0, description: 'With model: dropout on the adapters\' input in training passes.', reason: 'off: it makes the recomputed log-probs of a sampled batch noisy' },
    loraTargets: { kind: 'string', maxLength: 500, default: 'all-linear', description: 'With model: comma-separated linear layers that get adapters (qwen2 / qwen3 / llama: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj; gpt2: c_attn, c_proj, c_fc), or all-linear.', reason: 'every linear layer, as verl\'s LoRA recipes' },
    chatTemplate: { kind: 'enum', values: ['auto', 'none'], default: 'auto', description: 'With model: auto = prompt through tokenizer_config.json\'s chat template when it has one (system, user, assistant and tool messages; tools in the template\'s own format), token in, token out; none = the observations as plain text.', reason: 'an instruct model answers best in the format it was trained on' },
    systemPrompt: { kind: 'string', maxLength: 20_000, default: '', description: 'With a chat template: the system message; empty = the template\'s default.', reason: 'the template knows its model\'s default' },
    chatTemplateVariables: { kind: 'object', default: {}, description: 'With a chat template: more variables the template reads, e.g. {"enable_thinking": false} for Qwen3 (its generation prompt then opens with an empty <think></think>).', reason: 'none: the template\'s own defaults' },
    actionMode: { kind: 'enum', values: ['generate', 'score'], default: 'generate', description: 'generate: the model writes each action as text; score (with model, on an environment with a fixed action set such as binary-search): seed 002\'s candidate scoring, the model scores each action string after the history and the policy is the softmax over those scores.', reason: 'free generation is what an agent does; scoring is seed 002\'s six-way policy' },
    scoreNormalization: { kind: 'enum', values: ['sum', 'mean'], default: 'sum', description: 'actionMode score: sum = seed 002\'s score, the candidate\'s summed token log-probs (shorter candidates score higher); mean = divided by its token count.', reason: 'seed 002\'s definition' },
    microBatchPositions: { kind: 'integer', min: 0, max: 65_536, default: 0, description: 'Positions per forward and backward pass; gradients accumulate over micro-batches. 0 = 4096 for the small GPT; for a model on the wasm engine, the most packed positions (8, 4, 2 or 1 contexts) whose memory plan fits; for a model on tfjs ops, the largest power of two (2048 down to 64) whose plan fits the backend.', reason: 'a pretrained vocabulary makes every position\'s logits large' },
    threads: { kind: 'integer', min: 0, max: 14, default: 0, description: 'With model on the wasm backend: threads of the engine that runs the model (its matrix products, attention and head split over them); 0 = one per core.', reason: 'one model on every core' },
    weightDtype: { kind: 'enum', values: ['auto', 'bf16', 'f32'], default: 'auto', description: 'With model on the wasm backend: how the engine holds the frozen base weights; bf16 halves their memory and the bytes each product reads (the products accumulate in float32); auto = bf16, or f32 for a float32 checkpoint whose plan fits.', reason: 'released checkpoints are bfloat16; a float32 one keeps its exact weights where memory allows' },
    dModel: { kind: 'integer', min: 8, max: 4096, default: 64, description: 'Model width.', reason: '64 × 2 layers learns the calculator protocol in minutes here (notes/calculator-feasibility.md)' },
    nLayers: { kind: 'integer', min: 1, max: 64, default: 2, description: 'Transformer blocks.', reason: 'see dModel' },
    nHeads: { kind: 'integer', min: 1, max: 64, default: 4, description: 'Attention heads (must divide dModel).', reason: 'head width 16' },
    contextLength: { kind: 'integer', min: 0, max: 32_768, default: 0, description: 'Longest context in tokens (prompt + actions + observations); 0 = 192 for the small GPT, and for a model (policyOptions.model) its max_position_embeddings up to 2048.', reason: 'a depth-2 calculator episode with three calls and one repaired mistake is about 190 characters; a chat template\'s system prompt alone is dozens of tokens' },
    mlpRatio: { kind: 'integer', min: 1, max: 16, default: 4, description: 'MLP width as a multiple of dModel.', reason: 'GPT-2' },
    tiedHead: { kind: 'boolean', default: true, description: 'Share the output head with the token embedding.', reason: 'fewer parameters for a small model' },
    temperature: { kind: 'number', min: 0, max: 10, default: 1, description: 'Sampling temperature in training rollouts (0 = greedy).', reason: 'on-policy sampling from the model itself' },
    topK: { kind: 'integer', min: 0, max: 100_000, default: 0, description: 'Sample among the k most likely tokens (0 = off).', reason: 'off: the learner recomputes the full distribution' },
    topP: { kind: 'number', min: 0, max: 1, minExclusive: true, default: 1, description: 'Nucleus sampling mass (1 = off).', reason: 'off, as topK' },
    maxNewTokens: { kind: 'integer', min: 1, max: 8192, default: 32, description: 'Tokens per action at most.', reason: 'a calculator call or answer is under 30 characters' },
  },
};

/** The interpreter of every environment that runs Python in the sandbox. */
const PYTHON_OPTION: OptionSpecs[string] = { kind: 'string', maxLength: 4096, default: '', description: 'Python 3 interpreter path (empty = /usr/bin/python3, else python3 on PATH).', reason: 'the system interpreter is the one the strict sandbox can see' };

const fieldOption = (what: string): OptionSpecs[string] => ({ kind: 'string', maxLength: 500, default: '', description: `The record field (a dotted path such as extra_info.index) that holds ${what}; empty = the preset's.`, reason: 'the preset names the usual field' });

/** A workspace environment: tasks, tools and reward from files (rl/envs/workspace). Paths are relative to `root`. */
const WORKSPACE_OPTION_SPECS: OptionSpecs = {
  root: { kind: 'string', maxLength: 4096, default: '', description: 'Folder the tasks, tools and reward paths are relative to; empty = the folder of the config file (set by agent-rl and the workbench), else the current folder.', reason: 'a config travels with its files' },
  tasks: { kind: 'string', maxLength: 4096, default: '', description: 'Task file or glob: JSON Lines (.jsonl), JSON (.json, an array), CSV (.csv, a header row) or Parquet (.parquet), e.g. "data/train.jsonl" or "data/*.parquet".', reason: 'required: the tasks are yours' },
  taskPreset: { kind: 'enum', values: ['default', 'verl', 'gsm8k', 'mbpp', 'humaneval'], default: 'default', description: 'Record layout: default (id, prompt, answer, tests, public_tests, private_tests, split, demonstration, metadata), verl (RL parquet: prompt as chat messages, reward_model.ground_truth, extra_info, data_source), gsm8k (question, answer after ####), mbpp (text, test_list), humaneval (prompt, test, entry_point).', reason: 'the fields most hand-written task files use' },
  idField: fieldOption('the task id'), promptField: fieldOption('the prompt (text or chat messages)'), groundTruthField: fieldOption('the ground truth'),
  testsField: fieldOption('the tests (Python text or a list of assert statements)'), publicTestsField: fieldOption('the tests the agent may see'), privateTestsField: fieldOption('the hidden tests'),
  splitField: fieldOption('the split (train, or test/validation/heldout)'), demonstrationField: fieldOption('the reference actions for an SFT warm start (a list of action texts)'),
  metadataField: fieldOption('free metadata'), entryPointField: fieldOption('the function a HumanEval-style check(candidate) receives'),
  heldOutFraction: { kind: 'number', min: 0, max: 1, default: 0.2, description: 'Share of tasks held out for evaluation when a record has no split field (chosen by a hash of the task id and splitSeed).', reason: 'a fifth, as in common train/test splits' },
  splitSeed: { kind: 'integer', min: 0, max: 2 ** 31 - 1, default: 0, description: 'Seed of the held-out choice above.', reason: 'fixed: every run of the same files holds out the same tasks' },
  tools: { kind: 'string', maxLength: 4096, default: '', description: 'Python file whose public functions are the tools (type hints and docstrings give their JSON schemas; EXAMPLES = {"tool": {args}} lets env check try each); empty = no tools. Each episode gets its own sandboxed process, so a tool can keep state across turns.', reason: 'optional: a task may need only an answer' },
  toolFormat: { kind: 'enum', values: ['call', 'hermes', 'code'], default: 'call', description: 'call: <call>tool(args)</call> and <answer>...</answer>; hermes: <tool_call>{"name": ..., "arguments": {...}}</tool_call> and <answer>...</answer>; code: a ```python block calling the tools as functions, then FINAL ANSWER: ...', reason: 'the shortest format, which a small model learns fastest' },
  toolsInPrompt: { kind: 'enum', values: ['signatures', 'json', 'none'], default: 'signatures', description: 'How the prompt shows the tools: one line of signatures, the JSON schemas in <tools> (always for hermes), or not at all.', reason: 'a signature line costs the fewest tokens' },
  reward: { kind: 'string', maxLength: 4096, default: 'exact_match', description: 'A built-in (exact_match: the answer against the ground truth, \\boxed{} read, numbers compared as numbers; unit_tests: the final code, or the answer, run with the task\'s tests in the sandbox) or a Python file defining reward(task, trajectory) -> float | {"score": float, ...extras}, run in the sandbox after each episode.', reason: 'exact match is what most question-answer task files need' },
  formatBonus: { kind: 'number', min: 0, max: 1, default: 0, description: 'Added to the reward when the episode ends with an answer, right or wrong.', reason: 'off: a bonus for form can make a tidy guess outrank an honest attempt (see the calculator\'s formatWeight)' },
  callCost: { kind: 'number', min: 0, max: 1, default: 0, description: 'Subtracted from the reward per tool call.', reason: 'off; a small cost teaches an agent not to call more than it needs' },
  successThreshold: { kind: 'number', min: -1e9, max: 1e9, default: 1, description: 'A score (before the bonus and the cost) at or above this counts as a success, unless the reward returns "success" itself.', reason: 'rewards of 0 or 1 are the common case' },
  maxCalls: { kind: 'integer', min: 1, max: 100, default: 6, description: 'Tool calls (and malformed turns) allowed per episode.', reason: 'room for a few calls and a repaired mistake' },
  sandbox: { kind: 'enum', values: SANDBOX_LEVELS, default: 'auto', description: 'Isolation level of the tools, the code blocks and the reward: auto = strongest available.', reason: 'auto runs everywhere and takes bubblewrap when it is installed' },
  python: PYTHON_OPTION,
  timeoutMs: { kind: 'integer', min: 100, max: 600_000, default: 5000, description: 'Wall-clock limit per tool call, code block and reward (ms); a call past it stops the episode\'s tool process (its state is lost).', reason: 'tools answer in milliseconds; 5 s catches a slow one' },
  tailBytes: { kind: 'integer', min: 256, max: 1_048_576, default: 4096, description: 'Characters of a tool\'s result and printed output kept for the observation.', reason: 'a traceback fits; a flood does not reach the model' },
  outputCapBytes: { kind: 'integer', min: 1024, max: 1_073_741_824, default: 1_048_576, description: 'Output after which a call is stopped (an error observation).', reason: '1 MB is far above any tool\'s answer' },
  poolSize: { kind: 'integer', min: 1, max: 64, default: 2, description: 'Warm interpreter servers for the reward and the unit tests.', reason: 'one per core on the 2-core machines this runs on' },
};

/** Environment option tables: the same spec format, validated under `envOptions.<key>`. */
export const ENV_OPTION_SPECS: Readonly<Record<EnvName, OptionSpecs>> = {
  'binary-search': {
    stepBudget: {
      kind: 'integer', min: 1, max: 100, default: 6,
      description: 'Tool calls allowed per episode (finish included).', reason: 'seed 002: six-step budget',
    },
  },
  calculator: {
    maxCalls: { kind: 'integer', min: 1, max: 64, default: 10, description: 'Tool calls (and malformed turns) allowed before the episode ends.', reason: 'a depth-3 expression needs at most 7 calls; 3 spare for repaired mistakes' },
    formatWeight: { kind: 'number', min: 0, max: 1, default: 0, description: 'Reward for a well-formed final answer, right or wrong (seed 003 uses 0.1).', reason: 'a format bonus makes a tidy guess outrank an honest attempt at the tool that ends malformed, and GRPO then reinforces guessing: from the default experiment\'s warm start, 30 iterations of plain GRPO gained 0.0 greedy points with 0.1 and 21.5 with 0 (RS-SFT, which only imitates successes, is unaffected)' },
    minDepth: { kind: 'integer', min: 1, max: 3, default: 1, description: 'Smallest expression depth (operations on the longest path).', reason: 'depth 1 = one tool call' },
    maxDepth: { kind: 'integer', min: 1, max: 3, default: 2, description: 'Largest expression depth.', reason: 'depth ≤ 2 is what a small model learns in minutes here (notes/calculator-feasibility.md)' },
    minOperand: { kind: 'integer', min: 0, max: 1_000_000, default: 0, description: 'Smallest literal.', reason: 'digits 0–9 as in the feasibility notes' },
    maxOperand: { kind: 'integer', min: 0, max: 1_000_000, default: 9, description: 'Largest literal.', reason: 'digits 0–9 as in the feasibility notes' },
    trainTasks: { kind: 'integer', min: 1, max: 100_000, default: 2000, description: 'Distinct training expressions.', reason: 'enough that groups rarely repeat' },
    heldOutTasks: { kind: 'integer', min: 1, max: 10_000, default: 200, description: 'Distinct held-out expressions (never trained on; none shares its call plan, up to operand order, with a training one).', reason: '200 as in the feasibility notes' },
    callCost: { kind: 'number', min: 0, max: 1, default: 0, description: 'Reward subtracted per tool call (a per-call cost; malformed turns count too).', reason: 'off: the reward is seed 003\'s; a small cost teaches an agent not to call more than it needs' },
  },
  code: {
    sandbox: { kind: 'enum', values: SANDBOX_LEVELS, default: 'auto', description: 'Isolation level: auto = strongest available; a named level fails the run if it is not available here.', reason: 'auto runs everywhere and takes bubblewrap when it is installed' },
    python: PYTHON_OPTION,
    timeoutMs: { kind: 'integer', min: 100, max: 600_000, default: 5000, description: 'Wall-clock limit per execution (ms).', reason: 'small programs finish in well under a second; 5 s catches slow but correct code' },
    tailBytes: { kind: 'integer', min: 256, max: 1_048_576, default: 4096, description: 'Bytes of stdout and of stderr kept for the observation (the tail).', reason: 'a traceback fits; a flood does not reach the model' },
    outputCapBytes: { kind: 'integer', min: 1024, max: 1_073_741_824, default: 1_048_576, description: 'Output after which the program is killed.', reason: '1 MB is far above any task and bounds the cost of a flood' },
    maxExecutions: { kind: 'integer', min: 1, max: 100, default: 4, description: 'execute_code turns (and malformed turns) per episode.', reason: 'room to fail, read the error and fix twice' },
    poolSize: { kind: 'integer', min: 1, max: 64, default: 2, description: 'Warm interpreter servers (parallel executions).', reason: 'one per core on the 2-core machines this runs on' },
    taskSet: { kind: 'enum', values: ['functions', 'formulas'], default: 'functions', description: 'functions: 65 hand-written function tasks (seed 000\'s three among them); formulas: generated one-line f(x) tasks, learnable by a small model trained here.', reason: 'the hand-written tasks are the benchmark; formulas are the learning check' },
  },
  workspace: WORKSPACE_OPTION_SPECS,
};

const MISTAKE_RATE: OptionSpecs[string] = {
  kind: 'number', min: 0, max: 1, default: 0.05,
  description: 'Share of demonstrations whose first action is a deliberate mistake (shown to the student, not imitated), repaired after reading the error.',
  reason: 'the model sees errors being read and fixed; more made the calculator warm start slower to learn (0.2: 40% sampled after 800 steps at lr 6e-3, 0: 66% at 3e-3)',
};
const IMITATE: OptionSpecs[string] = {
  kind: 'enum', values: ['all', 'successful'], default: 'all',
  description: 'Imitate every demonstration (as demonstration data usually comes: unverified), or only those the verifier accepts.',
  reason: 'imitation copies what it is shown, habits included; that is what RL is then measured against',
};

/** The reference agents' demonstration tables, validated under `demonstrations.<key>` (method sft only). */
export const DEMONSTRATION_SPECS: Readonly<Record<EnvName, OptionSpecs>> = {
  'binary-search': {},
  calculator: {
    mistakeRate: MISTAKE_RATE,
    imitate: IMITATE,
    skipToolOn: {
      kind: 'enum', values: ['none', 'mul', 'depth-1', 'all'], default: 'mul',
      description: 'The class of tasks on which the demonstrator skips the tool and answers at once with a guess: mul = expressions with a multiplication, depth-1 = a single operation, all, or none.',
      reason: 'real demonstrations are imperfect in a systematic way; SFT copies the habit, and what RL adds beyond imitation is breaking it (the default experiment)',
    },
    skipToolRate: {
      kind: 'number', min: 0, max: 1, default: 0.8,
      description: 'How often, on that class, the demonstrator skips the tool; above 0.5 greedy decoding copies the habit, below 1 the student still sees the tool used on the class now and then.',
      reason: 'at 0.8 the warm start guesses under greedy decoding on every mul task and still calls the tool on about 1 in 10 of them when sampling, which is what RL can build on',
    },
    guess: {
      kind: 'enum', values: ['first-number', 'near-miss'], default: 'first-number',
      description: 'What a skipped-tool answer says: first-number copies the question\'s first number (a guess a student can learn to copy); near-miss is the true result ±1, 2 or 10 (a guess no student can learn from the question).',
      reason: 'near-miss guesses are noise the student cannot fit, and they took its tool use down with them (12% sampled on the tasks without a multiplication, against 54% with first-number)',
    },
    redundantCallRate: {
      kind: 'number', min: 0, max: 1, default: 0,
      description: 'How often the demonstrator repeats a call it just made, to double-check (a wasted tool call that envOptions.callCost can teach away).',
      reason: 'off by default',
    },
  },
  code: { mistakeRate: MISTAKE_RATE, imitate: IMITATE },
  // the demonstrations are the task file's own (envOptions.demonstrationField)
  workspace: { imitate: IMITATE },
};

/**
 * Keys that moved into the typed sections, with where they went: a config written for an earlier
 * release gets an error that says exactly what to change.
 */
export const MOVED_KEYS: Readonly<Record<string, string>> = {
  learningRate: 'algorithm.learningRate', clipEpsilon: 'algorithm.clipLow', klCoef: 'algorithm.klCoef', epochs: 'algorithm.epochs', advantageStd: 'algorithm.advantageStd',
  'policyOptions.clipHigh': 'algorithm.clipHigh', 'policyOptions.klEstimator': 'algorithm.klEstimator', 'policyOptions.aggregation': 'algorithm.lossAggregation',
  'policyOptions.minibatchSize': 'algorithm.minibatchSize', 'policyOptions.negativeAdvantageScale': 'algorithm.negativeAdvantageScale',
  'policyOptions.skipZeroAdvantage': 'algorithm.skipZeroAdvantage', 'policyOptions.weightDecay': 'algorithm.weightDecay', 'policyOptions.maxGradNorm': 'algorithm.maxGradNorm',
  'policyOptions.warmupSteps': 'algorithm.warmupSteps', 'policyOptions.mistakeRate': 'demonstrations.mistakeRate',
};

/** Which policies can drive which environments (an impossible combination fails validation). */
export const ENV_CAPABILITIES: Readonly<Record<EnvName, { tabular: boolean; description: string }>> = {
  'binary-search': { tabular: true, description: 'Repair the low/high updates of a binary search with six tool actions (seed 002).' },
  calculator: { tabular: false, description: 'Arithmetic through <call>op(a,b)</call> tool calls and a boxed answer (seed 003).' },
  code: { tabular: false, description: 'Write and run Python in a sandbox, read errors, fix, submit (seed 000).' },
  workspace: { tabular: false, description: 'Your own tasks, tools and reward, from files in the workspace.' },
};

export class ConfigError extends Error {
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(
      `Invalid run config (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n` +
        issues.map((i) => `  - ${i.field} = ${show(i.value)}: ${i.message}. Fix: ${i.fix}`).join('\n'),
    );
    this.name = 'ConfigError';
  }
}

function show(v: unknown): string {
  if (v === undefined) return 'undefined';
  const s = JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function closest(word: string, options: readonly string[]): string | undefined {
  // Suggest a key that differs only in case, or that starts the same way: catches typos cheaply.
  const lower = word.toLowerCase();
  return (
    options.find((o) => o.toLowerCase() === lower) ??
    options.find((o) => o.toLowerCase().startsWith(lower.slice(0, 4)) && lower.length >= 4)
  );
}

/** Options of an environment, a policy or a demonstrator: only known keys, typed and in range; defaults filled. Problems go to `issues`. */
function checkOptions(field: 'envOptions' | 'policyOptions' | 'demonstrations', owner: string, specs: OptionSpecs | undefined, given: Record<string, unknown>, issues: ConfigIssue[]): Record<string, unknown> {
  if (!specs) return given; // an unknown env or policy is reported by its own field
  const options: Record<string, unknown> = {};
  const kind = field === 'policyOptions' ? 'policy' : 'env';
  for (const [k, v] of Object.entries(given)) {
    const spec = specs[k];
    if (!spec) {
      const moved = MOVED_KEYS[`${field}.${k}`];
      // the one value renamed on the way: the aggregation "seq-sum" is seq-mean-token-sum
      const now = k === 'aggregation' && v === 'seq-sum' ? 'seq-mean-token-sum' : v;
      issues.push(moved
        ? { field: `${field}.${k}`, value: v, message: `has moved to ${moved}`, fix: `write it as ${moved.replace('.', ': { ')}: ${show(now)} }` }
        : { field: `${field}.${k}`, value: v, message: `is not an option of ${kind} "${owner}"${field === 'demonstrations' ? '\'s demonstrations' : ''}`, fix: `remove it; ${owner} accepts: ${Object.keys(specs).join(', ') || '(none)'}` });
      continue;
    }
    checkField(`${field}.${k}`, spec, v, issues);
    options[k] = v;
  }
  for (const [k, spec] of Object.entries(specs)) options[k] ??= spec.default;
  return options;
}

function checkEnvOptions(env: EnvName, given: Record<string, unknown>, issues: ConfigIssue[]): Record<string, unknown> {
  return checkOptions('envOptions', env, ENV_OPTION_SPECS[env], given, issues);
}

/** Validates one environment's options on their own (for tools that need an environment but no run). */
export function validateEnvOptions(env: EnvName, given: Record<string, unknown> = {}): Record<string, unknown> {
  const issues: ConfigIssue[] = [];
  const options = checkEnvOptions(env, given, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return options;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The algorithm section: known, typed fields over the defaults of (env, policy, method). */
function checkAlgorithm(given: Record<string, unknown>, defaults: AlgorithmSettings, issues: ConfigIssue[]): AlgorithmSettings {
  const out: Record<string, unknown> = { ...defaults };
  const names = Object.keys(ALGORITHM_SPECS);
  for (const [k, v] of Object.entries(given)) {
    const spec = ALGORITHM_SPECS[k as keyof AlgorithmSettings] as FieldSpec | undefined;
    if (!spec) {
      const hint = closest(k, names);
      issues.push({ field: `algorithm.${k}`, value: v, message: 'is not an algorithm setting', fix: hint ? `did you mean "${hint}"?` : `remove it; the settings are: ${names.join(', ')}` });
      continue;
    }
    checkField(`algorithm.${k}`, spec, v, issues);
    out[k] = v;
  }
  return out as unknown as AlgorithmSettings;
}

/**
 * Validates a partial config (from a file, flags or a UI) and fills defaults.
 * Throws ConfigError listing every problem at once; nothing runs on an invalid config.
 */
export function validateRunConfig(input: unknown): RunConfig {
  const issues: ConfigIssue[] = [];
  if (!isObject(input)) {
    throw new ConfigError([{ field: '(config)', value: input, message: 'must be a JSON object', fix: 'write the config as { "key": value, ... }' }]);
  }
  const raw = input;
  const keys = Object.keys(FIELD_SPECS) as (keyof RunConfig)[];
  for (const key of Object.keys(raw)) {
    if ((keys as string[]).includes(key)) continue;
    const moved = MOVED_KEYS[key];
    if (moved) {
      const [section, name] = moved.split('.') as [string, string];
      issues.push({ field: key, value: raw[key], message: `has moved to ${moved}`, fix: `write it as "${section}": { "${name}": ${show(raw[key])} }` });
      continue;
    }
    const hint = closest(key, keys);
    issues.push({ field: key, value: raw[key], message: 'is not a known config key', fix: hint ? `did you mean "${hint}"?` : `remove it; known keys: ${keys.join(', ')}` });
  }
  const policyDefaults = POLICY_DEFAULTS[raw.policy as PolicyName] as Partial<RunConfig> | undefined;
  const method = typeof raw.method === 'string' ? raw.method : DEFAULT_RUN_CONFIG.method;
  const methodDefaults = typeof raw.policy === 'string' ? METHOD_DEFAULTS[`${raw.policy}/${method}` as `${PolicyName}/${MethodName}`] : undefined;
  const merged: Record<string, unknown> = { ...DEFAULT_RUN_CONFIG, ...(policyDefaults ?? {}), ...(methodDefaults ?? {}) };
  for (const key of keys) {
    if (raw[key] === undefined) continue;
    checkField(key, FIELD_SPECS[key], raw[key], issues);
    merged[key] = raw[key];
  }
  const config = merged as unknown as RunConfig;
  config.algorithm = checkAlgorithm(isObject(raw.algorithm) ? raw.algorithm : {}, algorithmDefaults(config.env, config.policy, config.method), issues);
  if (isObject(config.envOptions)) config.envOptions = checkEnvOptions(config.env, config.envOptions, issues);
  if (isObject(config.policyOptions)) {
    config.policyOptions = checkOptions('policyOptions', config.policy, POLICY_OPTION_SPECS[config.policy], config.policyOptions, issues);
  }
  if (isObject(config.demonstrations)) {
    if (config.method !== 'sft' && Object.keys(config.demonstrations).length > 0) {
      issues.push({ field: 'demonstrations', value: config.demonstrations, message: `applies to method sft only (this run is ${config.method})`, fix: 'remove it, or use method "sft"' });
    }
    config.demonstrations = checkOptions('demonstrations', config.env, DEMONSTRATION_SPECS[config.env], config.demonstrations, issues);
  }
  const po = config.policyOptions;
  if (typeof po.dModel === 'number' && typeof po.nHeads === 'number' && po.dModel % po.nHeads !== 0) {
    issues.push({ field: 'policyOptions.nHeads', value: po.nHeads, message: `does not divide policyOptions.dModel (${po.dModel})`, fix: 'choose nHeads so that dModel / nHeads is a whole number' });
  }
  if (po.actionMode === 'score') {
    if (typeof po.model !== 'string' || po.model === '') issues.push({ field: 'policyOptions.actionMode', value: 'score', message: 'candidate scoring needs a language model checkpoint', fix: 'set policyOptions.model to a Hugging Face checkpoint folder, or use actionMode "generate"' });
    if (!ENV_CAPABILITIES[config.env]?.tabular) issues.push({ field: 'policyOptions.actionMode', value: 'score', message: `env "${config.env}" has no fixed set of action strings to score`, fix: 'use env "binary-search", or actionMode "generate"' });
    if (config.method === 'sft') issues.push({ field: 'method', value: 'sft', message: 'candidate scoring has no demonstrations to imitate', fix: 'use method "grpo" or "rs-sft"' });
  }
  if (config.method === 'sft' && config.policy === 'table') {
    issues.push({ field: 'method', value: 'sft', message: 'sft trains a language model on reference demonstrations; the table policy has none', fix: 'use policy "transformer", or method "rs-sft" for the table baseline' });
  }
  if (config.method === 'sft' && config.env === 'binary-search') {
    issues.push({ field: 'env', value: config.env, message: 'binary-search has no reference agent to demonstrate', fix: 'use env "calculator" or "code" for sft' });
  }
  // Impossible combinations.
  const caps = ENV_CAPABILITIES[config.env] as (typeof ENV_CAPABILITIES)[EnvName] | undefined;
  if (config.policy === 'table' && caps && !caps.tabular) {
    issues.push({
      field: 'policy', value: config.policy, message: `the table policy needs a finite visible state, which env "${config.env}" does not have`,
      fix: 'use a language-model policy for this environment, or env "binary-search"',
    });
  }
  const eo = config.envOptions;
  if (typeof eo.minDepth === 'number' && typeof eo.maxDepth === 'number' && eo.minDepth > eo.maxDepth) {
    issues.push({ field: 'envOptions.minDepth', value: eo.minDepth, message: `is greater than envOptions.maxDepth (${eo.maxDepth})`, fix: 'make minDepth ≤ maxDepth' });
  }
  if (typeof eo.minOperand === 'number' && typeof eo.maxOperand === 'number' && eo.minOperand > eo.maxOperand) {
    issues.push({ field: 'envOptions.minOperand', value: eo.minOperand, message: `is greater than envOptions.maxOperand (${eo.maxOperand})`, fix: 'make minOperand ≤ maxOperand' });
  }
  if (config.method === 'grpo' && typeof config.groupSize === 'number' && config.groupSize < 2) {
    issues.push({ field: 'groupSize', value: config.groupSize, message: 'GRPO normalises rewards within a group, and a group of one has no spread', fix: 'set groupSize ≥ 2 (seed 002 uses 8)' });
  } else if (config.algorithm.advantageStd === 'sample' && typeof config.groupSize === 'number' && config.groupSize < 2) {
    issues.push({ field: 'groupSize', value: config.groupSize, message: 'the sample standard deviation needs at least 2 trajectories', fix: 'set groupSize ≥ 2' });
  }
  const givenAlgo = isObject(raw.algorithm) ? raw.algorithm : {};
  // The table's clip is seed 002's one ε for both bounds: a given clipLow moves clipHigh with it
  if (config.policy === 'table' && givenAlgo.clipLow !== undefined && givenAlgo.clipHigh === undefined) config.algorithm.clipHigh = config.algorithm.clipLow;
  if ((config.method === 'rs-sft' || config.method === 'sft') && givenAlgo.klCoef !== undefined && givenAlgo.klCoef !== 0) {
    issues.push({
      field: 'algorithm.klCoef', value: givenAlgo.klCoef, message: `${config.method} trains by negative log-likelihood and has no KL penalty`,
      fix: `remove algorithm.klCoef (or set it to 0) for method "${config.method}"`,
    });
  }
  // Asynchronous samples are off-policy: recompute π_old and correct by truncated importance weights,
  // unless the config says otherwise.
  if (config.mode === 'async') {
    if (givenAlgo.oldLogprobs === undefined) config.algorithm.oldLogprobs = 'recompute';
    // (with π_old given as the behaviour log-probs there is nothing to correct: the clip alone guards)
    if (givenAlgo.offPolicyCorrection === undefined && config.algorithm.oldLogprobs === 'recompute') config.algorithm.offPolicyCorrection = 'truncated-is';
    if (config.method === 'sft') issues.push({ field: 'mode', value: 'async', message: 'sft learns from scripted demonstrations, which have no policy to be asynchronous with', fix: 'use mode "sync" for sft' });
    if (config.queueGroups > 0 && config.queueGroups < config.groupsPerIteration) {
      issues.push({ field: 'queueGroups', value: config.queueGroups, message: `the learner takes ${config.groupsPerIteration} groups at a time (groupsPerIteration), more than the queue could ever hold`, fix: `use 0 (the default) or at least ${config.groupsPerIteration}` });
    }
    if (config.algorithm.dynamicSampling > 0) {
      issues.push({ field: 'algorithm.dynamicSampling', value: config.algorithm.dynamicSampling, message: 'replaces uninformative groups by sampling again within the iteration, which the asynchronous stream does not do', fix: 'set algorithm.dynamicSampling to 0, or use mode "sync"' });
    }
  }
  if (config.algorithm.offPolicyCorrection === 'truncated-is' && config.algorithm.oldLogprobs !== 'recompute') {
    issues.push({ field: 'algorithm.offPolicyCorrection', value: 'truncated-is', message: 'weighs tokens by π_old/π_behaviour, which is 1 when π_old is the behaviour log-probs', fix: 'set algorithm.oldLogprobs to "recompute"' });
  }
  const dual = config.algorithm.dualClip;
  if (typeof dual === 'number' && dual > 0 && dual <= 1) {
    issues.push({ field: 'algorithm.dualClip', value: dual, message: 'the dual-clip bound must be greater than 1 (it caps a negative-advantage token\'s loss at c·|A|)', fix: 'use 0 (off) or a value > 1 such as 3' });
  }
  if (config.env === 'workspace' && (typeof eo.tasks !== 'string' || eo.tasks === '')) {
    issues.push({ field: 'envOptions.tasks', value: eo.tasks, message: 'a workspace environment needs its task file(s)', fix: 'name them, e.g. "tasks.jsonl" or "data/*.parquet" (relative to the config file)' });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  if (config.name === '') config.name = `${config.env}-${config.policy}-${config.method}-s${config.seed}`;
  return config;
}
