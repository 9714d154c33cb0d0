// Sizes and counts as the workbench prints them (memory plans, model lists, run records).

/** Bytes in GiB from 1 GiB up, else MiB: "2.09 GiB", "943.0 MiB". */
export function formatBytes(n: number): string {
  return n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(2)} GiB` : `${(n / 2 ** 20).toFixed(1)} MiB`;
}

/** A parameter count as people say it: 136 K, 494 M, 1.7 B. */
export function parameterText(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(0)} M`;
  return `${(n / 1e3).toFixed(0)} K`;
}
