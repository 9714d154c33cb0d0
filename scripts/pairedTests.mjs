// @ts-check
// Paired tests of two models' greedy outcomes on the same held-out tasks (issue 51's verify:distill):
// the exact McNemar test, which looks only at the discordant tasks (one model right, the other wrong).

/**
 * Two-sided exact binomial p of `k` successes or a count as far from n/2, at probability ½ over `n`
 * trials: min(1, 2 · P(X ≤ min(k, n − k))). 1 when n is 0.
 * @param {number} k @param {number} n
 */
export function binomialTwoSided(k, n) {
  if (!Number.isInteger(k) || !Number.isInteger(n) || k < 0 || n < 0 || k > n) throw new Error(`binomialTwoSided(${k}, ${n}): counts 0 ≤ k ≤ n`);
  if (n === 0) return 1;
  const lo = Math.min(k, n - k);
  // P(X = i) from P(X = 0) = 2^−n by the ratio (n − i)/(i + 1); 2^−n is a normal double for n ≤ 1022
  if (n > 1022) throw new Error(`binomialTwoSided: n ${n} above 1022 (the recursion starts from 2^−n)`);
  let pmf = 2 ** -n;
  let tail = 0;
  for (let i = 0; i <= lo; i++) {
    tail += pmf;
    pmf = (pmf * (n - i)) / (i + 1);
  }
  return Math.min(1, 2 * tail);
}

/**
 * The exact McNemar test of greedy success on the tasks both maps list: `better` tasks a got right and
 * b wrong, `worse` the reverse, and the two-sided p of that split under "neither is better".
 * @param {Map<string, { greedy: number }>} a @param {Map<string, { greedy: number }>} b
 */
export function mcnemarExact(a, b) {
  let better = 0;
  let worse = 0;
  for (const [task, x] of a) {
    const y = b.get(task);
    if (y === undefined) continue;
    if (x.greedy > y.greedy) better += 1;
    else if (x.greedy < y.greedy) worse += 1;
  }
  return { better, worse, p: binomialTwoSided(better, better + worse) };
}
