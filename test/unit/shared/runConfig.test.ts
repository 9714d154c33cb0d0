import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, DEFAULT_RUN_CONFIG, validateRunConfig } from '../../../src/shared/runConfig';

function issues(input: unknown): ConfigError {
  try {
    validateRunConfig(input);
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e;
  }
  assert.fail('expected a ConfigError');
}

describe('validateRunConfig', () => {
  it('fills seed 002 defaults and derives a name', () => {
    const c = validateRunConfig({ seed: 19 });
    assert.equal(c.iterations, 100);
    assert.equal(c.groupsPerIteration * c.groupSize, 32);
    assert.deepEqual([c.learningRate, c.clipEpsilon, c.klCoef, c.epochs, c.evalEpisodes], [0.08, 0.2, 0.02, 2, 500]);
    assert.deepEqual(c.envOptions, { stepBudget: 6 });
    assert.equal(c.name, 'binary-search-table-grpo-s19');
    assert.notEqual(c.evalSeed, c.seed);
  });

  it('an unknown key is named with a suggestion', () => {
    const e = issues({ learningrate: 0.1 });
    assert.equal(e.issues[0]!.field, 'learningrate');
    assert.match(e.message, /learningrate = 0\.1: is not a known config key\. Fix: did you mean "learningRate"\?/);
  });

  it('wrong types name the field, the value and the fix', () => {
    const e = issues({ seed: 'seven', method: 'ppo', iterations: 2.5 });
    const byField = Object.fromEntries(e.issues.map((i) => [i.field, i]));
    assert.match(byField.seed!.message, /finite integer, got string/);
    assert.match(byField.method!.fix, /grpo, rs-sft/);
    assert.match(byField.iterations!.message, /whole number/);
    assert.equal(e.issues.length, 3);
    assert.match(e.message, /seed = "seven"/);
  });

  it('out-of-range values give the allowed range', () => {
    const e = issues({ learningRate: 0, clipEpsilon: 1.5, evalEpisodes: -1 });
    assert.deepEqual(e.issues.map((i) => i.field).sort(), ['clipEpsilon', 'evalEpisodes', 'learningRate']);
    assert.match(e.issues.find((i) => i.field === 'learningRate')!.fix, /> 0/);
  });

  it('GRPO rejects groups of one (no spread to normalise); SFT takes one demonstration per task', () => {
    const e = issues({ groupSize: 1 });
    assert.equal(e.issues[0]!.field, 'groupSize');
    assert.match(e.message, /groupSize = 1: GRPO normalises rewards within a group.*Fix: set groupSize ≥ 2/);
    assert.equal(validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'sft' }).groupSize, 1);
    assert.throws(() => validateRunConfig({ groupSize: 0 }), /groupSize = 0: is out of range/);
  });

  it('impossible combinations: rs-sft with a KL coefficient', () => {
    const e = issues({ method: 'rs-sft', klCoef: 0.02 });
    assert.equal(e.issues[0]!.field, 'klCoef');
    assert.match(e.issues[0]!.fix, /rs-sft/);
  });

  it('environment options are checked against the environment', () => {
    const e = issues({ envOptions: { stepBudget: 0, timeout: 3 } });
    assert.deepEqual(e.issues.map((i) => i.field).sort(), ['envOptions.stepBudget', 'envOptions.timeout']);
    assert.match(e.message, /binary-search accepts: stepBudget/);
  });

  it('rejects a non-object config', () => {
    assert.match(issues([1, 2]).message, /must be a JSON object/);
  });

  it('defaults are frozen', () => {
    assert.throws(() => {
      (DEFAULT_RUN_CONFIG as { seed: number }).seed = 1;
    });
  });
});

describe('validateRunConfig: transformer policy', () => {
  it('fills policy and method defaults, and policy options', () => {
    const grpo = validateRunConfig({ env: 'calculator', policy: 'transformer' });
    assert.equal(grpo.learningRate, 2e-4);
    assert.equal(grpo.policyOptions.dModel, 64);
    assert.equal(grpo.policyOptions.klEstimator, 'k3');
    const sft = validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'sft' });
    assert.equal(sft.learningRate, 3e-3);
    assert.equal(sft.iterations, 200);
    assert.equal(validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'sft', learningRate: 0.01 }).learningRate, 0.01);
  });

  it('names bad policy options and impossible combinations', () => {
    const e = issues({ env: 'calculator', policy: 'transformer', policyOptions: { dModel: 30, nHeads: 4, tiedHead: 'yes', depth: 3 } });
    const fields = e.issues.map((i) => i.field).sort();
    assert.deepEqual(fields, ['policyOptions.depth', 'policyOptions.nHeads', 'policyOptions.tiedHead']);
    assert.match(e.message, /tiedHead = "yes": must be true or false/);
    assert.match(issues({ env: 'calculator', method: 'sft' }).message, /method = "sft": sft trains a language model/);
    assert.match(issues({ env: 'binary-search', policy: 'transformer', method: 'sft' }).message, /binary-search has no reference agent/);
  });
});
