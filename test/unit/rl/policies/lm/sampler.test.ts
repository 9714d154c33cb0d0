// One row's draw (sampleRow) without top-k/top-p: the tokens drawn follow softmax(logits / T), the
// log-prob returned is the drawn token's log softmax, greedy takes the first maximum, and a masked
// token (−∞, a grammar's) is never drawn — on a row as wide as a real vocabulary too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { logSoftmaxRow, sampleRow } from '../../../../../src/rl/policies/lm/sampler';
import { Rng } from '../../../../../src/rl/random';

const plain = { topK: 0, topP: 1 };

describe('sampleRow', () => {
  it('draws in proportion to softmax(logits / T) and returns the drawn token’s log-prob', () => {
    const logits = Float32Array.from([2, 0.5, -1, 1.5, -Infinity, 0]);
    for (const temperature of [1, 0.7]) {
      const logp = logSoftmaxRow(logits, temperature);
      const rng = new Rng(11);
      const n = 40_000;
      const counts = new Array<number>(logits.length).fill(0);
      for (let k = 0; k < n; k++) {
        const { token, logp: lp } = sampleRow(logits, { temperature, ...plain }, rng);
        counts[token]! += 1;
        assert.ok(Math.abs(lp - logp[token]!) < 1e-9, `log-prob of ${token}: ${lp} against ${logp[token]}`);
      }
      assert.equal(counts[4], 0, 'the masked token is never drawn');
      counts.forEach((c, i) => {
        const p = Math.exp(logp[i]!);
        // 5 standard deviations of a binomial count
        assert.ok(Math.abs(c - n * p) <= 5 * Math.sqrt(n * p * (1 - p)) + 1, `T ${temperature}, token ${i}: ${c} of ${n}, expected ${(n * p).toFixed(0)}`);
      });
    }
  });

  it('greedy takes the first maximum; a vocabulary-wide row draws the one token that holds the mass', () => {
    const tie = Float32Array.from([0, 3, 1, 3]);
    const g = sampleRow(tie, { temperature: 0, ...plain }, new Rng(1));
    assert.equal(g.token, 1);
    assert.ok(Math.abs(g.logp - logSoftmaxRow(tie, 1)[1]!) < 1e-12);
    const wide = new Float32Array(151_669).fill(-30);
    wide[120_000] = 30;
    const rng = new Rng(5);
    for (let k = 0; k < 20; k++) assert.equal(sampleRow(wide, { temperature: 1, ...plain }, rng).token, 120_000);
    // a narrower row after a wide one: the draw reads only its own weights
    const narrow = Float32Array.from([-Infinity, 5]);
    assert.equal(sampleRow(narrow, { temperature: 1, ...plain }, rng).token, 1);
  });
});
