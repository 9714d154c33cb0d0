// One config field described as data: its kind and range, what it means and why its default is what
// it is. The validator checks values against it and the JSON schema and CLI help are generated from it.
// The option tables (optionSpecs.ts) pair each spec with one default; the settings tables
// (settingsTable.ts) with a default per policy and method.

export type NumberSpec = {
  kind: 'integer' | 'number';
  min: number;
  max: number;
  /** Exclusive lower bound (for rates that must be positive). */
  minExclusive?: boolean;
};
export type EnumSpec = { kind: 'enum'; values: readonly string[] };
export type StringSpec = { kind: 'string'; maxLength: number };
export type ObjectSpec = { kind: 'object' };
/** A list of strings (a program and its arguments). */
export type StringsSpec = { kind: 'strings'; maxItems: number; maxLength: number };
export type BooleanSpec = { kind: 'boolean' };
/** What values a field admits: its kind and range (all that checkField reads). */
export type ValueSpec = NumberSpec | EnumSpec | StringSpec | ObjectSpec | BooleanSpec | StringsSpec;
/** A field's values and what it does (what the CLI's flag table shows). */
export type DescribedSpec = ValueSpec & { description: string };
export type FieldSpec = DescribedSpec & {
  /** Why the default is what it is. */
  reason: string;
};

/** The value a spec admits: its kind's type, an enum's own values. */
export type SpecValue<S> = S extends { kind: 'integer' | 'number' }
  ? number
  : S extends { kind: 'enum'; values: readonly (infer V)[] }
    ? V
    : S extends { kind: 'string' }
      ? string
      : S extends { kind: 'boolean' }
        ? boolean
        : S extends { kind: 'object' }
          ? Readonly<Record<string, unknown>>
          : S extends { kind: 'strings' }
            ? readonly string[]
            : never;

/** One option of an option table: its spec and its one default. */
export type OptionSpec = FieldSpec & { readonly default: number | string | boolean | readonly string[] | Readonly<Record<string, unknown>> };
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** The options a table describes, every key present (validateRunConfig fills the defaults): the type comes from the table itself. */
export type OptionsOf<T> = { readonly [K in keyof T]: SpecValue<T[K]> };

/** A table's options at their defaults. */
export function optionDefaults<T extends OptionSpecs>(specs: T): OptionsOf<T> {
  return Object.fromEntries(Object.entries(specs).map(([k, spec]) => [k, spec.default])) as OptionsOf<T>;
}

export interface ConfigIssue {
  readonly field: string;
  readonly value: unknown;
  readonly message: string;
  readonly fix: string;
}

/** Checks one value against its spec; a problem is appended to `issues` with the field, the value and the fix. */
export function checkField(field: string, spec: ValueSpec, value: unknown, issues: ConfigIssue[]): void {
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
