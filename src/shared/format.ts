// Numbers as the workbench shows them — one module for every view, the CLI and the charts' axes, so a
// log-prob reads the same in the inspector, the drill-down and the terminal. No view formats a number
// of its own (test/unit/webview/noNumberFormatting.test.ts greps the webview code for it).
//   sig        log-probs, ratios, advantages, KL: 3 significant digits, `6.5e-7` below 0.001 (never
//              `2.0000000E-7`), an integer with separators from 1,000, exponent form from 1e6
//   fixed      a figure with a fixed number of decimals (rewards 0.500, losses 0.1235): `1,234.5`
//   count      integers with thousands separators: `12,345`
//   signed     a difference with its sign: `+0.120`, `-0.5`
//   percent    a share in [0, 1]: `12.5%`
//   duration   milliseconds: `850 ms`, `1.5 s`, `42 s`, `2 min 05 s`, `1 h 02 min` (compact for the CLI)
//   bytes      `943.0 MiB`, `2.09 GiB`; parameters `136 K`, `494 M`, `1.7 B`
//   relativeTime / absoluteTime   `5 min ago`, `2025-01-02 13:45:07`
//   axisTick   chart.js's ticks.callback: labels as precise as the step between ticks, and no more
// Every function takes `unknown` where its input is stored data: anything but a finite number is MISSING.

/** What a number that is not there (or not finite) shows as. */
export const MISSING = '—';

const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** "1234567" → "1,234,567" (digits only, no sign). */
function group(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A decimal string ("-1234.50") with separators in its integer part and no negative zero. */
function separated(s: string): string {
  const m = /^(-?)(\d+)(\.\d+)?$/.exec(s);
  if (!m) return s;
  const [, sign, int, frac = ''] = m;
  const zero = /^0+$/.test(int!) && /^(\.0*)?$/.test(frac);
  return `${zero ? '' : sign}${group(int!)}${frac}`;
}

/** "6.50" → "6.5", "2.00" → "2", "120" stays (only after a decimal point). */
function trimZeros(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** Exponent form with `decimals` mantissa decimals, trailing zeros dropped: 6.5e-7, -4.77e-7, 1.2e6. */
function exponent(x: number, decimals: number): string {
  const [mantissa, exp] = x.toExponential(decimals).split('e') as [string, string];
  return `${trimZeros(mantissa)}e${exp.replace('+', '')}`;
}

/** `decimals` decimals with thousands separators: fixed(1234.5, 1) = "1,234.5"; MISSING for anything but a finite number. */
export function fixed(x: unknown, decimals: number, missing = MISSING): string {
  if (!finite(x)) return missing;
  return separated(x.toFixed(decimals));
}

/** An integer with thousands separators (rounded): count(12345) = "12,345". */
export function count(x: unknown, missing = MISSING): string {
  if (!finite(x)) return missing;
  return separated(Math.round(x).toFixed(0));
}

/**
 * `digits` significant digits (3 by default), trailing zeros dropped — "-4.64", "0.998", "1" — in
 * exponent form below 0.001 ("6.5e-7", "-4.77e-7") and from a million ("1.23e6"); from 1,000 the whole
 * number with separators ("12,346"). For log-probs, ratios, advantages, KL and entropies.
 */
export function sig(x: unknown, digits = 3, missing = MISSING): string {
  if (!finite(x)) return missing;
  if (x === 0) return '0';
  const rounded = Number(x.toPrecision(digits));
  const a = Math.abs(rounded);
  if (a < 1e-3 || a >= 1e6) return exponent(rounded, digits - 1);
  if (a >= 1000) return separated(Math.round(x).toFixed(0));
  return separated(trimZeros(rounded.toPrecision(digits)));
}

/** A difference with its sign, in `format` (sig by default): "+0.12", "-0.5", "0". */
export function signed(x: unknown, format: (v: number) => string = (v) => sig(v), missing = MISSING): string {
  if (!finite(x)) return missing;
  const s = format(x);
  return x > 0 && !/^0(\.0*)?$/.test(s) ? `+${s}` : s;
}

/** A share in [0, 1] as a percentage: percent(0.125) = "12.5%". */
export function percent(share: unknown, decimals = 1, missing = MISSING): string {
  if (!finite(share)) return missing;
  return `${fixed(100 * share, decimals)}%`;
}

/**
 * Milliseconds as people read them: "850 ms", "1.5 s" (under 10 s), "42 s", "2 min 05 s", "1 h 02 min".
 * `compact` is the terminal's form ("1.5s", "42s", "2m05s", "1h02m"; under a second "0.3s").
 */
export function duration(ms: unknown, options: { readonly compact?: boolean } = {}): string {
  const two = (n: number): string => String(n).padStart(2, '0');
  if (options.compact === true) {
    if (!finite(ms)) return '?';
    if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
    const s = Math.round(ms / 1000);
    if (s < 60) return `${s}s`;
    const m = Math.floor(s / 60);
    return m < 60 ? `${m}m${two(s % 60)}s` : `${Math.floor(m / 60)}h${two(m % 60)}m`;
  }
  if (!finite(ms)) return MISSING;
  if (ms < 999.5) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return m < 60 ? `${m} min ${two(s % 60)} s` : `${count(Math.floor(m / 60))} h ${two(m % 60)} min`;
}

/** Bytes in GiB from 1 GiB up, else MiB: "2.09 GiB", "943.0 MiB" (memory plans, model lists, run records). */
export function bytes(n: number): string {
  return n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(2)} GiB` : `${(n / 2 ** 20).toFixed(1)} MiB`;
}

/** A parameter count as people say it: 136 K, 494 M, 1.7 B. */
export function parameters(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(0)} M`;
  return `${(n / 1e3).toFixed(0)} K`;
}

/** Milliseconds since the epoch of a Date, an epoch number or an ISO string (undefined: not a time). */
function epochOf(t: unknown): number | undefined {
  const ms = t instanceof Date ? t.getTime() : typeof t === 'number' ? t : typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

/** How long ago `t` was at `now`: "just now", "45 s ago", "5 min ago", "3 h ago", "2 days ago" ("in 5 min" ahead). */
export function relativeTime(t: unknown, now: number | Date = Date.now(), missing = MISSING): string {
  const at = epochOf(t);
  const n = epochOf(now);
  if (at === undefined || n === undefined) return missing;
  const d = n - at;
  const s = Math.round(Math.abs(d) / 1000);
  if (s < 10) return 'just now';
  const amount =
    s < 60
      ? `${s} s`
      : s < 3600
        ? `${Math.round(s / 60)} min`
        : s < 86_400
          ? `${Math.round(s / 3600)} h`
          : `${count(Math.round(s / 86_400))} day${Math.round(s / 86_400) === 1 ? '' : 's'}`;
  return d >= 0 ? `${amount} ago` : `in ${amount}`;
}

/** A moment as "2025-01-02 13:45:07", in local time or UTC (stored times are ISO strings in UTC). */
export function absoluteTime(t: unknown, zone: 'local' | 'utc' = 'local', missing = MISSING): string {
  const at = epochOf(t);
  if (at === undefined) return missing;
  const d = new Date(at);
  const u = zone === 'utc';
  const two = (n: number): string => String(n).padStart(2, '0');
  const [y, mo, day, h, mi, s] = u
    ? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()]
    : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes(), d.getSeconds()];
  return `${y}-${two(mo)}-${two(day)} ${two(h)}:${two(mi)}:${two(s)}`;
}

/** Decimals that write `v` exactly (to a millionth of its size), at most `max`: 0.25 → 2, 5 → 0. */
function decimalsOf(v: number, max: number): number {
  for (let d = 0; d < max; d++) {
    const s = v * 10 ** d;
    if (Math.abs(s - Math.round(s)) <= 1e-6 * Math.max(1, Math.abs(s))) return d;
  }
  return max;
}

/**
 * The label of one tick of an axis whose ticks are `ticks`: as precise as the step between them needs
 * (0, 0.5, 1.0, 1.5 — 1.0000, 1.0001 — never 0.30000000000000004), in exponent form when the axis is
 * below 0.001 or from a million (0, 5e-8, 1e-7, 1.5e-7), with thousands separators otherwise.
 */
export function tickLabel(value: number, ticks: readonly number[]): string {
  if (!Number.isFinite(value)) return '';
  const values = ticks.filter(Number.isFinite);
  const sorted = [...new Set(values.length ? values : [value])].sort((a, b) => a - b);
  const steps = sorted.slice(1).map((v, i) => v - sorted[i]!);
  const step = steps.length ? Math.min(...steps) : Math.abs(value) || 1;
  const top = Math.max(...sorted.map(Math.abs), Math.abs(value));
  if (Math.abs(value) <= step * 1e-6) return '0';
  if (top < 1e-3 || top >= 1e6) {
    const stepExp = Math.floor(Math.log10(step));
    const extra = decimalsOf(step / 10 ** stepExp, 3);
    const decimals = Math.min(6, Math.max(0, Math.floor(Math.log10(Math.abs(value))) - stepExp + extra));
    return exponent(value, decimals);
  }
  return fixed(value, decimalsOf(step, 10));
}

/**
 * chart.js's `ticks.callback` for a linear axis: tickLabel over the axis's ticks. Structurally typed
 * (this module does not load chart.js): pass it as `ticks: { callback: axisTick }`.
 */
export function axisTick(value: number | string, _index: number, ticks: readonly { readonly value: number }[]): string {
  return tickLabel(
    Number(value),
    ticks.map((t) => t.value),
  );
}
