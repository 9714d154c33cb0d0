// docs/reference/options.md: every run-config field from the tables the validator checks values
// against (FIELD_SPECS, ALGORITHM_SPECS, the option tables), with its type, range, default and the
// reason for it, and for the algorithm what each setting trades.
import { ALGORITHM_SPECS } from '../shared/algorithm';
import type { ValueSpec } from '../shared/fieldSpec';
import {
  baseReason,
  DEMONSTRATION_SPECS,
  ENV_CAPABILITIES,
  ENV_NAMES,
  ENV_OPTION_SPECS,
  FIELD_SPECS,
  JUDGE_OPTION_SPECS,
  METHOD_NAMES,
  MOVED_KEYS,
  POLICY_NAMES,
  POLICY_OPTION_SPECS,
  REMOVED_KEYS,
  RUN_SETTING_SPECS,
  validateRunConfig,
  type OptionSpecs,
  type RunConfigKey,
} from '../shared/runConfig';
import { defaultCell, layers, type DefaultCell, type SettingSpec, type SettingSpecs } from '../shared/settingsTable';
import { cell, code, githubSlug, table } from './markdown';

export const OPTIONS_PAGE = 'docs/reference/options.md';
export const OPTIONS_SOURCES = [
  'src/shared/runSettings.ts',
  'src/shared/algorithm.ts',
  'src/shared/runConfig.ts',
  'src/shared/settingsTable.ts',
  'src/shared/optionSpecs.ts',
  'src/shared/sandboxOptionSpecs.ts',
  'src/shared/builtInEnvOptionSpecs.ts',
  'src/shared/workspaceOptionSpecs.ts',
  'src/shared/demonstrationSpecs.ts',
] as const;

const KIND_NAMES: Readonly<Record<ValueSpec['kind'], string>> = {
  integer: 'integer',
  number: 'number',
  enum: 'one of',
  string: 'string',
  boolean: 'boolean',
  object: 'object',
  strings: 'list of strings',
};

/** The values a spec admits, in the validator's words ("≥ 0 and ≤ 1"). */
export function rangeText(spec: ValueSpec): string {
  switch (spec.kind) {
    case 'integer':
    case 'number':
      return cell(`${spec.minExclusive ? '>' : '≥'} ${spec.min} and ≤ ${spec.max}`);
    case 'enum':
      return spec.values.map((v) => code(v)).join(', ');
    case 'string':
      return cell(`up to ${spec.maxLength} characters`);
    case 'strings':
      return cell(`up to ${spec.maxItems} items of up to ${spec.maxLength} characters`);
    case 'boolean':
    case 'object':
      return '';
  }
}

const value = (v: unknown): string => code(JSON.stringify(v));

/** Heading of an option table: "binary-search environment", "transformer policy", "calculator demonstrations". */
const envHeading = (env: string): string => `${env} environment`;
const policyHeading = (policy: string): string => `${policy} policy`;
const demonstrationHeading = (env: string): string => `${env} demonstrations`;
const link = (heading: string): string => `#${githubSlug(heading)}`;

function optionRows(specs: OptionSpecs): string[][] {
  return Object.entries(specs).map(([k, s]) => [code(k), KIND_NAMES[s.kind], rangeText(s), value(s.default), cell(s.description), cell(s.reason)]);
}

const OPTION_HEADER = ['option', 'type', 'range', 'default', 'what it does', 'why this default'];

const PER_RUN = 'Defaults per policy and method';

/** A setting's cells other than base, in the table's order (policy, policy/method, env/policy/method). */
const otherCells = (spec: SettingSpec): [string, DefaultCell][] =>
  Object.entries(spec.defaults as Readonly<Record<string, DefaultCell>>).filter(([key]) => key !== 'base');

/** A setting's default in the main tables: its base value, and a link when some runs take another. */
function baseDefault(spec: SettingSpec): string {
  return otherCells(spec).length === 0 ? value(spec.defaults.base.value) : `${value(spec.defaults.base.value)} ([per run](${link(PER_RUN)}))`;
}

/**
 * The runs a column stands for: each policy with each method the validator accepts for some
 * environment (the table policy has no sft), then each env/policy/method that has cells of its own.
 */
function columns(tables: readonly SettingSpecs[]): { label: string; env: string; policy: string; method: string }[] {
  const accepted = (policy: string, method: string): boolean =>
    ENV_NAMES.some((env) => {
      try {
        validateRunConfig({ env, policy, method });
        return true;
      } catch {
        return false;
      }
    });
  const byPolicy = POLICY_NAMES.flatMap((policy) =>
    METHOD_NAMES.filter((method) => accepted(policy, method)).map((method) => ({ label: `${policy}/${method}`, env: '', policy, method })),
  );
  // the environments with cells of their own (code/transformer/grpo): one column each
  const byEnv = [...new Set(tables.flatMap((t) => Object.keys(layers(t))))]
    .filter((key) => key.split('/').length === 3)
    .map((key) => {
      const [env, policy, method] = key.split('/') as [string, string, string];
      return { label: key, env, policy, method };
    });
  return [...byPolicy, ...byEnv];
}

/** The per-run defaults of a table's settings that have more than one cell: one column per run, a value other than base in bold. */
function perRunTable(tables: readonly SettingSpecs[], prefix: readonly string[], cols: ReturnType<typeof columns>): string {
  const rows = tables.flatMap((t, i) =>
    Object.entries(t)
      .filter(([, spec]) => otherCells(spec).length > 0)
      .map(([name, spec]) => [
        code(`${prefix[i]}${name}`),
        value(spec.defaults.base.value),
        ...cols.map((c) => {
          const got = defaultCell(spec, c.env, c.policy, c.method);
          return got.key === 'base' ? value(got.value) : `**${value(got.value)}**`;
        }),
      ]),
  );
  return table(['setting', 'base', ...cols.map((c) => code(c.label))], rows);
}

/** Every cell of the settings that have more than one, with its reason. */
function reasonsTable(tables: readonly SettingSpecs[], prefix: readonly string[]): string {
  const rows = tables.flatMap((t, i) =>
    Object.entries(t)
      .filter(([, spec]) => otherCells(spec).length > 0)
      .flatMap(([name, spec]) =>
        [['base', spec.defaults.base] as [string, DefaultCell], ...otherCells(spec)].map(([key, c]) => [
          code(`${prefix[i]}${name}`),
          code(key),
          value(c.value),
          cell(c.reason),
        ]),
      ),
  );
  return table(['setting', 'runs', 'default', 'why'], rows);
}

export function renderOptionsPage(header: string): string {
  const sections: Readonly<Record<string, string>> = {
    algorithm: 'algorithm',
    envOptions: 'envOptions',
    policyOptions: 'policyOptions',
    demonstrations: 'demonstrations',
    reward: 'reward',
  };
  const topRows = (Object.entries(FIELD_SPECS) as [RunConfigKey, (typeof FIELD_SPECS)[RunConfigKey]][]).map(([k, s]) => [
    sections[k] ? `[${code(k)}](${link(sections[k])})` : code(k),
    KIND_NAMES[s.kind],
    k === 'env' || k === 'policy'
      ? s.kind === 'enum'
        ? s.values.map((v) => `[${code(v)}](${link(k === 'env' ? envHeading(v) : policyHeading(v))})`).join(', ')
        : ''
      : rangeText(s),
    'defaults' in s ? baseDefault(s) : 'see below',
    cell(s.description),
    cell(baseReason(s)),
  ]);
  const algorithmRows = Object.entries(ALGORITHM_SPECS).map(([k, s]) => [
    code(k),
    KIND_NAMES[s.kind],
    rangeText(s),
    baseDefault(s),
    cell(s.description),
    cell(s.trade),
    cell(s.defaults.base.reason),
  ]);
  const tables = [RUN_SETTING_SPECS, ALGORITHM_SPECS] as const;
  const prefixes = ['', 'algorithm.'];
  const cols = columns(tables);
  const emptyDemos = ENV_NAMES.filter((e) => Object.keys(DEMONSTRATION_SPECS[e]).length === 0);
  const moved = [
    ...Object.entries(MOVED_KEYS).map(([k, now]) => [code(k), `moved to ${code(now)}`]),
    ...Object.entries(REMOVED_KEYS).map(([k, why]) => [code(k), cell(`removed: it ${why}`)]),
  ];
  return [
    '# Run-config options',
    '',
    header,
    '',
    'A run config is one JSON object: a `*.agentrl.json` file (the editor completes and checks it against the',
    "schema made from the same tables), `agent-rl train --config FILE`, or VS Code's Start Run. Every key is",
    'optional; the validator fills the defaults below and refuses an unknown key, a value out of range or an',
    'impossible combination with an error that names the field, the value and the fix.',
    '',
    `- [Top-level settings](${link('Top-level settings')})`,
    `- [algorithm](${link('algorithm')}): the training algorithm`,
    `- [${PER_RUN}](${link(PER_RUN)}): the defaults that differ by policy and method, each with its reason`,
    `- [envOptions](${link('envOptions')}): ${ENV_NAMES.map((e) => `[${e}](${link(envHeading(e))})`).join(', ')}`,
    `- [policyOptions](${link('policyOptions')}): ${POLICY_NAMES.map((p) => `[${p}](${link(policyHeading(p))})`).join(', ')}`,
    `- [demonstrations](${link('demonstrations')}): method sft only`,
    `- [reward](${link('reward')}): a judge's reward (reward.judge)`,
    `- [Moved and removed keys](${link('Moved and removed keys')})`,
    '',
    '## Top-level settings',
    '',
    "The default shown is the base one (seed 002's binary-search experiment on the table policy) and its reason; where",
    `a policy or a method takes another, [${PER_RUN}](${link(PER_RUN)}) shows each run's value and why.`,
    '',
    table(['key', 'type', 'range', 'default', 'what it does', 'why this default'], topRows),
    '',
    '## algorithm',
    '',
    cell(FIELD_SPECS.algorithm.description),
    "The default shown is the base one (seed 002's, the table policy) and its reason; where a policy or a method takes",
    `another, [${PER_RUN}](${link(PER_RUN)}) shows each run's value and why.`,
    '`agent-rl train --help --env E --policy P --method M` prints the values one run resolves to.',
    '',
    table(['setting', 'type', 'range', 'default', 'what it does', 'what it trades', 'why this default'], algorithmRows),
    '',
    `## ${PER_RUN}`,
    '',
    'Each setting below has a default for every run (`base`) and another for some runs: a policy (`transformer`), a',
    'policy with a method (`transformer/sft`) or an environment with both (`code/transformer/grpo`). A run takes each',
    'default from the most specific of these the setting has (src/shared/settingsTable.ts); a setting not listed here',
    'takes its base default in every run. A policy/method column holds in every environment without a column of its',
    'own; a value other than the base one is in bold.',
    '',
    perRunTable(tables, prefixes, cols),
    '',
    'Why each of those defaults is what it is:',
    '',
    reasonsTable(tables, prefixes),
    '',
    '## envOptions',
    '',
    cell(`${FIELD_SPECS.envOptions.description} Each environment has its own table; a key of another environment is refused.`),
    '',
    ...ENV_NAMES.flatMap((e) => [
      `### ${envHeading(e)}`,
      '',
      cell(ENV_CAPABILITIES[e].description),
      '',
      table(OPTION_HEADER, optionRows(ENV_OPTION_SPECS[e])),
      '',
    ]),
    '## policyOptions',
    '',
    cell(`${FIELD_SPECS.policyOptions.description} Each policy has its own table.`),
    '',
    ...POLICY_NAMES.flatMap((p) => [`### ${policyHeading(p)}`, '', table(OPTION_HEADER, optionRows(POLICY_OPTION_SPECS[p])), '']),
    '## demonstrations',
    '',
    cell(`${FIELD_SPECS.demonstrations.description} Method sft only; ${emptyDemos.join(' and ')} have none.`),
    '',
    ...ENV_NAMES.filter((e) => !emptyDemos.includes(e)).flatMap((e) => [
      `### ${demonstrationHeading(e)}`,
      '',
      table(OPTION_HEADER, optionRows(DEMONSTRATION_SPECS[e])),
      '',
    ]),
    '## reward',
    '',
    cell(FIELD_SPECS.reward.description),
    'Its one key, `judge`, holds the settings below; given, every one not written takes its default. The rules: a judge',
    "names its endpoint (http or https), model and rubric; apiKeyEnv is a variable's name, never the key; method grpo only.",
    '',
    table(OPTION_HEADER, optionRows(JUDGE_OPTION_SPECS)),
    '',
    '## Moved and removed keys',
    '',
    'A config written for an earlier release that uses one of these gets an error saying what to write instead.',
    '',
    table(['key', 'now'], moved),
    '',
  ].join('\n');
}
