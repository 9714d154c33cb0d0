import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, DEFAULT_RUN_CONFIG, validateRunConfig } from '../../../src/shared/runConfig';
import { runConfigSchema } from '../../../src/shared/runConfigSchema';

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
    assert.deepEqual(
      [c.algorithm.learningRate, c.algorithm.clipLow, c.algorithm.clipHigh, c.algorithm.klCoef, c.algorithm.klEstimator, c.algorithm.epochs, c.evalEpisodes],
      [0.08, 0.2, 0.2, 0.02, 'exact', 2, 500],
    );
    assert.deepEqual(c.envOptions, { stepBudget: 6 });
    assert.equal(c.name, 'binary-search-table-grpo-s19');
    assert.notEqual(c.evalSeed, c.seed);
  });

  it('an unknown key is named with a suggestion', () => {
    const e = issues({ evalepisodes: 10, algorithm: { learningrate: 0.1 } });
    assert.match(e.message, /evalepisodes = 10: is not a known config key\. Fix: did you mean "evalEpisodes"\?/);
    assert.match(e.message, /algorithm\.learningrate = 0\.1: is not an algorithm setting\. Fix: did you mean "learningRate"\?/);
  });

  it('keys that moved into the typed sections say where they went', () => {
    const e = issues({
      learningRate: 0.1,
      clipEpsilon: 0.3,
      env: 'calculator',
      policy: 'transformer',
      policyOptions: { negativeAdvantageScale: 0, mistakeRate: 0.1 },
    });
    const byField = Object.fromEntries(e.issues.map((i) => [i.field, i]));
    assert.match(byField.learningRate!.message, /moved to algorithm\.learningRate/);
    assert.match(byField.learningRate!.fix, /"algorithm": \{ "learningRate": 0\.1 \}/);
    assert.match(byField.clipEpsilon!.message, /moved to algorithm\.clipLow/);
    assert.match(byField['policyOptions.negativeAdvantageScale']!.message, /moved to algorithm\.negativeAdvantageScale/);
    assert.match(byField['policyOptions.mistakeRate']!.message, /moved to demonstrations\.mistakeRate/);
  });

  it('one resolved algorithm default per (env, policy, method), and a given value wins', () => {
    const lr = (c: Record<string, unknown>): number => validateRunConfig(c).algorithm.learningRate;
    assert.equal(lr({}), 0.08);
    assert.equal(lr({ env: 'calculator', policy: 'transformer' }), 2e-4);
    assert.equal(lr({ env: 'calculator', policy: 'transformer', method: 'sft' }), 3e-3);
    assert.equal(lr({ env: 'code', policy: 'transformer' }), 5e-4);
    assert.equal(lr({ env: 'code', policy: 'transformer', algorithm: { learningRate: 1e-4 } }), 1e-4);
    const t = validateRunConfig({ env: 'calculator', policy: 'transformer' }).algorithm;
    assert.deepEqual([t.klEstimator, t.clipHigh, t.minibatchSize, t.skipZeroAdvantage, t.negativeAdvantageScale], ['k3', 0.28, 64, true, 1]);
    assert.equal(validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'sft' }).algorithm.lrSchedule, 'linear');
  });

  it('algorithm settings are typed and ranged, and the dual clip must exceed 1', () => {
    const e = issues({ algorithm: { advantageEstimator: 'ppo', epochs: 0, dualClip: 0.5, skipZeroAdvantage: 'yes' } });
    const fields = e.issues.map((i) => i.field).sort();
    assert.deepEqual(fields, ['algorithm.advantageEstimator', 'algorithm.dualClip', 'algorithm.epochs', 'algorithm.skipZeroAdvantage']);
    assert.match(e.message, /advantageEstimator = "ppo": is not one of grpo, dr-grpo, rloo/);
    assert.match(e.message, /dualClip = 0\.5: the dual-clip bound must be greater than 1/);
  });

  it("policyLoss gspo and cispo replace GRPO's clipped surrogate: refused for SFT and RS-SFT, with a dual clip, and (gspo) with another aggregation", () => {
    assert.equal(validateRunConfig({}).algorithm.policyLoss, 'clip');
    assert.equal(validateRunConfig({ algorithm: { policyLoss: 'gspo' } }).algorithm.policyLoss, 'gspo');
    assert.equal(validateRunConfig({ env: 'calculator', policy: 'transformer', algorithm: { policyLoss: 'cispo' } }).algorithm.policyLoss, 'cispo');
    for (const [method, policyLoss] of [
      ['sft', 'gspo'],
      ['rs-sft', 'cispo'],
    ] as const) {
      // (SFT's token-mean is not GSPO's aggregation: only the method is named)
      const e = issues({ env: 'calculator', policy: 'transformer', method, algorithm: { policyLoss } });
      assert.deepEqual(
        e.issues.map((i) => i.field),
        ['algorithm.policyLoss'],
      );
      assert.match(e.message, new RegExp(`policyLoss = "${policyLoss}": ${method} trains by negative log-likelihood.*set it to "clip"`));
    }
    const e = issues({ algorithm: { policyLoss: 'gspo', dualClip: 3, lossAggregation: 'token-mean' } });
    assert.deepEqual(e.issues.map((i) => i.field).sort(), ['algorithm.dualClip', 'algorithm.lossAggregation']);
    assert.match(e.message, /use lossAggregation "seq-mean-token-mean" with policyLoss "gspo"/);
    assert.deepEqual(
      issues({ algorithm: { policyLoss: 'cispo', dualClip: 3, lossAggregation: 'token-mean' } }).issues.map((i) => i.field),
      ['algorithm.dualClip'],
    );
    assert.match(issues({ algorithm: { policyLoss: 'ppo' } }).message, /policyLoss = "ppo": is not one of clip, gspo, cispo/);
  });

  it("demonstrations are the environment's and apply to method sft only", () => {
    const sft = validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'sft' });
    assert.deepEqual(sft.demonstrations, {
      mistakeRate: 0.05,
      imitate: 'all',
      skipToolOn: 'mul',
      skipToolRate: 0.8,
      guess: 'first-number',
      redundantCallRate: 0,
    });
    assert.match(
      issues({ env: 'calculator', policy: 'transformer', demonstrations: { skipToolRate: 0.5 } }).message,
      /demonstrations = .*applies to method sft only/,
    );
    assert.match(
      issues({ env: 'code', policy: 'transformer', method: 'sft', demonstrations: { skipToolOn: 'mul' } }).message,
      /demonstrations\.skipToolOn = "mul": is not an option of env "code"'s demonstrations/,
    );
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
    const e = issues({ algorithm: { learningRate: 0, clipLow: 1.5 }, evalEpisodes: -1 });
    assert.deepEqual(e.issues.map((i) => i.field).sort(), ['algorithm.clipLow', 'algorithm.learningRate', 'evalEpisodes']);
    assert.match(e.issues.find((i) => i.field === 'algorithm.learningRate')!.fix, /> 0/);
  });

  it('GRPO rejects groups of one (no spread to normalise); SFT takes one demonstration per task', () => {
    const e = issues({ groupSize: 1 });
    assert.equal(e.issues[0]!.field, 'groupSize');
    assert.match(e.message, /groupSize = 1: GRPO normalises rewards within a group.*Fix: set groupSize ≥ 2/);
    assert.equal(validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'sft' }).groupSize, 1);
    assert.throws(() => validateRunConfig({ groupSize: 0 }), /groupSize = 0: is out of range/);
  });

  it('impossible combinations: rs-sft with a KL coefficient', () => {
    const e = issues({ method: 'rs-sft', algorithm: { klCoef: 0.02 } });
    assert.equal(e.issues[0]!.field, 'algorithm.klCoef');
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
    assert.equal(grpo.algorithm.learningRate, 2e-4);
    assert.ok(grpo.policy === 'transformer');
    assert.equal(grpo.policyOptions.dModel, 64);
    assert.equal(grpo.evalPassK, 8);
    const sft = validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'sft' });
    assert.equal(sft.algorithm.learningRate, 3e-3);
    assert.equal(sft.iterations, 200);
    assert.equal(
      validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'sft', algorithm: { learningRate: 0.01 } }).algorithm.learningRate,
      0.01,
    );
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

describe('validateRunConfig: asynchronous mode', () => {
  it('recomputes π_old with a truncated importance correction by default; behaviour log-probs are allowed, with nothing to correct', () => {
    const a = validateRunConfig({ mode: 'async' });
    assert.deepEqual([a.algorithm.oldLogprobs, a.algorithm.offPolicyCorrection, a.algorithm.isCap, a.maxStaleness], ['recompute', 'truncated-is', 2, 1]);
    const b = validateRunConfig({ mode: 'async', algorithm: { oldLogprobs: 'behaviour' } });
    assert.deepEqual([b.algorithm.oldLogprobs, b.algorithm.offPolicyCorrection], ['behaviour', 'none']);
    assert.equal(validateRunConfig({}).algorithm.offPolicyCorrection, 'none', 'sync is on-policy');
  });

  it('refuses what it cannot do: a queue smaller than one take, dynamic sampling, sft, a correction without recomputed π_old', () => {
    assert.match(
      issues({ mode: 'async', queueGroups: 1 }).message,
      /queueGroups = 1: the learner takes 4 groups at a time.*Fix: use 0 \(the default\) or at least 4/,
    );
    assert.match(
      issues({ mode: 'async', algorithm: { dynamicSampling: 2 } }).message,
      /algorithm\.dynamicSampling = 2: .*Fix: set algorithm\.dynamicSampling to 0, or use mode "sync"/,
    );
    assert.match(
      issues({ mode: 'async', env: 'calculator', policy: 'transformer', method: 'sft' }).message,
      /mode = "?async"?: sft learns from scripted demonstrations/,
    );
    assert.match(issues({ algorithm: { offPolicyCorrection: 'truncated-is' } }).message, /Fix: set algorithm\.oldLogprobs to "recompute"/);
  });
});

describe('run config schema', () => {
  const schema = runConfigSchema() as {
    properties: Record<string, { properties?: Record<string, { description: string }> }>;
    allOf: { if: unknown; then: { properties: Record<string, { default?: unknown; properties?: Record<string, { default?: unknown }> }> } }[];
  };
  const algorithmDefaultsFor = (env: string, policy: string, method: string): Record<string, unknown> | undefined => {
    const block = schema.allOf.find(
      (b) =>
        JSON.stringify(b.if).includes(`"const":"${env}"`) &&
        JSON.stringify(b.if).includes(`"const":"${policy}"`) &&
        JSON.stringify(b.if).includes(`"const":"${method}"`) &&
        b.then.properties.algorithm,
    );
    const props = block?.then.properties.algorithm?.properties;
    return props ? Object.fromEntries(Object.entries(props).map(([k, v]) => [k, v.default])) : undefined;
  };
  it('holds one resolved algorithm default per (env, policy, method), as the validator fills it', () => {
    for (const [env, policy, method] of [
      ['calculator', 'transformer', 'grpo'],
      ['calculator', 'transformer', 'sft'],
      ['code', 'transformer', 'grpo'],
      ['binary-search', 'table', 'rs-sft'],
    ] as const) {
      assert.deepEqual(algorithmDefaultsFor(env, policy, method), validateRunConfig({ env, policy, method }).algorithm, `${env}/${policy}/${method}`);
    }
  });
  it('SFT of a language model weighs every demonstrated token alike (token-mean); GRPO and RS-SFT keep the per-episode mean', () => {
    const aggregation = (method: 'sft' | 'grpo' | 'rs-sft') =>
      validateRunConfig({ env: 'calculator', policy: 'transformer', method }).algorithm.lossAggregation;
    assert.equal(aggregation('sft'), 'token-mean');
    assert.equal(aggregation('grpo'), 'seq-mean-token-mean');
    assert.equal(aggregation('rs-sft'), 'seq-mean-token-mean');
  });
  it('holds the run-shape defaults of a policy and method too (a transformer reports pass@8 over 1,600 episodes)', () => {
    const block = schema.allOf.find(
      (b) =>
        JSON.stringify(b.if).includes('"const":"calculator"') &&
        JSON.stringify(b.if).includes('"const":"transformer"') &&
        JSON.stringify(b.if).includes('"const":"grpo"') &&
        b.then.properties.algorithm,
    );
    assert.equal(block?.then.properties.evalPassK?.default, 8);
    assert.equal(block?.then.properties.evalEpisodes?.default, 1600);
  });

  it('describes every algorithm setting with what it trades and where its defaults differ', () => {
    const lr = schema.properties.algorithm!.properties!.learningRate!.description;
    assert.match(lr, /Trades: /);
    assert.match(lr, /Defaults: 0\.08 for binary-search\/table\/grpo/);
    assert.match(lr, /0\.0002 for .*calculator\/transformer\/grpo/);
    // each cell with its reason, so a reason always stands beside the value it explains
    assert.match(lr, /0\.0002 for [^;]*calculator\/transformer\/grpo[^;]*\(a language model: a step 400× smaller/);
    assert.match(lr, /0\.08 for binary-search\/table\/grpo[^;]*\(seed 002: Adam 0\.08/);
  });
});
