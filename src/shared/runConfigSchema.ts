// JSON schema for *.agentrl.json run configs (contributed through jsonValidation), generated from the
// same field tables the validator uses, so the editor's completion and errors match the CLI's. The
// algorithm section's defaults depend on (env, policy, method): each combination gets its own
// conditional block with the resolved defaults, and every description lists them.
import { ALGORITHM_SPECS, algorithmDefaults, type AlgorithmSettings } from './algorithm';
import type { DescribedSpec } from './fieldSpec';
import {
  DEFAULT_RUN_CONFIG,
  DEMONSTRATION_SPECS,
  ENV_NAMES,
  ENV_OPTION_SPECS,
  FIELD_SPECS,
  JUDGE_OPTION_SPECS,
  METHOD_NAMES,
  POLICY_NAMES,
  POLICY_OPTION_SPECS,
  RUN_SETTING_SPECS,
  SECTION_SPECS,
  type OptionSpecs,
} from './runConfig';
import { defaultCell, type SettingSpec } from './settingsTable';

function fieldSchema(spec: DescribedSpec, reason: string | undefined, dflt?: unknown, extra = ''): Record<string, unknown> {
  const why = reason === undefined ? '' : ` (${reason})`;
  const base = { description: `${spec.description}${why}${extra}`, ...(dflt !== undefined && typeof dflt !== 'object' ? { default: dflt } : {}) };
  switch (spec.kind) {
    case 'integer':
    case 'number':
      return { ...base, type: spec.kind, ...(spec.minExclusive ? { exclusiveMinimum: spec.min } : { minimum: spec.min }), maximum: spec.max };
    case 'enum':
      return { ...base, enum: [...spec.values] };
    case 'string':
      return { ...base, type: 'string', maxLength: spec.maxLength };
    case 'boolean':
      return { ...base, type: 'boolean' };
    case 'object':
      return { ...base, type: 'object' };
    case 'strings':
      return { ...base, type: 'array', items: { type: 'string', maxLength: spec.maxLength }, maxItems: spec.maxItems };
  }
}

const COMBINATIONS = ENV_NAMES.flatMap((env) => POLICY_NAMES.flatMap((policy) => METHOD_NAMES.map((method) => ({ env, policy, method }))));

/**
 * A setting's defaults where they differ by run, each cell with the runs that take it and its reason:
 * " Defaults: 0.08 for binary-search/table/grpo, … (seed 002: …); 0.0002 for … (a language model: …)."
 * Empty when every run takes the base cell (its reason is then the description's).
 */
function listedDefaults(spec: SettingSpec): string {
  const byCell = new Map<string, { value: unknown; reason: string; runs: string[] }>();
  for (const c of COMBINATIONS) {
    const cell = defaultCell(spec, c.env, c.policy, c.method);
    const entry = byCell.get(cell.key) ?? { value: cell.value, reason: cell.reason, runs: [] };
    entry.runs.push(`${c.env}/${c.policy}/${c.method}`);
    byCell.set(cell.key, entry);
  }
  if (byCell.size === 1) return '';
  return ` Defaults: ${[...byCell.values()].map((e) => `${JSON.stringify(e.value)} for ${e.runs.join(', ')} (${e.reason})`).join('; ')}.`;
}

/** A setting's schema: its base reason when every run takes the base cell, else each cell listed with its runs and reason. */
function settingSchema(spec: SettingSpec, dflt?: unknown): Record<string, unknown> {
  const listed = listedDefaults(spec);
  const trades = spec.trade === undefined ? '' : ` Trades: ${spec.trade}.`;
  return fieldSchema(spec, listed === '' ? spec.defaults.base.reason : undefined, dflt, `${trades}${listed}`);
}

/** A condition that holds when `key` equals `value`, or is absent and `value` is its default. */
function whenIs(key: string, value: string, dflt: string): Record<string, unknown> {
  const is = { properties: { [key]: { const: value } }, required: [key] };
  return value === dflt ? { anyOf: [is, { not: { required: [key] } }] } : is;
}

function optionsSchema(specs: OptionSpecs): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(Object.entries(specs).map(([o, s]) => [o, fieldSchema(s, s.reason, s.default)])),
  };
}

export function runConfigSchema(): Record<string, unknown> {
  const d = DEFAULT_RUN_CONFIG as unknown as Record<string, string>;
  const combos = COMBINATIONS.map((c) => ({ ...c, defaults: algorithmDefaults(c.env, c.policy, c.method) }));
  const algorithm = {
    type: 'object',
    additionalProperties: false,
    description: `${SECTION_SPECS.algorithm.description} (${SECTION_SPECS.algorithm.reason})`,
    properties: Object.fromEntries(Object.entries(ALGORITHM_SPECS).map(([k, s]) => [k, settingSchema(s)])),
  };
  const properties: Record<string, unknown> = { $schema: { type: 'string' }, algorithm };
  for (const [k, spec] of Object.entries(FIELD_SPECS)) {
    if (k !== 'algorithm') properties[k] = 'defaults' in spec ? settingSchema(spec, d[k]) : fieldSchema(spec, spec.reason, d[k]);
  }
  // the reward section's one key, the judge, with its own table
  properties.reward = { ...(properties.reward as object), additionalProperties: false, properties: { judge: optionsSchema(JUDGE_OPTION_SPECS) } };
  const options = (
    table: Readonly<Record<string, OptionSpecs>>,
    section: 'envOptions' | 'policyOptions' | 'demonstrations',
    key: 'env' | 'policy',
    names: readonly string[],
  ) => names.map((name) => ({ if: whenIs(key, name, d[key]!), then: { properties: { [section]: optionsSchema(table[name] ?? {}) } } }));
  const algorithmBlocks = combos.map((c) => ({
    if: { allOf: [whenIs('env', c.env, d.env!), whenIs('policy', c.policy, d.policy!), whenIs('method', c.method, d.method!)] },
    then: {
      properties: {
        // the run-shape defaults of the policy and method (iterations, evaluation size, pass@k): every setting not at its base cell
        ...Object.fromEntries(
          Object.entries(RUN_SETTING_SPECS).flatMap(([k, spec]) => {
            const cell = defaultCell(spec, c.env, c.policy, c.method);
            return cell.key === 'base' ? [] : [[k, { default: cell.value }]];
          }),
        ),
        algorithm: { properties: Object.fromEntries(Object.keys(ALGORITHM_SPECS).map((k) => [k, { default: c.defaults[k as keyof AlgorithmSettings] }])) },
      },
    },
  }));
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Agent RL run config',
    type: 'object',
    additionalProperties: false,
    properties,
    allOf: [
      ...options(ENV_OPTION_SPECS, 'envOptions', 'env', ENV_NAMES),
      ...options(POLICY_OPTION_SPECS, 'policyOptions', 'policy', POLICY_NAMES),
      ...options(DEMONSTRATION_SPECS, 'demonstrations', 'env', ENV_NAMES),
      ...algorithmBlocks,
    ],
  };
}
