// docs/reference/options.md: every run-config field from the tables the validator checks values
// against (FIELD_SPECS, ALGORITHM_SPECS, the option tables), with its type, range, default and the
// reason for it, and for the algorithm what each setting trades.
import { ALGORITHM_BASE, ALGORITHM_DEFAULTS, ALGORITHM_SPECS, type AlgorithmSettings } from '../shared/algorithm';
import type { FieldSpec } from '../shared/fieldSpec';
import {
  DEFAULT_RUN_CONFIG,
  DEMONSTRATION_SPECS,
  ENV_CAPABILITIES,
  ENV_NAMES,
  ENV_OPTION_SPECS,
  FIELD_SPECS,
  METHOD_DEFAULTS,
  MOVED_KEYS,
  POLICY_DEFAULTS,
  POLICY_NAMES,
  POLICY_OPTION_SPECS,
  REMOVED_KEYS,
  type OptionSpecs,
  type RunConfigKey,
} from '../shared/runConfig';
import { cell, code, githubSlug, table } from './markdown';

export const OPTIONS_PAGE = 'docs/reference/options.md';
export const OPTIONS_SOURCES = ['src/shared/runConfig.ts', 'src/shared/algorithm.ts', 'src/shared/optionSpecs.ts'] as const;

const KIND_NAMES: Readonly<Record<FieldSpec['kind'], string>> = {
  integer: 'integer',
  number: 'number',
  enum: 'one of',
  string: 'string',
  boolean: 'boolean',
  object: 'object',
  strings: 'list of strings',
};

/** The values a spec admits, in the validator's words ("≥ 0 and ≤ 1"). */
export function rangeText(spec: FieldSpec): string {
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

/** A top-level field's default, and where a policy or a policy and method change it. */
function topDefault(key: RunConfigKey): string {
  if (key === 'algorithm' || key === 'envOptions' || key === 'policyOptions' || key === 'demonstrations') return 'see below';
  const base = (DEFAULT_RUN_CONFIG as Readonly<Record<string, unknown>>)[key];
  const overrides: string[] = [];
  for (const policy of POLICY_NAMES) {
    const byPolicy = (POLICY_DEFAULTS[policy] as Readonly<Record<string, unknown>>)[key] ?? base;
    if (byPolicy !== base) overrides.push(`${cell(`policy ${policy}`)}: ${value(byPolicy)}`);
    for (const [pm, d] of Object.entries(METHOD_DEFAULTS)) {
      const byMethod = (d as Readonly<Record<string, unknown>> | undefined)?.[key];
      if (pm.startsWith(`${policy}/`) && byMethod !== undefined && byMethod !== byPolicy)
        overrides.push(`${cell(`${policy} with method ${pm.slice(policy.length + 1)}`)}: ${value(byMethod)}`);
    }
  }
  return [value(base), ...overrides].join('; ');
}

/** An algorithm setting's default: seed 002's for the table, then each layer that changes it. */
function algorithmDefault(key: keyof AlgorithmSettings): string {
  const overrides = Object.entries(ALGORITHM_DEFAULTS)
    .filter(([, d]) => d[key] !== undefined)
    .map(([where, d]) => `${cell(where)}: ${value(d[key])}`);
  return [value(ALGORITHM_BASE[key]), ...overrides].join('; ');
}

export function renderOptionsPage(header: string): string {
  const sections: Readonly<Record<string, string>> = {
    algorithm: 'algorithm',
    envOptions: 'envOptions',
    policyOptions: 'policyOptions',
    demonstrations: 'demonstrations',
  };
  const topRows = (Object.entries(FIELD_SPECS) as [RunConfigKey, FieldSpec][]).map(([k, s]) => [
    sections[k] ? `[${code(k)}](${link(sections[k])})` : code(k),
    KIND_NAMES[s.kind],
    k === 'env' || k === 'policy'
      ? s.kind === 'enum'
        ? s.values.map((v) => `[${code(v)}](${link(k === 'env' ? envHeading(v) : policyHeading(v))})`).join(', ')
        : ''
      : rangeText(s),
    topDefault(k),
    cell(s.description),
    cell(s.reason),
  ]);
  const algorithmRows = (Object.entries(ALGORITHM_SPECS) as [keyof AlgorithmSettings, FieldSpec & { trade: string }][]).map(([k, s]) => [
    code(k),
    KIND_NAMES[s.kind],
    rangeText(s),
    algorithmDefault(k),
    cell(s.description),
    cell(s.trade),
    cell(s.reason),
  ]);
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
    `- [envOptions](${link('envOptions')}): ${ENV_NAMES.map((e) => `[${e}](${link(envHeading(e))})`).join(', ')}`,
    `- [policyOptions](${link('policyOptions')}): ${POLICY_NAMES.map((p) => `[${p}](${link(policyHeading(p))})`).join(', ')}`,
    `- [demonstrations](${link('demonstrations')}): method sft only`,
    `- [Moved and removed keys](${link('Moved and removed keys')})`,
    '',
    '## Top-level settings',
    '',
    'A default given as several values depends on the policy (and the method): the first holds unless a later one names',
    "the run. The reason given is the first value's; runConfig.ts's POLICY_DEFAULTS and METHOD_DEFAULTS say why the others.",
    '',
    table(['key', 'type', 'range', 'default', 'what it does', 'why this default'], topRows),
    '',
    '## algorithm',
    '',
    cell(FIELD_SPECS.algorithm.description),
    "Its defaults depend on the run: the first value is the table policy's (seed 002); each later one, by policy,",
    'policy/method or env/policy/method, replaces it for those runs (the last that applies wins).',
    '`agent-rl train --help --env E --policy P --method M` prints the values one run resolves to.',
    '',
    table(['setting', 'type', 'range', 'default', 'what it does', 'what it trades', 'why this default'], algorithmRows),
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
    '## Moved and removed keys',
    '',
    'A config written for an earlier release that uses one of these gets an error saying what to write instead.',
    '',
    table(['key', 'now'], moved),
    '',
  ].join('\n');
}
