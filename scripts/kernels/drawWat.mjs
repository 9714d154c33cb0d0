// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- a text generator: every helper maps WAT strings to WAT strings, and the WebAssembly validator (wabt, then V8) checks what it writes
// @ts-nocheck
// Generates the WebAssembly text of the sampler's draw in the engine's threads (issue 50, item 6): each
// row's normaliser (its maximum and Σ exp over the whole vocabulary) and its draw (the walk over the
// cumulative distribution with a uniform the main thread drew), bit for bit what the sampler computes
// in JavaScript (src/rl/policies/lm/sampler.ts, sampleRow): the same float64 arithmetic in the same
// order, and exp as V8's Math.exp computes it — fdlibm's e_exp.c (V8's base::ieee754::exp), ported
// below with hexadecimal constants, so a seed draws the same tokens with the same log-probs on either
// path (engineDraw.test.ts checks both exps against Math.exp on the runtime it runs on: a V8 whose
// compiler fused fdlibm's multiply-adds would differ in the last bit, and that test would say so).
// Appended to the engine's module (engineWat.mjs), both builds alike: float64 scalar and float64x2
// (plain SIMD, no relaxed instruction, so the relaxed and plain builds give the same bits).
//
//   draw_norm(z, ld, rows, V, inv, out)          per row r of z [rows, ld] (V float32 logits a row):
//       out[r] = { max_i z_i·inv, Σ_i exp(z_i·inv − max), first argmax_i z_i }  (three float64, 24 bytes)
//   draw_walk(z, ld, rows, V, inv, lse, u, tok)  per row: the first i where u[r] − Σ_{j≤i} exp(z_j·inv − lse[r])
//       falls below 0 (lse, u: float64 a row), else the last i whose z_i is not −∞; tok[r] = i (int32)
//
// Every address is formed by `padd(base, byteOffset)` of watText.mjs's `addressing`, so the wasm32 and the
// memory64 builds are one text: pointers of the address type, offsets int32 (widened in the 64-bit build).

import { addressing, get, i32, locals, loop, set } from './watText.mjs';

/** An int32 element count times `bytes`: a byte offset (int32; `padd` widens it where addresses are 64-bit). */
const offset = (count, bytes) => `(i32.mul ${count} (i32.const ${bytes}))`;

/** A float64 constant spelled exactly (hexadecimal): the JavaScript number's own bits. */
function f64(v) {
  if (v === 0) return '(f64.const 0)';
  const b = new DataView(new ArrayBuffer(8));
  b.setFloat64(0, v);
  const hi = b.getUint32(0),
    lo = b.getUint32(4);
  const sign = hi >>> 31 ? '-' : '';
  const exp = ((hi >>> 20) & 0x7ff) - 1023;
  const mant = ((hi & 0xfffff).toString(16).padStart(5, '0') + lo.toString(16).padStart(8, '0')).replace(/0+$/, '');
  if (exp === -1023 || exp === 1024) throw new Error(`drawWat: ${v} is not a normal float64`);
  return `(f64.const ${sign}0x1${mant ? `.${mant}` : ''}p${exp})`;
}

// fdlibm e_exp.c's constants (V8's src/base/ieee754.cc), as JavaScript reads their decimal spelling
const C = {
  oThreshold: 7.09782712893383973096e2,
  uThreshold: -7.4513321910194110842e2,
  ln2HI: 6.9314718036912381649e-1,
  ln2LO: 1.90821492927058770002e-10,
  invln2: 1.442695040888963387,
  P1: 1.66666666666666019037e-1,
  P2: -2.77777777770155933842e-3,
  P3: 6.61375632143793436117e-5,
  P4: -1.6533902205465251539e-6,
  P5: 4.13813679705723846039e-8,
  E: 2.718281828459045,
  two1023: 8.98846567431157953865e307,
  twom1000: 9.3326361850321887899e-302,
};

/** exp(x) in float64 exactly as fdlibm's __ieee754_exp (what V8's Math.exp returns). */
const expFunc = `
  (func $draw_exp (param $x f64) (result f64)
    ${locals(['hx', 'xsb', 'k'], 'i32')} ${locals(['hi', 'lo', 't', 'c', 'y', 'twopk'], 'f64')}
    ${set('hx', `(i32.wrap_i64 (i64.shr_u (i64.reinterpret_f64 ${get('x')}) (i64.const 32)))`)}
    ${set('xsb', `(i32.shr_u ${get('hx')} (i32.const 31))`)}
    ${set('hx', `(i32.and ${get('hx')} (i32.const 0x7fffffff))`)}
    ;; |x| ≥ 709.78…: NaN, ±∞, overflow, underflow
    (if (i32.ge_u ${get('hx')} (i32.const 0x40862e42)) (then
      (if (i32.ge_u ${get('hx')} (i32.const 0x7ff00000)) (then
        (if (i32.or (i32.and ${get('hx')} (i32.const 0xfffff)) (i32.wrap_i64 (i64.reinterpret_f64 ${get('x')}))) (then (return (f64.add ${get('x')} ${get('x')}))))
        (return (select ${get('x')} (f64.const 0) (i32.eqz ${get('xsb')})))))
      (if (f64.gt ${get('x')} ${f64(C.oThreshold)}) (then (return (f64.const inf))))
      (if (f64.lt ${get('x')} ${f64(C.uThreshold)}) (then (return (f64.const 0))))))
    ;; argument reduction: x = k·ln2 + r, |r| ≤ 0.5·ln2
    (if (i32.gt_u ${get('hx')} (i32.const 0x3fd62e42))
      (then
        (if (i32.lt_u ${get('hx')} (i32.const 0x3ff0a2b2))
          (then
            (if (f64.eq ${get('x')} (f64.const 1)) (then (return ${f64(C.E)})))
            ${set('hi', `(f64.sub ${get('x')} (select ${f64(-C.ln2HI)} ${f64(C.ln2HI)} ${get('xsb')}))`)}
            ${set('lo', `(select ${f64(-C.ln2LO)} ${f64(C.ln2LO)} ${get('xsb')})`)}
            ${set('k', `(i32.sub (i32.sub (i32.const 1) ${get('xsb')}) ${get('xsb')})`)})
          (else
            ${set('k', `(i32.trunc_f64_s (f64.add (f64.mul ${f64(C.invln2)} ${get('x')}) (select (f64.const -0.5) (f64.const 0.5) ${get('xsb')})))`)}
            ${set('t', `(f64.convert_i32_s ${get('k')})`)}
            ${set('hi', `(f64.sub ${get('x')} (f64.mul ${get('t')} ${f64(C.ln2HI)}))`)}
            ${set('lo', `(f64.mul ${get('t')} ${f64(C.ln2LO)})`)}))
        ${set('x', `(f64.sub ${get('hi')} ${get('lo')})`)})
      (else
        ;; |x| < 2⁻²⁸: 1 + x
        (if (i32.lt_u ${get('hx')} (i32.const 0x3e300000)) (then (return (f64.add (f64.const 1) ${get('x')}))))
        ${set('k', i32(0))}))
    ${set('t', `(f64.mul ${get('x')} ${get('x')})`)}
    ${set(
      'twopk',
      `(f64.reinterpret_i64 (i64.shl (i64.extend_i32_u (i32.add (i32.const 0x3ff00000) (i32.shl (select ${get('k')} (i32.add ${get('k')} (i32.const 1000)) (i32.ge_s ${get('k')} (i32.const -1021))) (i32.const 20)))) (i64.const 32)))`,
    )}
    ${set('c', `(f64.sub ${get('x')} (f64.mul ${get('t')} (f64.add ${f64(C.P1)} (f64.mul ${get('t')} (f64.add ${f64(C.P2)} (f64.mul ${get('t')} (f64.add ${f64(C.P3)} (f64.mul ${get('t')} (f64.add ${f64(C.P4)} (f64.mul ${get('t')} ${f64(C.P5)}))))))))))`)}
    (if (i32.eqz ${get('k')}) (then
      (return (f64.sub (f64.const 1) (f64.sub (f64.div (f64.mul ${get('x')} ${get('c')}) (f64.sub ${get('c')} (f64.const 2))) ${get('x')})))))
    ${set('y', `(f64.sub (f64.const 1) (f64.sub (f64.sub ${get('lo')} (f64.div (f64.mul ${get('x')} ${get('c')}) (f64.sub (f64.const 2) ${get('c')}))) ${get('hi')}))`)}
    (if (i32.ge_s ${get('k')} (i32.const -1021)) (then
      (if (i32.eq ${get('k')} (i32.const 1024)) (then (return (f64.mul (f64.mul ${get('y')} (f64.const 2)) ${f64(C.two1023)}))))
      (return (f64.mul ${get('y')} ${get('twopk')}))))
    (f64.mul (f64.mul ${get('y')} ${get('twopk')}) ${f64(C.twom1000)}))`;

const f64x2 = (v) => `(f64x2.splat ${f64(v)})`;
const i64x2 = (v) => `(v128.const i64x2 ${v} ${v})`;

/**
 * exp of both lanes of a float64x2, each exactly $draw_exp's: while both lanes are below 512 in
 * magnitude (no overflow, underflow or k < −1021) and neither is 1, fdlibm's branches become selects —
 * k from the general reduction, ±1 for 0.5·ln2 < |x| < 1.5·ln2 (x − t·ln2HI and t·ln2LO are then the
 * ±ln2HI / ±ln2LO of that branch exactly), 0 below (x − 0·ln2HI − 0 is x) — the k = 0 and k ≠ 0 results
 * both computed and one kept, and 1 + x below 2⁻²⁸; IEEE arithmetic is exact per lane, and truncation
 * and conversion are exact at these k. Otherwise (−∞ of a grammar's mask, NaN) each lane goes through $draw_exp.
 */
const exp2Func = `
  (func $draw_exp2 (param $x v128) (result v128)
    ${locals(['hx', 't', 'hi', 'lo', 'r', 'tt', 'c', 'y', 'k0'], 'v128')}
    ${set('hx', `(v128.and (i64x2.shr_u ${get('x')} (i32.const 32)) ${i64x2('0x7fffffff')})`)}
    (if (i32.or (v128.any_true (i64x2.ge_s ${get('hx')} ${i64x2('0x40800000')})) (v128.any_true (f64x2.eq ${get('x')} ${f64x2(1)})))
      (then (return (f64x2.replace_lane 1 (f64x2.splat (call $draw_exp (f64x2.extract_lane 0 ${get('x')}))) (call $draw_exp (f64x2.extract_lane 1 ${get('x')}))))))
    ;; t = k: (int)(invln2·x ± 0.5) (the sign of x) where |x| ≥ 1.5·ln2, ±1 above 0.5·ln2, else 0
    ${set(
      't',
      `(v128.bitselect
        (f64x2.convert_low_i32x4_s (i32x4.trunc_sat_f64x2_s_zero (f64x2.add (f64x2.mul ${f64x2(C.invln2)} ${get('x')}) (v128.bitselect ${f64x2(-0.5)} ${f64x2(0.5)} (f64x2.lt ${get('x')} (f64x2.splat (f64.const 0)))))))
        (v128.bitselect ${f64x2(-1)} ${f64x2(1)} (f64x2.lt ${get('x')} (f64x2.splat (f64.const 0))))
        (i64x2.ge_s ${get('hx')} ${i64x2('0x3ff0a2b2')}))`,
    )}
    ${set('t', `(v128.and ${get('t')} (i64x2.gt_s ${get('hx')} ${i64x2('0x3fd62e42')}))`)}
    ${set('hi', `(f64x2.sub ${get('x')} (f64x2.mul ${get('t')} ${f64x2(C.ln2HI)}))`)}
    ${set('lo', `(f64x2.mul ${get('t')} ${f64x2(C.ln2LO)})`)}
    ${set('r', `(f64x2.sub ${get('hi')} ${get('lo')})`)}
    ${set('tt', `(f64x2.mul ${get('r')} ${get('r')})`)}
    ${set('c', `(f64x2.sub ${get('r')} (f64x2.mul ${get('tt')} (f64x2.add ${f64x2(C.P1)} (f64x2.mul ${get('tt')} (f64x2.add ${f64x2(C.P2)} (f64x2.mul ${get('tt')} (f64x2.add ${f64x2(C.P3)} (f64x2.mul ${get('tt')} (f64x2.add ${f64x2(C.P4)} (f64x2.mul ${get('tt')} ${f64x2(C.P5)}))))))))))`)}
    ;; k = 0: 1 − ((r·c)/(c − 2) − r)
    ${set('k0', `(f64x2.sub ${f64x2(1)} (f64x2.sub (f64x2.div (f64x2.mul ${get('r')} ${get('c')}) (f64x2.sub ${get('c')} ${f64x2(2)})) ${get('r')}))`)}
    ;; k ≠ 0: (1 − ((lo − (r·c)/(2 − c)) − hi)) · 2^k, 2^k as the bits (0x3ff + k) << 52
    ${set('y', `(f64x2.sub ${f64x2(1)} (f64x2.sub (f64x2.sub ${get('lo')} (f64x2.div (f64x2.mul ${get('r')} ${get('c')}) (f64x2.sub ${f64x2(2)} ${get('c')}))) ${get('hi')}))`)}
    ${set('y', `(f64x2.mul ${get('y')} (i64x2.add (i64x2.shl (i64x2.extend_low_i32x4_s (i32x4.trunc_sat_f64x2_s_zero ${get('t')})) (i32.const 52)) ${i64x2('0x3ff0000000000000')}))`)}
    ${set('y', `(v128.bitselect ${get('k0')} ${get('y')} (f64x2.eq ${get('t')} (f64x2.splat (f64.const 0))))`)}
    ;; |x| < 2⁻²⁸: 1 + x
    (v128.bitselect (f64x2.add ${f64x2(1)} ${get('x')}) ${get('y')} (i64x2.lt_s ${get('hx')} ${i64x2('0x3e300000')})))`;

/** The two exported kernels, written for `addressing(mem64)`'s pointer type (scripts/kernels/watText.mjs). */
function drawKernels(mem64) {
  const { A, padd, params, prologue } = addressing(mem64);
  /** z_i·inv in float64: the float32 logit at `row` + 4i, widened, times the row's 1 / temperature. */
  const scaled = (row, i) => `(f64.mul (f64.promote_f32 (f32.load ${padd(row, offset(i, 4))})) ${get('inv')})`;
  /** The same for z_i and z_{i+1} as a float64x2. */
  const scaled2 = (row, i) => `(f64x2.mul (f64x2.promote_low_f32x4 (v128.load64_zero align=4 ${padd(row, offset(i, 4))})) (f64x2.splat ${get('inv')}))`;
  /** The loop over pairs i, i + 1 < V. */
  const pairs = (body) => loop('i', i32(0), `(i32.sub ${get('V')} (i32.const 1))`, i32(2), body);

  const norm = `
    (func (export "draw_norm") ${params('z* ld rows V inv:f64 out*')}
      ${locals(['r', 'i', 'best'], 'i32')} ${locals(['row', 'o'], A)} ${locals(['mx', 'v', 'sum'], 'f64')} ${locals(['f', 'bv'], 'f32')} ${locals(['e'], 'v128')}
      ${prologue('z* out*')}
      ${loop(
        'r',
        i32(0),
        get('rows'),
        i32(1),
        `
        ${set('row', padd(get('z'), offset(`(i32.mul ${get('r')} ${get('ld')})`, 4)))}
        ;; the maximum of z·inv (a strict > from −∞, as logSumExp), and the first maximum of z (greedy's token)
        ${set('mx', '(f64.const -inf)')} ${set('best', i32(0))} ${set('bv', `(f32.load ${get('row')})`)}
        ${loop(
          'i',
          i32(0),
          get('V'),
          i32(1),
          `${set('f', `(f32.load ${padd(get('row'), offset(get('i'), 4))})`)}
          ${set('v', `(f64.mul (f64.promote_f32 ${get('f')}) ${get('inv')})`)}
          (if (f64.gt ${get('v')} ${get('mx')}) (then ${set('mx', get('v'))}))
          (if (f32.gt ${get('f')} ${get('bv')}) (then ${set('bv', get('f'))} ${set('best', get('i'))}))`,
        )}
        ;; Σ exp(z·inv − max), left to right: two exps at a time, added one after the other, then an odd V's last
        ${set('sum', '(f64.const 0)')}
        ${pairs(
          `${set('e', `(call $draw_exp2 (f64x2.sub ${scaled2(get('row'), get('i'))} (f64x2.splat ${get('mx')})))`)}
          ${set('sum', `(f64.add (f64.add ${get('sum')} (f64x2.extract_lane 0 ${get('e')})) (f64x2.extract_lane 1 ${get('e')}))`)}`,
        )}
        (if (i32.and ${get('V')} (i32.const 1)) (then
          ${set('i', `(i32.sub ${get('V')} (i32.const 1))`)}
          ${set('sum', `(f64.add ${get('sum')} (call $draw_exp (f64.sub ${scaled(get('row'), get('i'))} ${get('mx')})))`)}))
        ${set('o', padd(get('out'), offset(get('r'), 24)))}
        (f64.store ${get('o')} ${get('mx')})
        (f64.store offset=8 ${get('o')} ${get('sum')})
        (f64.store offset=16 ${get('o')} (f64.convert_i32_s ${get('best')}))
      `,
      )})`;

  const walk = `
    (func (export "draw_walk") ${params('z* ld rows V inv:f64 lse* u* tok*')}
      ${locals(['r', 'i', 't'], 'i32')} ${locals(['row'], A)} ${locals(['uu', 'l'], 'f64')} ${locals(['e'], 'v128')}
      ${prologue('z* lse* u* tok*')}
      ${loop(
        'r',
        i32(0),
        get('rows'),
        i32(1),
        `
        ${set('row', padd(get('z'), offset(`(i32.mul ${get('r')} ${get('ld')})`, 4)))}
        ${set('uu', `(f64.load ${padd(get('u'), offset(get('r'), 8))})`)}
        ${set('l', `(f64.load ${padd(get('lse'), offset(get('r'), 8))})`)}
        ${set('t', i32(-1))}
        ;; the inverse CDF: u −= p_i until it falls below 0
        (block $walk_end
          ${pairs(
            `${set('e', `(call $draw_exp2 (f64x2.sub ${scaled2(get('row'), get('i'))} (f64x2.splat ${get('l')})))`)}
            ${set('uu', `(f64.sub ${get('uu')} (f64x2.extract_lane 0 ${get('e')}))`)}
            (if (f64.lt ${get('uu')} (f64.const 0)) (then ${set('t', get('i'))} (br $walk_end)))
            ${set('uu', `(f64.sub ${get('uu')} (f64x2.extract_lane 1 ${get('e')}))`)}
            (if (f64.lt ${get('uu')} (f64.const 0)) (then ${set('t', `(i32.add ${get('i')} (i32.const 1))`)} (br $walk_end)))`,
          )}
          ;; an odd V's last token
          (br_if $walk_end (i32.eqz (i32.and ${get('V')} (i32.const 1))))
          ${set('i', `(i32.sub ${get('V')} (i32.const 1))`)}
          ${set('uu', `(f64.sub ${get('uu')} (call $draw_exp (f64.sub ${scaled(get('row'), get('i'))} ${get('l')})))`)}
          (if (f64.lt ${get('uu')} (f64.const 0)) (then ${set('t', get('i'))})))
        ;; rounding left u ≥ 0: the last token that can be drawn (a masked one, −∞, has probability 0)
        (if (i32.lt_s ${get('t')} (i32.const 0)) (then
          ${set('t', `(i32.sub ${get('V')} (i32.const 1))`)}
          (block $last_end (loop $last_top
            (br_if $last_end (i32.le_s ${get('t')} (i32.const 0)))
            (br_if $last_end (f32.ne (f32.load ${padd(get('row'), offset(get('t'), 4))}) (f32.const -inf)))
            ${set('t', `(i32.sub ${get('t')} (i32.const 1))`)}
            (br $last_top)))))
        (i32.store ${padd(get('tok'), offset(get('r'), 4))} ${get('t')})
      `,
      )})`;

  return `${norm}\n${walk}`;
}

/** The draw's functions, appended to the engine's module (the same text in the relaxed and plain builds). */
/** @param {{ mem64?: boolean }} [o] */
export function drawFuncs(o = {}) {
  return `${expFunc}\n${exp2Func}\n${drawKernels(!!o.mem64)}`;
}
