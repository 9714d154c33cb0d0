// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- a text generator: every helper maps WAT strings to WAT strings, and the WebAssembly validator (wabt, then V8) checks what it writes
// @ts-nocheck
// Generates the WebAssembly text of the engine's 8-bit kernels over Q8_0 blocks (issue 50, item 1):
// the block quantizer (float32 rows → int8 blocks of 32 with one scale each), the dequantizer and the
// product y[m, n] = Σ_b sx[m, b]·sw[n, b]·Σ_{i<32} qx[m, b, i]·qw[n, b, i] (x · wᵀ), with integer dot
// products inside a block and float32 accumulation across blocks. The layout they read and write is
// defined once in src/rl/policies/lm/models/q8Blocks.ts (the TypeScript reference of every kernel here):
//
//   a row of K values (K a multiple of 32) is Kp = K rounded up to 128 int8 bytes: groups of four
//   blocks, and within a group the 16-byte vector v (0..7) holds elements 4v..4v+3 of blocks 0, 1, 2, 3
//   (byte 16v + 4j + t = block j's element 4v + t); its scales are Kp / 32 float32 beside it (one
//   array per matrix, row-major), so one 16-byte load reads the four scales of a group.
//
// Why that order: `i32x4.relaxed_dot_i8x16_i7x16_add_s` sums bytes 4j..4j+3 into lane j, so after a
// group's eight vectors lane j holds block j's whole integer dot; one convert, three multiplies (the
// two sides' four scales, then the dots) and one add move four blocks into the float accumulator (lane j: blocks 4g + j). The
// plain-SIMD build reorders each vector once (a byte shuffle) so that `i32x4.dot_i16x8_s` on its
// widened halves lands in the same lanes. The float work is the same in both builds and is written as
// separate multiplies and adds (never a relaxed, maybe-fused madd), so both builds give the same bits
// on every runtime, and the TypeScript reference reproduces them exactly.
//
// The 7-bit operand of the relaxed dot (defined only for 0..127; x86 lowers it to pmaddubsw / VNNI,
// unsigned × signed) is handled exactly for every semantics the relaxed-SIMD spec allows:
//   'sign'   |qx| is the 7-bit operand and qw with qx's sign applied ((qw ^ s) − s, s = qx >> 7) the
//            signed one. Exact because Q8_0 values lie in [−127, 127]: |qx| ≤ 127 and −qw never
//            overflows; pair sums are at most 2·127·127 = 32,258, so pmaddubsw's 16-bit saturation
//            never applies. Per pair of vectors: one dot, one xor, one subtract.
//   'offset' qx + 127 (0..254) split in two 7-bit halves u1 = min(u, 127), u2 = u − u1, two dots, and
//            127·Σqw per block subtracted at the end (Σqw from a dot with ones, per weight vector).
//            Per pair of vectors: two dots. Kept for the bench; 'sign' is the build (measured faster).
// Register blocking: R activation rows × C weight rows per micro-kernel. Wide C measured fastest: the
// activation's per-vector work (load, |qx| and its sign, or the widening) is shared by C weight rows,
// though 2·R·C accumulators exceed the 16 vector registers (the float ones are touched once a group);
// weight rows in tiles of NB,
// across which every activation row block is run (the tile stays in L2, a row block in L1); tails take
// R × 1, 1 × C1 and 1 × 1. One function serves decoding (1–12 rows) and prefill / training (512 rows).
//
// The module imports the engine's shared memory ("env" "memory", as engine.wat does), so it can be
// instantiated on the engine's memory by every thread of its pool; every pointer is a byte offset.

import { add, addressing, get, hsum, i32, inc, locals, loop, mul, range, set, shl2, zero } from './watText.mjs';

/** @param {{ relaxed: boolean, mem64?: boolean, dot?: 'sign' | 'offset', R?: number, C?: number, C1?: number, NB?: number }} o */
export function q8Funcs(o) {
  // the address type (wasm32 or memory64) of every pointer below: scripts/kernels/watText.mjs
  const { A, padd, pinc, pge, plocals, params, prologue } = addressing(!!o.mem64);
  // measured on Node 24 (bench/q8Kernels.ts --variants): relaxed 2 × 16 (decoding 1 × 16), plain 4 × 8
  const R0 = o.R ?? (o.relaxed ? 2 : 4),
    C0 = o.C ?? (o.relaxed ? 16 : 8),
    C1 = o.C1 ?? C0,
    NB = o.NB ?? 64;
  const dot = o.relaxed ? (o.dot ?? 'sign') : 'plain';
  const load = (a, off = 0) => `(v128.load offset=${off} align=1 ${a})`;
  const splat8 = (v) => `(v128.const i8x16 ${Array(16).fill(v).join(' ')})`;
  // plain SIMD: bytes [j0 t0 t1 t2 t3 | j1 … | j2 … | j3 …] → [j0 t0 t1 j1 t0 t1 j2 t0 t1 j3 t0 t1 | j0 t2 t3 …]:
  // the widened low half's i16 pairs are (block j, elements t0 t1), so dot_i16x8_s's lane j is block j
  const pairUp = (v) => `(i8x16.shuffle 0 1 4 5 8 9 12 13 2 3 6 7 10 11 14 15 ${v} ${v})`;

  // ---- y[m, n] (+)= Σ_b sx[m, b]·sw[n, b]·(qx[m, b] · qw[n, b]) for n in [n0, n1); Kp: bytes a row.
  function nt() {
    const micro = (R, C) => {
      const pairs = range(R).flatMap((r) => range(C).map((c) => [r, c]));
      const f = ([r, c]) => `f${r}_${c}`,
        d = ([r, c]) => `d${r}_${c}`;
      const init = [
        ...pairs.map((p) => set(f(p), zero)),
        ...range(R).map((r) => set(`px${r}`, padd(get('x'), mul(add(get('m'), i32(r)), get('Kp'))))),
        ...range(R).map((r) => set(`ps${r}`, padd(get('sx'), mul(add(get('m'), i32(r)), get('Ks'))))),
        ...range(C).map((c) => set(`pw${c}`, padd(get('w'), mul(add(get('n'), i32(c)), get('Kp'))))),
        ...range(C).map((c) => set(`pt${c}`, padd(get('sw'), mul(add(get('n'), i32(c)), get('Ks'))))),
        set('pe', padd(get('px0'), get('Kp'))),
      ].join(' ');
      const vec = (v) => {
        const xs = range(R).flatMap((r) => {
          if (dot === 'sign')
            return [
              set(`xv${r}`, load(get(`px${r}`), 16 * v)),
              set(`xs${r}`, `(i8x16.shr_s ${get(`xv${r}`)} (i32.const 7))`),
              set(`xv${r}`, `(i8x16.abs ${get(`xv${r}`)})`),
            ];
          if (dot === 'offset')
            return [
              set(`xs${r}`, `(i8x16.add ${load(get(`px${r}`), 16 * v)} ${splat8(127)})`),
              set(`xv${r}`, `(i8x16.min_u ${get(`xs${r}`)} ${splat8(127)})`),
              set(`xs${r}`, `(i8x16.sub ${get(`xs${r}`)} ${get(`xv${r}`)})`),
            ];
          return [
            set(`xv${r}`, pairUp(load(get(`px${r}`), 16 * v))),
            set(`xs${r}`, `(i16x8.extend_high_i8x16_s ${get(`xv${r}`)})`),
            set(`xv${r}`, `(i16x8.extend_low_i8x16_s ${get(`xv${r}`)})`),
          ];
        });
        const ws = range(C).flatMap((c) => {
          const acc = (r) => d([r, c]);
          if (dot === 'sign')
            return [
              set('wv', load(get(`pw${c}`), 16 * v)),
              ...range(R).map((r) =>
                set(
                  acc(r),
                  `(i32x4.relaxed_dot_i8x16_i7x16_add_s (i8x16.sub (v128.xor ${get('wv')} ${get(`xs${r}`)}) ${get(`xs${r}`)}) ${get(`xv${r}`)} ${get(acc(r))})`,
                ),
              ),
            ];
          if (dot === 'offset')
            return [
              set('wv', load(get(`pw${c}`), 16 * v)),
              set(`sum${c}`, `(i32x4.relaxed_dot_i8x16_i7x16_add_s ${get('wv')} ${splat8(1)} ${get(`sum${c}`)})`),
              ...range(R).map((r) =>
                set(
                  acc(r),
                  `(i32x4.relaxed_dot_i8x16_i7x16_add_s ${get('wv')} ${get(`xs${r}`)} (i32x4.relaxed_dot_i8x16_i7x16_add_s ${get('wv')} ${get(`xv${r}`)} ${get(acc(r))}))`,
                ),
              ),
            ];
          return [
            set('wh', pairUp(load(get(`pw${c}`), 16 * v))),
            set('wv', `(i16x8.extend_low_i8x16_s ${get('wh')})`),
            set('wh', `(i16x8.extend_high_i8x16_s ${get('wh')})`),
            ...range(R).map((r) =>
              set(
                acc(r),
                `(i32x4.add ${get(acc(r))} (i32x4.add (i32x4.dot_i16x8_s ${get(`xv${r}`)} ${get('wv')}) (i32x4.dot_i16x8_s ${get(`xs${r}`)} ${get('wh')})))`,
              ),
            ),
          ];
        });
        return [...xs, ...ws].join(' ');
      };
      const blockSum = (p) => (dot === 'offset' ? `(i32x4.sub ${get(d(p))} (i32x4.mul ${get(`sum${p[1]}`)} (v128.const i32x4 127 127 127 127)))` : get(d(p)));
      const group = [
        ...pairs.map((p) => set(d(p), zero)),
        ...(dot === 'offset' ? range(C).map((c) => set(`sum${c}`, zero)) : []),
        ...range(8).map(vec),
        ...pairs.map((p) =>
          set(
            f(p),
            `(f32x4.add ${get(f(p))} (f32x4.mul (f32x4.convert_i32x4_s ${blockSum(p)}) (f32x4.mul ${load(get(`ps${p[0]}`))} ${load(get(`pt${p[1]}`))})))`,
          ),
        ),
        ...range(R).map((r) => pinc(`px${r}`, i32(128))),
        ...range(R).map((r) => pinc(`ps${r}`, i32(16))),
        ...range(C).map((c) => pinc(`pw${c}`, i32(128))),
        ...range(C).map((c) => pinc(`pt${c}`, i32(16))),
      ].join(' ');
      const out = pairs
        .map(([r, c]) => {
          const yp = padd(get('y'), shl2(add(mul(add(get('m'), i32(r)), get('ldy')), add(get('n'), i32(c)))));
          return `(f32.store ${yp} (if (result f32) ${get('acc')} (then (f32.add (f32.load ${yp}) ${hsum(get(f([r, c])))})) (else ${hsum(get(f([r, c])))})))`;
        })
        .join(' ');
      const lbl = `k${R}${C}`;
      return {
        vecs: [...pairs.map(f), ...pairs.map(d), ...range(R).flatMap((r) => [`xv${r}`, `xs${r}`]), ...(dot === 'offset' ? range(C).map((c) => `sum${c}`) : [])],
        ptrs: [...range(R).flatMap((r) => [`px${r}`, `ps${r}`]), ...range(C).flatMap((c) => [`pw${c}`, `pt${c}`])],
        code: `${init} (block $${lbl}_end (loop $${lbl}_top (br_if $${lbl}_end ${pge(get('px0'), get('pe'))}) ${group} (br $${lbl}_top))) ${out}`,
      };
    };
    const mRC = micro(R0, C0),
      mR1 = micro(R0, 1),
      m1C = micro(1, C1),
      m11 = micro(1, 1);
    const all = [mRC, mR1, m1C, m11];
    const vecs = [...new Set(all.flatMap((k) => k.vecs))];
    const ptrs = [...new Set(all.flatMap((k) => k.ptrs))];
    const sig = 'x* sx* w* sw* y* ldy M Kp n0 n1 acc';
    return `
  (func (export "q8_nt") ${params(sig)}
    (local $Ks i32) (local $nb i32) (local $nbe i32) (local $m i32) (local $n i32) (local $pe ${A}) (local $wv v128) (local $wh v128)
    ${plocals(ptrs)} ${locals(vecs, 'v128')} ${prologue(sig)}
    ${set('Ks', `(i32.shr_u ${get('Kp')} (i32.const 3))`)}
    ${loop(
      'nb',
      get('n0'),
      get('n1'),
      i32(NB),
      `
      ${set('nbe', `(select (i32.add ${get('nb')} ${i32(NB)}) ${get('n1')} (i32.lt_s (i32.add ${get('nb')} ${i32(NB)}) ${get('n1')}))`)}
      ${set('m', i32(0))}
      (block $rows_end (loop $rows_top (br_if $rows_end (i32.gt_s (i32.add ${get('m')} ${i32(R0)}) ${get('M')}))
        ${set('n', get('nb'))}
        (block $cC_end (loop $cC_top (br_if $cC_end (i32.gt_s (i32.add ${get('n')} ${i32(C0)}) ${get('nbe')})) ${mRC.code} ${inc('n', i32(C0))} (br $cC_top)))
        (block $cR1_end (loop $cR1_top (br_if $cR1_end (i32.ge_s ${get('n')} ${get('nbe')})) ${mR1.code} ${inc('n', i32(1))} (br $cR1_top)))
        ${inc('m', i32(R0))} (br $rows_top)))
      (block $row1_end (loop $row1_top (br_if $row1_end (i32.ge_s ${get('m')} ${get('M')}))
        ${set('n', get('nb'))}
        (block $c1C_end (loop $c1C_top (br_if $c1C_end (i32.gt_s (i32.add ${get('n')} ${i32(C1)}) ${get('nbe')})) ${m1C.code} ${inc('n', i32(C1))} (br $c1C_top)))
        (block $c11_end (loop $c11_top (br_if $c11_end (i32.ge_s ${get('n')} ${get('nbe')})) ${m11.code} ${inc('n', i32(1))} (br $c11_top)))
        ${inc('m', i32(1))} (br $row1_top)))
    `,
    )})`;
  }

  // ---- Quantize rows: x[M, ldx] float32 (K values a row, K a multiple of 32) → q[M, Kp] int8 and
  // s[M, Kp / 32] float32 holding float16 values, padding blocks (K ≤ k < Kp) zero with scale 0. Per
  // block: amax = max |x|, d = amax / 127, the scale kept float16(d) (round to nearest even, what GGUF
  // stores and ggml's dot product reads), and q in [−127, 127] (never −128: the relaxed dot's exactness
  // rests on it) by one of llama.cpp's two rules, `act` choosing:
  //   act = 0, weights — quantize_row_q8_0_ref (llama-quantize, gguf-py): id = d ≠ 0 ? 1 / d : 0,
  //            q = round half away from zero (x · id);
  //   act = 1, activations — ggml-cpu's x86 quantize_row_q8_0 (AVX/AVX2, what llama.cpp quantizes each
  //            product's input with on this architecture): id = amax ≠ 0 ? 127 / amax : 0, q = round
  //            half to even (x · id) (_mm256_round_ps, _MM_ROUND_NEAREST). ARM's NEON path takes id = 1 / d
  //            with the same rounding: the two ids differ by about an ulp, so their q differ only where
  //            x · id lies within an ulp of a half step.
  // amax compares |x|'s bits as integers (one instruction, where f32x4.max is several): non-negative
  // floats order as their bits do, and a NaN's bits exceed infinity's, so a NaN still wins (as gguf-py's numpy max does; ggml's C MAX drops a NaN unless it is a block's last value).
  // $to_f16 takes d ≥ 0 (or NaN) only: below 2^−14 (float16's subnormals, steps of 2^−24) f32.nearest
  // rounds d · 2^24 to even exactly; above it the 13 dropped mantissa bits round to even with a carry
  // into the exponent, and a result ≥ 2^16 (65,520 and up) is float16's infinity.
  const toF16 = `
  (func $to_f16 (param $d f32) (result f32) (local $b i32)
    (if (f32.ne ${get('d')} ${get('d')}) (then (return ${get('d')})))
    (if (f32.lt ${get('d')} (f32.const 0x1p-14)) (then (return (f32.mul (f32.nearest (f32.mul ${get('d')} (f32.const 0x1p24))) (f32.const 0x1p-24)))))
    ${set('b', `(i32.reinterpret_f32 ${get('d')})`)}
    ${set('b', `(i32.and (i32.add (i32.add ${get('b')} (i32.const 0xfff)) (i32.and (i32.shr_u ${get('b')} (i32.const 13)) (i32.const 1))) (i32.const 0xffffe000))`)}
    (if (result f32) (i32.ge_u ${get('b')} (i32.const 0x47800000)) (then (f32.const inf)) (else (f32.reinterpret_i32 ${get('b')}))))`;
  const qsig = 'x* ldx M K q* s* act';
  const quantize = `
  (func (export "q8_quantize") ${params(qsig)}
    (local $m i32) (local $g i32) (local $j i32) (local $b i32) (local $Kb i32) (local $Kp i32) (local $row ${A}) (local $qo ${A}) (local $so ${A})
    (local $p v128) (local $amax v128) (local $a f32) (local $d f32) (local $id f32)
    ${plocals(range(4).map((j) => `a${j}`))} ${locals(
      range(4).map((j) => `i${j}`),
      'v128',
    )} ${prologue(qsig)}
    ${set('Kb', `(i32.shr_u ${get('K')} (i32.const 5))`)}
    ${set('Kp', `(i32.and (i32.add ${get('K')} (i32.const 127)) (i32.const -128))`)}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `
      ${set('row', padd(get('x'), shl2(mul(get('m'), get('ldx')))))}
      ${set('qo', padd(get('q'), mul(get('m'), get('Kp'))))}
      ${set('so', padd(get('s'), mul(get('m'), `(i32.shr_u ${get('Kp')} (i32.const 3))`)))}
      ${loop(
        'g',
        i32(0),
        `(i32.shr_u ${get('Kp')} (i32.const 7))`,
        i32(1),
        `
        ${range(4)
          .map(
            (j) => `
          ${set('b', add(`(i32.shl ${get('g')} (i32.const 2))`, i32(j)))}
          (if (i32.lt_u ${get('b')} ${get('Kb')})
            (then
              ${set(`a${j}`, padd(get('row'), `(i32.shl ${get('b')} (i32.const 7))`))}
              ${set('amax', `(f32x4.abs ${load(get(`a${j}`))})`)}
              ${range(7)
                .map((v) => set('amax', `(i32x4.max_s ${get('amax')} (f32x4.abs ${load(get(`a${j}`), 16 * (v + 1))}))`))
                .join(' ')}
              ${set('amax', `(i32x4.max_s ${get('amax')} (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 ${get('amax')} ${get('amax')}))`)}
              ${set('amax', `(i32x4.max_s ${get('amax')} (i8x16.shuffle 4 5 6 7 0 1 2 3 12 13 14 15 8 9 10 11 ${get('amax')} ${get('amax')}))`)}
              ${set('a', `(f32x4.extract_lane 0 ${get('amax')})`)}
              ${set('d', `(f32.div ${get('a')} (f32.const 127))`)}
              ${set(
                'id',
                `(if (result f32) ${get('act')}
                  (then (if (result f32) (f32.ne ${get('a')} (f32.const 0)) (then (f32.div (f32.const 127) ${get('a')})) (else (f32.const 0))))
                  (else (if (result f32) (f32.ne ${get('d')} (f32.const 0)) (then (f32.div (f32.const 1) ${get('d')})) (else (f32.const 0)))))`,
              )}
              (f32.store offset=${4 * j} ${get('so')} (call $to_f16 ${get('d')})))
            (else
              ${set(`a${j}`, get('row'))} ${set('id', '(f32.const 0)')} (f32.store offset=${4 * j} ${get('so')} (f32.const 0))))
          ${set(`i${j}`, `(f32x4.splat ${get('id')})`)}`,
          )
          .join('')}
        ${(() => {
          // round half away from zero (weights): roundf(p) = trunc(p + copysign(0.49999997, p)) for every
          // float32 |p| ≤ 128 (checked over all of them; with 0.5 it fails at ±0.49999997), and |x · id| ≤ 127.00002
          const away = (p) =>
            `(i32x4.trunc_sat_f32x4_s (f32x4.add (local.tee $p ${p}) (v128.or (v128.and ${get('p')} (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000)) (v128.const f32x4 0x1.fffffep-2 0x1.fffffep-2 0x1.fffffep-2 0x1.fffffep-2))))`;
          // round half to even (activations): f32x4.nearest, exact; trunc_sat then takes an integer float
          const even = (p) => `(i32x4.trunc_sat_f32x4_s (f32x4.nearest ${p}))`;
          const stores = (round) =>
            range(8)
              .map((v) => {
                const qv = (j) => round(`(f32x4.mul ${load(get(`a${j}`), 16 * v)} ${get(`i${j}`)})`);
                return `(v128.store offset=${16 * v} align=1 ${get('qo')} (i8x16.max_s ${splat8(-127)} (i8x16.narrow_i16x8_s (i16x8.narrow_i32x4_s ${qv(0)} ${qv(1)}) (i16x8.narrow_i32x4_s ${qv(2)} ${qv(3)}))))`;
              })
              .join('\n          ');
          return `(if ${get('act')} (then ${stores(even)}) (else ${stores(away)}))`;
        })()}
        ${pinc('qo', i32(128))} ${pinc('so', i32(16))}
      `,
      )}
    `,
    )})`;

  // ---- Dequantize rows: q[M, Kp], s[M, Kp / 32] → out[M, ldo] float32 (the first K values a row).
  const dsig = 'q* s* M K out* ldo';
  const dequantize = `
  (func (export "q8_dequantize") ${params(dsig)}
    (local $m i32) (local $g i32) (local $Kb i32) (local $Kp i32) (local $qo ${A}) (local $so ${A}) (local $o ${A}) (local $sv v128) (local $v v128) (local $h v128) ${prologue(dsig)}
    ${set('Kb', `(i32.shr_u ${get('K')} (i32.const 5))`)}
    ${set('Kp', `(i32.and (i32.add ${get('K')} (i32.const 127)) (i32.const -128))`)}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `
      ${set('qo', padd(get('q'), mul(get('m'), get('Kp'))))}
      ${set('so', padd(get('s'), mul(get('m'), `(i32.shr_u ${get('Kp')} (i32.const 3))`)))}
      ${loop(
        'g',
        i32(0),
        `(i32.shr_u ${get('Kp')} (i32.const 7))`,
        i32(1),
        `
        ${set('sv', load(get('so')))}
        ${set('o', padd(get('out'), shl2(add(mul(get('m'), get('ldo')), `(i32.shl ${get('g')} (i32.const 7))`))))}
        ${range(8)
          .map((v) => {
            const st = (j, ext) =>
              `(if (i32.lt_u (i32.add (i32.shl ${get('g')} (i32.const 2)) (i32.const ${j})) ${get('Kb')}) (then (v128.store offset=${128 * j + 16 * v} align=4 ${get('o')} (f32x4.mul (f32x4.convert_i32x4_s ${ext}) (f32x4.splat (f32x4.extract_lane ${j} ${get('sv')}))))))`;
            return `${set('v', load(get('qo'), 16 * v))} ${set('h', `(i16x8.extend_low_i8x16_s ${get('v')})`)}
          ${st(0, `(i32x4.extend_low_i16x8_s ${get('h')})`)} ${st(1, `(i32x4.extend_high_i16x8_s ${get('h')})`)}
          ${set('h', `(i16x8.extend_high_i8x16_s ${get('v')})`)}
          ${st(2, `(i32x4.extend_low_i16x8_s ${get('h')})`)} ${st(3, `(i32x4.extend_high_i16x8_s ${get('h')})`)}`;
          })
          .join('\n        ')}
        ${pinc('qo', i32(128))} ${pinc('so', i32(16))}
      `,
      )}
    `,
    )})`;

  return `${toF16}\n${quantize}\n${dequantize}\n${nt()}`;
}

/** A module of its own: the 8-bit kernels over the engine's shared memory (import "env" "memory"). */
export function q8Wat(o) {
  return `(module
  ;; Generated by scripts/kernels/q8Wat.mjs (${o.relaxed ? `relaxed SIMD, ${o.dot ?? 'sign'}` : 'plain SIMD'}${o.mem64 ? ', memory64' : ''}): do not edit; npm run build:q8-kernels.
  ${addressing(!!o.mem64).memory}
${q8Funcs(o)}
)
`;
}
