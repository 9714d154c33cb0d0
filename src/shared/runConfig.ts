// The run configuration: typed, every default with its reason, one validator whose errors name the
// field, the value and the fix. Declared as data (FIELD_SPECS) so the CLI, the VS Code settings and a
// JSON schema can all be generated from the same table.

export const ENV_NAMES = ['binary-search', 'calculator', 'code'] as const;
export const SANDBOX_LEVELS = ['auto', 'strict', 'network', 'process'] as const;
export type EnvName = (typeof ENV_NAMES)[number];
export const POLICY_NAMES = ['table', 'transformer'] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];
export const METHOD_NAMES = ['grpo', 'rs-sft', 'sft'] as const;
export type MethodName = (typeof METHOD_NAMES)[number];
export const STD_MODES = ['population', 'sample'] as const;
export type StdMode = (typeof STD_MODES)[number];

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
  learningRate: number;
  clipEpsilon: number;
  klCoef: number;
  epochs: number;
  advantageStd: StdMode;
  evalEpisodes: number;
  /** Evaluate every N iterations as well as before and after training; 0 = before and after only. */
  evalInterval: number;
  /** Agent-loop turn cap, a guard above the environment's own budget. */
  maxTurns: number;
  /** Environment-specific options, validated against the environment's own table below. */
  envOptions: Record<string, unknown>;
  /** Policy-specific options (model size, sampling, loss), validated against the policy's table below. */
  policyOptions: Record<string, unknown>;
}

type NumberSpec = {
  kind: 'integer' | 'number';
  min: number;
  max: number;
  /** Exclusive lower bound (for rates that must be positive). */
  minExclusive?: boolean;
};
type EnumSpec = { kind: 'enum'; values: readonly string[] };
type StringSpec = { kind: 'string'; maxLength: number };
type ObjectSpec = { kind: 'object' };
type BooleanSpec = { kind: 'boolean' };
export type FieldSpec = (NumberSpec | EnumSpec | StringSpec | ObjectSpec | BooleanSpec) & {
  description: string;
  /** Why the default is what it is. */
  reason: string;
};

/** Defaults reproduce seed 002's binary-search experiment; each reason says where a value comes from. */
export const DEFAULT_RUN_CONFIG: Readonly<RunConfig> = Object.freeze({
  name: '',
  env: 'binary-search',
  policy: 'table',
  method: 'grpo',
  seed: 7,
  evalSeed: 20260928,
  iterations: 100,
  groupsPerIteration: 4,
  groupSize: 8,
  learningRate: 0.08,
  clipEpsilon: 0.2,
  klCoef: 0.02,
  epochs: 2,
  advantageStd: 'population',
  evalEpisodes: 500,
  evalInterval: 0,
  maxTurns: 16,
  envOptions: {},
  policyOptions: {},
});

/**
 * Defaults that depend on the policy, applied where the config leaves the field out. The top-level
 * defaults above are seed 002's for the table policy; a transformer needs a far smaller step.
 */
export const POLICY_DEFAULTS: Readonly<Record<PolicyName, Partial<RunConfig>>> = {
  table: {},
  // GRPO on a warm-started small model: 32 groups × 8 per iteration (fewer were too noisy to improve
  // held-out accuracy), four steps of 64, a step 15× smaller than SFT's (larger ones undid the warm start)
  transformer: { learningRate: 2e-4, evalEpisodes: 200, iterations: 50, groupsPerIteration: 32, groupSize: 8, epochs: 1 },
};

/** Per policy and method, on top of POLICY_DEFAULTS. */
export const METHOD_DEFAULTS: Readonly<Partial<Record<`${PolicyName}/${MethodName}`, Partial<RunConfig>>>> = {
  // SFT of the calculator protocol: Adam 3e-3 with warm-up and about 500 steps of 16 (notes/calculator-feasibility.md)
  // One demonstration per task (the reference agent repeats itself; groups only matter to GRPO), so
  // every optimizer step of 16 sees 16 different tasks.
  'transformer/sft': { learningRate: 3e-3, iterations: 200, groupsPerIteration: 64, groupSize: 1, epochs: 1 },
};

export const FIELD_SPECS: Readonly<Record<keyof RunConfig, FieldSpec>> = {
  name: { kind: 'string', maxLength: 200, description: 'Run name shown in lists.', reason: 'empty = derived from env, method and seed' },
  env: { kind: 'enum', values: ENV_NAMES, description: 'Environment the agent acts in.', reason: 'binary-search is the fully checkable experiment of seed 002' },
  policy: { kind: 'enum', values: POLICY_NAMES, description: 'Policy parameterisation.', reason: 'the table policy makes every probability inspectable' },
  method: { kind: 'enum', values: METHOD_NAMES, description: 'grpo: group-normalised clipped policy gradient; rs-sft: fine-tune on successful samples only.', reason: 'GRPO is the method under study; RS-SFT is its baseline' },
  seed: { kind: 'integer', min: 0, max: 2 ** 31 - 1, description: 'Training seed.', reason: 'seed 002 reports seeds 7, 19 and 42' },
  evalSeed: { kind: 'integer', min: 0, max: 2 ** 31 - 1, description: 'Evaluation seed, independent of the training seed.', reason: 'fixed so every run is evaluated on the same stream' },
  iterations: { kind: 'integer', min: 1, max: 1_000_000, description: 'Training iterations (rollout + update).', reason: 'seed 002: 100' },
  groupsPerIteration: { kind: 'integer', min: 1, max: 10_000, description: 'Groups (tasks) sampled per iteration.', reason: 'seed 002: 4 groups' },
  groupSize: { kind: 'integer', min: 1, max: 10_000, description: 'Trajectories per group (same task); GRPO needs at least 2.', reason: 'seed 002: 8; a group needs at least 2 to have a spread' },
  learningRate: { kind: 'number', min: 0, max: 10, minExclusive: true, description: 'Adam learning rate.', reason: 'seed 002: 0.08 for the table policy' },
  clipEpsilon: { kind: 'number', min: 0, max: 1, minExclusive: true, description: 'PPO/GRPO ratio clip ε: ratios outside [1-ε, 1+ε] stop pushing.', reason: 'seed 002 and PPO: 0.2' },
  klCoef: { kind: 'number', min: 0, max: 100, description: 'Coefficient β of the KL penalty to the frozen reference policy (GRPO only).', reason: 'seed 002: 0.02' },
  epochs: { kind: 'integer', min: 1, max: 100, description: 'Update epochs over each batch.', reason: 'seed 002: 2' },
  advantageStd: { kind: 'enum', values: STD_MODES, description: 'Standard deviation used to normalise group advantages.', reason: 'seed 002 uses the population std' },
  evalEpisodes: { kind: 'integer', min: 1, max: 1_000_000, description: 'Episodes per evaluation.', reason: 'seed 002: 500' },
  evalInterval: { kind: 'integer', min: 0, max: 1_000_000, description: 'Also evaluate every N iterations (0 = only before and after training).', reason: 'seed 002 evaluates at start and end' },
  maxTurns: { kind: 'integer', min: 1, max: 1000, description: 'Agent-loop turn cap, above the environment budget.', reason: 'a guard: the environment budget (6 for binary-search) normally ends episodes first' },
  envOptions: { kind: 'object', description: 'Options of the chosen environment.', reason: 'each environment documents its own' },
  policyOptions: { kind: 'object', description: 'Options of the chosen policy.', reason: 'each policy documents its own' },
};

type OptionSpecs = Readonly<Record<string, FieldSpec & { default: number | string | boolean }>>;

/** Policy option tables, validated under `policyOptions.<key>`. */
export const POLICY_OPTION_SPECS: Readonly<Record<PolicyName, OptionSpecs>> = {
  table: {},
  transformer: {
    backend: { kind: 'enum', values: ['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'], default: 'auto', description: 'Compute backend; auto = tfjs-node-gpu, then tfjs-node, then wasm (SIMD), then cpu.', reason: 'the fastest one that loads' },
    init: { kind: 'string', maxLength: 4096, default: '', description: 'Checkpoint to start from (a checkpoint directory or its checkpoint.json); empty = fresh weights.', reason: 'GRPO continues from an SFT warm start' },
    replicas: { kind: 'integer', min: 0, max: 64, default: 0, description: 'Model replicas computing shards of each batch in parallel threads (data parallelism); 0 = one per core (up to 4) on the wasm and cpu backends, 1 on tfjs-node, which threads itself.', reason: 'the wasm backend uses one core; the second one doubles the throughput' },
    tokenizer: { kind: 'string', maxLength: 4096, default: '', description: 'Directory holding a Hugging Face tokenizer.json (and tokenizer_config.json); empty = the character-level tokenizer. A checkpoint given as init brings its own.', reason: 'characters suit the small models trained here' },
    dModel: { kind: 'integer', min: 8, max: 4096, default: 64, description: 'Model width.', reason: '64 × 2 layers learns the calculator protocol in minutes here (notes/calculator-feasibility.md)' },
    nLayers: { kind: 'integer', min: 1, max: 64, default: 2, description: 'Transformer blocks.', reason: 'see dModel' },
    nHeads: { kind: 'integer', min: 1, max: 64, default: 4, description: 'Attention heads (must divide dModel).', reason: 'head width 16' },
    contextLength: { kind: 'integer', min: 16, max: 8192, default: 192, description: 'Longest context in tokens (prompt + actions + observations).', reason: 'a depth-2 calculator episode with three calls and one repaired mistake is about 190 characters' },
    mlpRatio: { kind: 'integer', min: 1, max: 16, default: 4, description: 'MLP width as a multiple of dModel.', reason: 'GPT-2' },
    tiedHead: { kind: 'boolean', default: true, description: 'Share the output head with the token embedding.', reason: 'fewer parameters for a small model' },
    temperature: { kind: 'number', min: 0, max: 10, default: 1, description: 'Sampling temperature in training rollouts (0 = greedy).', reason: 'on-policy sampling from the model itself' },
    topK: { kind: 'integer', min: 0, max: 100_000, default: 0, description: 'Sample among the k most likely tokens (0 = off).', reason: 'off: the learner recomputes the full distribution' },
    topP: { kind: 'number', min: 0, max: 1, minExclusive: true, default: 1, description: 'Nucleus sampling mass (1 = off).', reason: 'off, as topK' },
    maxNewTokens: { kind: 'integer', min: 1, max: 8192, default: 32, description: 'Tokens per action at most.', reason: 'a calculator call or answer is under 30 characters' },
    clipHigh: { kind: 'number', min: 0, max: 10, default: 0.28, description: 'Upper ratio clip εhigh (the lower one is clipEpsilon).', reason: 'DAPO: a higher upper clip keeps exploration tokens alive' },
    klEstimator: { kind: 'enum', values: ['k1', 'k2', 'k3'], default: 'k3', description: 'KL estimator per token: k1 log-ratio, k2 ½ log-ratio², k3 exp(−d)+d−1.', reason: 'k3 is unbiased and non-negative (GRPO paper)' },
    aggregation: { kind: 'enum', values: ['seq-mean-token-mean', 'token-mean', 'seq-sum'], default: 'seq-mean-token-mean', description: 'How token losses become one number.', reason: 'seed 000: per-trajectory mean of token means' },
    minibatchSize: { kind: 'integer', min: 0, max: 100_000, default: 0, description: 'Trajectories per optimizer step; 0 = a quarter of the iteration\'s batch (four steps per epoch).', reason: 'SFT: 64 demonstrations → steps of 16 (notes/calculator-feasibility.md); GRPO: 32 groups × 8 → steps of 64' },
    negativeAdvantageScale: { kind: 'number', min: 0, max: 1, default: 1, description: 'GRPO: multiplies negative advantages in the loss (1 = plain GRPO, 0 = reinforce successes only); stored advantages are unchanged.', reason: '1 is GRPO as published; a small model\'s failed episodes often derail into text unlike anything in training, and most of their gradient goes there' },
    skipZeroAdvantage: { kind: 'boolean', default: true, description: 'Leave trajectories with advantage 0 (zero-variance groups) out of GRPO updates.', reason: 'they only carry the KL term and cost a forward and backward pass' },
    weightDecay: { kind: 'number', min: 0, max: 1, default: 0, description: 'AdamW decoupled weight decay.', reason: 'short runs; the KL term already regularises' },
    maxGradNorm: { kind: 'number', min: 0, max: 1e6, default: 1, description: 'Global gradient-norm clip (0 = off).', reason: 'guards against rare huge ratios' },
    warmupSteps: { kind: 'integer', min: 0, max: 1_000_000, default: 20, description: 'Linear learning-rate warm-up, in optimizer steps (then SFT decays linearly to 10%, RL stays constant).', reason: 'notes/calculator-feasibility.md' },
    mistakeRate: { kind: 'number', min: 0, max: 1, default: 0.05, description: 'SFT only: share of demonstrations that make a mistake (shown, not imitated) and repair it after reading the error.', reason: 'the model sees errors being read and fixed; more made the calculator warm start slower to learn (0.2: 40% sampled after 800 steps at lr 6e-3, 0: 66% at 3e-3)' },
  },
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
    formatWeight: { kind: 'number', min: 0, max: 1, default: 0.1, description: 'Reward for a well-formed final answer, right or wrong.', reason: 'seed 003: 0.1 format + 1 accuracy' },
    minDepth: { kind: 'integer', min: 1, max: 3, default: 1, description: 'Smallest expression depth (operations on the longest path).', reason: 'depth 1 = one tool call' },
    maxDepth: { kind: 'integer', min: 1, max: 3, default: 2, description: 'Largest expression depth.', reason: 'depth ≤ 2 is what a small model learns in minutes here (notes/calculator-feasibility.md)' },
    minOperand: { kind: 'integer', min: 0, max: 1_000_000, default: 0, description: 'Smallest literal.', reason: 'digits 0–9 as in the feasibility notes' },
    maxOperand: { kind: 'integer', min: 0, max: 1_000_000, default: 9, description: 'Largest literal.', reason: 'digits 0–9 as in the feasibility notes' },
    trainTasks: { kind: 'integer', min: 1, max: 100_000, default: 2000, description: 'Distinct training expressions.', reason: 'enough that groups rarely repeat' },
    heldOutTasks: { kind: 'integer', min: 1, max: 10_000, default: 200, description: 'Distinct held-out expressions (never trained on).', reason: '200 as in the feasibility notes' },
  },
  code: {
    sandbox: { kind: 'enum', values: SANDBOX_LEVELS, default: 'auto', description: 'Isolation level: auto = strongest available; a named level fails the run if it is not available here.', reason: 'auto runs everywhere and takes bubblewrap when it is installed' },
    python: { kind: 'string', maxLength: 4096, default: '', description: 'Python 3 interpreter path (empty = /usr/bin/python3, else python3 on PATH).', reason: 'the system interpreter is the one the strict sandbox can see' },
    timeoutMs: { kind: 'integer', min: 100, max: 600_000, default: 5000, description: 'Wall-clock limit per execution (ms).', reason: 'small programs finish in well under a second; 5 s catches slow but correct code' },
    tailBytes: { kind: 'integer', min: 256, max: 1_048_576, default: 4096, description: 'Bytes of stdout and of stderr kept for the observation (the tail).', reason: 'a traceback fits; a flood does not reach the model' },
    outputCapBytes: { kind: 'integer', min: 1024, max: 1_073_741_824, default: 1_048_576, description: 'Output after which the program is killed.', reason: '1 MB is far above any task and bounds the cost of a flood' },
    maxExecutions: { kind: 'integer', min: 1, max: 100, default: 4, description: 'execute_code turns (and malformed turns) per episode.', reason: 'room to fail, read the error and fix twice' },
    poolSize: { kind: 'integer', min: 1, max: 64, default: 2, description: 'Warm interpreter servers (parallel executions).', reason: 'one per core on the 2-core machines this runs on' },
    taskSet: { kind: 'enum', values: ['functions', 'formulas'], default: 'functions', description: 'functions: 65 hand-written function tasks (seed 000\'s three among them); formulas: generated one-line f(x) tasks, learnable by a small model trained here.', reason: 'the hand-written tasks are the benchmark; formulas are the learning check' },
  },
};

/** Which policies can drive which environments (an impossible combination fails validation). */
export const ENV_CAPABILITIES: Readonly<Record<EnvName, { tabular: boolean; description: string }>> = {
  'binary-search': { tabular: true, description: 'Repair the low/high updates of a binary search with six tool actions (seed 002).' },
  calculator: { tabular: false, description: 'Arithmetic through <call>op(a,b)</call> tool calls and a boxed answer (seed 003).' },
  code: { tabular: false, description: 'Write and run Python in a sandbox, read errors, fix, submit (seed 000).' },
};

export interface ConfigIssue {
  readonly field: string;
  readonly value: unknown;
  readonly message: string;
  readonly fix: string;
}

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

function checkField(field: string, spec: FieldSpec, value: unknown, issues: ConfigIssue[]): void {
  const add = (message: string, fix: string): void => {
    issues.push({ field, value, message, fix });
  };
  switch (spec.kind) {
    case 'integer':
    case 'number': {
      const range = `${spec.minExclusive ? '>' : '≥'} ${spec.min} and ≤ ${spec.max}`;
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        add(`must be a finite ${spec.kind}, got ${typeof value}`, `use a number ${range}`);
      } else if (spec.kind === 'integer' && !Number.isInteger(value)) {
        add('must be a whole number', `use an integer ${range}`);
      } else if (value < spec.min || value > spec.max || (spec.minExclusive === true && value === spec.min)) {
        add(`is out of range`, `use a value ${range}`);
      }
      return;
    }
    case 'enum':
      if (typeof value !== 'string' || !spec.values.includes(value)) {
        add(`is not one of ${spec.values.join(', ')}`, `use one of: ${spec.values.join(', ')}`);
      }
      return;
    case 'string':
      if (typeof value !== 'string') add('must be a string', 'use a quoted string');
      else if (value.length > spec.maxLength) add(`is longer than ${spec.maxLength} characters`, 'shorten it');
      return;
    case 'object':
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        add('must be an object', 'use a JSON object such as {}');
      }
      return;
    case 'boolean':
      if (typeof value !== 'boolean') add('must be true or false', 'use true or false (no quotes)');
      return;
  }
}

/** Options of an environment or policy: only known keys, typed and in range; defaults filled. Problems go to `issues`. */
function checkOptions(field: 'envOptions' | 'policyOptions', owner: string, specs: OptionSpecs | undefined, given: Record<string, unknown>, issues: ConfigIssue[]): Record<string, unknown> {
  if (!specs) return given; // an unknown env or policy is reported by its own field
  const options: Record<string, unknown> = {};
  const kind = field === 'envOptions' ? 'env' : 'policy';
  for (const [k, v] of Object.entries(given)) {
    const spec = specs[k];
    if (!spec) {
      issues.push({ field: `${field}.${k}`, value: v, message: `is not an option of ${kind} "${owner}"`, fix: `remove it; ${owner} accepts: ${Object.keys(specs).join(', ') || '(none)'}` });
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

/**
 * Validates a partial config (from a file, flags or a UI) and fills defaults.
 * Throws ConfigError listing every problem at once; nothing runs on an invalid config.
 */
export function validateRunConfig(input: unknown): RunConfig {
  const issues: ConfigIssue[] = [];
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new ConfigError([{ field: '(config)', value: input, message: 'must be a JSON object', fix: 'write the config as { "key": value, ... }' }]);
  }
  const raw = input as Record<string, unknown>;
  const keys = Object.keys(FIELD_SPECS) as (keyof RunConfig)[];
  for (const key of Object.keys(raw)) {
    if (!(keys as string[]).includes(key)) {
      const hint = closest(key, keys);
      issues.push({
        field: key, value: raw[key], message: 'is not a known config key',
        fix: hint ? `did you mean "${hint}"?` : `remove it; known keys: ${keys.join(', ')}`,
      });
    }
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

  if (typeof config.envOptions === 'object' && config.envOptions !== null && !Array.isArray(config.envOptions)) {
    config.envOptions = checkEnvOptions(config.env, config.envOptions, issues);
  }
  if (typeof config.policyOptions === 'object' && config.policyOptions !== null && !Array.isArray(config.policyOptions)) {
    config.policyOptions = checkOptions('policyOptions', config.policy, POLICY_OPTION_SPECS[config.policy], config.policyOptions, issues);
  }
  const po = config.policyOptions;
  if (typeof po.dModel === 'number' && typeof po.nHeads === 'number' && po.dModel % po.nHeads !== 0) {
    issues.push({ field: 'policyOptions.nHeads', value: po.nHeads, message: `does not divide policyOptions.dModel (${po.dModel})`, fix: 'choose nHeads so that dModel / nHeads is a whole number' });
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
  } else if (config.advantageStd === 'sample' && typeof config.groupSize === 'number' && config.groupSize < 2) {
    issues.push({ field: 'groupSize', value: config.groupSize, message: 'the sample standard deviation needs at least 2 trajectories', fix: 'set groupSize ≥ 2' });
  }
  if ((config.method === 'rs-sft' || config.method === 'sft') && raw.klCoef !== undefined && raw.klCoef !== 0) {
    issues.push({
      field: 'klCoef', value: raw.klCoef, message: `${config.method} trains by negative log-likelihood and has no KL penalty`,
      fix: `remove klCoef (or set it to 0) for method "${config.method}"`,
    });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  if (config.name === '') config.name = `${config.env}-${config.policy}-${config.method}-s${config.seed}`;
  return config;
}
