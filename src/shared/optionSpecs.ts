// The option tables of the run config's sections that depend on a choice: each policy's options, each
// environment's (builtInEnvOptionSpecs.ts, workspaceOptionSpecs.ts), each reference agent's
// demonstrations (demonstrationSpecs.ts). A table is data (the validator checks values against it, the
// JSON schema and the CLI help are generated from it) and the options' types are derived from the same
// table (OptionsOf, fieldSpec.ts), so a key, its type and its default are written once.
import type { OptionSpecs, OptionsOf } from './fieldSpec';
import { BINARY_SEARCH_OPTION_SPECS, CALCULATOR_OPTION_SPECS, CODE_OPTION_SPECS } from './builtInEnvOptionSpecs';
import { OPENENV_OPTION_SPECS } from './openenvOptionSpecs';
import { VERIFIERS_OPTION_SPECS } from './verifiersOptionSpecs';
import { AGENT_OPTION_SPECS, WORKSPACE_OPTION_SPECS } from './workspaceOptionSpecs';

export { optionDefaults, type OptionSpec, type OptionSpecs, type OptionsOf } from './fieldSpec';
export { ISOLATION_LEVELS, isSandboxLevel, SANDBOX_LEVELS, type IsolationLevel, type SandboxLevel } from './sandboxOptionSpecs';
export * from './builtInEnvOptionSpecs';
export * from './openenvOptionSpecs';
export * from './verifiersOptionSpecs';
export * from './workspaceOptionSpecs';

export const ENV_NAMES = ['binary-search', 'calculator', 'code', 'workspace', 'agent', 'verifiers', 'openenv'] as const;
export type EnvName = (typeof ENV_NAMES)[number];
export const POLICY_NAMES = ['table', 'transformer'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];
export const METHOD_NAMES = ['grpo', 'rs-sft', 'sft', 'distill'] as const;
export type MethodName = (typeof METHOD_NAMES)[number];

/** Which policies can drive which environments (an impossible combination fails validation). */
export const ENV_CAPABILITIES: Readonly<Record<EnvName, { tabular: boolean; description: string }>> = {
  'binary-search': { tabular: true, description: 'Repair the low/high updates of a binary search with six tool actions (seed 002).' },
  calculator: { tabular: false, description: 'Arithmetic through <call>op(a,b)</call> tool calls and a boxed answer (seed 003).' },
  code: { tabular: false, description: 'Write and run Python in a sandbox, read errors, fix, submit (seed 000).' },
  workspace: { tabular: false, description: 'Your own tasks, tools and reward, from files in the workspace.' },
  agent: { tabular: false, description: 'Your own agent program, talking to the policy through an OpenAI-compatible endpoint.' },
  verifiers: { tabular: false, description: 'A verifiers environment (Python, load_environment), played through the same endpoint; its rubric scores.' },
  openenv: {
    tabular: false,
    description: 'An OpenEnv environment server (reset, step, state over its WebSocket session): its observations to the model, its rewards.',
  },
};

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
  teacher: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      "A local Hugging Face checkpoint folder as the frozen teacher (method distill, or algorithm.teacherWeight > 0 on a GRPO run): it scores every token the policy sampled, token in, token out, in one forward pass per sequence, on the policy's compute path with its own memory plan. Its tokenizer must be the policy's (the same vocabulary and merges): token ids must mean the same text. Empty = no teacher.",
    reason: 'no teacher: the reward alone trains',
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
    values: ['auto', 'bf16', 'f32', 'q8'],
    default: 'auto',
    description:
      "With model on the wasm backend: how the engine holds the frozen base weights; bf16 halves their memory and the bytes each product reads (the products accumulate in float32); q8 holds every linear weight, the output head and the embedding rows as llama.cpp's Q8_0 blocks (32 int8 and a float16 scale: 1.125 bytes a weight, 0.56× bf16), quantized once at load; each product's input is quantized per row and block of 32 on the fly, the dots within a block are integer and the sums across blocks float32 (LoRA only: the base is frozen); auto = bf16, or f32 for a float32 checkpoint whose plan fits.",
    reason: 'released checkpoints are bfloat16; a float32 one keeps its exact weights where memory allows',
  },
  rolloutEngine: {
    kind: 'enum',
    values: ['engine', 'llama.cpp'],
    default: 'engine',
    description:
      "On the wasm backend: what samples the episodes and evaluations. llama.cpp (node-llama-cpp's prebuilt build: CPU, Metal, CUDA or Vulkan, whichever loads) runs the checkpoint written once as GGUF beside the model cache (at weightDtype q8 its matrices as the engine's own Q8_0 blocks, a file of its own), with the policy's LoRA adapters (under full fine-tuning, every weight) loaded after each update; the engine stays the trainer, so π_old is recomputed on it and each token's loss is weighed by truncated importance sampling unless algorithm says otherwise. Constrained decoding and top-k / top-p sample on the engine. llama.cpp's kernels differ from the trainer's: the sampled tokens' log-probs differ by a mismatch the run measures and the correction weighs.",
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

/** Environment option tables: the same spec format, validated under `envOptions.<key>`. */
export const ENV_OPTION_SPECS = {
  'binary-search': BINARY_SEARCH_OPTION_SPECS,
  calculator: CALCULATOR_OPTION_SPECS,
  code: CODE_OPTION_SPECS,
  workspace: WORKSPACE_OPTION_SPECS,
  agent: AGENT_OPTION_SPECS,
  verifiers: VERIFIERS_OPTION_SPECS,
  openenv: OPENENV_OPTION_SPECS,
} as const satisfies Readonly<Record<EnvName, OptionSpecs>>;
export interface BinarySearchOptions extends OptionsOf<typeof BINARY_SEARCH_OPTION_SPECS> {}
export interface CalculatorEnvOptions extends OptionsOf<typeof CALCULATOR_OPTION_SPECS> {}
export interface CodeOptions extends OptionsOf<typeof CODE_OPTION_SPECS> {}
export interface WorkspaceEnvOptions extends OptionsOf<typeof WORKSPACE_OPTION_SPECS> {}
export interface AgentEnvOptions extends OptionsOf<typeof AGENT_OPTION_SPECS> {}
export interface VerifiersEnvOptions extends OptionsOf<typeof VERIFIERS_OPTION_SPECS> {}
export interface OpenEnvOptions extends OptionsOf<typeof OPENENV_OPTION_SPECS> {}
/** Each environment's options, by environment name. */
export interface EnvOptions {
  readonly 'binary-search': BinarySearchOptions;
  readonly calculator: CalculatorEnvOptions;
  readonly code: CodeOptions;
  readonly workspace: WorkspaceEnvOptions;
  readonly agent: AgentEnvOptions;
  readonly verifiers: VerifiersEnvOptions;
  readonly openenv: OpenEnvOptions;
}
