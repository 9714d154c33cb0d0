// The option tables of the run config's sections that depend on a choice: each policy's options, each
// environment's, each reference agent's demonstrations. A table is data (the validator checks values
// against it, the JSON schema and the CLI help are generated from it) and the options' types are
// derived from the same table (OptionsOf), so a key, its type and its default are written once.
import type { FieldSpec } from './fieldSpec';

export const ENV_NAMES = ['binary-search', 'calculator', 'code', 'workspace', 'agent'] as const;
/** The sandbox's isolation levels, strongest first (src/rl/sandbox/isolation.ts says what each holds). */
export const ISOLATION_LEVELS = ['strict', 'landlock', 'seatbelt', 'network', 'process'] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];
export const SANDBOX_LEVELS = ['auto', ...ISOLATION_LEVELS] as const;
export type EnvName = (typeof ENV_NAMES)[number];
/** How strongly model-written code is isolated ('auto' = the strongest this machine has). */
export type SandboxLevel = (typeof SANDBOX_LEVELS)[number];
export const isSandboxLevel = (s: unknown): s is SandboxLevel => typeof s === 'string' && (SANDBOX_LEVELS as readonly string[]).includes(s);
export const POLICY_NAMES = ['table', 'transformer'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

/** One option: its spec and its default. */
export type OptionSpec = FieldSpec & { readonly default: number | string | boolean | readonly string[] | Readonly<Record<string, unknown>> };
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** The value an option spec admits: its kind's type, an enum's own values. */
type SpecValue<S> = S extends { kind: 'integer' | 'number' }
  ? number
  : S extends { kind: 'enum'; values: readonly (infer V)[] }
    ? V
    : S extends { kind: 'string' }
      ? string
      : S extends { kind: 'boolean' }
        ? boolean
        : S extends { kind: 'object' }
          ? Readonly<Record<string, unknown>>
          : S extends { kind: 'strings' }
            ? readonly string[]
            : never;

/** The options a table describes, every key present (validateRunConfig fills the defaults): the type comes from the table itself. */
export type OptionsOf<T> = { readonly [K in keyof T]: SpecValue<T[K]> };

/** A table's options at their defaults. */
export function optionDefaults<T extends OptionSpecs>(specs: T): OptionsOf<T> {
  return Object.fromEntries(Object.entries(specs).map(([k, spec]) => [k, spec.default])) as OptionsOf<T>;
}

/** The table policy's options, validated under `policyOptions.<key>`. */
export const TABLE_OPTION_SPECS = {
  backend: {
    kind: 'enum',
    values: ['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'],
    default: 'cpu',
    description: "Compute backend for the table's tensors.",
    reason: 'a 24 × 6 table is fastest on plain JS: every other backend spends more on each call than the arithmetic costs',
  },
} as const satisfies OptionSpecs;

/** The language-model policy's options (the small GPT, or a Hugging Face checkpoint with policyOptions.model). */
export const TRANSFORMER_OPTION_SPECS = {
  backend: {
    kind: 'enum',
    values: ['auto', 'tensorflow-gpu', 'webgpu', 'tensorflow', 'wasm', 'cpu'],
    default: 'auto',
    description:
      'Compute backend; auto = tfjs-node-gpu, then WebGPU (Dawn, the optional webgpu package) on a hardware adapter, then tfjs-node, then wasm (SIMD), then cpu; webgpu forced takes a software adapter too.',
    reason: 'the fastest one that loads',
  },
  init: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description: 'Checkpoint to start from (a checkpoint directory or its checkpoint.json); empty = fresh weights.',
    reason: 'GRPO continues from an SFT warm start',
  },
  tokenizer: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      "Without policyOptions.model: a directory holding the fresh model's Hugging Face tokenizer.json (and tokenizer_config.json); empty = the character-level tokenizer (every character one token). A checkpoint given as init brings its own.",
    reason: 'characters suit the small models trained here',
  },
  model: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      'A local Hugging Face checkpoint folder (config.json with model_type qwen2, qwen3, llama or gpt2; model.safetensors or its shards and index; tokenizer.json, tokenizer_config.json, generation_config.json): the policy is that model, with its tokenizer and chat template; architecture, dModel, nLayers, nHeads, mlpRatio, tiedHead and tokenizer are then unused. Nothing is downloaded. Empty = a fresh model of that architecture and shape with random weights (seeded by the run; written once as a Hugging Face folder under ~/.cache/agent-rl-workbench/models, as `agent-rl model new` writes one), every weight trained.',
    reason: 'a small fresh model trains from scratch in minutes on a CPU',
  },
  loraRank: {
    kind: 'integer',
    min: 0,
    max: 1024,
    default: 8,
    description: 'With model: LoRA rank of the adapters (only they are trained and checkpointed; the KL reference is the base model); 0 = full fine-tuning.',
    reason: "rank 8 is PEFT's and verl's usual start, and the only way a 0.5B model trains within wasm's 4 GiB",
  },
  loraAlpha: {
    kind: 'number',
    min: 0,
    max: 4096,
    default: 0,
    description: 'With model: LoRA scale numerator (the update is alpha / rank · A·B); 0 = twice the rank.',
    reason: 'twice the rank, as usual',
  },
  loraDropout: {
    kind: 'number',
    min: 0,
    max: 0.9,
    default: 0,
    description: "With model: dropout on the adapters' input in training passes.",
    reason: 'off: it makes the recomputed log-probs of a sampled batch noisy',
  },
  loraTargets: {
    kind: 'string',
    maxLength: 500,
    default: 'all-linear',
    description:
      'With model: comma-separated linear layers that get adapters (qwen2 / qwen3 / llama: q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj; gpt2: c_attn, c_proj, c_fc), or all-linear.',
    reason: "every linear layer, as verl's LoRA recipes",
  },
  chatTemplate: {
    kind: 'enum',
    values: ['auto', 'none'],
    default: 'auto',
    description:
      "With model: auto = prompt through tokenizer_config.json's chat template when it has one (system, user, assistant and tool messages; tools in the template's own format), token in, token out; none = the observations as plain text.",
    reason: 'an instruct model answers best in the format it was trained on',
  },
  systemPrompt: {
    kind: 'string',
    maxLength: 20_000,
    default: '',
    description: "With a chat template: the system message; empty = the template's default.",
    reason: "the template knows its model's default",
  },
  chatTemplateVariables: {
    kind: 'object',
    default: {},
    description:
      'With a chat template: more variables the template reads, e.g. {"enable_thinking": false} for Qwen3 (its generation prompt then opens with an empty <think></think>).',
    reason: "none: the template's own defaults",
  },
  actionMode: {
    kind: 'enum',
    values: ['generate', 'score'],
    default: 'generate',
    description:
      "generate: the model writes each action as text; score (with model, on an environment with a fixed action set such as binary-search): seed 002's candidate scoring, the model scores each action string after the history and the policy is the softmax over those scores.",
    reason: "free generation is what an agent does; scoring is seed 002's six-way policy",
  },
  scoreNormalization: {
    kind: 'enum',
    values: ['sum', 'mean'],
    default: 'sum',
    description:
      "actionMode score: sum = seed 002's score, the candidate's summed token log-probs (shorter candidates score higher); mean = divided by its token count.",
    reason: "seed 002's definition",
  },
  microBatchPositions: {
    kind: 'integer',
    min: 0,
    max: 65_536,
    default: 0,
    description:
      'Positions per forward and backward pass; gradients accumulate over micro-batches. 0 = 4096 for the small GPT; for a model on the wasm engine, the most packed positions (8, 4, 2 or 1 contexts) whose memory plan fits; for a model on tfjs ops, the largest power of two (2048 down to 64) whose plan fits the backend.',
    reason: "a pretrained vocabulary makes every position's logits large",
  },
  threads: {
    kind: 'integer',
    min: 0,
    max: 14,
    default: 0,
    description:
      'With model on the wasm backend: threads of the engine that runs the model (its matrix products, attention and head split over them); 0 = one per core.',
    reason: 'one model on every core',
  },
  weightDtype: {
    kind: 'enum',
    values: ['auto', 'bf16', 'f32'],
    default: 'auto',
    description:
      'With model on the wasm backend: how the engine holds the frozen base weights; bf16 halves their memory and the bytes each product reads (the products accumulate in float32); auto = bf16, or f32 for a float32 checkpoint whose plan fits.',
    reason: 'released checkpoints are bfloat16; a float32 one keeps its exact weights where memory allows',
  },
  rolloutEngine: {
    kind: 'enum',
    values: ['engine', 'llama.cpp'],
    default: 'engine',
    description:
      "On the wasm backend: what samples the episodes and evaluations. llama.cpp (node-llama-cpp's prebuilt build: CPU, Metal, CUDA or Vulkan, whichever loads) runs the checkpoint written once as GGUF beside the model cache, with the policy's LoRA adapters (under full fine-tuning, every weight) loaded after each update; the engine stays the trainer, so π_old is recomputed on it and each token's loss is weighed by truncated importance sampling unless algorithm says otherwise. Constrained decoding and top-k / top-p sample on the engine. llama.cpp's kernels differ from the trainer's: the sampled tokens' log-probs differ by a mismatch the run measures and the correction weighs.",
    reason:
      "on this 2-core AVX-512 machine llama.cpp's CPU build samples Qwen2.5-0.5B's shapes no faster than the engine (npm run bench seed000Scale); its GPU builds were not measured here",
  },
  architecture: {
    kind: 'enum',
    values: ['qwen3', 'qwen2', 'llama'],
    default: 'qwen3',
    description: "Without policyOptions.model: the fresh model's architecture (qwen3: RMSNorm over each head's queries and keys; qwen2: q/k/v biases; llama).",
    reason: 'Qwen3 is the family seed 000 trains',
  },
  dModel: {
    kind: 'integer',
    min: 8,
    max: 4096,
    default: 64,
    description: "Without policyOptions.model: the fresh model's width (a multiple of 8, as the engine's products read it).",
    reason: '64 × 2 layers learns the calculator protocol in minutes here (notes/calculator-feasibility.md)',
  },
  nLayers: {
    kind: 'integer',
    min: 1,
    max: 64,
    default: 2,
    description: "Without policyOptions.model: the fresh model's decoder layers.",
    reason: 'see dModel',
  },
  nHeads: {
    kind: 'integer',
    min: 1,
    max: 64,
    default: 4,
    description: "Without policyOptions.model: the fresh model's attention heads (must divide dModel; the head width a multiple of 8).",
    reason: 'head width 16',
  },
  contextLength: {
    kind: 'integer',
    min: 0,
    max: 32_768,
    default: 0,
    description:
      'Longest context in tokens (prompt + actions + observations); 0 = 192 for a fresh model, and for a model (policyOptions.model) its max_position_embeddings up to 2048.',
    reason:
      "a depth-2 calculator episode with three calls and one repaired mistake is about 190 characters; a chat template's system prompt alone is dozens of tokens",
  },
  mlpRatio: {
    kind: 'integer',
    min: 1,
    max: 16,
    default: 4,
    description:
      "Without policyOptions.model: the fresh model's MLP size as a GELU MLP's multiple of dModel; its SwiGLU width is 2/3 of that (the same parameters), rounded to a multiple of 8.",
    reason: 'GPT-2',
  },
  tiedHead: {
    kind: 'boolean',
    default: true,
    description: "Without policyOptions.model: the fresh model's output head shares the token embedding.",
    reason: 'fewer parameters for a small model',
  },
  temperature: {
    kind: 'number',
    min: 0,
    max: 10,
    default: 1,
    description: 'Sampling temperature in training rollouts (0 = greedy).',
    reason: 'on-policy sampling from the model itself',
  },
  topK: {
    kind: 'integer',
    min: 0,
    max: 100_000,
    default: 0,
    description: 'Sample among the k most likely tokens (0 = off).',
    reason: 'off: the learner recomputes the full distribution',
  },
  topP: { kind: 'number', min: 0, max: 1, minExclusive: true, default: 1, description: 'Nucleus sampling mass (1 = off).', reason: 'off, as topK' },
  constrainedDecoding: {
    kind: 'boolean',
    default: false,
    description:
      "Draw only tokens that keep each action well-formed under the environment's action grammar (the calculator has one); sampled log-probs, the learner's and the reference's are all renormalised over the allowed tokens. Small transformer only.",
    reason: 'off: the model writes freely, as the seeds have it (npm start turns it on: malformed turns grew under RL without it)',
  },
  maxNewTokens: {
    kind: 'integer',
    min: 1,
    max: 8192,
    default: 32,
    description: 'Tokens per action at most.',
    reason: 'a calculator call or answer is under 30 characters',
  },
} as const satisfies OptionSpecs;

/** Policy option tables, validated under `policyOptions.<key>`. */
export const POLICY_OPTION_SPECS = { table: TABLE_OPTION_SPECS, transformer: TRANSFORMER_OPTION_SPECS } as const satisfies Readonly<
  Record<PolicyName, OptionSpecs>
>;
// (named interfaces, so that types and errors read "TransformerOptions" rather than the whole table)
export interface TableOptions extends OptionsOf<typeof TABLE_OPTION_SPECS> {}
export interface TransformerOptions extends OptionsOf<typeof TRANSFORMER_OPTION_SPECS> {}
/** Each policy's options, by policy name. */
export interface PolicyOptions {
  readonly table: TableOptions;
  readonly transformer: TransformerOptions;
}

/** The kind, range and default of the sandbox options of every environment that runs Python (written once; each table says them in its words). */
const SANDBOX_RANGES = {
  sandbox: { kind: 'enum', values: SANDBOX_LEVELS, default: 'auto' },
  timeoutMs: { kind: 'integer', min: 100, max: 600_000, default: 5000 },
  tailBytes: { kind: 'integer', min: 256, max: 1_048_576, default: 4096 },
  outputCapBytes: { kind: 'integer', min: 1024, max: 1_073_741_824, default: 1_048_576 },
  poolSize: { kind: 'integer', min: 1, max: 64, default: 2 },
} as const;

/** The interpreter of every environment that runs Python in the sandbox. */
const PYTHON_OPTION = {
  kind: 'string',
  maxLength: 4096,
  default: '',
  description: 'Python 3 interpreter path (empty = /usr/bin/python3, else python3 on PATH).',
  reason: 'the system interpreter is the one the strict sandbox can see',
} as const satisfies OptionSpec;

const fieldOption = (what: string) =>
  ({
    kind: 'string',
    maxLength: 500,
    default: '',
    description: `The record field (a dotted path such as extra_info.index) that holds ${what}; empty = the preset's.`,
    reason: 'the preset names the usual field',
  }) as const satisfies OptionSpec;

/** A workspace environment: tasks, tools and reward from files (rl/envs/workspace). Paths are relative to `root`. */
export const WORKSPACE_OPTION_SPECS = {
  root: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      'Folder the tasks, tools and reward paths are relative to; empty = the folder of the config file (set by agent-rl and the workbench), else the current folder.',
    reason: 'a config travels with its files',
  },
  tasks: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      'Task file or glob: JSON Lines (.jsonl), JSON (.json, an array), CSV (.csv, a header row) or Parquet (.parquet), e.g. "data/train.jsonl" or "data/*.parquet".',
    reason: 'required: the tasks are yours',
  },
  taskPreset: {
    kind: 'enum',
    values: ['default', 'verl', 'gsm8k', 'mbpp', 'humaneval'],
    default: 'default',
    description:
      'Record layout: default (id, prompt, answer, tests, public_tests, private_tests, split, demonstration, metadata), verl (RL parquet: prompt as chat messages, reward_model.ground_truth, extra_info, data_source), gsm8k (question, answer after ####), mbpp (text, test_list), humaneval (prompt, test, entry_point).',
    reason: 'the fields most hand-written task files use',
  },
  idField: fieldOption('the task id'),
  promptField: fieldOption('the prompt (text or chat messages)'),
  groundTruthField: fieldOption('the ground truth'),
  testsField: fieldOption('the tests (Python text or a list of assert statements)'),
  publicTestsField: fieldOption('the tests the agent may see'),
  privateTestsField: fieldOption('the hidden tests'),
  splitField: fieldOption('the split (train, or test/validation/heldout)'),
  demonstrationField: fieldOption('the reference actions for an SFT warm start (a list of action texts)'),
  metadataField: fieldOption('free metadata'),
  entryPointField: fieldOption('the function a HumanEval-style check(candidate) receives'),
  heldOutFraction: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0.2,
    description: 'Share of tasks held out for evaluation when a record has no split field (chosen by a hash of the task id and splitSeed).',
    reason: 'a fifth, as in common train/test splits',
  },
  splitSeed: {
    kind: 'integer',
    min: 0,
    max: 2 ** 31 - 1,
    default: 0,
    description: 'Seed of the held-out choice above.',
    reason: 'fixed: every run of the same files holds out the same tasks',
  },
  tools: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      'Python file whose public functions are the tools (type hints and docstrings give their JSON schemas; EXAMPLES = {"tool": {args}} lets env check try each); empty = no tools. Each episode gets its own sandboxed process, so a tool can keep state across turns.',
    reason: 'optional: a task may need only an answer',
  },
  toolFormat: {
    kind: 'enum',
    values: ['call', 'hermes', 'code'],
    default: 'call',
    description:
      'call: <call>tool(args)</call> and <answer>...</answer>; hermes: <tool_call>{"name": ..., "arguments": {...}}</tool_call> and <answer>...</answer>; code: a ```python block calling the tools as functions, then FINAL ANSWER: ...',
    reason: 'the shortest format, which a small model learns fastest',
  },
  toolsInPrompt: {
    kind: 'enum',
    values: ['signatures', 'json', 'none'],
    default: 'signatures',
    description: 'How the prompt shows the tools: one line of signatures, the JSON schemas in <tools> (always for hermes), or not at all.',
    reason: 'a signature line costs the fewest tokens',
  },
  reward: {
    kind: 'string',
    maxLength: 4096,
    default: 'exact_match',
    description:
      'A built-in (exact_match: the answer against the ground truth, \\boxed{} read, numbers compared as numbers; unit_tests: the final code, or the answer, run with the task\'s tests in the sandbox) or a Python file defining reward(task, trajectory) -> float | {"score": float, ...extras}, run in the sandbox after each episode.',
    reason: 'exact match is what most question-answer task files need',
  },
  formatBonus: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description: 'Added to the reward when the episode ends with an answer, right or wrong.',
    reason: "off: a bonus for form can make a tidy guess outrank an honest attempt (see the calculator's formatWeight)",
  },
  callCost: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description: 'Subtracted from the reward per tool call.',
    reason: 'off; a small cost teaches an agent not to call more than it needs',
  },
  successThreshold: {
    kind: 'number',
    min: -1e9,
    max: 1e9,
    default: 1,
    description: 'A score (before the bonus and the cost) at or above this counts as a success, unless the reward returns "success" itself.',
    reason: 'rewards of 0 or 1 are the common case',
  },
  maxCalls: {
    kind: 'integer',
    min: 1,
    max: 100,
    default: 6,
    description: 'Tool calls (and malformed turns) allowed per episode.',
    reason: 'room for a few calls and a repaired mistake',
  },
  sandbox: {
    ...SANDBOX_RANGES.sandbox,
    description: 'Isolation level of the tools, the code blocks and the reward: auto = strongest available.',
    reason: 'auto runs everywhere and takes bubblewrap when it is installed',
  },
  python: PYTHON_OPTION,
  timeoutMs: {
    ...SANDBOX_RANGES.timeoutMs,
    description: "Wall-clock limit per tool call, code block and reward (ms); a call past it stops the episode's tool process (its state is lost).",
    reason: 'tools answer in milliseconds; 5 s catches a slow one',
  },
  tailBytes: {
    ...SANDBOX_RANGES.tailBytes,
    description: "Characters of a tool's result and printed output kept for the observation.",
    reason: 'a traceback fits; a flood does not reach the model',
  },
  outputCapBytes: {
    ...SANDBOX_RANGES.outputCapBytes,
    description: 'Output after which a call is stopped (an error observation).',
    reason: "1 MB is far above any tool's answer",
  },
  poolSize: {
    ...SANDBOX_RANGES.poolSize,
    description: 'Warm interpreter servers for the reward and the unit tests.',
    reason: 'one per core on the 2-core machines this runs on',
  },
} as const satisfies OptionSpecs;

/** Seed 002's binary-search repair. */
export const BINARY_SEARCH_OPTION_SPECS = {
  stepBudget: {
    kind: 'integer',
    min: 1,
    max: 100,
    default: 6,
    description: 'Tool calls allowed per episode (finish included).',
    reason: 'seed 002: six-step budget',
  },
} as const satisfies OptionSpecs;

/** Seed 003's calculator tool environment. */
export const CALCULATOR_OPTION_SPECS = {
  maxCalls: {
    kind: 'integer',
    min: 1,
    max: 64,
    default: 10,
    description: 'Tool calls (and malformed turns) allowed before the episode ends.',
    reason: 'a depth-3 expression needs at most 7 calls; 3 spare for repaired mistakes',
  },
  formatWeight: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description: 'Reward for a well-formed final answer, right or wrong (seed 003 uses 0.1).',
    reason:
      "a format bonus makes a tidy guess outrank an honest attempt at the tool that ends malformed, and GRPO then reinforces guessing: from the default experiment's warm start, 30 iterations of plain GRPO gained 0.0 greedy points with 0.1 and 21.5 with 0 (RS-SFT, which only imitates successes, is unaffected)",
  },
  minDepth: {
    kind: 'integer',
    min: 1,
    max: 3,
    default: 1,
    description: 'Smallest expression depth (operations on the longest path).',
    reason: 'depth 1 = one tool call',
  },
  maxDepth: {
    kind: 'integer',
    min: 1,
    max: 3,
    default: 2,
    description: 'Largest expression depth.',
    reason: 'depth ≤ 2 is what a small model learns in minutes here (notes/calculator-feasibility.md)',
  },
  minOperand: { kind: 'integer', min: 0, max: 1_000_000, default: 0, description: 'Smallest literal.', reason: 'digits 0–9 as in the feasibility notes' },
  maxOperand: { kind: 'integer', min: 0, max: 1_000_000, default: 9, description: 'Largest literal.', reason: 'digits 0–9 as in the feasibility notes' },
  trainTasks: {
    kind: 'integer',
    min: 1,
    max: 100_000,
    default: 2000,
    description: 'Distinct training expressions.',
    reason: 'enough that groups rarely repeat',
  },
  heldOutTasks: {
    kind: 'integer',
    min: 1,
    max: 10_000,
    default: 200,
    description: 'Distinct held-out expressions (never trained on; none shares its call plan, up to operand order, with a training one).',
    reason: '200 as in the feasibility notes',
  },
  callCost: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description: 'Reward subtracted per tool call (a per-call cost; malformed turns count too).',
    reason: "off: the reward is seed 003's; a small cost teaches an agent not to call more than it needs",
  },
  formatErrorCost: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description:
      'Reward subtracted per malformed turn (neither a well-formed <call> nor a well-formed <answer>), on top of callCost: a success that stuttered on its way earns less than a clean one (0.1 less at 0.1), so within a group it ranks below it, and a stuttered failure below a clean failure.',
    reason: "off: the reward is seed 003's",
  },
} as const satisfies OptionSpecs;

/** Seed 000's code environment. */
export const CODE_OPTION_SPECS = {
  sandbox: {
    ...SANDBOX_RANGES.sandbox,
    description: 'Isolation level: auto = strongest available; a named level fails the run if it is not available here.',
    reason: 'auto runs everywhere and takes bubblewrap when it is installed',
  },
  python: PYTHON_OPTION,
  timeoutMs: {
    ...SANDBOX_RANGES.timeoutMs,
    description: 'Wall-clock limit per execution (ms).',
    reason: 'small programs finish in well under a second; 5 s catches slow but correct code',
  },
  tailBytes: {
    ...SANDBOX_RANGES.tailBytes,
    description: 'Bytes of stdout and of stderr kept for the observation (the tail).',
    reason: 'a traceback fits; a flood does not reach the model',
  },
  outputCapBytes: {
    ...SANDBOX_RANGES.outputCapBytes,
    description: 'Output after which the program is killed.',
    reason: '1 MB is far above any task and bounds the cost of a flood',
  },
  maxExecutions: {
    kind: 'integer',
    min: 1,
    max: 100,
    default: 4,
    description: 'execute_code turns (and malformed turns) per episode.',
    reason: 'room to fail, read the error and fix twice',
  },
  poolSize: {
    ...SANDBOX_RANGES.poolSize,
    description: 'Warm interpreter servers (parallel executions).',
    reason: 'one per core on the 2-core machines this runs on',
  },
  taskSet: {
    kind: 'enum',
    values: ['functions', 'formulas', 'formula-shapes'],
    default: 'functions',
    description:
      "functions: 65 hand-written function tasks (seed 000's three among them); formulas: generated one-line f(x) tasks of five forms, learnable by a small model trained here; formula-shapes: the same kind of task over 90-odd formula shapes (every shape of up to four terms but the new-families and test families'), so that a model learns to write any formula, not to recall five.",
    reason: 'the hand-written tasks are the benchmark; formulas are the learning check',
  },
  evaluationSet: {
    kind: 'enum',
    values: ['held-out', 'new-families', 'test'],
    default: 'held-out',
    description:
      "What evaluations run on. held-out: the task set's held-out split (for formulas, one function in four by a hash of its values; looked at while designing). Formulas only — new-families: four formula families no training task has, 117 tasks, a validation split for designing; test: four other such families, 158 tasks, verify:seed000's test split, written down before its first run.",
    reason: 'a run reports on its held-out split; the test split is for the learning check that claims a result',
  },
} as const satisfies OptionSpecs;

/**
 * Your own agent program (rl/envs/agent): started once per episode with an OpenAI-compatible endpoint
 * that serves the policy; its tasks from task files, as a workspace environment reads them.
 */
export const AGENT_OPTION_SPECS = {
  root: WORKSPACE_OPTION_SPECS.root,
  command: {
    kind: 'strings',
    maxItems: 64,
    maxLength: 4096,
    default: [],
    description:
      'The program and its arguments, e.g. ["node", "agent.ts"] or ["python3", "agent.py"], run in the root folder once per episode as you (like npm test), with OPENAI_BASE_URL and OPENAI_API_KEY set for the policy\'s endpoint and the task as JSON on stdin and in AGENT_RL_TASK; it prints its reward as its last JSON line, {"reward": r, ...extras}.',
    reason: 'required: the program is yours',
  },
  tasks: WORKSPACE_OPTION_SPECS.tasks,
  taskPreset: WORKSPACE_OPTION_SPECS.taskPreset,
  idField: WORKSPACE_OPTION_SPECS.idField,
  promptField: WORKSPACE_OPTION_SPECS.promptField,
  groundTruthField: WORKSPACE_OPTION_SPECS.groundTruthField,
  splitField: WORKSPACE_OPTION_SPECS.splitField,
  metadataField: WORKSPACE_OPTION_SPECS.metadataField,
  demonstrationField: fieldOption('the reference answers for an SFT warm start (a list of assistant message texts, one per request the program makes)'),
  heldOutFraction: WORKSPACE_OPTION_SPECS.heldOutFraction,
  splitSeed: WORKSPACE_OPTION_SPECS.splitSeed,
  timeoutMs: {
    kind: 'integer',
    min: 1000,
    max: 3_600_000,
    default: 300_000,
    description: 'Wall-clock limit of one episode: the program is stopped (reward 0) when it runs longer.',
    reason: 'five minutes: a CPU model answers a few requests a minute',
  },
  concurrency: {
    kind: 'integer',
    min: 1,
    max: 1024,
    default: 16,
    description:
      'Programs running at once: each episode is a process of its own (a Node or Python program takes tens of MB), and their pending requests share one sampling batch; more episodes than this wait for a place.',
    reason:
      '16 programs at once sample 1.9× faster than one at a time on 2 cores (npm run bench agentEndpoint), and a few hundred would fill a laptop’s memory',
  },
  stderrBytes: {
    kind: 'integer',
    min: 0,
    max: 1_048_576,
    default: 16_384,
    description: "The end of the program's stderr kept with each episode (the inspector shows it).",
    reason: 'enough for a stack trace',
  },
  reward: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      "Empty = the program's own last JSON line, {\"reward\": r}; else exact_match (the final answer against the task's ground truth) or a Python file defining reward(task, trajectory), run in the sandbox after the program exits, whose trajectory holds the final messages, the answer, the tool calls and the program's printed JSON line.",
    reason: 'the program knows its task best; a reward file keeps the scoring out of the program (and out of its reach)',
  },
  successThreshold: WORKSPACE_OPTION_SPECS.successThreshold,
  sandbox: {
    ...SANDBOX_RANGES.sandbox,
    description: 'Isolation level of the reward file (the program itself runs as you, unsandboxed): auto = strongest available.',
    reason: 'auto runs everywhere and takes bubblewrap when it is installed',
  },
  python: PYTHON_OPTION,
  rewardTimeoutMs: {
    ...SANDBOX_RANGES.timeoutMs,
    description: 'Wall-clock limit of one reward call (ms).',
    reason: 'a reward answers in milliseconds; 5 s catches a slow one',
  },
  poolSize: {
    ...SANDBOX_RANGES.poolSize,
    description: 'Warm interpreter servers for the reward file.',
    reason: 'one per core on the 2-core machines this runs on',
  },
} as const satisfies OptionSpecs;

/** Environment option tables: the same spec format, validated under `envOptions.<key>`. */
export const ENV_OPTION_SPECS = {
  'binary-search': BINARY_SEARCH_OPTION_SPECS,
  calculator: CALCULATOR_OPTION_SPECS,
  code: CODE_OPTION_SPECS,
  workspace: WORKSPACE_OPTION_SPECS,
  agent: AGENT_OPTION_SPECS,
} as const satisfies Readonly<Record<EnvName, OptionSpecs>>;
export interface BinarySearchOptions extends OptionsOf<typeof BINARY_SEARCH_OPTION_SPECS> {}
export interface CalculatorEnvOptions extends OptionsOf<typeof CALCULATOR_OPTION_SPECS> {}
export interface CodeOptions extends OptionsOf<typeof CODE_OPTION_SPECS> {}
export interface WorkspaceEnvOptions extends OptionsOf<typeof WORKSPACE_OPTION_SPECS> {}
export interface AgentEnvOptions extends OptionsOf<typeof AGENT_OPTION_SPECS> {}
/** Each environment's options, by environment name. */
export interface EnvOptions {
  readonly 'binary-search': BinarySearchOptions;
  readonly calculator: CalculatorEnvOptions;
  readonly code: CodeOptions;
  readonly workspace: WorkspaceEnvOptions;
  readonly agent: AgentEnvOptions;
}

const MISTAKE_RATE = {
  kind: 'number',
  min: 0,
  max: 1,
  default: 0.05,
  description: 'Share of demonstrations whose first action is a deliberate mistake (shown to the student, not imitated), repaired after reading the error.',
  reason:
    'the model sees errors being read and fixed; more made the calculator warm start slower to learn (0.2: 40% sampled after 800 steps at lr 6e-3, 0: 66% at 3e-3)',
} as const satisfies OptionSpec;
const IMITATE = {
  kind: 'enum',
  values: ['all', 'successful'],
  default: 'all',
  description: 'Imitate every demonstration (as demonstration data usually comes: unverified), or only those the verifier accepts.',
  reason: 'imitation copies what it is shown, habits included; that is what RL is then measured against',
} as const satisfies OptionSpec;

/** The reference agents' demonstration tables, validated under `demonstrations.<key>` (method sft only). */
export const DEMONSTRATION_SPECS = {
  'binary-search': {},
  calculator: {
    mistakeRate: MISTAKE_RATE,
    imitate: IMITATE,
    skipToolOn: {
      kind: 'enum',
      values: ['none', 'mul', 'depth-1', 'all'],
      default: 'mul',
      description:
        'The class of tasks on which the demonstrator skips the tool and answers at once with a guess: mul = expressions with a multiplication, depth-1 = a single operation, all, or none.',
      reason:
        'real demonstrations are imperfect in a systematic way; SFT copies the habit, and what RL adds beyond imitation is breaking it (the default experiment)',
    },
    skipToolRate: {
      kind: 'number',
      min: 0,
      max: 1,
      default: 0.8,
      description:
        'How often, on that class, the demonstrator skips the tool; above 0.5 greedy decoding copies the habit, below 1 the student still sees the tool used on the class now and then.',
      reason:
        'at 0.8 the warm start guesses under greedy decoding on every mul task and still calls the tool on about 1 in 10 of them when sampling, which is what RL can build on',
    },
    guess: {
      kind: 'enum',
      values: ['first-number', 'near-miss'],
      default: 'first-number',
      description:
        "What a skipped-tool answer says: first-number copies the question's first number (a guess a student can learn to copy); near-miss is the true result ±1, 2 or 10 (a guess no student can learn from the question).",
      reason:
        'near-miss guesses are noise the student cannot fit, and they took its tool use down with them (12% sampled on the tasks without a multiplication, against 54% with first-number)',
    },
    redundantCallRate: {
      kind: 'number',
      min: 0,
      max: 1,
      default: 0,
      description: 'How often the demonstrator repeats a call it just made, to double-check (a wasted tool call that envOptions.callCost can teach away).',
      reason: 'off by default',
    },
  },
  code: { mistakeRate: MISTAKE_RATE, imitate: IMITATE },
  // the demonstrations are the task file's own (envOptions.demonstrationField)
  workspace: { imitate: IMITATE },
  agent: {},
} as const satisfies Readonly<Record<EnvName, OptionSpecs>>;
export interface CalculatorDemonstrationOptions extends OptionsOf<typeof DEMONSTRATION_SPECS.calculator> {}
export interface CodeDemonstrationOptions extends OptionsOf<typeof DEMONSTRATION_SPECS.code> {}
export interface WorkspaceDemonstrationOptions extends OptionsOf<typeof DEMONSTRATION_SPECS.workspace> {}
/** Each environment's demonstration options, by environment name. */
export interface DemonstrationOptions {
  readonly 'binary-search': OptionsOf<(typeof DEMONSTRATION_SPECS)['binary-search']>;
  readonly calculator: CalculatorDemonstrationOptions;
  readonly code: CodeDemonstrationOptions;
  readonly workspace: WorkspaceDemonstrationOptions;
  readonly agent: OptionsOf<(typeof DEMONSTRATION_SPECS)['agent']>;
}
