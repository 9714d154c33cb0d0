// The 8-bit kernels (scripts/kernels/q8Wat.mjs), relaxed-SIMD and plain-SIMD builds, against the
// TypeScript reference in q8Blocks.ts, bit for bit: the quantizer (llama.cpp's rules for weights and
// activations, float16 scales, the conversion against Math.f16round on its edge values), the
// dequantizer and the product, on random data at shapes that cross every blocking boundary (rows not
// a multiple of the register block, weight rows beyond one tile, padded groups) and at the extremes of
// the relaxed dot's operands (every value ±127, alternating signs, −127 everywhere); the relaxed
// 'offset' alternative the bench measures is held to the same. The committed
// module must be what the generator writes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import { EngineMemory } from '../../../../../../../src/rl/policies/lm/models/engine/engineMemory';
import {
  Q8Kernels,
  q8DequantizeArgs,
  q8Module,
  q8NtArgs,
  q8Operand,
  q8QuantizeArgs,
  type Q8Build,
  type Q8Operand,
} from '../../../../../../../src/rl/policies/lm/models/engine/q8Kernels';
import {
  dequantizeQ8,
  emptyQ8,
  q8Layout,
  q8Offset,
  q8ProductReference,
  quantizeQ8,
  type Q8Matrix,
  type Q8Quantizer,
} from '../../../../../../../src/rl/policies/lm/models/q8Blocks';

let seed = 4242;
const rand = (): number => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return seed / 4294967296 - 0.5;
};
const ROOT = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..', '..');
/** The two committed builds, and the relaxed 'offset' alternative the bench measures (generated here). */
const BUILDS = ['relaxed', 'plain', 'offset'] as const;

async function offsetModule(): Promise<{ module: object; build: Q8Build }> {
  const gen = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'kernels', 'q8Wat.mjs')).href)) as { q8Wat: (o: object) => string };
  const wat = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'watCompiler.mjs')).href)) as {
    compileWatText: (n: string, t: string) => Promise<Uint8Array>;
  };
  return {
    module: new WebAssembly.Module(new Uint8Array(await wat.compileWatText('q8-offset.wat', gen.q8Wat({ relaxed: true, dot: 'offset' })))),
    build: 'relaxed',
  };
}

async function rig(build: (typeof BUILDS)[number]): Promise<{ mem: EngineMemory; k: Q8Kernels }> {
  const mem = new EngineMemory(64 * 2 ** 20, 'test plan');
  return { mem, k: new Q8Kernels(mem.memory, build === 'offset' ? await offsetModule() : q8Module(build)) };
}

/** Copies a TypeScript Q8 matrix into wasm memory. */
function place(mem: EngineMemory, m: Q8Matrix): Q8Operand {
  const op = q8Operand(mem.alloc(m.layout.bytes, 'q8'), m.layout.rows, m.layout.cols);
  new Int8Array(mem.memory.buffer, op.q, m.layout.valueBytes).set(m.q);
  mem.f32.set(m.scales, op.s / 4);
  return op;
}
function read(mem: EngineMemory, op: Q8Operand): Q8Matrix {
  return {
    layout: op.layout,
    q: new Int8Array(mem.memory.buffer.slice(op.q, op.q + op.layout.valueBytes)),
    scales: mem.f32.slice(op.s / 4, op.s / 4 + op.layout.scaleBytes / 4),
  };
}
function putF32(mem: EngineMemory, a: Float32Array): number {
  const p = mem.allocF32(a.length, 'f32');
  mem.f32.set(a, p / 4);
  return p;
}
const randomQ8 = (rows: number, cols: number, kind: Q8Quantizer, mag = 1): Q8Matrix =>
  quantizeQ8(
    Float32Array.from({ length: rows * cols }, () => rand() * mag),
    rows,
    cols,
    kind,
  );
/** A matrix with every value from `value(r, k)` and every scale from `scale(r, b)`. */
function filled(rows: number, cols: number, value: (r: number, k: number) => number, scale: (r: number, b: number) => number): Q8Matrix {
  const m = emptyQ8(rows, cols);
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < cols; k++) m.q[r * m.layout.paddedCols + q8Offset(k)] = value(r, k);
    for (let b = 0; b < cols / 32; b++) m.scales[r * m.layout.blocksPerRow + b] = scale(r, b);
  }
  return m;
}

function product(mem: EngineMemory, k: Q8Kernels, x: Q8Matrix, w: Q8Matrix, init?: Float32Array): Float32Array {
  return mem.scoped(() => {
    const M = x.layout.rows,
      N = w.layout.rows;
    const y = init ? putF32(mem, init) : mem.allocF32(M * N, 'y');
    k.nt(place(mem, x), place(mem, w), y, N, init !== undefined);
    return mem.f32.slice(y / 4, y / 4 + M * N);
  });
}

describe('q8 kernels', () => {
  it('the relaxed build is available on this runtime (Node 24), and both builds load', () => {
    assert.equal(q8Module().build, 'relaxed');
    assert.equal(q8Module('plain').build, 'plain');
  });

  it('quantize rows as the reference does, bit for bit (weights and activations, padded groups, ties, zeros, float16-subnormal, zero and infinite scales, NaN and infinite inputs)', async () => {
    for (const build of BUILDS) {
      const { mem, k } = await rig(build);
      for (const [M, K, ld] of [
        [3, 96, 100],
        [5, 896, 896],
        [2, 4864, 4864],
      ] as const) {
        const x = Float32Array.from({ length: M * ld }, (_, i) => {
          const b = Math.floor((i % ld) / 32);
          if (b === 1) return 0; // an all-zero block
          if (b === 2) return rand() * 1e-4; // a float16-subnormal scale
          if (b === 3) return ((i % 32) - 16) * 0.25; // ties (x · 127/4 ≡ .5)
          if (b === 4) return rand() * 1e-8; // a scale that float16 rounds to 0
          if (b === 5) return rand() * 2e7; // a scale past float16's range (infinity, as llama.cpp's)
          if (b === 6) return i % 32 === 3 ? NaN : rand(); // a NaN: its block's scale NaN, its values 0
          if (b === 7) return i % 32 === 5 ? -Infinity : rand(); // an infinity: scale infinite, values 0
          return rand() * (1 + b);
        });
        for (const kind of ['weight', 'activation'] as const) {
          const want = quantizeQ8(x, M, K, kind, ld);
          const got = mem.scoped(() => {
            const op = q8Operand(mem.alloc(want.layout.bytes, 'q'), M, K);
            mem.u8.fill(0x55, op.q, op.q + want.layout.bytes); // whatever was there before
            k.quantize(putF32(mem, x), ld, op, kind);
            return read(mem, op);
          });
          assert.deepEqual(Array.from(got.scales), Array.from(want.scales), `${build} ${kind} scales at [${M}, ${K}]`); // as numbers: a NaN's sign bit is not fixed by wasm
          assert.deepEqual(got.q, want.q, `${build} ${kind} values at [${M}, ${K}]`);
          assert.ok(
            got.q.every((v) => v >= -127),
            'never −128',
          );
        }
      }
    }
  });

  it('never emits −128, even for blocks built to round past 127 (amax itself, −amax, huge and tiny magnitudes)', async () => {
    for (const build of BUILDS) {
      const { mem, k } = await rig(build);
      const rows = 256,
        K = 128;
      const x = Float32Array.from({ length: rows * K }, (_, i) => {
        const r = Math.floor(i / K);
        // 1e-38 and 1e-39 (rows 60 and 61 of each 64): amax so small that 1 / d overflows to ∞, so x · id is
        // ±∞ and only the clamp keeps −128 out
        const mag = r % 64 === 60 ? 1e-38 : r % 64 === 61 ? 1e-39 : 10 ** ((r % 60) - 30);
        return i % 32 === r % 32 ? -mag : (rand() * 2 - (r % 3 === 0 ? 1 : 0)) * mag;
      });
      for (const kind of ['weight', 'activation'] as const) {
        const got = mem.scoped(() => {
          const op = q8Operand(mem.alloc(q8Layout(rows, K).bytes, 'q'), rows, K);
          k.quantize(putF32(mem, x), K, op, kind);
          return read(mem, op);
        });
        assert.ok(
          got.q.every((v) => v >= -127 && v <= 127),
          `${build} ${kind}`,
        );
        assert.equal(Math.min(...got.q), -127, `${build} ${kind}: each block's −amax is −127`);
      }
    }
  });

  it("rounds each block's scale d = amax / 127 to float16 as Math.f16round does (nearest even): ties between float16 values, float16's subnormals and their ties, 2^−14, 65,504 and the overflow to infinity past 65,520", async () => {
    const f16round = (Math as unknown as { f16round?: (x: number) => number }).f16round;
    assert.ok(f16round, 'Node 24 has Math.f16round');
    const f32 = Math.fround;
    const bits = new Uint32Array(1),
      fl = new Float32Array(bits.buffer);
    /** The float32 `steps` ulps from x (x > 0). */
    const ulps = (x: number, steps: number): number => {
      fl[0] = x;
      bits[0] = bits[0]! + steps;
      return fl[0];
    };
    // targets for d: float16 values, the midpoints between neighbours (ties), and a float32 ulp either side
    const targets: number[] = [];
    const near = (t: number): void => void targets.push(f32(t), ulps(f32(t), 1), ulps(f32(t), -1));
    for (const h of [1, 2, 3, 0x3ff, 0x400, 0x401, 0x3c00, 0x3c01, 0x2e66, 0x7bfe, 0x7bff]) {
      const a = h * 2 ** -24 < 2 ** -14 ? h * 2 ** -24 : 2 ** ((h >> 10) - 15) * (1 + (h & 0x3ff) / 1024);
      const b = (h + 1) * 2 ** -24 < 2 ** -14 ? (h + 1) * 2 ** -24 : 2 ** (((h + 1) >> 10) - 15) * (1 + ((h + 1) & 0x3ff) / 1024);
      near(a);
      near((a + b) / 2);
    }
    near(2 ** -25); // half of the least subnormal: to 0 (even)
    near(65520); // the tie past 65,504: to infinity
    targets.push(70000, 2 ** -14 - 2 ** -40);
    const K = 32 * 4 * Math.ceil(targets.length / 4);
    let exact = 0;
    // each target's block: amax the float32 whose amax / 127 is closest to it (searched ±8 ulps), the rest below it
    const x = new Float32Array(K);
    const want: number[] = [];
    targets.forEach((t, b) => {
      let best = f32(t * 127);
      for (let s = -8; s <= 8; s++) {
        const a = ulps(f32(t * 127), s);
        if (Math.abs(f32(a / 127) - t) < Math.abs(f32(best / 127) - t)) best = a;
      }
      if (f32(best / 127) === t) exact++;
      for (let i = 0; i < 32; i++) x[b * 32 + i] = i === 7 ? -best : f32(best * (i / 40));
      want.push(f16round(f32(best / 127)));
    });
    assert.ok(exact >= targets.length * 0.6, `${exact} of ${targets.length} targets hit exactly`);
    for (const build of BUILDS) {
      const { mem, k } = await rig(build);
      for (const kind of ['weight', 'activation'] as const) {
        const got = mem.scoped(() => {
          const op = q8Operand(mem.alloc(q8Layout(1, K).bytes, 'q'), 1, K);
          k.quantize(putF32(mem, x), K, op, kind);
          return read(mem, op);
        });
        targets.forEach((t, b) => assert.equal(got.scales[b], want[b], `${build} ${kind}: d ≈ ${t}`));
        assert.deepEqual(Array.from(quantizeQ8(x, 1, K, kind).scales.subarray(0, targets.length)), want, `the TypeScript reference, ${kind}`);
      }
    }
  });

  it("the relaxed build's sign trick is exact on every semantics relaxed_dot allows: for every (qx, qw) in [−127, 127]², |qx| is a 7-bit operand, qw with qx's sign stays in [−127, 127], their product is qx·qw, and no pair sum reaches i16 saturation", () => {
    // the kernel's operands, as q8Wat.mjs writes them: s = qx < 0 ? −1 : 0 (every bit), a = (qw ⊕ s) − s
    // in int8 (wrapping), b = |qx|; relaxed_dot may read b as signed or unsigned and may saturate the i16
    // sum of a pair: both are moot when b < 128 and |a·b + a'·b'| ≤ 32,767
    const int8 = (v: number): number => ((v + 128) & 0xff) - 128;
    let maxProduct = 0;
    for (let qx = -127; qx <= 127; qx++)
      for (let qw = -127; qw <= 127; qw++) {
        const s = qx < 0 ? -1 : 0;
        const a = int8((qw ^ s) - s);
        const b = Math.abs(qx);
        assert.ok(b >= 0 && b <= 127 && a >= -127 && a <= 127, `(${qx}, ${qw}) → (${a}, ${b})`);
        assert.ok(a * b === qx * qw, `(${qx}, ${qw}): ${a} · ${b}`);
        maxProduct = Math.max(maxProduct, Math.abs(a * b));
      }
    assert.ok(2 * maxProduct <= 32767, `a pair sums to at most ${2 * maxProduct}`);
    // and the one value the trick cannot take: qw = −128 with qx < 0 wraps back to −128 (why decodeGgufQ8_0 refuses it)
    assert.equal(int8((-128 ^ -1) + 1), -128);
  });

  it('dequantizes as the reference does', async () => {
    for (const build of BUILDS) {
      const { mem, k } = await rig(build);
      const w = randomQ8(7, 160, 'weight', 5);
      const got = mem.scoped(() => {
        const out = mem.allocF32(7 * 170, 'out');
        k.dequantize(place(mem, w), out, 170);
        const all = mem.f32.slice(out / 4, out / 4 + 7 * 170);
        return Float32Array.from({ length: 7 * 160 }, (_, i) => all[Math.floor(i / 160) * 170 + (i % 160)]!);
      });
      assert.deepEqual(got, dequantizeQ8(w), build);
    }
  });

  it('x·wᵀ equals the integer reference exactly, for decoding and prefill row counts, accumulating, over column ranges', async () => {
    for (const build of BUILDS) {
      const { mem, k } = await rig(build);
      for (const [M, N, K] of [
        [1, 150, 896],
        [3, 67, 96],
        [5, 130, 1056],
        [12, 70, 512],
        [13, 9, 224],
        [33, 131, 256],
      ] as const) {
        const x = randomQ8(M, K, 'activation', 4);
        const w = randomQ8(N, K, 'weight', 0.1);
        assert.deepEqual(product(mem, k, x, w), q8ProductReference(x, w), `${build} [${M}, ${K}] × [${N}, ${K}]ᵀ`);
        const init = Float32Array.from({ length: M * N }, () => rand());
        assert.deepEqual(product(mem, k, x, w, init), q8ProductReference(x, w, Float32Array.from(init), true), `${build} accumulating`);
        // columns [n0, n1) only (a thread's part): the rest of y untouched
        const part = mem.scoped(() => {
          const y = putF32(mem, new Float32Array(M * N).fill(-1));
          k.nt(place(mem, x), place(mem, w), y, N, false, 5, N - 3);
          return mem.f32.slice(y / 4, y / 4 + M * N);
        });
        const whole = q8ProductReference(x, w);
        for (let i = 0; i < M * N; i++) assert.equal(part[i], i % N >= 5 && i % N < N - 3 ? whole[i] : -1);
      }
    }
  });

  it('is exact at the extremes of the relaxed dot: every value ±127, alternating signs, −127 everywhere', async () => {
    const K = 896,
      M = 5,
      N = 37; // the register-blocked micro-kernels and every tail
    const cases: [string, (r: number, k: number) => number, (r: number, k: number) => number, number][] = [
      ['x = w = 127', () => 127, () => 127, K * 127 * 127],
      ['x = −127, w = 127', () => -127, () => 127, -K * 127 * 127],
      ['x = w = −127', () => -127, () => -127, K * 127 * 127],
      ['x = 127, w = −127', () => 127, () => -127, -K * 127 * 127],
      ['alternating signs, in phase', (_r, k) => (k % 2 ? -127 : 127), (_r, k) => (k % 2 ? -127 : 127), K * 127 * 127],
      ['alternating signs, out of phase', (_r, k) => (k % 2 ? -127 : 127), (_r, k) => (k % 2 ? 127 : -127), -K * 127 * 127],
      ['signs by fours (a relaxed lane each)', (_r, k) => ((k >> 2) % 2 ? -127 : 127), () => -127, 0],
    ];
    for (const build of BUILDS) {
      const { mem, k } = await rig(build);
      for (const [name, xv, wv, dot] of cases) {
        const x = filled(M, K, xv, () => 1);
        const w = filled(N, K, wv, () => 1);
        const got = product(mem, k, x, w);
        assert.deepEqual(got, q8ProductReference(x, w), `${build}: ${name}`);
        assert.ok(
          got.every((v) => v === dot),
          `${build}: ${name}: ${got[0]} ≠ ${dot}`,
        );
      }
      // scales that differ per block and row: still the reference's bits
      const x = filled(
        M,
        K,
        (r, kk) => ((r + kk) % 3 ? 127 : -127),
        (r, b) => 2 ** -(b % 7) * (r + 1),
      );
      const w = filled(
        N,
        K,
        (r, kk) => ((r * kk) % 5 ? -127 : 127),
        (r, b) => 0.5 + ((b * 3 + r) % 11) / 16,
      );
      assert.deepEqual(product(mem, k, x, w), q8ProductReference(x, w), `${build}: ±127 with per-block scales`);
    }
  });

  it("split in parts as the thread pool will split it (rows of the quantizers, columns of the product), the result's bits are the same", () => {
    const mem = new EngineMemory(16 * 2 ** 20, 'test plan');
    const module = q8Module().module as WebAssembly.Module;
    const instance = new WebAssembly.Instance(module, { env: { memory: mem.memory as unknown as WebAssembly.Memory } });
    const ex = instance.exports as Record<string, (...a: number[]) => void>;
    const M = 7,
      N = 45,
      K = 160;
    const x = Float32Array.from({ length: M * K }, () => rand() * 3);
    const wv = Float32Array.from({ length: N * K }, () => rand() * 0.2);
    const xq = q8Operand(mem.alloc(q8Layout(M, K).bytes, 'x'), M, K);
    const wq = q8Operand(mem.alloc(q8Layout(N, K).bytes, 'w'), N, K);
    const xp = putF32(mem, x),
      wp = putF32(mem, wv);
    for (const [a, b] of [
      [0, 3],
      [3, 7],
    ])
      ex.q8_quantize!(...q8QuantizeArgs(xp, K, xq, 'activation', a!, b!));
    for (const [a, b] of [
      [0, 20],
      [20, 45],
    ])
      ex.q8_quantize!(...q8QuantizeArgs(wp, K, wq, 'weight', a!, b!));
    const xs = quantizeQ8(x, M, K, 'activation'),
      ws = quantizeQ8(wv, N, K, 'weight');
    assert.deepEqual(read(mem, xq), xs);
    assert.deepEqual(read(mem, wq), ws);
    const y = mem.allocF32(M * N, 'y');
    for (const [a, b] of [
      [0, 16],
      [16, 32],
      [32, 45],
    ])
      ex.q8_nt!(...q8NtArgs(xq, wq, y, N, false, a!, b!));
    assert.deepEqual(mem.f32.slice(y / 4, y / 4 + M * N), q8ProductReference(xs, ws));
    const out = mem.allocF32(N * K, 'out');
    for (const [a, b] of [
      [0, 11],
      [11, 45],
    ])
      ex.q8_dequantize!(...q8DequantizeArgs(wq, out, K, a!, b!));
    assert.deepEqual(mem.f32.slice(out / 4, out / 4 + N * K), dequantizeQ8(ws));
  });

  it('the committed module (q8Wasm.generated.ts) is what the generator writes', async () => {
    const b = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'buildQ8Kernels.mjs')).href)) as {
      compileQ8: () => Promise<{ relaxed: Uint8Array; plain: Uint8Array }>;
      q8ModuleText: (x: { relaxed: Uint8Array; plain: Uint8Array }) => string;
    };
    const committed = fs.readFileSync(path.join(ROOT, 'src', 'rl', 'policies', 'lm', 'models', 'engine', 'q8Wasm.generated.ts'), 'utf8');
    assert.equal(committed, b.q8ModuleText(await b.compileQ8()), 'run npm run build:q8-kernels');
  });
});
