// `agent-rl show`'s runtime section, from the stored runtime record: the base weights in a line of
// their own (q8: 8 bits, Q8_0), every stored string on one line with its invisibles marked.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runtimeLines } from '../../../src/cli/runtimeLines';
import type { RuntimeInfo } from '../../../src/shared/types';
import { HOSTILE, rawInvisible } from '../shared/hostileInputs';

const RUNTIME: RuntimeInfo = {
  workbench: '0.9.0',
  node: 'v24.22.3',
  platform: 'linux 6.1',
  arch: 'x64',
  cpu: 'cpu × 2',
  sqlite: '3.46.0',
  compute: 'wasm engine (2 threads, relaxed SIMD, q8 base (Q8_0 blocks of 32, 8-bit activations per block), plan 80.0 MiB)',
  computeReason: 'the wasm backend, and the engine builds qwen3',
};

describe('runtimeLines: the runtime section of agent-rl show', () => {
  it('says the base ran at 8 bits (Q8_0), or bfloat16 / float32, from the stored record, after the compute path', () => {
    const q8 = runtimeLines({ ...RUNTIME, baseWeights: 'q8' });
    assert.equal(q8.length, 3);
    assert.match(q8[0]!, /^ {2}runtime: 0\.9\.0 on Node v24\.22\.3, wasm engine \(2 threads, /);
    assert.equal(q8[1], '  compute path: the wasm backend, and the engine builds qwen3');
    assert.match(q8[2]!, /^ {2}base weights: 8 bits \(Q8_0 blocks of 32, /);
    assert.equal(runtimeLines({ ...RUNTIME, baseWeights: 'bf16' })[2], '  base weights: bfloat16');
    assert.equal(runtimeLines({ ...RUNTIME, baseWeights: 'f32' })[2], '  base weights: float32');
    // not recorded (a run from before the field, the table policy): no line, and the teacher still shows
    const none = runtimeLines({ ...RUNTIME, teacher: 'wasm engine (teacher)' });
    assert.deepEqual(
      none.map((l) => l.split(':')[0]),
      ['  runtime', '  compute path', '  teacher'],
    );
  });

  it('a stored value that is not one of the names prints no base-weights line; hostile stored strings stay one line each', () => {
    const edited = { ...RUNTIME, baseWeights: 'q8\n  base weights: 4 bits' } as unknown as RuntimeInfo;
    assert.ok(runtimeLines(edited).every((l) => !l.includes('base weights')));
    for (const h of HOSTILE) {
      const lines = runtimeLines({ ...RUNTIME, compute: h.text, computeReason: h.text, baseWeights: 'q8' });
      assert.equal(lines.length, 3, h.name);
      for (const l of lines) assert.equal(rawInvisible(l), undefined, h.name);
      assert.match(lines[2]!, /^ {2}base weights: 8 bits \(Q8_0/);
    }
  });
});
