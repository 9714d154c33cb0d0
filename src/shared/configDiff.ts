// Where stored run configs differ, for Compare Runs: one row per key path (dotted, e.g.
// "algorithm.learningRate") whose value is not the same in every run, with each run's value. Pure, so
// the host, the CLI and tests share it. Configs are stored data: any JSON is accepted.

export interface ConfigDifference {
  /** Dotted key path; array elements are not descended into (an array is one value). */
  readonly path: string;
  /** The value in each config, in the order given; undefined where the config lacks the key. */
  readonly values: readonly unknown[];
}

const isPlainObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Leaf values of a JSON value by dotted path ('' for a non-object root). */
function leaves(value: unknown, prefix: string, out: Map<string, unknown>): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) leaves(v, prefix === '' ? k : `${prefix}.${k}`, out);
  } else {
    out.set(prefix, value);
  }
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * The paths whose values differ between `configs` (two or more), sorted by path. A key one config
 * lacks differs from any value another has. Fewer than two configs: no differences.
 */
export function configDifferences(configs: readonly unknown[]): ConfigDifference[] {
  if (configs.length < 2) return [];
  const flat = configs.map((c) => {
    const m = new Map<string, unknown>();
    leaves(c, '', m);
    return m;
  });
  const paths = new Set(flat.flatMap((m) => [...m.keys()]));
  const out: ConfigDifference[] = [];
  for (const p of paths) {
    const values = flat.map((m) => m.get(p));
    if (values.every((v) => same(v, values[0]))) continue;
    out.push({ path: p, values });
  }
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A value as the comparison table shows it: JSON, '—' where the key is missing, cut to `max` characters. */
export function showConfigValue(v: unknown, max = 80): string {
  if (v === undefined) return '—';
  const s = (JSON.stringify(v) as string | undefined) ?? typeof v; // a function or symbol: its kind
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
