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
