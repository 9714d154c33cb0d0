// JSON schema for *.agentrl.json run configs (contributed through jsonValidation), generated from the
// same field tables the validator uses, so the editor's completion and errors match the CLI's. The
// algorithm section's defaults depend on (env, policy, method): each combination gets its own
// conditional block with the resolved defaults, and every description lists them.
import { ALGORITHM_SPECS, algorithmDefaults, type AlgorithmSettings } from './algorithm';
import {
  DEFAULT_RUN_CONFIG,
  DEMONSTRATION_SPECS,
  ENV_NAMES,
  ENV_OPTION_SPECS,
  FIELD_SPECS,
  METHOD_DEFAULTS,
  METHOD_NAMES,
  POLICY_DEFAULTS,
  POLICY_NAMES,
  POLICY_OPTION_SPECS,
  type FieldSpec,
  type OptionSpecs,
} from './runConfig';

function fieldSchema(spec: FieldSpec, dflt?: unknown, extra = ''): Record<string, unknown> {
  const base = { description: `${spec.description} (${spec.reason})${extra}`, ...(dflt !== undefined && typeof dflt !== 'object' ? { default: dflt } : {}) };
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

/** A condition that holds when `key` equals `value`, or is absent and `value` is its default. */
function whenIs(key: string, value: string, dflt: string): Record<string, unknown> {
  const is = { properties: { [key]: { const: value } }, required: [key] };
  return value === dflt ? { anyOf: [is, { not: { required: [key] } }] } : is;
}

function optionsSchema(specs: OptionSpecs): Record<string, unknown> {
  return { type: 'object', additionalProperties: false, properties: Object.fromEntries(Object.entries(specs).map(([o, s]) => [o, fieldSchema(s, s.default)])) };
}

export function runConfigSchema(): Record<string, unknown> {
  const d = DEFAULT_RUN_CONFIG as unknown as Record<string, string>;
  const combos = ENV_NAMES.flatMap((env) =>
    POLICY_NAMES.flatMap((policy) => METHOD_NAMES.map((method) => ({ env, policy, method, defaults: algorithmDefaults(env, policy, method) }))),
  );
  // Every setting's defaults, listed where they differ: "0.08 (binary-search/table/grpo, …); 0.0002 (…)".
  const listed = (name: keyof AlgorithmSettings): string => {
    const byValue = new Map<string, string[]>();
    for (const c of combos)
      byValue.set(JSON.stringify(c.defaults[name]), [...(byValue.get(JSON.stringify(c.defaults[name])) ?? []), `${c.env}/${c.policy}/${c.method}`]);
    return byValue.size === 1 ? '' : ` Defaults: ${[...byValue].map(([v, where]) => `${v} for ${where.join(', ')}`).join('; ')}.`;
  };
  const algorithm = {
    type: 'object',
    additionalProperties: false,
    description: `${FIELD_SPECS.algorithm.description} (${FIELD_SPECS.algorithm.reason})`,
    properties: Object.fromEntries(
      Object.entries(ALGORITHM_SPECS).map(([k, s]) => [k, fieldSchema(s, undefined, ` Trades: ${s.trade}.${listed(k as keyof AlgorithmSettings)}`)]),
    ),
  };
  const properties: Record<string, unknown> = { $schema: { type: 'string' }, algorithm };
  for (const [k, spec] of Object.entries(FIELD_SPECS)) if (k !== 'algorithm') properties[k] = fieldSchema(spec, d[k]);
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
        // the run-shape defaults of the policy and method (iterations, evaluation size, pass@k), then the algorithm's
        ...Object.fromEntries(
          Object.entries({ ...POLICY_DEFAULTS[c.policy], ...METHOD_DEFAULTS[`${c.policy}/${c.method}`] }).map(([k, v]) => [k, { default: v }]),
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
