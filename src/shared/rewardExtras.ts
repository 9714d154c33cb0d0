// A reward's extra values as per-trajectory metrics: finite numbers as they are, booleans as 0 or 1,
// anything else left out (it stays in the extras). Shared by the verl importer and the workspace
// reward, so an imported run and a local one chart the same way.

export function numericExtras(extras: Readonly<Record<string, unknown>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, x] of Object.entries(extras)) {
    if (typeof x === 'number' && Number.isFinite(x)) out[k] = x;
    else if (typeof x === 'boolean') out[k] = x ? 1 : 0;
  }
  return out;
}
