// scripts/pairedTests.mjs (verify:distill's primary figure): the exact McNemar test counts only the
// discordant tasks and gives the two-sided binomial p at ½, which these cases check against values
// computed by hand (and the symmetries any such test must have).
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

const SCRIPT = path.join(path.resolve(__dirname, '..', '..', '..', '..'), 'scripts', 'pairedTests.mjs');

interface PairedTests {
  readonly binomialTwoSided: (k: number, n: number) => number;
  readonly mcnemarExact: (a: Map<string, { greedy: number }>, b: Map<string, { greedy: number }>) => { better: number; worse: number; p: number };
}
const load = async (): Promise<PairedTests> => (await import(pathToFileURL(SCRIPT).href)) as PairedTests;

describe('exact McNemar (scripts/pairedTests.mjs)', () => {
  it('the two-sided binomial p at ½: by hand for small n, symmetric in k ↔ n − k, 1 with no discordant task', async () => {
    const { binomialTwoSided } = await load();
    // n 10, k 1: 2 · (1 + 10) / 1024
    assert.ok(Math.abs(binomialTwoSided(1, 10) - 22 / 1024) < 1e-15);
    assert.equal(binomialTwoSided(9, 10), binomialTwoSided(1, 10));
    // n 5, k 0: 2 / 32
    assert.ok(Math.abs(binomialTwoSided(0, 5) - 1 / 16) < 1e-15);
    // at the middle the doubled tail passes 1
    assert.equal(binomialTwoSided(5, 10), 1);
    assert.equal(binomialTwoSided(0, 0), 1);
    // 400 discordant tasks split 170:230: finite and small, and growing towards the middle
    const p = binomialTwoSided(170, 400);
    assert.ok(p > 0 && p < 0.01, String(p));
    assert.ok(binomialTwoSided(190, 400) > p);
    assert.throws(() => binomialTwoSided(3, 2), /0 ≤ k ≤ n/);
  });

  it('counts the tasks only one model got right, over the tasks both list', async () => {
    const { mcnemarExact } = await load();
    const m = (xs: number[]): Map<string, { greedy: number }> => new Map(xs.map((g, i) => [`t${i}`, { greedy: g }]));
    const a = m([1, 1, 1, 0, 0, 1, 1]);
    const b = m([1, 0, 0, 0, 1, 0]); // t6 is a's only
    const r = mcnemarExact(a, b);
    assert.deepEqual([r.better, r.worse], [3, 1]);
    assert.ok(Math.abs(r.p - binomialOf(1, 4)) < 1e-15);
    const back = mcnemarExact(b, a);
    assert.deepEqual([back.better, back.worse, back.p], [1, 3, r.p]);
  });
});

/** 2 · P(X ≤ k) for X ~ Bin(n, ½), capped at 1, summed directly. */
function binomialOf(k: number, n: number): number {
  let c = 1;
  let tail = 0;
  for (let i = 0; i <= k; i++) {
    tail += c / 2 ** n;
    c = (c * (n - i)) / (i + 1);
  }
  return Math.min(1, 2 * tail);
}
