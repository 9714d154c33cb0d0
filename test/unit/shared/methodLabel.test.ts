// The printed name of what a run trained with: plain GRPO only when it clips at 0.2/0.2 and keeps every
// group in the loss; each departure named (issue 26: "plain GRPO" was clip-higher with zero-advantage
// filtering by default for a language model, and its label named neither).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { algorithmDefaults, methodLabel } from '../../../src/shared/algorithm';

describe('methodLabel', () => {
  it('plain GRPO is clip 0.2/0.2 with every group in the loss (the table policy defaults)', () => {
    assert.equal(methodLabel('grpo', algorithmDefaults('calculator', 'table', 'grpo')), 'GRPO');
  });

  it("a language model's defaults are named for what they are: clip-higher and zero-advantage filtering", () => {
    assert.equal(methodLabel('grpo', algorithmDefaults('calculator', 'transformer', 'grpo')), 'GRPO + clip-higher 0.2/0.28 + zero-advantage filtering');
    const plain = { ...algorithmDefaults('calculator', 'transformer', 'grpo'), clipHigh: 0.2, skipZeroAdvantage: false };
    assert.equal(methodLabel('grpo', plain), 'GRPO');
  });

  it('another clip range, positive-only reinforcement and the DAPO parts are named; untrusted stored values count only when typed', () => {
    const base = algorithmDefaults('calculator', 'table', 'grpo');
    assert.equal(methodLabel('grpo', { ...base, clipLow: 0.1, clipHigh: 0.1 }), 'GRPO (clip 0.1/0.1)');
    assert.equal(
      methodLabel('grpo', { ...base, negativeAdvantageScale: 0, dynamicSampling: 3, overlongFilter: true }),
      'positive-only GRPO (failures not pushed down) + dynamic sampling + overlong filter',
    );
    assert.equal(methodLabel('grpo', { ...base, clipHigh: '0.9' as unknown as number, skipZeroAdvantage: 'yes' as unknown as boolean }), 'GRPO');
    assert.equal(methodLabel('rs-sft', { ...base, skipZeroAdvantage: true }), 'RS-SFT');
  });

  it('GSPO and CISPO name the run (their own clip ranges replace the clip-higher label); plain GRPO stays GRPO', () => {
    const table = algorithmDefaults('calculator', 'table', 'grpo');
    const lm = algorithmDefaults('calculator', 'transformer', 'grpo');
    assert.equal(methodLabel('grpo', { ...table, policyLoss: 'clip' }), 'GRPO');
    assert.equal(methodLabel('grpo', { ...lm, policyLoss: 'gspo' }), 'GSPO + zero-advantage filtering');
    assert.equal(methodLabel('grpo', { ...lm, policyLoss: 'cispo' }), 'CISPO (weights truncated at 1 + 0.28) + zero-advantage filtering');
    assert.equal(
      methodLabel('grpo', { ...table, policyLoss: 'gspo', advantageEstimator: 'rloo', negativeAdvantageScale: 0 }),
      'positive-only GSPO with RLOO advantages (failures not pushed down)',
    );
    assert.equal(methodLabel('grpo', { ...table, policyLoss: 'GSPO' as unknown as 'gspo' }), 'GRPO');
    assert.equal(methodLabel('sft', { ...table, policyLoss: 'gspo' }), 'SFT');
  });

  it('distillation says it is one, with its weight other than 1, its loss and clip; a GRPO run names its teacher term (issue 51)', () => {
    const distill = algorithmDefaults('calculator', 'transformer', 'distill');
    assert.equal(methodLabel('distill', distill), 'on-policy distillation (reverse KL to the teacher) + clip-higher 0.2/0.28');
    assert.equal(
      methodLabel('distill', { ...distill, teacherWeight: 0.5, clipHigh: 0.2, klCoef: 0.01 }),
      'on-policy distillation (reverse KL to the teacher ×0.5) + KL to the start ×0.01',
    );
    // no group advantages: the GRPO shaping settings do not apply and are not named
    assert.equal(
      methodLabel('distill', { ...distill, policyLoss: 'cispo', negativeAdvantageScale: 0, skipZeroAdvantage: true, dynamicSampling: 2, overlongFilter: true }),
      'on-policy distillation (reverse KL to the teacher) with the CISPO loss (weights truncated at 1 + 0.28) + overlong filter',
    );
    // with a teacher term zero-advantage filtering is off (every token has an advantage of its own)
    assert.equal(
      methodLabel('grpo', { ...algorithmDefaults('calculator', 'transformer', 'grpo'), teacherWeight: 0.1 }),
      'GRPO + clip-higher 0.2/0.28 + teacher term ×0.1',
    );
    assert.equal(methodLabel('grpo', { ...algorithmDefaults('calculator', 'table', 'grpo'), teacherWeight: '1' as unknown as number }), 'GRPO');
  });
});
