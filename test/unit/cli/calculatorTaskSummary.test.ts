import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calculatorTaskSummary } from '../../../src/cli/envCommands';
import { validateEnvOptions } from '../../../src/shared/runConfig';

describe('env check: the calculator task summary', () => {
  it("prints each split's size and depth mix beside the generator's", () => {
    const text = calculatorTaskSummary(validateEnvOptions('calculator', {}));
    assert.match(text, /^calculator tasks: 2000 training, 200 held out \(depth 1–2, operands 0–9\)$/m);
    assert.match(text, /^1 +\d+\.\d% +243 \(12\.2%\) +24 \(12\.0%\)$/m);
    assert.match(text, /^2 +\d+\.\d% +\d+ \(\d+\.\d%\) +\d+ \(\d+\.\d%\)$/m);
    assert.doesNotMatch(text, /of the \d+ asked/);
  });

  it('says when a split is shorter than asked', () => {
    const text = calculatorTaskSummary(validateEnvOptions('calculator', { maxDepth: 1, maxOperand: 1 }));
    assert.match(text, /^training tasks: 10 of the 2000 asked \(too few distinct expressions/m);
    assert.match(text, /^held-out tasks: 2 of the 200 asked/m);
  });
});
