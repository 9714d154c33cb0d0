// The engine's kernels index an operand with signed 32-bit byte offsets and loop bounds, so a call
// whose operand spans 2 GiB or more would silently do nothing (issue 50, item 5): the calls refuse it
// before reaching the threads, naming the kernel, the operand and the fix; calls under the bound go
// through unchanged. A stub pool records what reaches it, so no memory of that size is needed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkSpans, EngineKernels, MAX_KERNEL_SPAN, type Matrix } from '../../../../../../../src/rl/policies/lm/models/engine/kernels';
import { q8Operand } from '../../../../../../../src/rl/policies/lm/models/engine/q8Kernels';
import type { ThreadPool } from '../../../../../../../src/rl/policies/lm/models/engine/threadPool';

function rig(): { k: EngineKernels; calls: string[] } {
  const calls: string[] = [];
  const pool = { size: 1, run: (name: string) => void calls.push(name) } as unknown as ThreadPool;
  return { k: new EngineKernels(pool), calls };
}

describe('kernel spans past 2 GiB', () => {
  it('refuses an operand of 2^31 bytes or more, naming the kernel, the operand, its bytes and the fix', () => {
    assert.equal(MAX_KERNEL_SPAN, 2 ** 31 - 1);
    assert.doesNotThrow(() => checkSpans('add', ['x', MAX_KERNEL_SPAN]));
    assert.throws(() => checkSpans('add', ['x', 2 ** 31]), /engine kernel add: x spans 2147483648 bytes.*signed 32-bit.*Fix: /);
  });

  it('a product over a float32 weight past 2 GiB, a fill of 2^29 floats, a q8 product over such blocks: refused before any thread runs', () => {
    const { k, calls } = rig();
    const big: Matrix = { ptr: 0, rows: 2 ** 20, cols: 2 ** 9, dtype: 'f32' }; // 2 GiB of float32
    assert.throws(() => k.nt(0, 512, big, 0, 2 ** 20, 1, false), /engine kernel nt: w spans 2147483648 bytes/);
    assert.throws(() => k.fill(0, 0, 2 ** 29), /engine kernel fill: x spans 2147483648 bytes/);
    assert.throws(() => k.ntQ8(q8Operand(0, 1, 2 ** 12), q8Operand(0, 2 ** 19, 2 ** 12), 0, 2 ** 19, false), /engine kernel q8_nt: w spans 2147483648 bytes/);
    assert.throws(() => k.embed(big, 0, 1, 0, 512), /engine kernel embed: table spans/);
    assert.deepEqual(calls, [], 'nothing reached the threads');
    // the same weight in bfloat16 (1 GiB) goes through, as do the largest shapes the engine plans
    k.nt(0, 512, { ...big, dtype: 'bf16' }, 0, 2 ** 20, 1, false);
    k.fill(0, 0, 2 ** 29 - 4);
    k.nt(0, 2560, { ptr: 0, rows: 151936, cols: 2560, dtype: 'f32' }, 0, 151936, 1, false); // Qwen3-4B's float32 head
    assert.deepEqual(calls, ['nt_bf16', 'fill', 'nt_f32']);
  });
});
