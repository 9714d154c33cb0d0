// describeFit: the one line `agent-rl model list` and Start Run's model step print per checkpoint.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeFit, describeSeed000, type FoundModel } from '../../../src/shared/foundModel';

const base: FoundModel = { name: 'Qwen/Qwen2.5-1.5B', dir: '/m', foundIn: '/cache' };
const plan = { fits: true, total: 3.65 * 2 ** 30, limit: 4 * 2 ** 30, on: 'the wasm engine' };

describe('describeFit', () => {
  it('names weightDtype q8 where seed 000 fits only with Q8_0 weights, and nothing where bfloat16 fits', () => {
    assert.equal(describeFit({ ...base, seed000: { ...plan, dtype: 'q8' } }), 'seed 000 fits (3.65 GiB of 4.00 GiB on the wasm engine, weightDtype q8)');
    assert.equal(describeFit({ ...base, seed000: { ...plan, dtype: 'bf16' } }), 'seed 000 fits (3.65 GiB of 4.00 GiB on the wasm engine)');
    assert.equal(describeFit({ ...base, problem: 'no config.json' }), 'cannot load: no config.json');
  });

  it('on the engine: the preset at q8 and at bfloat16, and --weight-dtype q8 advised only where q8 alone fits', () => {
    const GiB = 2 ** 30;
    const at = (q8: boolean, bf16: boolean) =>
      describeSeed000({
        ...plan,
        plans: [
          { dtype: 'q8', fits: q8, total: 3.65 * GiB },
          { dtype: 'bf16', fits: bf16, total: 5.5 * GiB },
        ],
      });
    assert.equal(
      at(true, false),
      'seed 000 preset: fits at q8 (3.65 GiB), not at bfloat16 (5.50 GiB) — of 4.00 GiB on the wasm engine; use weightDtype q8 (--weight-dtype q8)',
    );
    assert.equal(at(true, true), 'seed 000 preset: fits at q8 (3.65 GiB), fits at bfloat16 (5.50 GiB) — of 4.00 GiB on the wasm engine');
    assert.equal(at(false, false), 'seed 000 preset: does not fit at q8 (3.65 GiB), not at bfloat16 (5.50 GiB) — of 4.00 GiB on the wasm engine');
    // describeFit says the same for a found model
    assert.equal(
      describeFit({ ...base, seed000: { ...plan, plans: [{ dtype: 'q8', fits: true, total: 3.65 * GiB }] } }),
      'seed 000 preset: fits at q8 (3.65 GiB) — of 4.00 GiB on the wasm engine; use weightDtype q8 (--weight-dtype q8)',
    );
  });
});
