// The run configuration: typed, every default with its reason, one validator whose errors name the
// field, the value and the fix. Declared as data so the CLI, the VS Code settings, the JSON schema and
// the reference page are all generated from the same tables: the top-level settings
// (runSettings.ts) and the algorithm's (algorithm.ts) with a default per policy and method
// (settingsTable.ts), the option sections' tables (optionSpecs.ts, demonstrationSpecs.ts), and the
// rules between fields (configRules.ts).
import { ALGORITHM_SPECS, algorithmDefaults, type AlgorithmSettings } from './algorithm';
import { applyDerivations, checkRules, checkSectionRules, type WrittenConfig } from './configRules';
import { DEMONSTRATION_SPECS, type DemonstrationOptions } from './demonstrationSpecs';
import { checkRewardSection, type JudgeSettings } from './judgeSettings';
import { checkField, type ConfigIssue, type FieldSpec, type ObjectSpec } from './fieldSpec';
import { ENV_OPTION_SPECS, POLICY_OPTION_SPECS, type EnvName, type EnvOptions, type OptionSpecs, type PolicyName, type PolicyOptions } from './optionSpecs';
import { RUN_SETTING_SPECS, type ConfigDraft, type RunSettings } from './runSettings';
import { baseDefaults, resolveDefaults, type SettingSpec } from './settingsTable';

export type { ConfigIssue, FieldSpec, RunSettings };
export { STD_MODES, type StdMode } from './algorithm';
export * from './optionSpecs';
export * from './demonstrationSpecs';
export { RUN_SETTING_SPECS } from './runSettings';

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
export { JUDGE_OPTION_SPECS, type JudgeSettings, type RewardSettings } from './judgeSettings';

/**
 * A config as written (a file, flags, a preset, a UI): any subset of the keys, each section a plain
 * object; validateRunConfig checks it and fills the rest.
 */
export type RunConfigInput = Partial<Omit<RunSettings, 'algorithm' | 'reward'>> & {
  reward?: { judge?: Partial<JudgeSettings> };
  env?: EnvName;
  policy?: PolicyName;
  algorithm?: Partial<AlgorithmSettings>;
  envOptions?: Readonly<Record<string, unknown>>;
  policyOptions?: Readonly<Record<string, unknown>>;
  demonstrations?: Readonly<Record<string, unknown>>;
};

/**
 * The defaults of a config that names nothing: every top-level setting's `base` cell (seed 002's
 * binary-search experiment on the table policy), the sections empty. A run of a policy and method
 * takes its own cells (RUN_SETTING_SPECS).
 */
export const DEFAULT_RUN_CONFIG: Readonly<Omit<ConfigDraft, 'algorithm'>> = Object.freeze({
  ...baseDefaults(RUN_SETTING_SPECS),
  demonstrations: {},
  envOptions: {},
  policyOptions: {},
  reward: {},
});

/** A section of the config: an object whose own table (or the algorithm's) describes its keys. */
export type SectionSpec = ObjectSpec & { description: string; reason: string };
const SECTION = { kind: 'object' } as const;

/** The sections' specs: what each holds (their keys are in their own tables). */
export const SECTION_SPECS: Readonly<Record<'algorithm' | 'demonstrations' | 'envOptions' | 'policyOptions' | 'reward', SectionSpec>> = {
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
  reward: {
    ...SECTION,
    description:
      "Where the reward comes from besides the environment: { judge: {…} } asks an OpenAI-compatible model to score each group's trajectories against a rubric, mixed with the environment's reward by judge.weight (docs/judge.md).",
    reason: "{}: the environment's reward alone",
  },
};

/** Every top-level key's spec, in the order errors and the reference page list them: the settings, then the sections. */
export const FIELD_SPECS: Readonly<Record<RunConfigKey, SettingSpec | SectionSpec>> = { ...RUN_SETTING_SPECS, ...SECTION_SPECS };

/** Why a top-level key's default is what it is, before any policy or method is named (a setting's `base` cell). */
export const baseReason = (spec: SettingSpec | SectionSpec): string => ('defaults' in spec ? spec.defaults.base.reason : spec.reason);

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

export class ConfigError extends Error {
  readonly exitCode = 2; // bad input: agent-rl exits 2 (src/cli/exitCodes.ts)
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
  const options = checkOptions('envOptions', env, ENV_OPTION_SPECS[env], given, issues);
  // a workspace's generated task set is scored by its dataset's own score_answer unless a reward is named
  // (a default that follows another option, for every caller: a run's config and env check alike)
  if (env === 'workspace' && typeof given.taskSet === 'string' && given.taskSet !== '' && given.reward === undefined) options.reward = 'score_answer';
  return options;
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
    const spec = ALGORITHM_SPECS[k as keyof AlgorithmSettings] as SettingSpec | undefined;
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

/**
 * Whether a stored config runs the user's own code (env "agent": a program per episode; "verifiers": a
 * Python module; "openenv" with a command: the server it starts), which nothing stored may start.
 */
export function agentProgramRun(json: unknown): boolean {
  if (!isObject(json)) return false;
  if (json.env === 'openenv') return isObject(json.envOptions) && Array.isArray(json.envOptions.command) && json.envOptions.command.length > 0;
  return json.env === 'agent' || json.env === 'verifiers';
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

/** A config checked key by key and section by section, the cross-field rules (CONFIG_RULES) not yet run. */
export interface RunConfigDraft {
  readonly config: ConfigDraft;
  /** What the config wrote in the sections whose rules ask whether a value was given. */
  readonly written: WrittenConfig;
  /** The problems found so far: unknown or moved keys, values out of their specs, a section that does not apply. */
  readonly issues: ConfigIssue[];
}

/**
 * Every key and section of a config checked on its own, the defaults filled from the settings tables'
 * cells for the env, policy and method it names: the first half of validateRunConfig (tests hand the
 * draft to one rule at a time).
 */
export function draftRunConfig(raw: Readonly<Record<string, unknown>>): RunConfigDraft {
  const issues: ConfigIssue[] = [];
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
  // each top-level default from its most specific cell for the env, policy and method named (as written)
  const named = (key: 'env' | 'policy' | 'method'): string => {
    const v = raw[key];
    return typeof v === 'string' ? v : DEFAULT_RUN_CONFIG[key];
  };
  const merged: Record<string, unknown> = {
    ...resolveDefaults(RUN_SETTING_SPECS, named('env'), named('policy'), named('method')),
    demonstrations: {},
    envOptions: {},
    policyOptions: {},
    reward: {},
  };
  for (const key of keys) {
    if (raw[key] === undefined) continue;
    checkField(key, FIELD_SPECS[key], raw[key], issues);
    merged[key] = raw[key];
  }
  const config = merged as unknown as ConfigDraft;
  config.algorithm = checkAlgorithm(isObject(raw.algorithm) ? raw.algorithm : {}, algorithmDefaults(config.env, config.policy, config.method), issues);
  if (isObject(config.envOptions)) config.envOptions = checkEnvOptions(config.env, config.envOptions, issues);
  if (isObject(config.policyOptions)) {
    config.policyOptions = checkOptions('policyOptions', config.policy, POLICY_OPTION_SPECS[config.policy], config.policyOptions, issues);
  }
  config.reward = checkRewardSection(config.reward, issues);
  const written = { algorithm: isObject(raw.algorithm) ? raw.algorithm : {}, demonstrations: isObject(config.demonstrations) ? config.demonstrations : {} };
  issues.push(...checkSectionRules(config, written));
  if (isObject(config.demonstrations)) {
    config.demonstrations = checkOptions('demonstrations', config.env, DEMONSTRATION_SPECS[config.env], config.demonstrations, issues);
  }
  return { config, written, issues };
}

/**
 * Validates a partial config (from a file, flags or a UI) and fills defaults.
 * Throws ConfigError listing every problem at once; nothing runs on an invalid config.
 */
export function validateRunConfig(input: unknown): RunConfig {
  if (!isObject(input)) {
    throw new ConfigError([{ field: '(config)', value: input, message: 'must be a JSON object', fix: 'write the config as { "key": value, ... }' }]);
  }
  const { config, written, issues } = draftRunConfig(input);
  applyDerivations(config, written);
  issues.push(...checkRules(config, written));
  if (issues.length > 0) throw new ConfigError(issues);
  if (config.name === '') config.name = `${config.env}-${config.policy}-${config.method}-s${config.seed}`;
  // every section now holds exactly its table's keys, each checked against its spec
  return config as unknown as RunConfig;
}
