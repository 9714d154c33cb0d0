// The engine on a 64-bit memory (issue 50, item 4): the memory64 kernels give the wasm32 kernels' bits
// on the fixtures (logits of every family and weight dtype, a training pass's log-probs and LoRA
// gradients), a kernel reads and writes past 4 GiB, and the plan picks the address mode — wasm32 while
// it fits 4 GiB, memory64 past that where the runtime has it, and a refusal naming the fix where not.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  addressLimit,
  chooseAddressMode,
  machineMemory,
  MAX_WASM32_BYTES,
  memory64Limit,
  memory64LimitText,
  memory64Support,
  type AddressMode,
} from '../../../../../../../src/rl/policies/lm/models/engine/engineAddress';
import { EngineMemory } from '../../../../../../../src/rl/policies/lm/models/engine/engineMemory';
import { fittingEnginePlan } from '../../../../../../../src/rl/policies/lm/models/engine/enginePlan';
import { engineModule, HfEngine } from '../../../../../../../src/rl/policies/lm/models/engine/hfEngine';
import { CONTROL_BYTES, ThreadPool } from '../../../../../../../src/rl/policies/lm/models/engine/threadPool';
import { readHfConfig } from '../../../../../../../src/rl/policies/lm/models/hfConfig';
import { SCALE_CONFIGS } from '../../../../../../helpers/scaleCheckpoint';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..', '..', 'test', 'fixtures', 'hf');
const LORA = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
const ROWS = [
  [1, 5, 9, 30, 2, 7, 100, 3, 8],
  [4, 20, 21, 22, 90],
];
const GiB = 2 ** 30;
const support = memory64Support();
const skip = support.ok ? false : `this runtime has no 64-bit memory (${support.why})`;

/** `gap`: bytes left unused below the engine's regions (past 4 GiB: everything it touches lies above 4 GiB). */
async function engine(family: string, dtype: 'f32' | 'bf16' | 'q8', address: AddressMode, gap = 0): Promise<HfEngine> {
  const dir = path.join(FIXTURES, family);
  return HfEngine.create({
    dir,
    arch: readHfConfig(dir),
    contextLength: 64,
    lora: LORA,
    threads: 2,
    dtype,
    bytes: gap + 64 * 2 ** 20,
    planText: 'test plan',
    address,
    ...(gap ? { reservedBytes: gap } : {}),
  });
}

/** The bits of every value, for an exact comparison (NaN-safe). */
const bits = (a: Float32Array): Uint32Array => new Uint32Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));

describe('the engine on a 64-bit memory', () => {
  it('Node 24 has shared 64-bit memories and validates the 64-bit kernels (the probe)', () => {
    const major = Number(process.versions.node.split('.')[0]);
    if (major >= 24) assert.equal(support.ok, true, support.why);
  });

  it('gives the wasm32 engine’s logits bit for bit (qwen2, qwen3, llama; float32, bfloat16 and q8 weights)', { skip }, async () => {
    for (const family of ['qwen2', 'qwen3', 'llama'])
      for (const dtype of ['f32', 'bf16', 'q8'] as const) {
        const z: Float32Array[] = [];
        for (const address of ['wasm32', 'memory64'] as const) {
          const e = await engine(family, dtype, address);
          try {
            assert.equal(e.address, address);
            z.push(await e.logits('policy', ROWS, 'all'));
          } finally {
            await e.close();
          }
        }
        assert.ok(z[0]!.some((v) => v !== 0) && z[0]!.every(Number.isFinite), `${family} ${dtype}: real logits`);
        assert.deepEqual(bits(z[1]!), bits(z[0]!), `${family} ${dtype}: memory64 logits equal wasm32's bitwise`);
      }
  });

  it(
    'gives the same training pass bit for bit: log-probs and LoRA gradients (qwen3, q8 base), with every region of the 64-bit engine past 4 GiB where the machine allows it',
    { skip },
    async () => {
      const seqs = ROWS.map((r) => ({ inputs: r, targets: r.map((t) => (t * 7 + 3) % 300), mask: r.map((_, i) => (i > 0 ? 1 : 0)) }));
      const out: Float32Array[][] = [];
      // the gap is reserved, never touched: it costs address space, not memory
      const gap = memory64Limit() >= MAX_WASM32_BYTES + 128 * 2 ** 20 ? MAX_WASM32_BYTES : 0;
      for (const address of ['wasm32', 'memory64'] as const) {
        const e = await engine('qwen3', 'q8', address, address === 'memory64' ? gap : 0);
        try {
          // adapters with b ≠ 0, so the adapter products run (the same values in both engines)
          const shapes = e.trainableShapes();
          e.setTrainable(
            'policy',
            shapes.map((s, i) => Float32Array.from({ length: s.shape.reduce((p, d) => p * d, 1) }, (_, j) => Math.sin(i * 13 + j) * 0.05)),
            false,
          );
          const scored = await e.score('policy', seqs, 1.1, true);
          if (address === 'memory64' && gap) assert.ok(e.mem.peak > gap + 65536, `the engine's regions lie past 4 GiB (its high-water mark ${e.mem.peak})`);
          const grads = await e.backward(seqs.map((s) => Float32Array.from(s.mask, (m, t) => m * Math.cos(t))));
          out.push([...scored.map((s) => s.logp), ...grads]);
        } finally {
          await e.close();
        }
      }
      assert.ok(
        out[0]!.slice(seqs.length).some((g) => g.some((v) => v !== 0)),
        'some gradient is not zero',
      );
      out[0]!.forEach((a, i) => assert.deepEqual(bits(out[1]![i]!), bits(a), `array ${i}`));
    },
  );

  const roomPast4GiB = memory64Limit() >= MAX_WASM32_BYTES + 64 * 2 ** 20;
  it(
    'runs kernels on regions past 4 GiB (a product x·wᵀ with w and y above 4 GiB, a fill)',
    { skip: skip || (!roomPast4GiB && 'this machine allows no 64-bit engine memory past 4 GiB (memory64Limit)') },
    async () => {
      const mem = new EngineMemory(MAX_WASM32_BYTES + 64 * 2 ** 20, 'test plan', CONTROL_BYTES, 'memory64');
      assert.equal(mem.memory.buffer.byteLength, MAX_WASM32_BYTES + 64 * 2 ** 20);
      const pool = await ThreadPool.start(mem.memory, engineModule('memory64').module, 2);
      try {
        const M = 4,
          K = 64,
          N = 8;
        const x = mem.allocF32(M * K, 'x');
        mem.alloc(MAX_WASM32_BYTES - mem.used + 4096, 'gap');
        const w = mem.allocF32(N * K, 'w');
        const y = mem.allocF32(M * N, 'y');
        assert.ok(w > MAX_WASM32_BYTES && y > MAX_WASM32_BYTES, `regions above 4 GiB (w at ${w}, y at ${y})`);
        const xs = Float32Array.from({ length: M * K }, (_, i) => Math.sin(i));
        const ws = Float32Array.from({ length: N * K }, (_, i) => Math.cos(i * 0.7));
        mem.f32.set(xs, x / 4);
        mem.f32.set(ws, w / 4);
        // two parts: columns [0, 4) and [4, 8) on two threads
        pool.run('nt_f32', [
          [x, K, w, K, y, N, M, K, 0, 4, 0],
          [x, K, w, K, y, N, M, K, 4, 8, 0],
        ]);
        for (let m = 0; m < M; m++)
          for (let n = 0; n < N; n++) {
            let s = 0;
            for (let k = 0; k < K; k++) s += xs[m * K + k]! * ws[n * K + k]!;
            assert.ok(Math.abs(mem.f32[y / 4 + m * N + n]! - s) < 1e-4, `y[${m}, ${n}] = ${mem.f32[y / 4 + m * N + n]} against ${s}`);
          }
        pool.run('fill', [[y, 2.5, M * N]]);
        assert.deepEqual([...mem.f32.subarray(y / 4, y / 4 + M * N)], new Array<number>(M * N).fill(2.5));
        // the last bytes of the memory are reachable; a vector past them traps (bounds-checked, as wasm32's guard pages trap)
        const end = mem.memory.buffer.byteLength;
        pool.run('fill', [[end - 16, 1, 4]]);
        assert.deepEqual([...mem.f32.subarray(end / 4 - 4)], [1, 1, 1, 1]);
        assert.throws(() => pool.run('fill', [[end - 12, 1, 4]]), /memory access out of bounds/);
      } finally {
        await pool.close();
      }
    },
  );

  it('plans Qwen3-1.7B at q8 (seed 000: 12 rows, 1,024-token contexts) on a 64-bit memory, and refuses it with the fix where the runtime has none', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qwen3-1.7b-'));
    try {
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(SCALE_CONFIGS['qwen3-1.7b']));
      const a = readHfConfig(dir);
      const o = { lora: LORA, contextLength: 1024, sampleRows: 12, threads: 2, dtype: 'q8' as const };
      const with64 = fittingEnginePlan(a, { ...o, memory64: { ok: true, why: 'test' } });
      // fits where this machine allows a 5.05 GiB engine memory (three quarters of 6.7 GiB); refused by it where not
      assert.equal(with64.fits, with64.total <= memory64Limit(), `fits: ${with64.total} of ${with64.limit}`);
      assert.equal(with64.address.mode, 'memory64');
      assert.ok(with64.total > MAX_WASM32_BYTES, 'more than wasm32 holds');
      assert.match(with64.limitOf, /memory64: the plan needs more than wasm32's 4 GiB/);
      const without = fittingEnginePlan(a, { ...o, memory64: { ok: false, why: 'no memory64 here' } });
      assert.equal(without.fits, false);
      assert.equal(without.address.mode, 'wasm32');
      assert.match(without.limitOf, /no 64-bit memory for the engine \(no memory64 here\)/);
      // a small model stays on wasm32 even where memory64 is there
      const small = fittingEnginePlan(readHfConfig(path.join(FIXTURES, 'qwen2')), { ...o, memory64: { ok: true, why: 'test' } });
      assert.equal(small.address.mode, 'wasm32');
      assert.equal(chooseAddressMode(5 * GiB, { ok: true, why: 'test' }).mode, 'memory64');
      assert.equal(chooseAddressMode(3 * GiB, { ok: true, why: 'test' }).mode, 'wasm32');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a wasm32 memory past 4 GiB naming the fix', () => {
    assert.throws(
      () => new EngineMemory(5 * GiB, 'Memory plan: 5 GiB', 4096, 'wasm32'),
      support.ok ? /more than wasm's 4 GiB address space \(wasm32\)\. Fix: plan it in memory64 mode/ : /no 64-bit memory.*Fix: run on Node 24 or later/,
    );
    assert.throws(
      () => new EngineMemory(17 * GiB, 'Memory plan: 17 GiB', 4096, 'memory64'),
      /more than a 64-bit engine memory may take here \(at most .*GiB: V8's 16 GiB or three quarters of this machine's .*\)\. Fix: policyOptions\.weightDtype "q8".*Memory plan: 17 GiB/,
    );
  });

  it('bounds a 64-bit plan by the machine: V8’s 16 GiB or three quarters of its memory, the smaller', () => {
    assert.equal(memory64Limit(8 * GiB), 6 * GiB);
    assert.equal(memory64Limit(16 * GiB), 12 * GiB);
    assert.equal(memory64Limit(64 * GiB), 16 * GiB);
    assert.equal(memory64Limit(10 * GiB + 12345) % 65536, 0, 'whole 64 KiB pages');
    assert.match(memory64LimitText(8 * GiB), /at most 6\.00 GiB: V8's 16 GiB or three quarters of this machine's 8\.00 GiB/);
    // the plan's own limit is that of this machine, and its line says so
    assert.equal(addressLimit('memory64'), memory64Limit(machineMemory()));
    assert.ok(machineMemory() > 0 && machineMemory() <= os.totalmem(), 'the machine, or its container limit where smaller');
    if (support.ok) assert.match(chooseAddressMode(5 * GiB).why, /three quarters of this machine's/);
  });
});
