// The engine's kernels against plain JavaScript implementations of the same math, on one thread and on
// two (the splits must not change a result), at shapes that cross every blocking boundary: k beyond
// one pass of 512, columns beyond one tile of 64, rows that are not a multiple of 4, odd tails.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { EngineMemory } from '../../../../../../../src/rl/policies/lm/models/engine/engineMemory';
import { engineModule } from '../../../../../../../src/rl/policies/lm/models/engine/hfEngine';
import { EngineKernels, type Matrix } from '../../../../../../../src/rl/policies/lm/models/engine/kernels';
import { CONTROL_BYTES, ThreadPool } from '../../../../../../../src/rl/policies/lm/models/engine/threadPool';

let seed = 12345;
const rand = (): number => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return seed / 4294967296 - 0.5;
};
const randArray = (n: number, scale = 1): Float32Array => Float32Array.from({ length: n }, () => rand() * scale);
const bf16 = (f: number): number => {
  const u = new Uint32Array(new Float32Array([f]).buffer)[0]!;
  return (u + 0x7fff + ((u >>> 16) & 1)) >>> 16;
};
const fromBf16 = (h: number): number => new Float32Array(new Uint32Array([h << 16]).buffer)[0]!;
const maxErr = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
};

interface Rig {
  mem: EngineMemory;
  k: EngineKernels;
  pool: ThreadPool;
}
const rigs: Rig[] = [];

async function rig(threads: number): Promise<Rig> {
  const mem = new EngineMemory(256 * 2 ** 20, 'test plan', CONTROL_BYTES);
  const pool = await ThreadPool.start(mem.memory, engineModule().module, threads);
  // every call split over the threads, however small
  const r = { mem, k: new EngineKernels(pool, 0), pool };
  rigs.push(r);
  return r;
}

function put(mem: EngineMemory, data: Float32Array): number {
  const p = mem.allocF32(data.length, 'test');
  mem.f32.set(data, p / 4);
  return p;
}
function get(mem: EngineMemory, p: number, n: number): Float32Array {
  return mem.f32.slice(p / 4, p / 4 + n);
}

/** A [rows, cols] weight in both layouts: float32 values that are exactly bfloat16, and the 8-interleaved bfloat16 copy. */
function weight(mem: EngineMemory, rows: number, cols: number): { values: Float32Array; bf: Matrix; f: Matrix } {
  const values = new Float32Array(rows * cols);
  const u16 = new Uint16Array(rows * cols);
  for (let i = 0; i < values.length; i++) {
    const h = bf16(rand());
    values[i] = fromBf16(h);
    u16[i] = h;
  }
  const ptr = mem.alloc(rows * cols * 2, 'test');
  mem.u16.set(u16, ptr / 2);
  return { values, bf: { ptr, rows, cols, dtype: 'bf16' }, f: { ptr: put(mem, values), rows, cols, dtype: 'f32' } };
}

describe('engine kernels', () => {
  let one: Rig, two: Rig;
  before(async () => {
    one = await rig(1);
    two = await rig(2);
  });
  after(async () => {
    for (const r of rigs) await r.pool.close();
  });

  it('x·wᵀ with bfloat16 (interleaved in place) and float32 weights, accumulating, equals the JavaScript product', () => {
    for (const r of [one, two]) {
      const { mem, k } = r;
      mem.scoped(() => {
        const M = 7,
          K = 1040,
          N = 150;
        const x = randArray(M * K);
        const w = weight(mem, N, K);
        k.interleave8(w.bf.ptr, N * K);
        const want = new Float32Array(M * N);
        for (let m = 0; m < M; m++)
          for (let n = 0; n < N; n++) {
            let s = 0;
            for (let i = 0; i < K; i++) s += x[m * K + i]! * w.values[n * K + i]!;
            want[m * N + n] = s;
          }
        const xp = put(mem, x);
        for (const mat of [w.bf, w.f]) {
          const y = mem.allocF32(M * N, 'y');
          k.nt(xp, K, mat, y, N, M, false);
          assert.ok(maxErr(get(mem, y, M * N), want) < 2e-4, `${mat.dtype} on ${k.threads} threads`);
          k.nt(xp, K, mat, y, N, M, true);
          assert.ok(
            maxErr(
              get(mem, y, M * N),
              want.map((v) => 2 * v),
            ) < 4e-4,
            `${mat.dtype} accumulating`,
          );
        }
      });
    }
  });

  it('dy·w and aᵀ·b equal the JavaScript products', () => {
    for (const r of [one, two]) {
      const { mem, k } = r;
      mem.scoped(() => {
        const M = 5,
          N = 300,
          K = 72;
        const dy = randArray(M * N);
        const w = weight(mem, N, K);
        k.interleave8(w.bf.ptr, N * K);
        const want = new Float32Array(M * K);
        for (let m = 0; m < M; m++)
          for (let i = 0; i < K; i++) {
            let s = 0;
            for (let n = 0; n < N; n++) s += dy[m * N + n]! * w.values[n * K + i]!;
            want[m * K + i] = s;
          }
        const dyp = put(mem, dy);
        for (const mat of [w.bf, w.f]) {
          const dx = mem.allocF32(M * K, 'dx');
          k.nn(dyp, N, mat, dx, K, M, false);
          assert.ok(maxErr(get(mem, dx, M * K), want) < 2e-4, `${mat.dtype} on ${k.threads} threads`);
        }
        // a rows window of w (a vocabulary chunk)
        const dx = mem.allocF32(M * K, 'dx');
        k.nn(dyp + 100 * 4, N, w.f, dx, K, M, false, 100, 164);
        const part = new Float32Array(M * K);
        for (let m = 0; m < M; m++) for (let i = 0; i < K; i++) for (let n = 100; n < 164; n++) part[m * K + i]! += dy[m * N + n]! * w.values[n * K + i]!;
        assert.ok(maxErr(get(mem, dx, M * K), part) < 1e-4);
        for (const J of [8, 12]) {
          const I = 9,
            MM = 33;
          const a = randArray(MM * I),
            b = randArray(MM * J);
          const c = mem.allocF32(I * J, 'c');
          k.tn(put(mem, a), I, put(mem, b), J, c, J, MM, I, J, false);
          const cw = new Float32Array(I * J);
          for (let m = 0; m < MM; m++) for (let i = 0; i < I; i++) for (let j = 0; j < J; j++) cw[i * J + j]! += a[m * I + i]! * b[m * J + j]!;
          assert.ok(maxErr(get(mem, c, I * J), cw) < 1e-5, `tn J=${J}`);
        }
      });
    }
  });

  it('RMSNorm and its backward pass, SwiGLU and its backward pass, the rotary embedding and its inverse', () => {
    const { mem, k } = two;
    mem.scoped(() => {
      const M = 6,
        D = 24,
        eps = 1e-6;
      const x = randArray(M * D, 3),
        g = randArray(D, 2),
        dy = randArray(M * D);
      const xp = put(mem, x),
        gp = put(mem, g),
        dyp = put(mem, dy);
      const y = mem.allocF32(M * D, 'y'),
        rstd = mem.allocF32(M, 'r'),
        dx = mem.allocF32(M * D, 'dx');
      k.rmsnorm(xp, D, gp, y, D, rstd, M, D, eps);
      k.rmsnormBwd(xp, D, gp, rstd, dyp, D, dx, D, M, D, false);
      const yw = new Float32Array(M * D),
        dxw = new Float32Array(M * D);
      for (let m = 0; m < M; m++) {
        let ss = 0;
        for (let i = 0; i < D; i++) ss += x[m * D + i]! ** 2;
        const r = 1 / Math.sqrt(ss / D + eps);
        let s = 0;
        for (let i = 0; i < D; i++) s += g[i]! * dy[m * D + i]! * x[m * D + i]!;
        for (let i = 0; i < D; i++) {
          yw[m * D + i] = x[m * D + i]! * r * g[i]!;
          dxw[m * D + i] = r * g[i]! * dy[m * D + i]! - (r ** 3 / D) * x[m * D + i]! * s;
        }
      }
      assert.ok(maxErr(get(mem, y, M * D), yw) < 1e-5);
      assert.ok(maxErr(get(mem, dx, M * D), dxw) < 1e-5);

      const n = 40;
      const gate = randArray(n, 8),
        up = randArray(n),
        da = randArray(n);
      const a = mem.allocF32(n, 'a'),
        dg = mem.allocF32(n, 'dg'),
        du = mem.allocF32(n, 'du');
      const gatep = put(mem, gate),
        upp = put(mem, up);
      k.swiglu(gatep, upp, a, n);
      k.swigluBwd(gatep, upp, put(mem, da), dg, du, n);
      const sig = (v: number): number => 1 / (1 + Math.exp(-v));
      assert.ok(
        maxErr(
          get(mem, a, n),
          Array.from(gate, (v, i) => v * sig(v) * up[i]!),
        ) < 1e-5,
      );
      assert.ok(
        maxErr(
          get(mem, dg, n),
          Array.from(gate, (v, i) => da[i]! * up[i]! * sig(v) * (1 + v * (1 - sig(v)))),
        ) < 1e-5,
      );
      assert.ok(
        maxErr(
          get(mem, du, n),
          Array.from(gate, (v, i) => da[i]! * v * sig(v)),
        ) < 1e-5,
      );

      const heads = 3,
        E = 16,
        half = E / 2,
        P = 10;
      const q = randArray(M * heads * E);
      const pos = mem.alloc(M * 4, 'pos');
      [0, 3, 9, 1, 5, 7].forEach((p, i) => (mem.i32[pos / 4 + i] = p));
      const cos = mem.allocF32(P * half, 'cos'),
        sin = mem.allocF32(P * half, 'sin');
      for (let p = 0; p < P; p++)
        for (let i = 0; i < half; i++) {
          mem.f32[cos / 4 + p * half + i] = Math.cos(p / 10 ** (i / half));
          mem.f32[sin / 4 + p * half + i] = Math.sin(p / 10 ** (i / half));
        }
      const qp = put(mem, q);
      k.rope(qp, heads * E, heads, E, pos, cos, sin, M, false);
      const qw = new Float32Array(q);
      for (let m = 0; m < M; m++)
        for (let h = 0; h < heads; h++)
          for (let i = 0; i < half; i++) {
            const p = mem.i32[pos / 4 + m]!,
              c = mem.f32[cos / 4 + p * half + i]!,
              s = mem.f32[sin / 4 + p * half + i]!;
            const o = m * heads * E + h * E;
            qw[o + i] = q[o + i]! * c - q[o + i + half]! * s;
            qw[o + i + half] = q[o + i + half]! * c + q[o + i]! * s;
          }
      assert.ok(maxErr(get(mem, qp, q.length), qw) < 1e-5);
      k.rope(qp, heads * E, heads, E, pos, cos, sin, M, true);
      assert.ok(maxErr(get(mem, qp, q.length), q) < 1e-5, 'the inverse rotation restores the input');
    });
  });

  it('attention over two packed causal segments with grouped queries, forward and backward, equals the JavaScript computation', () => {
    for (const r of [one, two]) {
      const { mem, k } = r;
      mem.scoped(() => {
        const segs = [
          { start: 0, len: 5 },
          { start: 5, len: 7 },
        ];
        const N = 12,
          Hq = 4,
          K = 2,
          E = 8,
          G = Hq / K,
          qd = Hq * E,
          kd = K * E,
          scale = 1 / Math.sqrt(E);
        const q = randArray(N * qd, 2),
          kk = randArray(N * kd, 2),
          v = randArray(N * kd),
          dO = randArray(N * qd);
        // reference: per segment and head, causal softmax attention, and its gradients
        const o = new Float32Array(N * qd),
          dq = new Float32Array(N * qd),
          dk = new Float32Array(N * kd),
          dv = new Float32Array(N * kd);
        for (const s of segs)
          for (let h = 0; h < Hq; h++) {
            const g = Math.floor(h / G);
            for (let i = 0; i < s.len; i++) {
              const ti = s.start + i;
              const sc: number[] = [];
              for (let j = 0; j <= i; j++) {
                let d = 0;
                for (let e = 0; e < E; e++) d += q[ti * qd + h * E + e]! * kk[(s.start + j) * kd + g * E + e]!;
                sc.push(d * scale);
              }
              const mx = Math.max(...sc);
              const ex = sc.map((x) => Math.exp(x - mx));
              const sum = ex.reduce((a, b) => a + b, 0);
              const p = ex.map((x) => x / sum);
              for (let e = 0; e < E; e++) for (let j = 0; j <= i; j++) o[ti * qd + h * E + e]! += p[j]! * v[(s.start + j) * kd + g * E + e]!;
              const dp = p.map((_, j) => {
                let d = 0;
                for (let e = 0; e < E; e++) d += dO[ti * qd + h * E + e]! * v[(s.start + j) * kd + g * E + e]!;
                return d;
              });
              let Di = 0;
              for (let e = 0; e < E; e++) Di += dO[ti * qd + h * E + e]! * o[ti * qd + h * E + e]!;
              const ds = p.map((pj, j) => pj * (dp[j]! - Di));
              for (let j = 0; j <= i; j++)
                for (let e = 0; e < E; e++) {
                  dq[ti * qd + h * E + e]! += scale * ds[j]! * kk[(s.start + j) * kd + g * E + e]!;
                  dk[(s.start + j) * kd + g * E + e]! += scale * ds[j]! * q[ti * qd + h * E + e]!;
                  dv[(s.start + j) * kd + g * E + e]! += p[j]! * dO[ti * qd + h * E + e]!;
                }
            }
          }
        const qp = put(mem, q),
          kp = put(mem, kk),
          vp = put(mem, v),
          dop = put(mem, dO);
        const op = mem.allocF32(N * qd, 'o');
        const count = segs.length * Hq;
        const items = mem.alloc(count * 16, 'items');
        let off = 0,
          n = 0;
        const bases: number[] = [];
        for (const s of segs) {
          bases.push(off);
          for (let h = 0; h < Hq; h++, n++) {
            mem.i32.set([s.start, s.len, h, off], items / 4 + n * 4);
            off += s.len * s.len * 4;
          }
        }
        const probs = mem.alloc(off, 'probs');
        const scratch = mem.allocF32(8 * k.threads, 'scratch');
        k.attnFwd(qp, qd, kp, vp, kd, op, qd, items, count, E, G, scale, probs, scratch, 8, 1e9);
        assert.ok(maxErr(get(mem, op, N * qd), o) < 1e-5, `forward on ${k.threads} threads`);
        const dqp = mem.allocF32(N * qd, 'dq'),
          dkp = mem.allocF32(N * kd, 'dk'),
          dvp = mem.allocF32(N * kd, 'dv');
        k.fill(dkp, 0, N * kd);
        k.fill(dvp, 0, N * kd);
        const bitems = mem.alloc(segs.length * K * 16, 'items');
        segs.forEach((s, si) => {
          for (let g = 0; g < K; g++) mem.i32.set([s.start, s.len, g, bases[si]! + g * G * s.len * s.len * 4], bitems / 4 + (si * K + g) * 4);
        });
        k.attnBwd(qp, qd, kp, vp, kd, op, dop, qd, dqp, dkp, dvp, bitems, segs.length * K, E, G, scale, probs, scratch, 8, 1e9);
        assert.ok(maxErr(get(mem, dqp, N * qd), dq) < 1e-5, 'dq');
        assert.ok(maxErr(get(mem, dkp, N * kd), dk) < 1e-5, 'dk');
        assert.ok(maxErr(get(mem, dvp, N * kd), dv) < 1e-5, 'dv');
      });
    }
  });

  it('the head over vocabulary chunks: log-sum-exp, entropy, argmax and the softmax gradient equal the whole-row computation', () => {
    const { mem, k } = two;
    mem.scoped(() => {
      const M = 3,
        V = 40,
        C = 16,
        T = 0.7,
        invT = Math.fround(1 / T);
      const z = randArray(M * V, 8);
      const targets = [5, 39, 17];
      z[2 * V + 3] = 100; // row 2's argmax is column 3, not its target
      z[0 * V + 5] = 50; // row 0's target is its argmax
      const tg = mem.alloc(M * 4, 'tg');
      targets.forEach((t, i) => (mem.i32[tg / 4 + i] = t));
      const state = mem.allocF32(M * 6, 'state');
      for (let i = 0; i < M; i++) mem.f32.set([-Infinity, 0, 0, 0, -Infinity, 0], state / 4 + i * 6);
      for (let v0 = 0; v0 < V; v0 += C) {
        const c = Math.min(C, V - v0);
        const chunk = new Float32Array(M * c);
        for (let m = 0; m < M; m++) for (let j = 0; j < c; j++) chunk[m * c + j] = z[m * V + v0 + j]!;
        k.lseUpdate(put(mem, chunk), M, c, v0, tg, invT, state);
      }
      for (let m = 0; m < M; m++) {
        const row = Array.from(z.subarray(m * V, (m + 1) * V), (x) => x * invT);
        const mx = Math.max(...row);
        const lz = mx + Math.log(row.reduce((s, x) => s + Math.exp(x - mx), 0));
        const p = row.map((x) => Math.exp(x - lz));
        const ent = -p.reduce((s, pi, i) => s + pi * (row[i]! - lz), 0);
        const st = get(mem, state + m * 24, 6);
        const got = st[0]! + Math.log(st[1]!);
        assert.ok(Math.abs(got - lz) < 1e-4, `logZ row ${m}`);
        assert.ok(Math.abs(got - st[2]! / st[1]! - ent) < 1e-4, `entropy row ${m}`);
        assert.equal(st[3], z[m * V + targets[m]!], 'the target logit');
        assert.equal(st[5], row.indexOf(mx), 'the argmax column');
        // softmax gradient: g·invT·(1[target] − p)
        const logZ = mem.allocF32(M, 'lz');
        mem.f32[logZ / 4 + m] = got;
        const gp = mem.allocF32(M, 'g');
        mem.f32[gp / 4 + m] = 1.5;
        const zr = put(mem, z.subarray(m * V, (m + 1) * V));
        k.softmaxBwd(zr, 1, V, 0, tg + m * 4, invT, logZ + m * 4, gp + m * 4);
        const want = p.map((pi, i) => 1.5 * invT * ((i === targets[m] ? 1 : 0) - pi));
        assert.ok(maxErr(get(mem, zr, V), want) < 1e-5, `softmax gradient row ${m}`);
      }
    });
  });

  it('float32 → bfloat16 rounds to nearest even into the interleaved order; an embedding row reads back as float32', () => {
    const { mem, k } = two;
    mem.scoped(() => {
      const V = 5,
        D = 16;
      const t = randArray(V * D, 4);
      const dst = mem.alloc(V * D * 2, 'bf');
      k.f32ToBf16(put(mem, t), dst, V * D);
      const ids = mem.alloc(3 * 4, 'ids');
      mem.i32.set([4, 0, 2], ids / 4);
      const out = mem.allocF32(3 * D, 'out');
      k.embed({ ptr: dst, rows: V, cols: D, dtype: 'bf16' }, ids, 3, out, D);
      const want = [4, 0, 2].flatMap((r) => Array.from(t.subarray(r * D, (r + 1) * D), (x) => fromBf16(bf16(x))));
      assert.deepEqual(Array.from(get(mem, out, 3 * D)), want);
    });
  });

  it('the committed kernel module is what scripts/kernels/engineWat.mjs generates (npm run build:kernels)', async () => {
    const root = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..', '..');
    const w = (await import(pathToFileURL(path.join(root, 'scripts', 'watCompiler.mjs')).href)) as {
      compileEngine: () => Promise<{ relaxed: Uint8Array; plain: Uint8Array }>;
      engineModuleText: (b: { relaxed: Uint8Array; plain: Uint8Array }) => string;
    };
    const committed = fs.readFileSync(path.join(root, 'src', 'rl', 'policies', 'lm', 'models', 'engine', 'engineWasm.ts'), 'utf8');
    assert.equal(committed, w.engineModuleText(await w.compileEngine()));
  });

  it('memory past the plan is an error that names the request and the plan, and scopes give back what they took', () => {
    const mem = new EngineMemory(1 << 20, 'Memory plan: 1 MiB (test)');
    const before = mem.used;
    mem.scoped(() => mem.alloc(1000, 'a'));
    assert.equal(mem.used, before);
    assert.throws(
      () => mem.alloc(2 << 20, 'activations of one layer'),
      /the engine ran out of its planned memory: activations of one layer asked for 2\.0 MiB with 1\.0 MiB left of 1\.0 MiB .*Memory plan: 1 MiB \(test\)/,
    );
    assert.throws(() => new EngineMemory(5 * 2 ** 30, 'Memory plan: 5 GiB'), /more than wasm's 4 GiB address space \(wasm32\)\. .*\. Memory plan: 5 GiB/);
  });
});
