// How a run's model held its base weights, as every view says it from the stored run: only the three
// names are read back (anything else in a shared or hand-edited database reads as not recorded), and the
// views print their own words, never the stored text.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { baseWeightsLine, baseWeightsNote, baseWeightsShort, isBaseWeights, runRuntimeLines, storedBaseWeights } from '../../../src/shared/baseWeights';
import { isInspectorData } from '../../../src/shared/protocol/webviewProtocol';
import { HOSTILE, rawInvisible } from './hostileInputs';

describe('baseWeights: the run record says how the base was held', () => {
  it('reads q8, bf16 and f32 from a stored runtime record, and nothing else', () => {
    assert.equal(storedBaseWeights({ compute: 'wasm engine', baseWeights: 'q8' }), 'q8');
    assert.equal(storedBaseWeights({ baseWeights: 'bf16' }), 'bf16');
    assert.equal(storedBaseWeights({ baseWeights: 'f32' }), 'f32');
    // a run recorded before the field, or a record someone edited
    for (const bad of [undefined, 'Q8', 'q8 ', 'int8', 8, null, ['q8'], { q8: true }, 'q8\u202e'])
      assert.equal(
        storedBaseWeights({ compute: 'q8 base (Q8_0 blocks of 32, 8-bit activations per block)', baseWeights: bad }),
        undefined,
        JSON.stringify(bad) ?? 'undefined',
      );
    assert.equal(storedBaseWeights(null), undefined);
    assert.equal(storedBaseWeights('q8'), undefined);
    for (const h of HOSTILE) assert.equal(isBaseWeights(h.text), false, h.name);
  });

  it('says 8 bits (Q8_0) for q8, bfloat16 and float32 for the others', () => {
    assert.equal(baseWeightsShort('q8'), '8 bits (Q8_0)');
    assert.equal(baseWeightsShort('bf16'), 'bfloat16');
    assert.equal(baseWeightsShort('f32'), 'float32');
    assert.match(baseWeightsLine('q8'), /^base weights: 8 bits \(Q8_0 blocks of 32, .*activations quantized to 8 bits per block of 32\)$/);
    assert.equal(baseWeightsLine('bf16'), 'base weights: bfloat16');
    assert.equal(baseWeightsLine('f32'), 'base weights: float32');
  });

  it("the dashboard's note names each selected run that recorded its base weights, and skips the rest", () => {
    const run = (id: number) => ({ id });
    assert.equal(
      baseWeightsNote([
        { run: run(3), baseWeights: 'q8' },
        { run: run(4) },
        { run: run(5), baseWeights: 'bf16' },
        { run: run(6), baseWeights: '<img src=x onerror=alert(1)>' },
      ]),
      'base weights: run 3 8 bits (Q8_0) · run 5 bfloat16',
    );
    assert.equal(baseWeightsNote([{ run: run(4) }]), undefined);
    assert.equal(baseWeightsNote([]), undefined);
  });

  it("Show Runtime on a run: the stored compute string on one line with its invisibles marked, then the base weights or 'not recorded'", () => {
    assert.deepEqual(runRuntimeLines(7, 'wasm engine (2 threads, q8 base)', 'q8'), [
      'run 7 computed on: wasm engine (2 threads, q8 base)',
      `run 7 ${baseWeightsLine('q8')}`,
    ]);
    const [compute, weights] = runRuntimeLines(8, '', undefined);
    assert.equal(compute, 'run 8 computed on: (not recorded)');
    assert.match(weights!, /^run 8 base weights: not recorded/);
    for (const h of HOSTILE) {
      const lines = runRuntimeLines(9, h.text, 'bf16');
      assert.equal(lines.length, 2, h.name);
      for (const l of lines) {
        assert.equal(rawInvisible(l), undefined, h.name);
        assert.ok(!l.includes('\n'), `${h.name}: one line each`);
      }
      assert.equal(lines[1], 'run 9 base weights: bfloat16');
    }
  });

  it("the inspector's message carries base weights only as one of the three names", () => {
    const msg = { type: 'trajectory', detail: {}, group: [], maxTextLength: 0, compute: 'x' };
    assert.equal(isInspectorData(msg), true);
    assert.equal(isInspectorData({ ...msg, baseWeights: 'q8' }), true);
    assert.equal(isInspectorData({ ...msg, baseWeights: 'int4' }), false);
    assert.equal(isInspectorData({ ...msg, baseWeights: 8 }), false);
  });
});
