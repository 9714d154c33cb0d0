// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- a text generator: every helper maps WAT strings to WAT strings, and the WebAssembly validator (wabt, then V8) checks what it writes
// @ts-nocheck
// The WebAssembly-text helpers both kernel generators write with (engineWat.mjs, the float kernels;
// q8Wat.mjs, the 8-bit ones): each maps WAT strings to a WAT string, so a kernel's shape is stated once
// and the two modules spell locals, integer arithmetic, loops and horizontal sums alike.

/** `(local.get $n)` */
export const get = (n) => `(local.get $${n})`;
/** `(local.set $n v)` */
export const set = (n, v) => `(local.set $${n} ${v})`;
export const i32 = (n) => `(i32.const ${n})`;
export const add = (a, b) => `(i32.add ${a} ${b})`;
export const mul = (a, b) => `(i32.mul ${a} ${b})`;
/** a · 4 (a float32 index as a byte offset) */
export const shl2 = (a) => `(i32.shl ${a} (i32.const 2))`;
/** n += by */
export const inc = (n, by) => set(n, add(get(n), by));
export const zero = '(v128.const i32x4 0 0 0 0)';
/** The sum of a float32x4's lanes, in the order (l0 + l1) + (l2 + l3). */
export const hsum = (v) =>
  `(f32.add (f32.add (f32x4.extract_lane 0 ${v}) (f32x4.extract_lane 1 ${v})) (f32.add (f32x4.extract_lane 2 ${v}) (f32x4.extract_lane 3 ${v})))`;
/** Declarations of locals `names`, each of `type`. */
export const locals = (names, type) => names.map((n) => `(local $${n} ${type})`).join(' ');
/** for (v = from; v < to; v += step) body — `to` and `step` are expressions. */
export const loop = (v, from, to, step, body, label = v) =>
  `${set(v, from)} (block $${label}_end (loop $${label}_top (br_if $${label}_end (i32.ge_s ${get(v)} ${to})) ${body} ${set(v, add(get(v), step))} (br $${label}_top)))`;
/** [0, 1, …, n − 1] */
export const range = (n) => Array.from({ length: n }, (_, i) => i);

/**
 * The address type of one build: wasm32 (i32 addresses, `memory 1 65536`) or memory64 (i64 addresses,
 * up to V8's 262,144 pages = 16 GiB), written from the same kernel source. Pointers — parameters and
 * locals that hold byte addresses — take the build's type; element counts, strides and the byte
 * offsets computed from them stay i32 (every offset lies inside one tensor, under 4 GiB) and are
 * zero-extended where added to a pointer (`padd`). The wasm32 build's text is what it was before the
 * parameter existed, so its binary is unchanged.
 *
 * An exported kernel takes each pointer as an f64 in the 64-bit build (converted once on entry with
 * i64.trunc_f64_u, which traps on NaN or a negative value rather than wrapping): JS numbers cross the
 * boundary as they do for the wasm32 build's i32 (the thread pool keeps its float64 argument slots,
 * kernels.ts its plain-number calls), where an i64 parameter would take a BigInt per pointer per call.
 */
export function addressing(mem64) {
  const A = mem64 ? 'i64' : 'i32';
  const ext = (off) => {
    if (!mem64) return off;
    const c = /^\(i32\.const (\d+)\)$/.exec(off);
    return c ? `(i64.const ${c[1]})` : `(i64.extend_i32_u ${off})`;
  };
  /** pointer + byte offset (i32) */
  const padd = (p, off) => `(${A}.add ${p} ${ext(off)})`;
  /** Parameters from a spec: `x*` a pointer, `s:f32` a float, a bare name an i32. */
  const parse = (spec) =>
    spec
      .trim()
      .split(/\s+/)
      .map((t) => (t.endsWith('*') ? { n: t.slice(0, -1), t: 'p' } : t.includes(':') ? { n: t.split(':')[0], t: t.split(':')[1] } : { n: t, t: 'i32' }));
  return {
    A,
    mem64,
    padd,
    /** pointer local n += byte offset */
    pinc: (n, by) => set(n, padd(get(n), by)),
    /** a ≥ b (unsigned) for two pointers */
    pge: (a, b) => `(${A}.ge_u ${a} ${b})`,
    /** memory.copy with an i32 byte count */
    pcopy: (dst, src, len) => `(memory.copy ${dst} ${src} ${ext(len)})`,
    /** Declarations of pointer locals `names`. */
    plocals: (names) => locals(names, A),
    /** An exported function's parameters (and, in the 64-bit build, its pointer locals): pointers as f64 there. */
    params: (spec) =>
      parse(spec)
        .map((p) => (p.t !== 'p' ? `(param $${p.n} ${p.t})` : mem64 ? `(param $${p.n}_f f64)` : `(param $${p.n} i32)`))
        .join(' ') +
      (mem64
        ? ' ' +
          locals(
            parse(spec)
              .filter((p) => p.t === 'p')
              .map((p) => p.n),
            'i64',
          )
        : ''),
    /** The 64-bit build's conversions of an exported function's f64 pointers (nothing in wasm32). */
    prologue: (spec) =>
      mem64
        ? parse(spec)
            .filter((p) => p.t === 'p')
            .map((p) => set(p.n, `(i64.trunc_f64_u (local.get $${p.n}_f))`))
            .join(' ')
        : '',
    /** An internal function's parameters (pointers in the address type). */
    iparams: (spec) =>
      parse(spec)
        .map((p) => `(param $${p.n} ${p.t === 'p' ? A : p.t})`)
        .join(' '),
    memory: mem64 ? '(import "env" "memory" (memory i64 1 262144 shared))' : '(import "env" "memory" (memory 1 65536 shared))',
  };
}
