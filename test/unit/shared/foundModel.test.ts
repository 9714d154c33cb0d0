// describeFit: the one line `agent-rl model list` and Start Run's model step print per checkpoint.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeFit, type FoundModel } from '../../../src/shared/foundModel';

const base: FoundModel = { name: 'Qwen/Qwen2.5-1.5B', dir: '/m', foundIn: '/cache' };
const plan = { fits: true, total: 3.65 * 2 ** 30, limit: 4 * 2 ** 30, on: 'the wasm engine' };

describe('describeFit', () => {
  it('names weightDtype q8 where seed 000 fits only with Q8_0 weights, and nothing where bfloat16 fits', () => {
    assert.equal(describeFit({ ...base, seed000: { ...plan, dtype: 'q8' } }), 'seed 000 fits (3.65 GiB of 4.00 GiB on the wasm engine, weightDtype q8)');
    assert.equal(describeFit({ ...base, seed000: { ...plan, dtype: 'bf16' } }), 'seed 000 fits (3.65 GiB of 4.00 GiB on the wasm engine)');
    assert.equal(describeFit({ ...base, problem: 'no config.json' }), 'cannot load: no config.json');
  });
});
