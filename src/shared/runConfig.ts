// The run configuration: typed, every default with its reason, one validator whose errors name the
// field, the value and the fix. Declared as data (FIELD_SPECS, ALGORITHM_SPECS and the option tables)
// so the CLI, the VS Code settings and a JSON schema can all be generated from the same tables.
import { ALGORITHM_SPECS, algorithmDefaults, type AlgorithmSettings } from './algorithm';
import { checkField, type ConfigIssue, type FieldSpec } from './fieldSpec';
import {
  DEMONSTRATION_SPECS,
  ENV_NAMES,
  ENV_OPTION_SPECS,
  POLICY_NAMES,
  POLICY_OPTION_SPECS,
  type DemonstrationOptions,
  type EnvName,
  type EnvOptions,
  type OptionSpecs,
  type PolicyName,
  type PolicyOptions,
} from './optionSpecs';

export type { ConfigIssue, FieldSpec };
export { STD_MODES, type StdMode } from './algorithm';
export * from './optionSpecs';

export const METHOD_NAMES = ['grpo', 'rs-sft', 'sft'] as const;
export type MethodName = (typeof METHOD_NAMES)[number];

/** The settings every run has, whatever its environment and policy. */
export interface RunSettings {
  /** Human-readable run name (shown in the runs list). */
  name: string;
  method: MethodName;
  /** Training seed: sampling during rollouts and the verifier's random inputs in training. */
  seed: number;
  /** Evaluation seed: the same evaluation stream before and after training, for every training seed. */
  evalSeed: number;
  iterations: number;
  /** End the run once the learner has taken this many optimizer steps (0 = no such end): a control matched to another run's steps. */
  optimizerSteps: number;
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
}

/**
 * The environment and its options (optionSpecs.ts), with its reference agent's demonstration options
 * (method sft only): `config.env === 'code'` narrows `config.envOptions` to the code environment's.
 */
export type EnvChoice = { [E in EnvName]: { env: E; envOptions: EnvOptions[E]; demonstrations: DemonstrationOptions[E] } }[EnvName];
/** An environment with its reference agent's demonstration options (what a demonstrator needs). */
export type DemonstrationChoice = { [E in EnvName]: { env: E; demonstrations: DemonstrationOptions[E] } }[EnvName];
/** An environment with its options (what opening one needs). */
export type EnvSelection = { [E in EnvName]: { env: E; envOptions: EnvOptions[E] } }[EnvName];
/** The policy and its options: `config.policy === 'transformer'` narrows `config.policyOptions`. */
export type PolicyChoice = { [P in PolicyName]: { policy: P; policyOptions: PolicyOptions[P] } }[PolicyName];

/** A validated run config: every section's options typed by its own table, every default filled. */
export type RunConfig = RunSettings & EnvChoice & PolicyChoice;
/** A config's keys (the same for every environment and policy). */
export type RunConfigKey = keyof RunSettings | 'env' | 'envOptions' | 'demonstrations' | 'policy' | 'policyOptions';

/**
 * A config as written (a file, flags, a preset, a UI): any subset of the keys, each section a plain
 * object; validateRunConfig checks it and fills the rest.
 */
export type RunConfigInput = Partial<Omit<RunSettings, 'algorithm'>> & {
  env?: EnvName;
  policy?: PolicyName;
  algorithm?: Partial<AlgorithmSettings>;
  envOptions?: Readonly<Record<string, unknown>>;
  policyOptions?: Readonly<Record<string, unknown>>;
  demonstrations?: Readonly<Record<string, unknown>>;
};

/** A config on its way through the validator: the choices made, their option sections not yet checked. */
type UncheckedConfig = RunSettings & {
  env: EnvName;
  policy: PolicyName;
  envOptions: Record<string, unknown>;
  policyOptions: Record<string, unknown>;
  demonstrations: Record<string, unknown>;
};

/** Defaults reproduce seed 002's binary-search experiment; each reason says where a value comes from. */
export const DEFAULT_RUN_CONFIG: Readonly<Omit<UncheckedConfig, 'algorithm'>> = Object.freeze({
  name: '',
  env: 'binary-search',
  policy: 'table',
  method: 'grpo',
  seed: 7,
  evalSeed: 20260928,
  iterations: 100,
  optimizerSteps: 0,
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
export const POLICY_DEFAULTS: Readonly<Record<PolicyName, Partial<RunSettings>>> = {
  table: {},
  // RL on a warm-started small model: 32 groups × 8 per iteration (fewer were too noisy to improve
  // held-out accuracy); pass@8 needs 8 samples of every held-out task (200 tasks: 1,600 episodes)
  transformer: { evalEpisodes: 1600, evalPassK: 8, iterations: 50, groupsPerIteration: 32, groupSize: 8 },
};

/** Per policy and method, on top of POLICY_DEFAULTS. */
export const METHOD_DEFAULTS: Readonly<Partial<Record<`${PolicyName}/${MethodName}`, Partial<RunSettings>>>> = {
  // SFT of the calculator protocol: about 800 steps of 16 (notes/calculator-feasibility.md). One
  // demonstration per task (groups only matter to GRPO), so every step sees 16 different tasks. Its
  // evaluations report the sampled and greedy rates; the RL runs that continue from it report pass@k.
  'transformer/sft': { iterations: 200, groupsPerIteration: 64, groupSize: 1, evalEpisodes: 200, evalPassK: 0 },
};

const SECTION = { kind: 'object' } as const;

export const FIELD_SPECS: Readonly<Record<RunConfigKey, FieldSpec>> = {
  name: { kind: 'string', maxLength: 200, description: 'Run name shown in lists.', reason: 'empty = derived from env, method and seed' },
  env: {
    kind: 'enum',
    values: ENV_NAMES,
    description: 'Environment the agent acts in.',
    reason: 'binary-search is the fully checkable experiment of seed 002',
  },
  policy: { kind: 'enum', values: POLICY_NAMES, description: 'Policy parameterisation.', reason: 'the table policy makes every probability inspectable' },
  method: {
    kind: 'enum',
    values: METHOD_NAMES,
    description:
      "grpo: group-relative clipped policy gradient (algorithm.* chooses the estimator and any shaping); rs-sft: fine-tune on its own successful samples only; sft: imitate the reference agent's demonstrations.",
    reason: 'GRPO is the method under study; RS-SFT is its control',
  },
  seed: { kind: 'integer', min: 0, max: 2 ** 31 - 1, description: 'Training seed.', reason: 'seed 002 reports seeds 7, 19 and 42' },
  evalSeed: {
    kind: 'integer',
    min: 0,
    max: 2 ** 31 - 1,
    description: 'Evaluation seed, independent of the training seed.',
    reason: 'fixed so every run is evaluated on the same stream',
  },
  iterations: { kind: 'integer', min: 1, max: 1_000_000, description: 'Training iterations (rollout + update).', reason: 'seed 002: 100' },
  optimizerSteps: {
    kind: 'integer',
    min: 0,
    max: 100_000_000,
    description:
      "End the run after the iteration in which the learner has taken this many optimizer steps in all, if that comes before `iterations` (0 = run every iteration). A control (RS-SFT, which steps only on iterations with a success) matched to another run's steps and, with a constant learning rate, its summed learning rate.",
    reason: 'off: a run is its iterations',
  },
  groupsPerIteration: { kind: 'integer', min: 1, max: 10_000, description: 'Groups (tasks) sampled per iteration.', reason: 'seed 002: 4 groups' },
  groupSize: {
    kind: 'integer',
    min: 1,
    max: 10_000,
    description: 'Trajectories per group (same task); GRPO needs at least 2.',
    reason: 'seed 002: 8; a group needs at least 2 to have a spread',
  },
  evalEpisodes: {
    kind: 'integer',
    min: 0,
    max: 1_000_000,
    description:
      'Sampled episodes per evaluation, dealt round-robin over the held-out tasks; greedy decoding runs every task once besides. 0 = no evaluation at all (a warm start whose RL runs evaluate it as their iteration 0).',
    reason: 'seed 002: 500',
  },
  evalInterval: {
    kind: 'integer',
    min: 0,
    max: 1_000_000,
    description: 'Also evaluate every N iterations (0 = only before and after training).',
    reason: 'seed 002 evaluates at start and end',
  },
  evalPassK: {
    kind: 'integer',
    min: 0,
    max: 1000,
    description: 'k of the sampled pass@k every evaluation reports (0 = none); evalEpisodes should give each held-out task at least k samples.',
    reason: 'a gain in sampled pass@1 with a flat pass@k and greedy is mostly sharpening; all three are reported',
  },
  checkpointEvery: {
    kind: 'integer',
    min: 0,
    max: 1_000_000,
    description:
      'Write a resume point (weights, optimizer, KL reference, random generator states, the iteration) every N iterations and when the run is cancelled; 0 = only when cancelled. `agent-rl train --resume RUN` continues from the last one.',
    reason: "a killed run repeats at most 9 iterations; a small model's resume point takes milliseconds",
  },
  maxInFlight: {
    kind: 'integer',
    min: 0,
    max: 100_000,
    description:
      'Training rollouts on the concurrent schedule: at most this many episodes in flight, an episode whose tool or sandbox call is done joins the next sampling batch at once and a finished one makes room for the next; each episode draws from its own random stream. 0 = lockstep: every live episode sampled together, the next batch waiting for the slowest step (in mode "async", 0 = no bound but the queue\'s).',
    reason: 'lockstep is the measured default; the concurrent schedule pays off when tools are slow and uneven (npm run bench)',
  },
  mode: {
    kind: 'enum',
    values: ['sync', 'async'],
    description:
      "sync: every iteration samples its groups with the current policy, then updates it (on-policy, exactly reproducible). async: a rollout stream fills a bounded queue of finished groups while the learner takes groupsPerIteration of them per update, each at its own pace, sharing the engines (the stream samples between the learner's steps and fills its tools' waits); samples may be up to maxStaleness versions old, and the algorithm defaults to recomputing π_old with a truncated importance correction. Not reproducible to the episode; no dynamic sampling.",
    reason: 'sync is the measured, reproducible default',
  },
  maxStaleness: {
    kind: 'integer',
    min: 0,
    max: 1000,
    description: 'async: the most policy versions a group may be behind the learner when it is taken; older groups are dropped (counted).',
    reason: 'one version: the rollout may use the weights of the update before, no older',
  },
  queueGroups: {
    kind: 'integer',
    min: 0,
    max: 100_000,
    description:
      'async: groups queued and in flight at most (the rollout waits for room); 0 = (maxStaleness + 1) × groupsPerIteration. Besides this, a group starts only while it could still be taken within maxStaleness versions.',
    reason: 'as far ahead as the staleness bound lets the rollout run',
  },
  maxNonFiniteIterations: {
    kind: 'integer',
    min: 1,
    max: 1000,
    description: 'A NaN or infinite loss skips its optimizer step (recorded); this many iterations in a row with one stop the run as failed.',
    reason: 'one bad batch is noise; three in a row mean the run has diverged',
  },
  maxTurns: {
    kind: 'integer',
    min: 1,
    max: 1000,
    description: 'Agent-loop turn cap, above the environment budget.',
    reason: 'a guard: the environment budget (6 for binary-search) normally ends episodes first',
  },
  algorithm: {
    ...SECTION,
    description: 'The training algorithm: advantages, loss, KL, optimizer and schedule (see its fields).',
    reason: 'defaults per environment, policy and method',
  },
  demonstrations: {
    ...SECTION,
    description: 'How the reference agent demonstrates for method sft: its deliberate habits and mistakes.',
    reason: 'each environment documents its own',
  },
  envOptions: { ...SECTION, description: 'Options of the chosen environment.', reason: 'each environment documents its own' },
  policyOptions: { ...SECTION, description: 'Options of the chosen policy (model and sampling).', reason: 'each policy documents its own' },
};

/**
 * Keys that moved into the typed sections, with where they went: a config written for an earlier
 * release gets an error that says exactly what to change.
 */
/** Options that are gone, with why and what does their work now (an old config gets this, not "unknown option"). */
export const REMOVED_KEYS: Readonly<Record<string, string>> = {
  'policyOptions.replicas':
    "held the small GPT's data-parallel helper threads; that network is gone, and the engine spreads each pass over the cores itself (policyOptions.threads)",
};

export const MOVED_KEYS: Readonly<Record<string, string>> = {
  learningRate: 'algorithm.learningRate',
  clipEpsilon: 'algorithm.clipLow',
  klCoef: 'algorithm.klCoef',
  epochs: 'algorithm.epochs',
  advantageStd: 'algorithm.advantageStd',
  'policyOptions.clipHigh': 'algorithm.clipHigh',
  'policyOptions.klEstimator': 'algorithm.klEstimator',
  'policyOptions.aggregation': 'algorithm.lossAggregation',
  'policyOptions.minibatchSize': 'algorithm.minibatchSize',
  'policyOptions.negativeAdvantageScale': 'algorithm.negativeAdvantageScale',
  'policyOptions.skipZeroAdvantage': 'algorithm.skipZeroAdvantage',
  'policyOptions.weightDecay': 'algorithm.weightDecay',
  'policyOptions.maxGradNorm': 'algorithm.maxGradNorm',
  'policyOptions.warmupSteps': 'algorithm.warmupSteps',
  'policyOptions.mistakeRate': 'demonstrations.mistakeRate',
};

/** Which policies can drive which environments (an impossible combination fails validation). */
export const ENV_CAPABILITIES: Readonly<Record<EnvName, { tabular: boolean; description: string }>> = {
  'binary-search': { tabular: true, description: 'Repair the low/high updates of a binary search with six tool actions (seed 002).' },
  calculator: { tabular: false, description: 'Arithmetic through <call>op(a,b)</call> tool calls and a boxed answer (seed 003).' },
  code: { tabular: false, description: 'Write and run Python in a sandbox, read errors, fix, submit (seed 000).' },
  workspace: { tabular: false, description: 'Your own tasks, tools and reward, from files in the workspace.' },
  agent: { tabular: false, description: 'Your own agent program, talking to the policy through an OpenAI-compatible endpoint.' },
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
  return options.find((o) => o.toLowerCase() === lower) ?? options.find((o) => o.toLowerCase().startsWith(lower.slice(0, 4)) && lower.length >= 4);
}

/** Options of an environment, a policy or a demonstrator: only known keys, typed and in range; defaults filled. Problems go to `issues`. */
function checkOptions(
  field: 'envOptions' | 'policyOptions' | 'demonstrations',
  owner: string,
  specs: OptionSpecs | undefined,
  given: Record<string, unknown>,
  issues: ConfigIssue[],
): Record<string, unknown> {
  if (!specs) return given; // an unknown env or policy is reported by its own field
  const options: Record<string, unknown> = {};
  const kind = field === 'policyOptions' ? 'policy' : 'env';
  for (const [k, v] of Object.entries(given)) {
    const spec = specs[k];
    if (!spec) {
      const moved = MOVED_KEYS[`${field}.${k}`];
      const removed = REMOVED_KEYS[`${field}.${k}`];
      // the one value renamed on the way: the aggregation "seq-sum" is seq-mean-token-sum
      const now = k === 'aggregation' && v === 'seq-sum' ? 'seq-mean-token-sum' : v;
      issues.push(
        moved
          ? { field: `${field}.${k}`, value: v, message: `has moved to ${moved}`, fix: `write it as ${moved.replace('.', ': { ')}: ${show(now)} }` }
          : removed
            ? { field: `${field}.${k}`, value: v, message: `is gone: it ${removed}`, fix: 'remove it' }
            : {
                field: `${field}.${k}`,
                value: v,
                message: `is not an option of ${kind} "${owner}"${field === 'demonstrations' ? "'s demonstrations" : ''}`,
                fix: `remove it; ${owner} accepts: ${Object.keys(specs).join(', ') || '(none)'}`,
              },
      );
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
export function validateEnvOptions<E extends EnvName>(env: E, given: Record<string, unknown> = {}): EnvOptions[E] {
  const issues: ConfigIssue[] = [];
  const options = checkEnvOptions(env, given, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  // exactly the table's keys, each checked against its spec
  return options as unknown as EnvOptions[E];
}

/** An environment named at run time with its options validated: the pair openEnvironment takes. */
export function validateEnvSelection(env: EnvName, given: Record<string, unknown> = {}): EnvSelection {
  return { env, envOptions: validateEnvOptions(env, given) } as EnvSelection;
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
      issues.push({
        field: `algorithm.${k}`,
        value: v,
        message: 'is not an algorithm setting',
        fix: hint ? `did you mean "${hint}"?` : `remove it; the settings are: ${names.join(', ')}`,
      });
      continue;
    }
    checkField(`algorithm.${k}`, spec, v, issues);
    out[k] = v;
  }
  return out as unknown as AlgorithmSettings;
}

/**
 * A stored run's config as this release reads it (resume, fork, rescore): the options that are gone
 * (REMOVED_KEYS) are dropped, as they decide nothing now; the rest is validated as any config.
 */
export function readStoredRunConfig(json: unknown): RunConfig {
  if (!isObject(json)) return validateRunConfig(json);
  const copy: Record<string, unknown> = { ...json };
  for (const key of Object.keys(REMOVED_KEYS)) {
    const [section, option] = key.split('.') as [string, string];
    const sub = copy[section];
    if (isObject(sub) && option in sub) copy[section] = Object.fromEntries(Object.entries(sub).filter(([k]) => k !== option));
  }
  return validateRunConfig(copy);
}

/** Whether a stored config is of a run of the user's own agent program (env "agent"), which nothing stored may start. */
export function agentProgramRun(json: unknown): boolean {
  return isObject(json) && json.env === 'agent';
}

/**
 * Whether a stored config is of a run that trained the small character-level GPT of earlier versions:
 * a transformer run without a model folder, stored before fresh models had an architecture.
 */
export function trainedSmallGpt(json: unknown): boolean {
  if (!isObject(json) || json.policy !== 'transformer') return false;
  const o = isObject(json.policyOptions) ? json.policyOptions : {};
  return (o.model === undefined || o.model === '') && (o.init === undefined || o.init === '') && o.architecture === undefined;
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
  const keys = Object.keys(FIELD_SPECS) as RunConfigKey[];
  for (const key of Object.keys(raw)) {
    if ((keys as string[]).includes(key)) continue;
    const moved = MOVED_KEYS[key];
    if (moved) {
      const [section, name] = moved.split('.') as [string, string];
      issues.push({ field: key, value: raw[key], message: `has moved to ${moved}`, fix: `write it as "${section}": { "${name}": ${show(raw[key])} }` });
      continue;
    }
    const hint = closest(key, keys);
    issues.push({
      field: key,
      value: raw[key],
      message: 'is not a known config key',
      fix: hint ? `did you mean "${hint}"?` : `remove it; known keys: ${keys.join(', ')}`,
    });
  }
  const policyDefaults = POLICY_DEFAULTS[raw.policy as PolicyName] as Partial<RunSettings> | undefined;
  const method = typeof raw.method === 'string' ? raw.method : DEFAULT_RUN_CONFIG.method;
  const methodDefaults = typeof raw.policy === 'string' ? METHOD_DEFAULTS[`${raw.policy}/${method}` as `${PolicyName}/${MethodName}`] : undefined;
  const merged: Record<string, unknown> = { ...DEFAULT_RUN_CONFIG, ...(policyDefaults ?? {}), ...(methodDefaults ?? {}) };
  for (const key of keys) {
    if (raw[key] === undefined) continue;
    checkField(key, FIELD_SPECS[key], raw[key], issues);
    merged[key] = raw[key];
  }
  const config = merged as unknown as UncheckedConfig;
  config.algorithm = checkAlgorithm(isObject(raw.algorithm) ? raw.algorithm : {}, algorithmDefaults(config.env, config.policy, config.method), issues);
  if (isObject(config.envOptions)) config.envOptions = checkEnvOptions(config.env, config.envOptions, issues);
  if (isObject(config.policyOptions)) {
    config.policyOptions = checkOptions('policyOptions', config.policy, POLICY_OPTION_SPECS[config.policy], config.policyOptions, issues);
  }
  if (isObject(config.demonstrations)) {
    // A validated config holds the defaults filled in: read back from the store (resume, fork) they must
    // validate again, so only demonstration settings other than the defaults are refused.
    const defaults = checkOptions('demonstrations', config.env, DEMONSTRATION_SPECS[config.env], {}, []);
    const given = Object.entries(config.demonstrations).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(defaults[k]));
    if (config.method !== 'sft' && given.length > 0) {
      issues.push({
        field: 'demonstrations',
        value: config.demonstrations,
        message: `applies to method sft only (this run is ${config.method})`,
        fix: 'remove it, or use method "sft"',
      });
    }
    config.demonstrations = checkOptions('demonstrations', config.env, DEMONSTRATION_SPECS[config.env], config.demonstrations, issues);
  }
  const po = config.policyOptions;
  if (typeof po.dModel === 'number' && typeof po.nHeads === 'number' && po.dModel % po.nHeads !== 0) {
    issues.push({
      field: 'policyOptions.nHeads',
      value: po.nHeads,
      message: `does not divide policyOptions.dModel (${po.dModel})`,
      fix: 'choose nHeads so that dModel / nHeads is a whole number',
    });
  }
  if (po.actionMode === 'score') {
    if (typeof po.model !== 'string' || po.model === '')
      issues.push({
        field: 'policyOptions.actionMode',
        value: 'score',
        message: 'candidate scoring needs a language model checkpoint',
        fix: 'set policyOptions.model to a Hugging Face checkpoint folder, or use actionMode "generate"',
      });
    if (!ENV_CAPABILITIES[config.env]?.tabular)
      issues.push({
        field: 'policyOptions.actionMode',
        value: 'score',
        message: `env "${config.env}" has no fixed set of action strings to score`,
        fix: 'use env "binary-search", or actionMode "generate"',
      });
    if (config.method === 'sft')
      issues.push({ field: 'method', value: 'sft', message: 'candidate scoring has no demonstrations to imitate', fix: 'use method "grpo" or "rs-sft"' });
  }
  if (config.method === 'sft' && config.policy === 'table') {
    issues.push({
      field: 'method',
      value: 'sft',
      message: 'sft trains a language model on reference demonstrations; the table policy has none',
      fix: 'use policy "transformer", or method "rs-sft" for the table baseline',
    });
  }
  if (config.method === 'sft' && config.env === 'binary-search') {
    issues.push({
      field: 'env',
      value: config.env,
      message: 'binary-search has no reference agent to demonstrate',
      fix: 'use env "calculator" or "code" for sft',
    });
  }
  // Impossible combinations.
  const caps = ENV_CAPABILITIES[config.env] as (typeof ENV_CAPABILITIES)[EnvName] | undefined;
  if (config.policy === 'table' && caps && !caps.tabular) {
    issues.push({
      field: 'policy',
      value: config.policy,
      message: `the table policy needs a finite visible state, which env "${config.env}" does not have`,
      fix: 'use a language-model policy for this environment, or env "binary-search"',
    });
  }
  const eo = config.envOptions;
  if (typeof eo.minDepth === 'number' && typeof eo.maxDepth === 'number' && eo.minDepth > eo.maxDepth) {
    issues.push({
      field: 'envOptions.minDepth',
      value: eo.minDepth,
      message: `is greater than envOptions.maxDepth (${eo.maxDepth})`,
      fix: 'make minDepth ≤ maxDepth',
    });
  }
  if (typeof eo.minOperand === 'number' && typeof eo.maxOperand === 'number' && eo.minOperand > eo.maxOperand) {
    issues.push({
      field: 'envOptions.minOperand',
      value: eo.minOperand,
      message: `is greater than envOptions.maxOperand (${eo.maxOperand})`,
      fix: 'make minOperand ≤ maxOperand',
    });
  }
  if (config.method === 'grpo' && typeof config.groupSize === 'number' && config.groupSize < 2) {
    issues.push({
      field: 'groupSize',
      value: config.groupSize,
      message: 'GRPO normalises rewards within a group, and a group of one has no spread',
      fix: 'set groupSize ≥ 2 (seed 002 uses 8)',
    });
  } else if (config.algorithm.advantageStd === 'sample' && typeof config.groupSize === 'number' && config.groupSize < 2) {
    issues.push({
      field: 'groupSize',
      value: config.groupSize,
      message: 'the sample standard deviation needs at least 2 trajectories',
      fix: 'set groupSize ≥ 2',
    });
  }
  const givenAlgo = isObject(raw.algorithm) ? raw.algorithm : {};
  // The table's clip is seed 002's one ε for both bounds: a given clipLow moves clipHigh with it
  if (config.policy === 'table' && givenAlgo.clipLow !== undefined && givenAlgo.clipHigh === undefined) config.algorithm.clipHigh = config.algorithm.clipLow;
  if ((config.method === 'rs-sft' || config.method === 'sft') && givenAlgo.klCoef !== undefined && givenAlgo.klCoef !== 0) {
    issues.push({
      field: 'algorithm.klCoef',
      value: givenAlgo.klCoef,
      message: `${config.method} trains by negative log-likelihood and has no KL penalty`,
      fix: `remove algorithm.klCoef (or set it to 0) for method "${config.method}"`,
    });
  }
  // Asynchronous samples are off-policy: recompute π_old and correct by truncated importance weights,
  // unless the config says otherwise.
  if (config.mode === 'async') {
    if (givenAlgo.oldLogprobs === undefined) config.algorithm.oldLogprobs = 'recompute';
    // (with π_old given as the behaviour log-probs there is nothing to correct: the clip alone guards)
    if (givenAlgo.offPolicyCorrection === undefined && config.algorithm.oldLogprobs === 'recompute') config.algorithm.offPolicyCorrection = 'truncated-is';
    if (config.method === 'sft')
      issues.push({
        field: 'mode',
        value: 'async',
        message: 'sft learns from scripted demonstrations, which have no policy to be asynchronous with',
        fix: 'use mode "sync" for sft',
      });
    if (config.queueGroups > 0 && config.queueGroups < config.groupsPerIteration) {
      issues.push({
        field: 'queueGroups',
        value: config.queueGroups,
        message: `the learner takes ${config.groupsPerIteration} groups at a time (groupsPerIteration), more than the queue could ever hold`,
        fix: `use 0 (the default) or at least ${config.groupsPerIteration}`,
      });
    }
    if (config.algorithm.dynamicSampling > 0) {
      issues.push({
        field: 'algorithm.dynamicSampling',
        value: config.algorithm.dynamicSampling,
        message: 'replaces uninformative groups by sampling again within the iteration, which the asynchronous stream does not do',
        fix: 'set algorithm.dynamicSampling to 0, or use mode "sync"',
      });
    }
  }
  // Another engine samples (llama.cpp): its tokens' log-probs come from other kernels than the trainer's,
  // so π_old is recomputed on the trainer and each token is weighed by truncated importance sampling,
  // as for asynchronous samples, unless the config says otherwise.
  if (config.policy === 'transformer' && config.policyOptions.rolloutEngine === 'llama.cpp') {
    if (givenAlgo.oldLogprobs === undefined) config.algorithm.oldLogprobs = 'recompute';
    if (givenAlgo.offPolicyCorrection === undefined && config.algorithm.oldLogprobs === 'recompute') config.algorithm.offPolicyCorrection = 'truncated-is';
  }
  if (config.algorithm.offPolicyCorrection === 'truncated-is' && config.algorithm.oldLogprobs !== 'recompute') {
    issues.push({
      field: 'algorithm.offPolicyCorrection',
      value: 'truncated-is',
      message: 'weighs tokens by π_old/π_behaviour, which is 1 when π_old is the behaviour log-probs',
      fix: 'set algorithm.oldLogprobs to "recompute"',
    });
  }
  const dual = config.algorithm.dualClip;
  if (typeof dual === 'number' && dual > 0 && dual <= 1) {
    issues.push({
      field: 'algorithm.dualClip',
      value: dual,
      message: "the dual-clip bound must be greater than 1 (it caps a negative-advantage token's loss at c·|A|)",
      fix: 'use 0 (off) or a value > 1 such as 3',
    });
  }
  // GSPO and CISPO replace GRPO's clipped surrogate: nothing for a negative log-likelihood to replace
  const loss = config.algorithm.policyLoss;
  if (loss === 'gspo' || loss === 'cispo') {
    if (config.method !== 'grpo')
      issues.push({
        field: 'algorithm.policyLoss',
        value: loss,
        message: `${config.method} trains by negative log-likelihood, which has no policy loss to replace`,
        fix: `remove algorithm.policyLoss (or set it to "clip") for method "${config.method}", or use method "grpo"`,
      });
    else if (typeof dual === 'number' && dual > 0)
      issues.push({
        field: 'algorithm.dualClip',
        value: dual,
        message: `bounds the clip loss's negative-advantage tokens; policyLoss "${loss}" has no such branch`,
        fix: 'set algorithm.dualClip to 0, or use policyLoss "clip"',
      });
    if (config.method === 'grpo' && loss === 'gspo' && config.algorithm.lossAggregation !== 'seq-mean-token-mean')
      issues.push({
        field: 'algorithm.lossAggregation',
        value: config.algorithm.lossAggregation,
        message: "GSPO's loss is a mean over sequences of each sequence's token mean (its gradient is that of the sequence ratio)",
        fix: 'use lossAggregation "seq-mean-token-mean" with policyLoss "gspo"',
      });
  }
  if (config.env === 'workspace' && (typeof eo.tasks !== 'string' || eo.tasks === '')) {
    issues.push({
      field: 'envOptions.tasks',
      value: eo.tasks,
      message: 'a workspace environment needs its task file(s)',
      fix: 'name them, e.g. "tasks.jsonl" or "data/*.parquet" (relative to the config file)',
    });
  }
  if (config.env === 'agent') {
    if (!Array.isArray(eo.command) || eo.command.length === 0 || eo.command[0] === '')
      issues.push({
        field: 'envOptions.command',
        value: eo.command,
        message: 'an agent environment needs the program to run',
        fix: 'name it with its arguments, e.g. ["node", "agent.ts"] (run in the config file\'s folder)',
      });
    if (typeof eo.tasks !== 'string' || eo.tasks === '')
      issues.push({
        field: 'envOptions.tasks',
        value: eo.tasks,
        message: 'an agent environment needs its task file(s)',
        fix: 'name them, e.g. "tasks.jsonl" (relative to the config file)',
      });
    if (config.policy !== 'transformer')
      issues.push({
        field: 'policy',
        value: config.policy,
        message: 'an agent program talks to a language model',
        fix: 'use policy "transformer" with a Hugging Face checkpoint (policyOptions.model)',
      });
    else if (config.policyOptions.model === '' && config.policyOptions.init === '')
      issues.push({
        field: 'policyOptions.model',
        value: '',
        message: 'an agent program talks to a chat model',
        fix: 'name a Hugging Face instruct checkpoint folder (policyOptions.model, or --model DIR; Start Run offers the ones in the cache)',
      });
    if (typeof eo.reward === 'string' && eo.reward !== '' && eo.reward !== 'exact_match' && !eo.reward.endsWith('.py'))
      issues.push({
        field: 'envOptions.reward',
        value: eo.reward,
        message: 'is neither empty (the program prints its reward), exact_match, nor a Python file',
        fix: 'name a .py file defining reward(task, trajectory) (relative to the config file), or leave it empty',
      });
  }
  if (issues.length > 0) throw new ConfigError(issues);
  if (config.name === '') config.name = `${config.env}-${config.policy}-${config.method}-s${config.seed}`;
  // every section now holds exactly its table's keys, each checked against its spec
  return config as unknown as RunConfig;
}
