import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forkConfig, parseForkChanges } from '../../../src/shared/forkConfig';
import { ConfigError, validateRunConfig } from '../../../src/shared/runConfig';

const parent = validateRunConfig({ name: 'p', iterations: 20, seed: 4 });

describe('forkConfig', () => {
  it("no changes: the parent's config", () => {
    assert.deepEqual(forkConfig(parent, {}, 10), parent);
  });

  it('merges section by section: a changed algorithm setting keeps the others', () => {
    const c = forkConfig(parent, { algorithm: { learningRate: 0.3, klCoef: 0.05 }, iterations: 40 }, 10);
    assert.equal(c.algorithm.learningRate, 0.3);
    assert.equal(c.algorithm.klCoef, 0.05);
    assert.equal(c.algorithm.clipLow, parent.algorithm.clipLow);
    assert.equal(c.iterations, 40);
    assert.equal(c.seed, 4);
  });

  it("refuses what the saved state fixes, each with the reason; the same value as the parent's passes", () => {
    assert.throws(
      () => forkConfig(parent, { env: 'calculator', policy: 'transformer', method: 'rs-sft', mode: 'async' }, 10),
      (e: unknown) =>
        e instanceof ConfigError &&
        e.issues.map((i) => i.field).join() === 'env,policy,method,mode' &&
        /env = "calculator": cannot change at a fork: the saved state was trained in the parent's environment. Fix: remove it; a fork may change name, iterations/.test(
          e.message,
        ),
    );
    assert.equal(forkConfig(parent, { seed: 4, env: 'binary-search' }, 10).seed, 4);
  });

  it('policyOptions: sampling settings may change, the model may not', () => {
    const lm = validateRunConfig({ env: 'calculator', policy: 'transformer', iterations: 5 });
    // its stored form (demonstration defaults filled in, method grpo) validates again: resume and fork read it back
    assert.deepEqual(validateRunConfig(JSON.parse(JSON.stringify(lm))), lm);
    assert.deepEqual(forkConfig(lm, { policyOptions: { temperature: 0.7 } }, 2).policyOptions, { ...lm.policyOptions, temperature: 0.7 });
    assert.throws(
      () => forkConfig(lm, { policyOptions: { dModel: 128 } }, 2),
      /policyOptions\.dModel = 128: cannot change at a fork: the saved state holds the parent's model/,
    );
  });

  it('the merged config is validated; a fork must plan past its fork iteration', () => {
    assert.throws(() => forkConfig(parent, { algorithm: { learningRate: 'fast' } }, 10), /algorithm\.learningRate/);
    assert.throws(() => forkConfig(parent, { iterations: 10 }, 10), /iterations = 10: leaves nothing to train after the fork iteration 10/);
    assert.throws(() => forkConfig(parent, { clipEpsilon: 0.1 }, 10), /clipEpsilon = 0\.1: has moved to algorithm\.clipLow/);
    assert.throws(() => forkConfig(parent, [1], 10), /\(changes\) = \[1\]: must be a JSON object/);
  });
});

describe('parseForkChanges (Fork Run from Here)', () => {
  it('empty is no changes; an object is the changes; anything else says why', () => {
    assert.deepEqual(parseForkChanges('  '), { changes: {} });
    assert.deepEqual(parseForkChanges('{"iterations": 3}'), { changes: { iterations: 3 } });
    assert.match((parseForkChanges('{') as { error: string }).error, /not valid JSON/);
    assert.match((parseForkChanges('[1]') as { error: string }).error, /a JSON object/);
  });
});
