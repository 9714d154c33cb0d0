// One config field described as data: its kind and range, what it means and why its default is what
// it is. The validator checks values against it and the JSON schema and CLI help are generated from it.

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
/** A list of strings (a program and its arguments). */
type StringsSpec = { kind: 'strings'; maxItems: number; maxLength: number };
type BooleanSpec = { kind: 'boolean' };
export type FieldSpec = (NumberSpec | EnumSpec | StringSpec | ObjectSpec | BooleanSpec | StringsSpec) & {
  description: string;
  /** Why the default is what it is. */
  reason: string;
};

export interface ConfigIssue {
  readonly field: string;
  readonly value: unknown;
  readonly message: string;
  readonly fix: string;
}

/** Checks one value against its spec; a problem is appended to `issues` with the field, the value and the fix. */
export function checkField(field: string, spec: FieldSpec, value: unknown, issues: ConfigIssue[]): void {
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
    case 'strings':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
        add('must be a list of strings', 'use a JSON array such as ["node", "agent.ts"]');
      else if (value.length > spec.maxItems) add(`has more than ${spec.maxItems} items`, 'shorten it');
      else if (value.some((v: string) => v.length > spec.maxLength)) add(`has an item longer than ${spec.maxLength} characters`, 'shorten it');
      return;
  }
}
