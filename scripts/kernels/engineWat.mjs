// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- a text generator: every helper maps WAT strings to WAT strings, and the WebAssembly validator (wabt, then V8) checks what it writes
// @ts-nocheck
// Generates the WebAssembly text of the Hugging Face engine's kernels (src/rl/policies/lm/models/engine/
// engine.wat): matrix products over float32 or bfloat16 weights, norms, rotary embeddings, attention
// (training, prefill and decoding over a KV cache), SwiGLU, embedding lookups and the vocabulary-
// chunked log-softmax of the output head, each with what its backward pass needs. The unrolled
// micro-kernels are written by the functions below, so each shape is stated once.
//
// Conventions: every pointer is a byte offset into the one shared memory; strides (ld*) count
// elements; matrices are row-major. bfloat16 weights are stored "8-interleaved": within each group
// of 8 consecutive elements of a row the memory order is [0,4,1,5,2,6,3,7], so one 16-byte load read
// as four 32-bit lanes holds (element j+4 << 16 | element j): a shift left by 16 gives elements 0–3
// as float32, a mask of the high halves gives elements 4–7, two instructions for eight weights.
// `relaxed`: multiply-adds are f32x4.relaxed_madd (fused where the CPU has FMA), else mul + add.
// The 8-bit kernels over Q8_0 blocks (q8_quantize, q8_dequantize, q8_nt: scripts/kernels/q8Wat.mjs) are
// appended, the same build's (relaxed dot or plain SIMD), so the engine's threads call them on its memory;
// so is the sampler's draw (draw_norm, draw_walk: scripts/kernels/drawWat.mjs), the same float64 code in both builds.
import { drawFuncs } from './drawWat.mjs';
import { q8Funcs } from './q8Wat.mjs';
import { add, addressing, get, hsum, i32, locals, loop, mul, range, set, shl2, zero } from './watText.mjs';

/** @param {{ relaxed: boolean, mem64?: boolean, ntR?: number, ntC?: number, nnR?: number }} o */
export function engineWat(o) {
  // the address type (wasm32 or memory64) of every pointer below: scripts/kernels/watText.mjs
  const { A, padd, pinc, pge, pcopy, plocals, params, prologue, iparams, memory } = addressing(!!o.mem64);
  const ntR = o.ntR ?? 4,
    ntC = o.ntC ?? 2,
    nnR = o.nnR ?? 4;
  const fma = (a, b, c) => (o.relaxed ? `(f32x4.relaxed_madd ${a} ${b} ${c})` : `(f32x4.add (f32x4.mul ${a} ${b}) ${c})`);
  const shl1 = (a) => `(i32.shl ${a} (i32.const 1))`;
  const load = (a, off = 0) => `(v128.load offset=${off} align=4 ${a})`;
  const splatAt = (a, off = 0) => `(v128.load32_splat offset=${off} align=4 ${a})`;
  const store = (a, v) => `(v128.store align=4 ${a} ${v})`;
  const splat = (a) => `(v128.load32_splat align=4 ${a})`;
  const lo = (v) => `(i32x4.shl ${v} (i32.const 16))`;
  const hi = (v) => `(v128.and ${v} (v128.const i32x4 0xffff0000 0xffff0000 0xffff0000 0xffff0000))`;

  // ---- y[m, n] (+)= Σ_k x[m, k] · w[n, k] (x · wᵀ), n in [n0, n1). K: multiple of 8 (bf16) or 4 (f32).
  const KC = 512; // k per pass: a 4-row block of x (8 KiB) stays in L1
  const NB = 64; // columns per tile: the tile of w (64 × 512 × 2 B) stays in L2 across row blocks
  function nt(wt) {
    const ws = wt === 'bf16' ? 2 : 4;
    // The micro-kernel: R rows of x × C rows of w, R·C accumulators of four partial sums each, one
    // pointer per row (advanced by the loop; loads take constant offsets), horizontal sums at the end.
    const micro = (R, C) => {
      const accs = range(R).flatMap((r) => range(C).map((c) => `a${r}_${c}`));
      const xs = range(R).map((r) => `x${r}`);
      const px = range(R).map((r) => `px${r}`),
        pw = range(C).map((c) => `pw${c}`);
      const init = [
        ...accs.map((a) => set(a, zero)),
        ...range(R).map((r) => set(`px${r}`, padd(get('xb'), shl2(mul(add(get('m'), i32(r)), get('ldx')))))),
        ...range(C).map((c) => set(`pw${c}`, padd(get('wb'), mul(mul(add(get('n'), i32(c)), get('ldw')), i32(ws))))),
        set('pe', padd(get('px0'), shl2(get('kl')))),
      ].join(' ');
      let body;
      if (wt === 'f32') {
        body = [
          ...range(R).map((r) => set(`x${r}`, load(get(`px${r}`)))),
          ...range(C).flatMap((c) => [
            set('wv', load(get(`pw${c}`))),
            ...range(R).map((r) => set(`a${r}_${c}`, fma(get(`x${r}`), get('wv'), get(`a${r}_${c}`)))),
          ]),
          ...range(R).map((r) => pinc(`px${r}`, i32(16))),
          ...range(C).map((c) => pinc(`pw${c}`, i32(16))),
        ].join(' ');
      } else {
        const half = (h) => [
          ...range(R).map((r) => set(`x${r}`, load(get(`px${r}`), 16 * h))),
          ...range(C).flatMap((c) => [
            set('wv', h === 0 ? lo(load(get(`pw${c}`))) : hi(load(get(`pw${c}`)))),
            ...range(R).map((r) => set(`a${r}_${c}`, fma(get(`x${r}`), get('wv'), get(`a${r}_${c}`)))),
          ]),
        ];
        body = [...half(0), ...half(1), ...range(R).map((r) => pinc(`px${r}`, i32(32))), ...range(C).map((c) => pinc(`pw${c}`, i32(16)))].join(' ');
      }
      const out = range(R)
        .flatMap((r) =>
          range(C).map((c) => {
            const yp = padd(get('y'), shl2(add(mul(add(get('m'), i32(r)), get('ldy')), add(get('n'), i32(c)))));
            return `(f32.store ${yp} (if (result f32) ${get('accum')} (then (f32.add (f32.load ${yp}) ${hsum(get(`a${r}_${c}`))})) (else ${hsum(get(`a${r}_${c}`))})))`;
          }),
        )
        .join(' ');
      const lbl = `k${R}${C}`;
      return {
        decl: [...accs, ...xs],
        ptrs: [...px, ...pw],
        code: `${init} (block $${lbl}_end (loop $${lbl}_top (br_if $${lbl}_end ${pge(get('px0'), get('pe'))}) ${body} (br $${lbl}_top))) ${out}`,
      };
    };
    const m42 = micro(ntR, ntC),
      m41 = micro(ntR, 1),
      m14 = micro(1, 4),
      m11 = micro(1, 1);
    const decl = [...new Set([...m42.decl, ...m41.decl, ...m14.decl, ...m11.decl])];
    const ptrs = [...new Set([...m42.ptrs, ...m41.ptrs, ...m14.ptrs, ...m11.ptrs])];
    const sig = 'x* ldx w* ldw y* ldy M K n0 n1 acc';
    return `
  (func (export "nt_${wt}") ${params(sig)}
    (local $k0 i32) (local $kl i32) (local $nb i32) (local $nbe i32) (local $m i32) (local $n i32) (local $k i32) (local $accum i32)
    (local $xb ${A}) (local $wb ${A}) (local $wv v128) (local $pe ${A}) ${plocals(ptrs)} ${locals(decl, 'v128')} ${prologue(sig)}
    ${loop(
      'k0',
      i32(0),
      get('K'),
      i32(KC),
      `
      ${set('kl', `(select (i32.sub ${get('K')} ${get('k0')}) ${i32(KC)} (i32.lt_s (i32.sub ${get('K')} ${get('k0')}) ${i32(KC)}))`)}
      ${set('accum', `(i32.or ${get('acc')} (i32.gt_s ${get('k0')} ${i32(0)}))`)}
      ${set('xb', padd(get('x'), shl2(get('k0'))))}
      ${set('wb', padd(get('w'), mul(get('k0'), i32(ws))))}
      ${loop(
        'nb',
        get('n0'),
        get('n1'),
        i32(NB),
        `
        ${set('nbe', `(select (i32.add ${get('nb')} ${i32(NB)}) ${get('n1')} (i32.lt_s (i32.add ${get('nb')} ${i32(NB)}) ${get('n1')}))`)}
        ${set('m', i32(0))}
        (block $rows4_end (loop $rows4_top (br_if $rows4_end (i32.gt_s (i32.add ${get('m')} ${i32(ntR)}) ${get('M')}))
          ${set('n', get('nb'))}
          (block $c2_end (loop $c2_top (br_if $c2_end (i32.gt_s (i32.add ${get('n')} ${i32(ntC)}) ${get('nbe')})) ${m42.code} ${set('n', add(get('n'), i32(ntC)))} (br $c2_top)))
          (block $c1x_end (loop $c1x_top (br_if $c1x_end (i32.ge_s ${get('n')} ${get('nbe')})) ${m41.code} ${set('n', add(get('n'), i32(1)))} (br $c1x_top)))
          ${set('m', add(get('m'), i32(ntR)))} (br $rows4_top)))
        (block $rows1_end (loop $rows1_top (br_if $rows1_end (i32.ge_s ${get('m')} ${get('M')}))
          ${set('n', get('nb'))}
          (block $c4_end (loop $c4_top (br_if $c4_end (i32.gt_s (i32.add ${get('n')} ${i32(4)}) ${get('nbe')})) ${m14.code} ${set('n', add(get('n'), i32(4)))} (br $c4_top)))
          (block $c1_end (loop $c1_top (br_if $c1_end (i32.ge_s ${get('n')} ${get('nbe')})) ${m11.code} ${set('n', add(get('n'), i32(1)))} (br $c1_top)))
          ${set('m', add(get('m'), i32(1)))} (br $rows1_top)))
      `,
      )}
    `,
    )})`;
  }

  // ---- dx[m, k] (+)= Σ_n dy[m, n] · w[n, k] (dy · w), k in [k0, k1), multiples of 8 (bf16) or 4 (f32).
  const NC = 256; // n per pass: a 4-row block of dy (4 KiB) stays in L1
  const KB = 32; // k per tile: the column tile of w (NC × 32) is reused across row blocks
  function nn(wt) {
    const ws = wt === 'bf16' ? 2 : 4;
    const micro = (R, W) => {
      // W = 8 (two float32 vectors of k) or 4 (one; float32 weights only); per n: one row segment of w,
      // one splat of dy per row; pointers advance by one column of dy and one row of w
      const V = W / 4;
      const accs = range(R).flatMap((r) => range(V).map((c) => `a${r}_${c}`));
      const init = [
        ...accs.map((a) => set(a, zero)),
        ...range(R).map((r) => set(`pd${r}`, padd(get('dyb'), shl2(mul(add(get('m'), i32(r)), get('lddy')))))),
        set('pw', padd(get('wb'), mul(get('k'), i32(ws)))),
        set('pe', padd(get('pd0'), shl2(get('nl')))),
      ].join(' ');
      const loads =
        wt === 'bf16'
          ? [set('w0', load(get('pw'))), set('w1', hi(get('w0'))), set('w0', lo(get('w0')))]
          : range(V).map((c) => set(`w${c}`, load(get('pw'), 16 * c)));
      const body = [
        ...loads,
        ...range(R).flatMap((r) => [
          set('d', splatAt(get(`pd${r}`))),
          ...range(V).map((c) => set(`a${r}_${c}`, fma(get('d'), get(`w${c}`), get(`a${r}_${c}`)))),
        ]),
        ...range(R).map((r) => pinc(`pd${r}`, i32(4))),
        pinc('pw', get('wstep')),
      ].join(' ');
      const out = range(R)
        .flatMap((r) =>
          range(V).map((c) => {
            const p = padd(get('dx'), shl2(add(mul(add(get('m'), i32(r)), get('lddx')), add(get('k'), i32(4 * c)))));
            return store(p, `(if (result v128) ${get('accum')} (then (f32x4.add ${load(p)} ${get(`a${r}_${c}`)})) (else ${get(`a${r}_${c}`)}))`);
          }),
        )
        .join(' ');
      const lbl = `n${R}${W}`;
      return {
        decl: accs,
        rows: R,
        code: `${init} (block $${lbl}_end (loop $${lbl}_top (br_if $${lbl}_end ${pge(get('pd0'), get('pe'))}) ${body} (br $${lbl}_top))) ${out}`,
      };
    };
    const m48 = micro(nnR, 8),
      m18 = micro(1, 8);
    const m44 = wt === 'f32' ? micro(nnR, 4) : undefined,
      m14 = wt === 'f32' ? micro(1, 4) : undefined;
    const decl = [...new Set([...m48.decl, ...m18.decl, ...(m44?.decl ?? []), ...(m14?.decl ?? [])])];
    const pds = range(nnR).map((r) => `pd${r}`);
    const tail4 = (m) => (m ? `(if (i32.le_s (i32.add ${get('k')} ${i32(4)}) ${get('kbe')}) (then ${m.code}))` : '');
    const sig = 'dy* lddy w* ldw dx* lddx M N k0 k1 acc';
    return `
  (func (export "nn_${wt}") ${params(sig)}
    (local $n0 i32) (local $nl i32) (local $kb i32) (local $kbe i32) (local $m i32) (local $n i32) (local $k i32) (local $accum i32)
    (local $dyb ${A}) (local $wb ${A}) (local $w0 v128) (local $w1 v128) (local $d v128) (local $pw ${A}) (local $pe ${A}) (local $wstep i32) ${plocals(pds)} ${locals(decl, 'v128')} ${prologue(sig)}
    ${set('wstep', mul(get('ldw'), i32(ws)))}
    ${loop(
      'n0',
      i32(0),
      get('N'),
      i32(NC),
      `
      ${set('nl', `(select (i32.sub ${get('N')} ${get('n0')}) ${i32(NC)} (i32.lt_s (i32.sub ${get('N')} ${get('n0')}) ${i32(NC)}))`)}
      ${set('accum', `(i32.or ${get('acc')} (i32.gt_s ${get('n0')} ${i32(0)}))`)}
      ${set('dyb', padd(get('dy'), shl2(get('n0'))))}
      ${set('wb', padd(get('w'), mul(mul(get('n0'), get('ldw')), i32(ws))))}
      ${loop(
        'kb',
        get('k0'),
        get('k1'),
        i32(KB),
        `
        ${set('kbe', `(select (i32.add ${get('kb')} ${i32(KB)}) ${get('k1')} (i32.lt_s (i32.add ${get('kb')} ${i32(KB)}) ${get('k1')}))`)}
        ${set('m', i32(0))}
        (block $r4_end (loop $r4_top (br_if $r4_end (i32.gt_s (i32.add ${get('m')} ${i32(nnR)}) ${get('M')}))
          ${set('k', get('kb'))}
          (block $k8_end (loop $k8_top (br_if $k8_end (i32.gt_s (i32.add ${get('k')} ${i32(8)}) ${get('kbe')})) ${m48.code} ${set('k', add(get('k'), i32(8)))} (br $k8_top)))
          ${tail4(m44)}
          ${set('m', add(get('m'), i32(nnR)))} (br $r4_top)))
        (block $r1_end (loop $r1_top (br_if $r1_end (i32.ge_s ${get('m')} ${get('M')}))
          ${set('k', get('kb'))}
          (block $q8_end (loop $q8_top (br_if $q8_end (i32.gt_s (i32.add ${get('k')} ${i32(8)}) ${get('kbe')})) ${m18.code} ${set('k', add(get('k'), i32(8)))} (br $q8_top)))
          ${tail4(m14)}
          ${set('m', add(get('m'), i32(1)))} (br $r1_top)))
      `,
      )}
    `,
    )})`;
  }

  // ---- c[i, j] (+)= Σ_m a[m, i] · b[m, j] (aᵀ · b), i in [i0, i1); J multiple of 4. The LoRA gradients.
  function tn() {
    const micro = (I, W) => {
      const V = W / 4;
      const accs = range(I).flatMap((r) => range(V).map((c) => `a${r}_${c}`));
      const init = [
        ...accs.map((a) => set(a, zero)),
        set('pa', padd(get('a'), shl2(get('i')))),
        set('pb', padd(get('b'), shl2(get('j')))),
        set('pe', padd(get('pa'), shl2(mul(get('M'), get('lda'))))),
      ].join(' ');
      const body = [
        ...range(V).map((c) => set(`b${c}`, load(get('pb'), 16 * c))),
        ...range(I).flatMap((r) => [
          set('s', splatAt(get('pa'), 4 * r)),
          ...range(V).map((c) => set(`a${r}_${c}`, fma(get('s'), get(`b${c}`), get(`a${r}_${c}`)))),
        ]),
        pinc('pa', shl2(get('lda'))),
        pinc('pb', shl2(get('ldb'))),
      ].join(' ');
      const out = range(I)
        .flatMap((r) =>
          range(V).map((c) => {
            const p = padd(get('c'), shl2(add(mul(add(get('i'), i32(r)), get('ldc')), add(get('j'), i32(4 * c)))));
            return store(p, `(if (result v128) ${get('acc')} (then (f32x4.add ${load(p)} ${get(`a${r}_${c}`)})) (else ${get(`a${r}_${c}`)}))`);
          }),
        )
        .join(' ');
      const lbl = `m${I}${W}`;
      return {
        decl: accs,
        code: `${init} (block $${lbl}_end (loop $${lbl}_top (br_if $${lbl}_end ${pge(get('pa'), get('pe'))}) ${body} (br $${lbl}_top))) ${out}`,
      };
    };
    const variants = [micro(4, 8), micro(4, 4), micro(1, 8), micro(1, 4)];
    const decl = [...new Set(variants.flatMap((v) => v.decl))];
    const cols = (m8, m4) => `${set('j', i32(0))}
      (block $j8_end_${m8 === variants[0] ? 'a' : 'b'} (loop $j8_top_${m8 === variants[0] ? 'a' : 'b'} (br_if $j8_end_${m8 === variants[0] ? 'a' : 'b'} (i32.gt_s (i32.add ${get('j')} ${i32(8)}) ${get('J')})) ${m8.code} ${set('j', add(get('j'), i32(8)))} (br $j8_top_${m8 === variants[0] ? 'a' : 'b'})))
      (if (i32.lt_s ${get('j')} ${get('J')}) (then ${m4.code}))`;
    const sig = 'a* lda b* ldb c* ldc M i0 i1 J acc';
    return `
  (func (export "tn_f32") ${params(sig)}
    (local $i i32) (local $j i32) (local $m i32) (local $s v128) (local $b0 v128) (local $b1 v128) (local $pa ${A}) (local $pb ${A}) (local $pe ${A}) ${locals(decl, 'v128')} ${prologue(sig)}
    ${set('i', get('i0'))}
    (block $i4_end (loop $i4_top (br_if $i4_end (i32.gt_s (i32.add ${get('i')} ${i32(4)}) ${get('i1')}))
      ${cols(variants[0], variants[1])}
      ${set('i', add(get('i'), i32(4)))} (br $i4_top)))
    (block $i1_end (loop $i1_top (br_if $i1_end (i32.ge_s ${get('i')} ${get('i1')}))
      ${cols(variants[2], variants[3])}
      ${set('i', add(get('i'), i32(1)))} (br $i1_top))))`;
  }

  // e^x for four lanes: x = n·ln2 + r (Cody–Waite), a degree-6 polynomial for e^r, 2^n in the exponent
  // bits; x is clamped to [−87, 88] (below: ~1e-38, never a denormal or a NaN).
  const exp4 = `
  (func $exp4 (param $x v128) (result v128) (local $n v128) (local $r v128) (local $p v128)
    (local.set $x (f32x4.max (f32x4.min (local.get $x) (v128.const f32x4 88 88 88 88)) (v128.const f32x4 -87 -87 -87 -87)))
    (local.set $n (f32x4.nearest (f32x4.mul (local.get $x) (v128.const f32x4 1.44269504 1.44269504 1.44269504 1.44269504))))
    (local.set $r (f32x4.sub (f32x4.sub (local.get $x) (f32x4.mul (local.get $n) (v128.const f32x4 0.693359375 0.693359375 0.693359375 0.693359375)))
      (f32x4.mul (local.get $n) (v128.const f32x4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4 -2.12194440e-4))))
    (local.set $p (f32x4.add (v128.const f32x4 0.008333334 0.008333334 0.008333334 0.008333334) (f32x4.mul (local.get $r) (v128.const f32x4 0.0013888889 0.0013888889 0.0013888889 0.0013888889))))
    (local.set $p (f32x4.add (v128.const f32x4 0.041666668 0.041666668 0.041666668 0.041666668) (f32x4.mul (local.get $r) (local.get $p))))
    (local.set $p (f32x4.add (v128.const f32x4 0.16666667 0.16666667 0.16666667 0.16666667) (f32x4.mul (local.get $r) (local.get $p))))
    (local.set $p (f32x4.add (v128.const f32x4 0.5 0.5 0.5 0.5) (f32x4.mul (local.get $r) (local.get $p))))
    (local.set $p (f32x4.add (v128.const f32x4 1 1 1 1) (f32x4.mul (local.get $r) (local.get $p))))
    (local.set $p (f32x4.add (v128.const f32x4 1 1 1 1) (f32x4.mul (local.get $r) (local.get $p))))
    (f32x4.mul (local.get $p) (i32x4.shl (i32x4.add (i32x4.trunc_sat_f32x4_s (local.get $n)) (v128.const i32x4 127 127 127 127)) (i32.const 23))))
  (func $exp1 (param $x f32) (result f32) (f32x4.extract_lane 0 (call $exp4 (f32x4.splat (local.get $x)))))`;

  // ---- elementwise and row kernels (n, D, E: multiples of 4)
  const rowKernels = `
  (func (export "add") ${params('x* y* n')}
    (local $i i32)
    ${prologue('x* y* n')}
    ${loop('i', i32(0), shl2(get('n')), i32(16), store(padd(get('x'), get('i')), `(f32x4.add ${load(padd(get('x'), get('i')))} ${load(padd(get('y'), get('i')))})`))})
  (func (export "scale") ${params('x* s:f32 n')}
    (local $i i32) (local $v v128)
    ${prologue('x* s:f32 n')}
    ${set('v', `(f32x4.splat ${get('s')})`)}
    ${loop('i', i32(0), shl2(get('n')), i32(16), store(padd(get('x'), get('i')), `(f32x4.mul ${load(padd(get('x'), get('i')))} ${get('v')})`))})
  (func (export "fill") ${params('x* s:f32 n')}
    (local $i i32) (local $v v128)
    ${prologue('x* s:f32 n')}
    ${set('v', `(f32x4.splat ${get('s')})`)}
    ${loop('i', i32(0), shl2(get('n')), i32(16), store(padd(get('x'), get('i')), get('v')))})
  ;; y[m, :] += b for M rows of N (row stride ldy)
  (func (export "add_bias") ${params('y* ldy b* M N')}
    (local $m i32) (local $i i32) (local $row ${A})
    ${prologue('y* ldy b* M N')}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `${set('row', padd(get('y'), shl2(mul(get('m'), get('ldy')))))}
      ${loop('i', i32(0), shl2(get('N')), i32(16), store(padd(get('row'), get('i')), `(f32x4.add ${load(padd(get('row'), get('i')))} ${load(padd(get('b'), get('i')))})`))}`,
    )})
  ;; y = x · rstd · g per row; rstd[m] = 1/√(mean(x²) + eps) is kept for the backward pass
  (func (export "rmsnorm") ${params('x* ldx g* y* ldy rstd* M D eps:f32')}
    (local $m i32) (local $i i32) (local $xr ${A}) (local $yr ${A}) (local $acc v128) (local $r f32) (local $rv v128) (local $v v128)
    ${prologue('x* ldx g* y* ldy rstd* M D eps:f32')}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `
      ${set('xr', padd(get('x'), shl2(mul(get('m'), get('ldx')))))} ${set('yr', padd(get('y'), shl2(mul(get('m'), get('ldy')))))}
      ${set('acc', zero)}
      ${loop('i', i32(0), shl2(get('D')), i32(16), `${set('v', load(padd(get('xr'), get('i'))))} ${set('acc', fma(get('v'), get('v'), get('acc')))}`)}
      ${set('r', `(f32.div (f32.const 1) (f32.sqrt (f32.add (f32.div ${hsum(get('acc'))} (f32.convert_i32_s ${get('D')})) ${get('eps')})))`)}
      (f32.store ${padd(get('rstd'), shl2(get('m')))} ${get('r')})
      ${set('rv', `(f32x4.splat ${get('r')})`)}
      ${loop('i', i32(0), shl2(get('D')), i32(16), store(padd(get('yr'), get('i')), `(f32x4.mul (f32x4.mul ${load(padd(get('xr'), get('i')))} ${get('rv')}) ${load(padd(get('g'), get('i')))})`))}
    `,
    )})
  ;; dx (+)= r·g∘dy − (r³/D)·x·Σ(g∘dy∘x)
  (func (export "rmsnorm_bwd") ${params('x* ldx g* rstd* dy* lddy dx* lddx M D acc')}
    (local $m i32) (local $i i32) (local $xr ${A}) (local $dyr ${A}) (local $dxr ${A}) (local $s v128) (local $r f32) (local $rv v128) (local $cv v128) (local $val v128)
    ${prologue('x* ldx g* rstd* dy* lddy dx* lddx M D acc')}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `
      ${set('xr', padd(get('x'), shl2(mul(get('m'), get('ldx')))))} ${set('dyr', padd(get('dy'), shl2(mul(get('m'), get('lddy')))))} ${set('dxr', padd(get('dx'), shl2(mul(get('m'), get('lddx')))))}
      ${set('s', zero)}
      ${loop('i', i32(0), shl2(get('D')), i32(16), set('s', fma(`(f32x4.mul ${load(padd(get('g'), get('i')))} ${load(padd(get('dyr'), get('i')))})`, load(padd(get('xr'), get('i'))), get('s'))))}
      ${set('r', `(f32.load ${padd(get('rstd'), shl2(get('m')))})`)}
      ${set('rv', `(f32x4.splat ${get('r')})`)}
      ${set('cv', `(f32x4.splat (f32.div (f32.mul (f32.mul ${get('r')} (f32.mul ${get('r')} ${get('r')})) ${hsum(get('s'))}) (f32.convert_i32_s ${get('D')})))`)}
      ${loop(
        'i',
        i32(0),
        shl2(get('D')),
        i32(16),
        `
        ${set('val', `(f32x4.sub (f32x4.mul ${get('rv')} (f32x4.mul ${load(padd(get('g'), get('i')))} ${load(padd(get('dyr'), get('i')))})) (f32x4.mul ${get('cv')} ${load(padd(get('xr'), get('i')))}))`)}
        ${store(padd(get('dxr'), get('i')), `(if (result v128) ${get('acc')} (then (f32x4.add ${load(padd(get('dxr'), get('i')))} ${get('val')})) (else ${get('val')}))`)}`,
      )}
    `,
    )})
  ;; rotate-half rotary embedding in place on x [M rows, heads × E] at positions pos[m]: for i < E/2,
  ;; (a, b) = (x_i, x_{i+E/2}) → (a·cos − b·sin, b·cos + a·sin); sgn = −1 applies the inverse (backward).
  ;; cos, sin: [P, E/2] tables.
  (func (export "rope") ${params('x* ldx heads E pos* cos* sin* M sgn:f32')}
    (local $m i32) (local $h i32) (local $i i32) (local $half i32) (local $row ${A}) (local $cp ${A}) (local $sp ${A}) (local $a v128) (local $b v128) (local $c v128) (local $s v128) (local $sg v128)
    ${prologue('x* ldx heads E pos* cos* sin* M sgn:f32')}
    ${set('half', `(i32.shr_u ${get('E')} (i32.const 1))`)} ${set('sg', `(f32x4.splat ${get('sgn')})`)}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `
      ${set('cp', padd(get('cos'), shl2(mul(`(i32.load ${padd(get('pos'), shl2(get('m')))})`, get('half')))))}
      ${set('sp', padd(get('sin'), shl2(mul(`(i32.load ${padd(get('pos'), shl2(get('m')))})`, get('half')))))}
      ${loop(
        'h',
        i32(0),
        get('heads'),
        i32(1),
        `
        ${set('row', padd(get('x'), shl2(add(mul(get('m'), get('ldx')), mul(get('h'), get('E'))))))}
        ${loop(
          'i',
          i32(0),
          shl2(get('half')),
          i32(16),
          `
          ${set('a', load(padd(get('row'), get('i'))))} ${set('b', load(padd(padd(get('row'), shl2(get('half'))), get('i'))))}
          ${set('c', load(padd(get('cp'), get('i'))))} ${set('s', `(f32x4.mul ${load(padd(get('sp'), get('i')))} ${get('sg')})`)}
          ${store(padd(get('row'), get('i')), `(f32x4.sub (f32x4.mul ${get('a')} ${get('c')}) (f32x4.mul ${get('b')} ${get('s')}))`)}
          ${store(padd(padd(get('row'), shl2(get('half'))), get('i')), `(f32x4.add (f32x4.mul ${get('b')} ${get('c')}) (f32x4.mul ${get('a')} ${get('s')}))`)}`,
        )}`,
      )}
    `,
    )})
  ;; a = silu(g) · u = g·σ(g)·u over n values
  (func (export "swiglu") ${params('g* u* a* n')}
    (local $i i32) (local $gv v128)
    ${prologue('g* u* a* n')}
    ${loop(
      'i',
      i32(0),
      shl2(get('n')),
      i32(16),
      `${set('gv', load(padd(get('g'), get('i'))))}
      ${store(padd(get('a'), get('i')), `(f32x4.mul (f32x4.div ${get('gv')} (f32x4.add (v128.const f32x4 1 1 1 1) (call $exp4 (f32x4.neg ${get('gv')})))) ${load(padd(get('u'), get('i')))})`)}`,
    )})
  ;; dg = da·u·σ(g)(1 + g(1 − σ(g))), du = da·g·σ(g)
  (func (export "swiglu_bwd") ${params('g* u* da* dg* du* n')}
    (local $i i32) (local $gv v128) (local $sg v128) (local $dav v128)
    ${prologue('g* u* da* dg* du* n')}
    ${loop(
      'i',
      i32(0),
      shl2(get('n')),
      i32(16),
      `${set('gv', load(padd(get('g'), get('i'))))} ${set('dav', load(padd(get('da'), get('i'))))}
      ${set('sg', `(f32x4.div (v128.const f32x4 1 1 1 1) (f32x4.add (v128.const f32x4 1 1 1 1) (call $exp4 (f32x4.neg ${get('gv')}))))`)}
      ${store(padd(get('dg'), get('i')), `(f32x4.mul (f32x4.mul ${get('dav')} ${load(padd(get('u'), get('i')))}) (f32x4.mul ${get('sg')} (f32x4.add (v128.const f32x4 1 1 1 1) (f32x4.mul ${get('gv')} (f32x4.sub (v128.const f32x4 1 1 1 1) ${get('sg')})))))`)}
      ${store(padd(get('du'), get('i')), `(f32x4.mul ${get('dav')} (f32x4.mul ${get('gv')} ${get('sg')}))`)}`,
    )})
  ;; out[m, :] = table[ids[m], :] as float32 (bf16 rows 8-interleaved; D multiple of 8)
  (func (export "embed_bf16") ${params('t* ldt ids* M D out* ldo')}
    (local $m i32) (local $i i32) (local $src ${A}) (local $dst ${A}) (local $v v128)
    ${prologue('t* ldt ids* M D out* ldo')}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `
      ${set('src', padd(get('t'), shl1(mul(`(i32.load ${padd(get('ids'), shl2(get('m')))})`, get('ldt')))))}
      ${set('dst', padd(get('out'), shl2(mul(get('m'), get('ldo')))))}
      ${loop(
        'i',
        i32(0),
        get('D'),
        i32(8),
        `${set('v', load(padd(get('src'), shl1(get('i')))))}
        ${store(padd(get('dst'), shl2(get('i'))), lo(get('v')))} ${store(padd(padd(get('dst'), shl2(get('i'))), i32(16)), hi(get('v')))}`,
      )}`,
    )})
  (func (export "embed_f32") ${params('t* ldt ids* M D out* ldo')}
    (local $m i32) (local $src ${A}) (local $dst ${A})
    ${prologue('t* ldt ids* M D out* ldo')}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `
      ${set('src', padd(get('t'), shl2(mul(`(i32.load ${padd(get('ids'), shl2(get('m')))})`, get('ldt')))))}
      ${set('dst', padd(get('out'), shl2(mul(get('m'), get('ldo')))))}
      ${pcopy(get('dst'), get('src'), shl2(get('D')))}`,
    )})
  ;; bfloat16 rows in place into the 8-interleaved order: per group of 8, [0,4,1,5,2,6,3,7] (n multiple of 8)
  (func (export "interleave8") ${params('p* n')}
    (local $i i32)
    ${prologue('p* n')}
    ${loop('i', i32(0), shl1(get('n')), i32(16), store(padd(get('p'), get('i')), `(i8x16.shuffle 0 1 8 9 2 3 10 11 4 5 12 13 6 7 14 15 ${load(padd(get('p'), get('i')))} ${load(padd(get('p'), get('i')))})`))})
  ;; float32 → bfloat16 (round to nearest even), written 8-interleaved (n multiple of 8)
  (func (export "f32_to_bf16") ${params('src* dst* n')}
    (local $i i32) (local $a v128) (local $b v128)
    ${prologue('src* dst* n')}
    ${loop(
      'i',
      i32(0),
      get('n'),
      i32(8),
      `
      ${set('a', load(padd(get('src'), shl2(get('i')))))} ${set('b', load(padd(padd(get('src'), shl2(get('i'))), i32(16))))}
      ${set('a', `(i32x4.shr_u (i32x4.add (i32x4.add ${get('a')} (v128.const i32x4 0x7fff 0x7fff 0x7fff 0x7fff)) (v128.and (i32x4.shr_u ${get('a')} (i32.const 16)) (v128.const i32x4 1 1 1 1))) (i32.const 16))`)}
      ${set('b', `(i32x4.shr_u (i32x4.add (i32x4.add ${get('b')} (v128.const i32x4 0x7fff 0x7fff 0x7fff 0x7fff)) (v128.and (i32x4.shr_u ${get('b')} (i32.const 16)) (v128.const i32x4 1 1 1 1))) (i32.const 16))`)}
      ${store(padd(get('dst'), shl1(get('i'))), `(i8x16.shuffle 0 1 8 9 2 3 10 11 4 5 12 13 6 7 14 15 (i16x8.narrow_i32x4_u ${get('a')} ${get('b')}) ${zero})`)}`,
    )})
  ;; copies row t of src [N, K·E] into the KV cache [B, K, cap, E] at (rows[t], poss[t]) for each kv head
  (func (export "kv_store") ${params('src* lds cache* cap rows* poss* N K E')}
    (local $t i32) (local $g i32)
    ${prologue('src* lds cache* cap rows* poss* N K E')}
    ${loop(
      't',
      i32(0),
      get('N'),
      i32(1),
      loop(
        'g',
        i32(0),
        get('K'),
        i32(1),
        `
      ${pcopy(
        padd(
          get('cache'),
          shl2(
            mul(
              add(
                mul(add(mul(`(i32.load ${padd(get('rows'), shl2(get('t')))})`, get('K')), get('g')), get('cap')),
                `(i32.load ${padd(get('poss'), shl2(get('t')))})`,
              ),
              get('E'),
            ),
          ),
        ),
        padd(get('src'), shl2(add(mul(get('t'), get('lds')), mul(get('g'), get('E'))))),
        shl2(get('E')),
      )}`,
      ),
    )})`;

  // ---- helpers for attention: dot of E floats, row softmax in place, o (+)= p·v
  const attnHelpers = `
  (func $dot ${iparams('a* b* E')} (result f32)
    (local $i i32) (local $s v128)
    ${set('s', zero)}
    ${loop('i', i32(0), shl2(get('E')), i32(16), set('s', fma(load(padd(get('a'), get('i'))), load(padd(get('b'), get('i'))), get('s'))))}
    ${hsum(get('s'))})
  ;; p[0..n) = softmax(p[0..n)) in place: a vector pass each for the max, the exponentials and the scaling
  (func $softmax ${iparams('p* n')}
    (local $j i32) (local $n4 i32) (local $mx f32) (local $sum f32) (local $v f32) (local $inv f32) (local $mv v128) (local $sv v128) (local $e v128)
    ${set('n4', `(i32.and ${get('n')} (i32.const -4))`)}
    ${set('mv', '(v128.const f32x4 -inf -inf -inf -inf)')}
    ${loop('j', i32(0), shl2(get('n4')), i32(16), set('mv', `(f32x4.max ${get('mv')} ${load(padd(get('p'), get('j')))})`), 'mx4')}
    ${set('mx', `(f32.max (f32.max (f32x4.extract_lane 0 ${get('mv')}) (f32x4.extract_lane 1 ${get('mv')})) (f32.max (f32x4.extract_lane 2 ${get('mv')}) (f32x4.extract_lane 3 ${get('mv')})))`)}
    ${loop('j', get('n4'), get('n'), i32(1), set('mx', `(f32.max ${get('mx')} (f32.load ${padd(get('p'), shl2(get('j')))}))`), 'mx1')}
    ${set('mv', `(f32x4.splat ${get('mx')})`)} ${set('sv', zero)}
    ${loop('j', i32(0), shl2(get('n4')), i32(16), `${set('e', `(call $exp4 (f32x4.sub ${load(padd(get('p'), get('j')))} ${get('mv')}))`)} ${store(padd(get('p'), get('j')), get('e'))} ${set('sv', `(f32x4.add ${get('sv')} ${get('e')})`)}`, 'ex4')}
    ${set('sum', hsum(get('sv')))}
    ${loop('j', get('n4'), get('n'), i32(1), `${set('v', `(call $exp1 (f32.sub (f32.load ${padd(get('p'), shl2(get('j')))}) ${get('mx')}))`)} (f32.store ${padd(get('p'), shl2(get('j')))} ${get('v')}) ${set('sum', `(f32.add ${get('sum')} ${get('v')})`)}`, 'ex1')}
    ${set('inv', `(f32.div (f32.const 1) ${get('sum')})`)} ${set('sv', `(f32x4.splat ${get('inv')})`)}
    ${loop('j', i32(0), shl2(get('n4')), i32(16), store(padd(get('p'), get('j')), `(f32x4.mul ${load(padd(get('p'), get('j')))} ${get('sv')})`), 'sc4')}
    ${loop('j', get('n4'), get('n'), i32(1), `(f32.store ${padd(get('p'), shl2(get('j')))} (f32.mul (f32.load ${padd(get('p'), shl2(get('j')))}) ${get('inv')}))`, 'sc1')})
  ;; p[j] = s · q·rows[j] for j < n (rows j·ld apart, E floats each): four rows per pass over q
  (func $scores ${iparams('p* q* rows* ld n E s:f32')}
    (local $j i32) (local $e i32) (local $eb i32) (local $r0 ${A}) (local $r1 ${A}) (local $r2 ${A}) (local $r3 ${A}) (local $rb i32) (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $qv v128)
    ${set('eb', shl2(get('E')))} ${set('rb', shl2(get('ld')))}
    ${set('j', i32(0))}
    (block $j4_end (loop $j4_top (br_if $j4_end (i32.gt_s (i32.add ${get('j')} (i32.const 4)) ${get('n')}))
      ${set('r0', padd(get('rows'), mul(get('j'), get('rb'))))} ${set('r1', padd(get('r0'), get('rb')))} ${set('r2', padd(get('r1'), get('rb')))} ${set('r3', padd(get('r2'), get('rb')))}
      ${set('a0', zero)} ${set('a1', zero)} ${set('a2', zero)} ${set('a3', zero)}
      ${loop(
        'e',
        i32(0),
        get('eb'),
        i32(16),
        `${set('qv', load(padd(get('q'), get('e'))))}
        ${set('a0', fma(get('qv'), load(padd(get('r0'), get('e'))), get('a0')))} ${set('a1', fma(get('qv'), load(padd(get('r1'), get('e'))), get('a1')))}
        ${set('a2', fma(get('qv'), load(padd(get('r2'), get('e'))), get('a2')))} ${set('a3', fma(get('qv'), load(padd(get('r3'), get('e'))), get('a3')))}`,
        'e4',
      )}
      (f32.store ${padd(get('p'), shl2(get('j')))} (f32.mul ${hsum(get('a0'))} ${get('s')}))
      (f32.store offset=4 ${padd(get('p'), shl2(get('j')))} (f32.mul ${hsum(get('a1'))} ${get('s')}))
      (f32.store offset=8 ${padd(get('p'), shl2(get('j')))} (f32.mul ${hsum(get('a2'))} ${get('s')}))
      (f32.store offset=12 ${padd(get('p'), shl2(get('j')))} (f32.mul ${hsum(get('a3'))} ${get('s')}))
      ${set('j', add(get('j'), i32(4)))} (br $j4_top)))
    ${loop('j', get('j'), get('n'), i32(1), `(f32.store ${padd(get('p'), shl2(get('j')))} (f32.mul (call $dot ${get('q')} ${padd(get('rows'), mul(get('j'), get('rb')))} ${get('E')}) ${get('s')}))`, 'j1')})
  ;; y[0..E) (+)= s · x[0..E)
  (func $axpy ${iparams('y* x* s:f32 E')}
    (local $i i32) (local $sv v128)
    ${set('sv', `(f32x4.splat ${get('s')})`)}
    ${loop('i', i32(0), shl2(get('E')), i32(16), store(padd(get('y'), get('i')), fma(get('sv'), load(padd(get('x'), get('i'))), load(padd(get('y'), get('i'))))))})
  ;; out[0..E) = Σ_j p[j] · rows[j·ld .. +E) for j < n (four lanes of E at a time, all j)
  (func $pv ${iparams('out* p* rows* ld n E')}
    (local $e i32) (local $j i32) (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $pj v128) (local $r ${A})
    (local.set $e (i32.const 0))
    (block $e16_end (loop $e16_top (br_if $e16_end (i32.gt_s (i32.add (local.get $e) (i32.const 16)) (local.get $E)))
      ${set('a0', zero)} ${set('a1', zero)} ${set('a2', zero)} ${set('a3', zero)}
      ${loop(
        'j',
        i32(0),
        get('n'),
        i32(1),
        `${set('pj', splat(padd(get('p'), shl2(get('j')))))}
        ${set('r', padd(get('rows'), shl2(add(mul(get('j'), get('ld')), get('e')))))}
        ${range(4)
          .map((q) => set(`a${q}`, fma(get('pj'), load(padd(get('r'), i32(16 * q))), get(`a${q}`))))
          .join(' ')}`,
        'j16',
      )}
      ${range(4)
        .map((q) => store(padd(get('out'), shl2(add(get('e'), i32(4 * q)))), get(`a${q}`)))
        .join(' ')}
      (local.set $e (i32.add (local.get $e) (i32.const 16))) (br $e16_top)))
    (block $e4_end (loop $e4_top (br_if $e4_end (i32.ge_s (local.get $e) (local.get $E)))
      ${set('a0', zero)}
      ${loop('j', i32(0), get('n'), i32(1), set('a0', fma(splat(padd(get('p'), shl2(get('j')))), load(padd(get('rows'), shl2(add(mul(get('j'), get('ld')), get('e'))))), get('a0'))), 'j4')}
      ${store(padd(get('out'), shl2(get('e'))), get('a0'))}
      (local.set $e (i32.add (local.get $e) (i32.const 4))) (br $e4_top))))`;

  // ---- attention over packed sequences. items: int32 [segStart, segLen, head, probsOffset] per item
  // (probsOffset −1: probabilities not kept; a row of scratch per thread is used). Causal within a
  // segment; query head h reads key/value head h / G. q [tokens, ldq], k and v [tokens, ldk] (head g at
  // column g·E), o [tokens, ldo].
  const attention = `
  (func (export "attn_fwd") ${params('q* ldq k* v* ldk o* ldo items* i0 i1 E G scale:f32 probs* scratch*')}
    (local $it i32) (local $s0 i32) (local $L i32) (local $h i32) (local $g i32) (local $po i32) (local $i i32) (local $j i32) (local $p ${A}) (local $qr ${A}) (local $kb ${A}) (local $vb ${A})
    ${prologue('q* ldq k* v* ldk o* ldo items* i0 i1 E G scale:f32 probs* scratch*')}
    ${loop(
      'it',
      get('i0'),
      get('i1'),
      i32(1),
      `
      ${set('s0', `(i32.load ${padd(get('items'), `(i32.shl ${get('it')} (i32.const 4))`)})`)}
      ${set('L', `(i32.load offset=4 ${padd(get('items'), `(i32.shl ${get('it')} (i32.const 4))`)})`)}
      ${set('h', `(i32.load offset=8 ${padd(get('items'), `(i32.shl ${get('it')} (i32.const 4))`)})`)}
      ${set('po', `(i32.load offset=12 ${padd(get('items'), `(i32.shl ${get('it')} (i32.const 4))`)})`)}
      ${set('g', `(i32.div_u ${get('h')} ${get('G')})`)}
      ${set('kb', padd(get('k'), shl2(add(mul(get('s0'), get('ldk')), mul(get('g'), get('E'))))))}
      ${set('vb', padd(get('v'), shl2(add(mul(get('s0'), get('ldk')), mul(get('g'), get('E'))))))}
      ${loop(
        'i',
        i32(0),
        get('L'),
        i32(1),
        `
        ${set('p', `(select ${get('scratch')} ${padd(padd(get('probs'), get('po')), shl2(mul(get('i'), get('L'))))} (i32.lt_s ${get('po')} (i32.const 0)))`)}
        ${set('qr', padd(get('q'), shl2(add(mul(add(get('s0'), get('i')), get('ldq')), mul(get('h'), get('E'))))))}
        (call $scores ${get('p')} ${get('qr')} ${get('kb')} ${get('ldk')} ${add(get('i'), i32(1))} ${get('E')} ${get('scale')})
        (call $softmax ${get('p')} ${add(get('i'), i32(1))})
        (call $pv ${padd(get('o'), shl2(add(mul(add(get('s0'), get('i')), get('ldo')), mul(get('h'), get('E')))))} ${get('p')} ${get('vb')} ${get('ldk')} ${add(get('i'), i32(1))} ${get('E')})`,
      )}
    `,
    )})
  ;; Backward over packed sequences; items: [segStart, segLen, kvHead, probsOffset of its first query
  ;; head] (the G query heads' probabilities follow each other, segLen² floats apart). dq is written,
  ;; dk and dv accumulated (the caller zeroes them): work items of distinct (segment, kv head) pairs
  ;; never write the same rows.
  (func (export "attn_bwd") ${params('q* ldq k* v* ldk o* do* ldo dq* dk* dv* items* i0 i1 E G scale:f32 probs* scratch*')}
    (local $it i32) (local $s0 i32) (local $L i32) (local $g i32) (local $po i32) (local $hh i32) (local $h i32) (local $i i32) (local $j i32) (local $pr ${A}) (local $qr ${A}) (local $dor ${A}) (local $dqr ${A}) (local $kb ${A}) (local $vb ${A}) (local $dkb ${A}) (local $dvb ${A}) (local $Di f32) (local $ds f32) (local $pij f32)
    ${prologue('q* ldq k* v* ldk o* do* ldo dq* dk* dv* items* i0 i1 E G scale:f32 probs* scratch*')}
    ${loop(
      'it',
      get('i0'),
      get('i1'),
      i32(1),
      `
      ${set('s0', `(i32.load ${padd(get('items'), `(i32.shl ${get('it')} (i32.const 4))`)})`)}
      ${set('L', `(i32.load offset=4 ${padd(get('items'), `(i32.shl ${get('it')} (i32.const 4))`)})`)}
      ${set('g', `(i32.load offset=8 ${padd(get('items'), `(i32.shl ${get('it')} (i32.const 4))`)})`)}
      ${set('po', `(i32.load offset=12 ${padd(get('items'), `(i32.shl ${get('it')} (i32.const 4))`)})`)}
      ${set('kb', padd(get('k'), shl2(add(mul(get('s0'), get('ldk')), mul(get('g'), get('E'))))))}
      ${set('vb', padd(get('v'), shl2(add(mul(get('s0'), get('ldk')), mul(get('g'), get('E'))))))}
      ${set('dkb', padd(get('dk'), shl2(add(mul(get('s0'), get('ldk')), mul(get('g'), get('E'))))))}
      ${set('dvb', padd(get('dv'), shl2(add(mul(get('s0'), get('ldk')), mul(get('g'), get('E'))))))}
      ${loop(
        'hh',
        i32(0),
        get('G'),
        i32(1),
        `
        ${set('h', add(mul(get('g'), get('G')), get('hh')))}
        ${loop(
          'i',
          i32(0),
          get('L'),
          i32(1),
          `
          ${set('pr', padd(padd(get('probs'), get('po')), shl2(add(mul(mul(get('hh'), get('L')), get('L')), mul(get('i'), get('L'))))))}
          ${set('qr', padd(get('q'), shl2(add(mul(add(get('s0'), get('i')), get('ldq')), mul(get('h'), get('E'))))))}
          ${set('dor', padd(get('do'), shl2(add(mul(add(get('s0'), get('i')), get('ldo')), mul(get('h'), get('E'))))))}
          ${set('dqr', padd(get('dq'), shl2(add(mul(add(get('s0'), get('i')), get('ldq')), mul(get('h'), get('E'))))))}
          ${set('Di', `(call $dot ${get('dor')} ${padd(get('o'), shl2(add(mul(add(get('s0'), get('i')), get('ldo')), mul(get('h'), get('E')))))} ${get('E')})`)}
          ;; dS_ij = P_ij (dO_i·V_j − D_i), kept in scratch; dV_j += P_ij dO_i
          (call $scores ${get('scratch')} ${get('dor')} ${get('vb')} ${get('ldk')} ${add(get('i'), i32(1))} ${get('E')} (f32.const 1))
          ${loop(
            'j',
            i32(0),
            add(get('i'), i32(1)),
            i32(1),
            `
            ${set('pij', `(f32.load ${padd(get('pr'), shl2(get('j')))})`)}
            (f32.store ${padd(get('scratch'), shl2(get('j')))} (f32.mul ${get('pij')} (f32.sub (f32.load ${padd(get('scratch'), shl2(get('j')))}) ${get('Di')})))
            (call $axpy ${padd(get('dvb'), shl2(mul(get('j'), get('ldk'))))} ${get('dor')} ${get('pij')} ${get('E')})`,
          )}
          ;; dQ_i = scale Σ_j dS_ij K_j;  dK_j += scale dS_ij Q_i
          (call $pv ${get('dqr')} ${get('scratch')} ${get('kb')} ${get('ldk')} ${add(get('i'), i32(1))} ${get('E')})
          (call $scaleRow ${get('dqr')} ${get('scale')} ${get('E')})
          ${loop(
            'j',
            i32(0),
            add(get('i'), i32(1)),
            i32(1),
            `
            ${set('ds', `(f32.mul (f32.load ${padd(get('scratch'), shl2(get('j')))}) ${get('scale')})`)}
            (call $axpy ${padd(get('dkb'), shl2(mul(get('j'), get('ldk'))))} ${get('qr')} ${get('ds')} ${get('E')})`,
          )}`,
        )}`,
      )}
    `,
    )})
  (func $scaleRow ${iparams('x* s:f32 E')}
    (local $i i32) (local $sv v128)
    ${set('sv', `(f32x4.splat ${get('s')})`)}
    ${loop('i', i32(0), shl2(get('E')), i32(16), store(padd(get('x'), get('i')), `(f32x4.mul ${load(padd(get('x'), get('i')))} ${get('sv')})`))})
  ;; One decoding step: q [B, ldq] (head h at column h·E) attends to positions 0 … lens[b]−1 of the
  ;; cache [B, K, cap, E]; items are (row, head) pairs numbered b·H + h.
  (func (export "attn_decode") ${params('q* ldq kc* vc* cap lens* o* ldo i0 i1 H K E scale:f32 scratch*')}
    (local $it i32) (local $b i32) (local $h i32) (local $g i32) (local $n i32) (local $j i32) (local $qr ${A}) (local $kb ${A}) (local $vb ${A})
    ${prologue('q* ldq kc* vc* cap lens* o* ldo i0 i1 H K E scale:f32 scratch*')}
    ${loop(
      'it',
      get('i0'),
      get('i1'),
      i32(1),
      `
      ${set('b', `(i32.div_u ${get('it')} ${get('H')})`)} ${set('h', `(i32.rem_u ${get('it')} ${get('H')})`)}
      ${set('g', `(i32.div_u ${get('h')} (i32.div_u ${get('H')} ${get('K')}))`)}
      ${set('n', `(i32.load ${padd(get('lens'), shl2(get('b')))})`)}
      ${set('qr', padd(get('q'), shl2(add(mul(get('b'), get('ldq')), mul(get('h'), get('E'))))))}
      ${set('kb', padd(get('kc'), shl2(mul(mul(add(mul(get('b'), get('K')), get('g')), get('cap')), get('E')))))}
      ${set('vb', padd(get('vc'), shl2(mul(mul(add(mul(get('b'), get('K')), get('g')), get('cap')), get('E')))))}
      (call $scores ${get('scratch')} ${get('qr')} ${get('kb')} ${get('E')} ${get('n')} ${get('E')} ${get('scale')})
      (call $softmax ${get('scratch')} ${get('n')})
      (call $pv ${padd(get('o'), shl2(add(mul(get('b'), get('ldo')), mul(get('h'), get('E')))))} ${get('scratch')} ${get('vb')} ${get('E')} ${get('n')} ${get('E')})
    `,
    )})`;

  // ---- the output head over a chunk of the vocabulary: z [M, C] logits of columns v0 … v0+C−1.
  // state [M, 6]: running max of z/T, Σe^(z/T−max), Σe^(z/T−max)·z/T, the target's raw logit, the
  // best raw logit, its column (as f32). The caller starts max and best at −inf and the sums at 0.
  const head = `
  (func (export "lse_update") ${params('z* M C v0 targets* invT:f32 state*')}
    (local $m i32) (local $j i32) (local $row ${A}) (local $st ${A}) (local $mx v128) (local $cm f32) (local $old f32) (local $f f32) (local $s1 v128) (local $s2 v128) (local $e v128) (local $zt v128) (local $tg i32) (local $best f32) (local $bi i32) (local $val f32) (local $iv v128) (local $mv v128)
    ${prologue('z* M C v0 targets* invT:f32 state*')}
    ${set('iv', `(f32x4.splat ${get('invT')})`)}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `
      ${set('row', padd(get('z'), shl2(mul(get('m'), get('C')))))} ${set('st', padd(get('state'), mul(get('m'), i32(24))))}
      ;; chunk max and the best raw logit (first one on ties, as argmax)
      ${set('mx', '(v128.const f32x4 -inf -inf -inf -inf)')}
      ${loop('j', i32(0), shl2(get('C')), i32(16), set('mx', `(f32x4.max ${get('mx')} ${load(padd(get('row'), get('j')))})`))}
      ${set('cm', `(f32.max (f32.max (f32x4.extract_lane 0 ${get('mx')}) (f32x4.extract_lane 1 ${get('mx')})) (f32.max (f32x4.extract_lane 2 ${get('mx')}) (f32x4.extract_lane 3 ${get('mx')})))`)}
      (if (f32.gt ${get('cm')} (f32.load offset=16 ${get('st')})) (then
        ${set('j', i32(0))}
        (block $bf_end (loop $bf_top (br_if $bf_end (f32.eq (f32.load ${padd(get('row'), shl2(get('j')))}) ${get('cm')})) ${set('j', add(get('j'), i32(1)))} (br $bf_top)))
        (f32.store offset=16 ${get('st')} ${get('cm')}) (f32.store offset=20 ${get('st')} (f32.convert_i32_s ${add(get('v0'), get('j'))}))))
      ${set('cm', `(f32.mul ${get('cm')} ${get('invT')})`)}
      ${set('old', `(f32.load ${get('st')})`)}
      (if (f32.gt ${get('cm')} ${get('old')}) (then
        ${set('f', `(if (result f32) (f32.eq ${get('old')} (f32.const -inf)) (then (f32.const 0)) (else (call $exp1 (f32.sub ${get('old')} ${get('cm')}))))`)}
        (f32.store offset=4 ${get('st')} (f32.mul (f32.load offset=4 ${get('st')}) ${get('f')}))
        (f32.store offset=8 ${get('st')} (f32.mul (f32.load offset=8 ${get('st')}) ${get('f')}))
        (f32.store ${get('st')} ${get('cm')})))
      ${set('mv', `(f32x4.splat (f32.load ${get('st')}))`)}
      ${set('s1', zero)} ${set('s2', zero)}
      ${loop(
        'j',
        i32(0),
        shl2(get('C')),
        i32(16),
        `${set('zt', `(f32x4.mul ${load(padd(get('row'), get('j')))} ${get('iv')})`)}
        ${set('e', `(call $exp4 (f32x4.sub ${get('zt')} ${get('mv')}))`)}
        ${set('s1', `(f32x4.add ${get('s1')} ${get('e')})`)} ${set('s2', fma(get('e'), get('zt'), get('s2')))}`,
      )}
      (f32.store offset=4 ${get('st')} (f32.add (f32.load offset=4 ${get('st')}) ${hsum(get('s1'))}))
      (f32.store offset=8 ${get('st')} (f32.add (f32.load offset=8 ${get('st')}) ${hsum(get('s2'))}))
      ${set('tg', `(i32.sub (i32.load ${padd(get('targets'), shl2(get('m')))}) ${get('v0')})`)}
      (if (i32.and (i32.ge_s ${get('tg')} (i32.const 0)) (i32.lt_s ${get('tg')} ${get('C')})) (then
        (f32.store offset=12 ${get('st')} (f32.load ${padd(get('row'), shl2(get('tg')))}))))
    `,
    )})
  ;; dz = ∂(Σ_m g_m · log p_m(target))/∂z = g·invT·(1[target] − e^(z/T − logZ)), in place of z
  (func (export "softmax_bwd") ${params('z* M C v0 targets* invT:f32 logZ* g*')}
    (local $m i32) (local $j i32) (local $row ${A}) (local $gv f32) (local $cv v128) (local $lz v128) (local $iv v128) (local $tg i32)
    ${prologue('z* M C v0 targets* invT:f32 logZ* g*')}
    ${set('iv', `(f32x4.splat ${get('invT')})`)}
    ${loop(
      'm',
      i32(0),
      get('M'),
      i32(1),
      `
      ${set('row', padd(get('z'), shl2(mul(get('m'), get('C')))))}
      ${set('gv', `(f32.mul (f32.load ${padd(get('g'), shl2(get('m')))}) ${get('invT')})`)}
      ${set('cv', `(f32x4.splat (f32.neg ${get('gv')}))`)} ${set('lz', `(f32x4.splat (f32.load ${padd(get('logZ'), shl2(get('m')))}))`)}
      ${loop('j', i32(0), shl2(get('C')), i32(16), store(padd(get('row'), get('j')), `(f32x4.mul ${get('cv')} (call $exp4 (f32x4.sub (f32x4.mul ${load(padd(get('row'), get('j')))} ${get('iv')}) ${get('lz')})))`))}
      ${set('tg', `(i32.sub (i32.load ${padd(get('targets'), shl2(get('m')))}) ${get('v0')})`)}
      (if (i32.and (i32.ge_s ${get('tg')} (i32.const 0)) (i32.lt_s ${get('tg')} ${get('C')})) (then
        (f32.store ${padd(get('row'), shl2(get('tg')))} (f32.add (f32.load ${padd(get('row'), shl2(get('tg')))}) ${get('gv')}))))
    `,
    )})`;

  return `(module
  ;; Generated by scripts/kernels/engineWat.mjs (${o.relaxed ? 'relaxed SIMD' : 'plain SIMD'}): do not edit; npm run build:kernels.
  ${memory}
${exp4}
${nt('f32')}
${nt('bf16')}
${nn('f32')}
${nn('bf16')}
${tn()}
${rowKernels}
${attnHelpers}
${attention}
${head}
${q8Funcs({ relaxed: o.relaxed, mem64: o.mem64 })}
${drawFuncs({ mem64: o.mem64 })}
)
`;
}
