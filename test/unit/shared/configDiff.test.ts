import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configDifferences, showConfigValue } from '../../../src/shared/configDiff';
import { validateRunConfig } from '../../../src/shared/runConfig';

describe('configDifferences (Compare Runs)', () => {
  it("names every key path whose value differs, with each run's value, sorted by path", () => {
    const a = { seed: 1, name: 'a', algorithm: { learningRate: 0.1, clipLow: 0.2 }, envOptions: { tasks: ['x', 'y'] } };
    const b = { seed: 1, name: 'b', algorithm: { learningRate: 0.01, clipLow: 0.2 }, envOptions: { tasks: ['x', 'z'] } };
    assert.deepEqual(configDifferences([a, b]), [
      { path: 'algorithm.learningRate', values: [0.1, 0.01] },
      {
        path: 'envOptions.tasks',
        values: [
          ['x', 'y'],
          ['x', 'z'],
        ],
      },
      { path: 'name', values: ['a', 'b'] },
    ]);
  });

  it('a key one config lacks differs (undefined there); three runs differ where any one does', () => {
    assert.deepEqual(configDifferences([{ a: 1 }, { a: 1, b: { c: 2 } }, { a: 2 }]), [
      { path: 'a', values: [1, 1, 2] },
      { path: 'b.c', values: [undefined, 2, undefined] },
    ]);
  });

  it('identical configs, or fewer than two, have no differences; stored data of any shape is accepted', () => {
    const c = validateRunConfig({ seed: 3 });
    assert.deepEqual(configDifferences([c, structuredClone(c)]), []);
    assert.deepEqual(configDifferences([c]), []);
    assert.deepEqual(configDifferences([null, 'text']), [{ path: '', values: [null, 'text'] }]);
  });

  it('two validated configs that differ in the learning rate and the iterations differ there only', () => {
    const a = validateRunConfig({ iterations: 20 });
    const b = validateRunConfig({ iterations: 30, algorithm: { learningRate: 0.5 } });
    assert.deepEqual(
      configDifferences([a, b]).map((d) => d.path),
      ['algorithm.learningRate', 'iterations'],
    );
  });

  it('shows a value as JSON, a missing one as a dash, a long one cut', () => {
    assert.equal(showConfigValue(undefined), '—');
    assert.equal(showConfigValue('x'), '"x"');
    assert.equal(showConfigValue({ a: [1, 2] }), '{"a":[1,2]}');
    assert.equal(showConfigValue('y'.repeat(200), 10), `"${'y'.repeat(8)}…`);
  });
});
