// JSON schema for *.agentrl.json run configs (contributed through jsonValidation), generated from the
// same field tables the validator uses, so the editor's completion and errors match the CLI's.
import { ENV_NAMES, ENV_OPTION_SPECS, FIELD_SPECS, POLICY_NAMES, POLICY_OPTION_SPECS, DEFAULT_RUN_CONFIG, type FieldSpec } from './runConfig';

function fieldSchema(spec: FieldSpec, dflt?: unknown): Record<string, unknown> {
  const base = { description: `${spec.description} (${spec.reason})`, ...(dflt !== undefined && typeof dflt !== 'object' ? { default: dflt } : {}) };
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
  }
}

export function runConfigSchema(): Record<string, unknown> {
  const properties: Record<string, unknown> = { $schema: { type: 'string' } };
  for (const [k, spec] of Object.entries(FIELD_SPECS)) properties[k] = fieldSchema(spec, (DEFAULT_RUN_CONFIG as unknown as Record<string, unknown>)[k]);
  const options = (table: Readonly<Record<string, Readonly<Record<string, FieldSpec & { default: unknown }>>>>, key: 'env' | 'policy', names: readonly string[]) =>
    names.map((name) => ({
      if: { properties: { [key]: { const: name } } },
      then: { properties: { [`${key}Options`]: { type: 'object', additionalProperties: false, properties: Object.fromEntries(Object.entries(table[name] ?? {}).map(([o, s]) => [o, fieldSchema(s, s.default)])) } } },
    }));
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'Agent RL run config',
    type: 'object',
    additionalProperties: false,
    properties,
    allOf: [...options(ENV_OPTION_SPECS, 'env', ENV_NAMES), ...options(POLICY_OPTION_SPECS, 'policy', POLICY_NAMES)],
  };
}
