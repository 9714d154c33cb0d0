// The form of the settings tables (the top-level run settings, runSettings.ts; the algorithm's,
// algorithm.ts): each setting's spec with its defaults, one cell per place a default applies, each cell
// with its own reason. A run of (env, policy, method) takes each setting from the most specific cell
// that names it, so a reason always describes the value a run gets, and the settings' types are
// derived from the same table (SettingsOf), as the option bags' are (OptionsOf).
import type { BooleanSpec, EnumSpec, NumberSpec, SpecValue, StringSpec } from './fieldSpec';
import type { EnvName, MethodName, PolicyName } from './optionSpecs';

/** A default and why it is what it is. */
export interface DefaultCell<V = unknown> {
  readonly value: V;
  readonly reason: string;
}

/**
 * Where a default applies, most general first: every run (`base`); a policy (`transformer`); a policy
 * with a method (`transformer/sft`); an environment with a policy and a method (`code/transformer/grpo`).
 */
export type DefaultKey = 'base' | PolicyName | `${PolicyName}/${MethodName}` | `${EnvName}/${PolicyName}/${MethodName}`;

/** A setting's default cells: `base` always, the others where a run of them needs another value. */
export type DefaultCells<V> = { readonly base: DefaultCell<V> } & { readonly [K in Exclude<DefaultKey, 'base'>]?: DefaultCell<V> };

type WithDefaults<S> = S extends unknown ? S & { readonly defaults: DefaultCells<SpecValue<S>> } : never;

/** One setting: its kind and range, what it does, what it trades (algorithm settings), its defaults. */
export type SettingSpec = WithDefaults<NumberSpec | EnumSpec | StringSpec | BooleanSpec> & {
  readonly description: string;
  /** What a larger or other value gains and costs (the algorithm's settings say it). */
  readonly trade?: string;
};
export type SettingSpecs = Readonly<Record<string, SettingSpec>>;

/** The settings a table describes, every key present (the validator fills the defaults): the type comes from the table. */
export type SettingsOf<T> = { -readonly [K in keyof T]: SpecValue<T[K]> };

/** A default cell with the key it sits under. */
export interface PlacedCell extends DefaultCell {
  readonly key: DefaultKey;
}

/**
 * The keys a run of (env, policy, method) reads, most specific first. The names are taken as written
 * (a config not yet validated may name an unknown policy: it reads `base` alone, as no cell matches).
 */
function cellKeys(env: unknown, policy: unknown, method: unknown): string[] {
  return [`${String(env)}/${String(policy)}/${String(method)}`, `${String(policy)}/${String(method)}`, String(policy), 'base'];
}

/** The cell a run of (env, policy, method) takes a setting's default from: the most specific one the setting has. */
export function defaultCell(spec: SettingSpec, env: unknown, policy: unknown, method: unknown): PlacedCell {
  const cells = spec.defaults as Readonly<Record<string, DefaultCell>>;
  for (const key of cellKeys(env, policy, method)) {
    if (Object.hasOwn(cells, key)) return { key: key as DefaultKey, ...cells[key]! };
  }
  return { key: 'base', ...spec.defaults.base };
}

/** Every setting of a table at the default a run of (env, policy, method) takes. */
export function resolveDefaults<T extends SettingSpecs>(table: T, env: unknown, policy: unknown, method: unknown): SettingsOf<T> {
  return Object.fromEntries(Object.entries(table).map(([k, spec]) => [k, defaultCell(spec, env, policy, method).value])) as SettingsOf<T>;
}

/** Every setting's `base` default: a table's values before any policy or method is named. */
export function baseDefaults<T extends SettingSpecs>(table: T): SettingsOf<T> {
  return Object.fromEntries(Object.entries(table).map(([k, spec]) => [k, spec.defaults.base.value])) as SettingsOf<T>;
}

/** The cells a table has besides `base`, by key: the layers a reader needs to know about ({ transformer: { learningRate: … } }). */
export function layers(table: SettingSpecs): Readonly<Record<string, Readonly<Record<string, DefaultCell>>>> {
  const out: Record<string, Record<string, DefaultCell>> = {};
  for (const [name, spec] of Object.entries(table)) {
    for (const [key, cell] of Object.entries(spec.defaults as Readonly<Record<string, DefaultCell>>)) {
      if (key !== 'base') (out[key] ??= {})[name] = cell;
    }
  }
  return out;
}
