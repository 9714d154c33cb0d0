// Q8_0 blocks as a type (src/rl/policies/lm/models/q8Blocks.ts): the engine layout's sizes and interleave,
// the quantizer against llama.cpp's rules on hand-computed blocks (weights: 1 / d and round half away
// from zero; activations: 127 / amax and round half to even; −128 never), its error bound, float16
// scales (against Math.f16round), and GGUF's 34-byte blocks against a block built by hand.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Q8_BLOCK,
  decodeGgufQ8_0,
  dequantizeQ8,
  emptyQ8,
  encodeGgufQ8_0,
  f16BitsToF32,
  f32ToF16Bits,
  ggufQ8_0Bytes,
  q8Layout,
  q8Offset,
  q8Value,
  quantizeQ8,
  roundHalfAway,
  roundHalfEven,
} from '../../../../../../src/rl/policies/lm/models/q8Blocks';

let seed = 99;
const rand = (): number => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return seed / 4294967296 - 0.5;
};

describe('Q8_0 blocks', () => {
  it('sizes a matrix in the engine layout (rows padded to 128 bytes, float32 scales) and in GGUF', () => {
    const l = q8Layout(4864, 896);
    assert.deepEqual(l, {
      rows: 4864,
      cols: 896,
      paddedCols: 896,
      blocksPerRow: 28,
      valueBytes: 4864 * 896,
      scaleBytes: 4864 * 28 * 4,
      bytes: 4864 * 896 * 1.125,
    });
    assert.equal(q8Layout(3, 96).paddedCols, 128);
    assert.equal(q8Layout(3, 96).blocksPerRow, 4);
    assert.equal(ggufQ8_0Bytes(4864, 896), 4864 * 28 * 34);
    assert.throws(() => q8Layout(2, 100), /not a multiple of 32/);
  });

  it('interleaves four blocks a group: byte 16v + 4j + t of a group is block j, element 4v + t', () => {
    const seen = new Set<number>();
    for (let k = 0; k < 256; k++) seen.add(q8Offset(k));
    assert.equal(seen.size, 256);
    assert.equal(Math.max(...seen), 255);
    assert.equal(q8Offset(0), 0);
    assert.equal(q8Offset(1), 1);
    assert.equal(q8Offset(4), 16); // element 4 of block 0: vector 1
    assert.equal(q8Offset(32), 4); // element 0 of block 1: lane 1 of vector 0
    assert.equal(q8Offset(32 * 3 + 31), 16 * 7 + 12 + 3);
    assert.equal(q8Offset(128), 128);
  });

  it('rounds half away from zero (C roundf), on float32 inputs', () => {
    assert.deepEqual([2.5, -2.5, 0.5, -0.5, 1.4999999, Math.fround(0.49999997), 3, -0].map(roundHalfAway), [3, -3, 1, -1, 1, 0, 3, -0]);
  });

  it('rounds half to even (SSE _MM_ROUND_NEAREST, f32.nearest), on float32 inputs', () => {
    assert.deepEqual(
      [2.5, -2.5, 3.5, -3.5, 0.5, -0.5, 1.5, 126.5, 1.4999999, Math.fround(0.49999997), 3, -0].map(roundHalfEven),
      [2, -2, 4, -4, 0, -0, 2, 126, 1, 0, 3, -0],
    );
  });

  it("quantizes an activation block as ggml-cpu's x86 quantize_row_q8_0: id = 127 / amax, ties to even, the scale float16(amax / 127)", () => {
    // amax 127: id = 1, x · id = x; ±2.5 → ±2, 3.5 → 4, 126.5 → 126 (a weight block rounds them away: ±3, 4, 127)
    const x = Float32Array.from({ length: 32 }, (_, i) => [127, 2.5, -2.5, 3.5, 126.5, -0.5, 1.5][i] ?? i / 8);
    const act = quantizeQ8(x, 1, 32, 'activation'),
      w = quantizeQ8(x, 1, 32, 'weight');
    const qs = (m: typeof act): number[] => Array.from({ length: 7 }, (_, i) => m.q[q8Offset(i)]!);
    assert.deepEqual(qs(act), [127, 2, -2, 4, 126, 0, 2]);
    assert.deepEqual(qs(w), [127, 3, -3, 4, 127, -1, 2]);
    assert.equal(act.scales[0], 1);
    // amax 0.3: d = float32(0.3 / 127), and float16(d) ≠ d; 127 / amax and 1 / d differ by an ulp
    // (423.33331 against 423.33334), so x = float32(1.5 · d) gives 1.4999999 (→ 1) under the activation
    // rule and exactly 1.5 (→ 2, away from zero) under the weight rule
    const f32 = Math.fround;
    const d = f32(0.3 / 127);
    const want = (Math as unknown as { f16round: (v: number) => number }).f16round(d);
    assert.notEqual(want, d);
    assert.notEqual(f32(127 / f32(0.3)), f32(1 / d));
    const y = Float32Array.from({ length: 32 }, (_, i) => (i === 0 ? 0.3 : i === 1 ? f32(1.5 * d) : 0));
    const ya = quantizeQ8(y, 1, 32, 'activation'),
      yw = quantizeQ8(y, 1, 32, 'weight');
    assert.equal(ya.scales[0], want);
    assert.equal(yw.scales[0], want);
    assert.equal(ya.q[q8Offset(1)], 1);
    assert.equal(yw.q[q8Offset(1)], 2);
  });

  it('quantizes a weight block as llama.cpp does: d = amax / 127, q = roundf(x · (1 / d)), ties away from zero', () => {
    // x_i = i − 16: amax 16, d = 16/127, 1/d = 7.9375 exactly; q = roundf(7.9375 (i − 16)), ±63.5 → ±64
    const x = Float32Array.from({ length: 32 }, (_, i) => i - 16);
    const m = quantizeQ8(x, 1, 32, 'weight');
    assert.equal(m.scales[0], f16BitsToF32(f32ToF16Bits(Math.fround(16 / 127))));
    const q = Array.from({ length: 32 }, (_, i) => m.q[q8Offset(i)]);
    assert.deepEqual(
      q,
      Array.from(x, (v) => roundHalfAway(v * 7.9375)),
    );
    assert.equal(q[0], -127);
    assert.equal(q[8], -64); // −63.5 away from zero
    assert.equal(q[24], 64);
    assert.deepEqual(
      Array.from({ length: 96 }, (_, i) => m.q[q8Offset(32 + i)]),
      new Array(96).fill(0),
    ); // padding blocks
    assert.deepEqual(Array.from(m.scales.subarray(1)), [0, 0, 0]);
    // an all-zero block: scale 0, values 0
    const z = quantizeQ8(new Float32Array(32), 1, 32, 'activation');
    assert.equal(z.scales[0], 0);
    assert.ok(z.q.every((v) => v === 0));
  });

  it('never emits −128, and keeps every value within d / 2 + 127·|scale − d| (d = amax / 127, the scale its float16)', () => {
    const rows = 64,
      cols = 256;
    for (const mag of [1e-9, 1e-6, 1e-3, 1, 1e3, 3e4]) {
      const x = Float32Array.from({ length: rows * cols }, (_, i) => (i % 97 === 0 ? -mag : rand() * 2 * mag));
      for (const kind of ['weight', 'activation'] as const) {
        const m = quantizeQ8(x, rows, cols, kind);
        assert.ok(
          m.q.every((v) => v >= -127 && v <= 127),
          `${kind} at ${mag}`,
        );
        const back = dequantizeQ8(m);
        for (let r = 0; r < rows; r++)
          for (let b = 0; b < cols / Q8_BLOCK; b++) {
            let amax = 0;
            for (let i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(x[r * cols + b * 32 + i]!));
            const d = Math.fround(amax / 127);
            const s = m.scales[r * m.layout.blocksPerRow + b]!;
            const bound = d / 2 + 127 * Math.abs(s - d);
            for (let i = 0; i < 32; i++) {
              const e = Math.abs(back[r * cols + b * 32 + i]! - x[r * cols + b * 32 + i]!);
              assert.ok(e <= bound * (1 + 1e-6) + 1e-45, `${kind} at ${mag}: error ${e} > ${bound}`);
            }
          }
      }
    }
    // the most negative value of a block is −127 exactly when it is the block's amax
    const x = Float32Array.from({ length: 32 }, (_, i) => (i === 5 ? -3.75 : i / 10));
    const m = quantizeQ8(x, 1, 32, 'weight');
    assert.equal(m.q[q8Offset(5)], -127);
  });

  it('converts float16 both ways (round to nearest even, subnormals, overflow)', () => {
    assert.equal(f32ToF16Bits(1), 0x3c00);
    assert.equal(f32ToF16Bits(65504), 0x7bff);
    assert.equal(f32ToF16Bits(65520), 0x7c00);
    assert.equal(f32ToF16Bits(2 ** -24), 1);
    assert.equal(f32ToF16Bits(2 ** -25), 0); // a tie: to even (0)
    assert.equal(f32ToF16Bits(3 * 2 ** -25), 2); // a tie: to even (2)
    assert.equal(f32ToF16Bits(0.1), 0x2e66);
    assert.equal(f32ToF16Bits(-2), 0xc000);
    assert.equal(f32ToF16Bits(1 + 2 ** -11), 0x3c00); // a tie: to even
    assert.equal(f32ToF16Bits(1 + 3 * 2 ** -11), 0x3c02);
    for (let h = 0; h < 0x7c00; h++) {
      assert.equal(f32ToF16Bits(f16BitsToF32(h)), h);
      assert.equal(f32ToF16Bits(-f16BitsToF32(h)), h === 0 ? 0x8000 : h | 0x8000);
    }
    // against Node 24's Math.f16round: every float16 value, the midpoints (ties) between neighbours and a
    // float32 ulp either side of each, overflow past 65,520 and below half the least subnormal
    const f16round = (Math as unknown as { f16round: (v: number) => number }).f16round;
    const f32 = Math.fround;
    const next = (v: number, s: number): number => {
      const b = new Float32Array([v]);
      const u = new Uint32Array(b.buffer);
      u[0] = u[0]! + s;
      return b[0]!;
    };
    for (let h = 0; h < 0x7bff; h++) {
      const mid = f32((f16BitsToF32(h) + f16BitsToF32(h + 1)) / 2);
      for (const v of [mid, next(mid, 1), h === 0 ? 0 : next(mid, -1), 65519.99, 65520, 7e4, 2 ** -26, 1e-30])
        assert.equal(f16BitsToF32(f32ToF16Bits(v)), f16round(v), `${v} (between float16 0x${h.toString(16)} and its successor)`);
    }
  });

  it("writes GGUF's Q8_0 block: a little-endian float16 scale, then 32 int8, and reads it back losslessly", () => {
    // a hand-built block: scale 0.5 (float16 0x3800), values q_i = 8i − 127
    const m = emptyQ8(1, 32);
    m.scales[0] = 0.5;
    for (let i = 0; i < 32; i++) m.q[q8Offset(i)] = i * 8 - 127;
    const bytes = encodeGgufQ8_0(m);
    const want = new Uint8Array(34);
    want[0] = 0x00;
    want[1] = 0x38;
    for (let i = 0; i < 32; i++) want[2 + i] = (i * 8 - 127) & 0xff;
    assert.deepEqual(bytes, want);
    assert.deepEqual(decodeGgufQ8_0(want, 1, 32), m);
    assert.equal(q8Value(m, 0, 3), 0.5 * (24 - 127));
    // a random [5, 96] tensor quantized with float16 scales: GGUF bytes → engine → GGUF bytes unchanged
    const x = Float32Array.from({ length: 5 * 96 }, () => rand() * 3);
    const w = quantizeQ8(x, 5, 96, 'weight');
    const g = encodeGgufQ8_0(w);
    assert.equal(g.length, 5 * 3 * 34);
    const back = decodeGgufQ8_0(g, 5, 96);
    assert.deepEqual(back, w);
    assert.deepEqual(encodeGgufQ8_0(back), g);
    // a −128 from another writer is refused, naming the tensor, row and block (the sign trick would flip it)
    const foreign = Uint8Array.from(g);
    foreign[4 * 34 + 2 + 7] = 0x80;
    assert.throws(() => decodeGgufQ8_0(foreign, 5, 96, 'blk.0.ffn_up.weight'), /blk\.0\.ffn_up\.weight: row 1, block 1 holds −128.*Fix: /);
    // row 1's second block sits at block index 1·3 + 1
    const view = new DataView(g.buffer);
    assert.equal(f16BitsToF32(view.getUint16(4 * 34, true)), w.scales[1 * 4 + 1]);
    assert.equal(view.getInt8(4 * 34 + 2 + 7), w.q[1 * 128 + q8Offset(32 + 7)]);
    // a NaN weight's block keeps its NaN scale in GGUF (float16 0x7e00), as gguf-py's writer does (ggml's C quantizer drops a NaN from the max unless it is the block's last value)
    const nan = quantizeQ8(
      Float32Array.from({ length: 32 }, (_, i) => (i === 9 ? NaN : i)),
      1,
      32,
      'weight',
    );
    assert.deepEqual(Array.from(encodeGgufQ8_0(nan).subarray(0, 2)), [0x00, 0x7e]);
    // a scale that is no float16 value (0.1) is refused by the GGUF writer
    const odd = emptyQ8(1, 32);
    odd.scales[0] = 0.1;
    assert.throws(() => encodeGgufQ8_0(odd), /not a float16 value/);
  });
});
