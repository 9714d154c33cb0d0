// The 8-bit kernels (issue 50, item 1) against the engine's float products on one thread, at
// Qwen2.5-0.5B's MLP shape: y[M, 4864] = x[M, 896] · W[4864, 896]ᵀ for M = 1 (decoding one row),
// 12 (decoding seed 000's rows) and 512 (prefill and training). Sides, interleaved in every round
// (the order rotates): the engine's float32 and bfloat16 products (kernels.ts, nt_f32 / nt_bf16), and
// Q8_0 — the activations quantized per row and block of 32, then the integer product — in the
// relaxed-SIMD build ('sign': |qx| as the 7-bit operand), the plain-SIMD build (i32x4.dot_i16x8_s),
// and the relaxed 'offset' alternative (two 7-bit dots and 127·Σqw, generated here at run time).
// Printed: each side's GFLOP/s (2·M·N·K per call, the quantization of x included in the Q8 sides'
// time, its share shown apart) as the median of the rounds, and the median of the per-round ratios
// with their spread (min–max). The Q8 sides must agree bit for bit (their integer sums are exact), else
// the bench fails. Then the backward product dy · W through a frozen q8 base with dequantized
// weights (q8_dequantize, then nn_f32) against nn_bf16 (--no-backward: skipped). No speed target: the
// engine's targets are issue 50's, measured on whole passes.
// Options: other register blockings of the generator, --variants RxC[:C1][@NB][,…] (C1: columns of the
// last single rows; NB: weight rows a tile; a leading p: the plain build's, e.g. 2x16:16@128,p4x4);
// other row counts, --rows 1,12,512; another weight, --shape NxK (896x4864: the down projection).
// Rounds: AGENT_RL_BENCH_ROUNDS (5).
// Run: npm run bench q8Kernels (or, built: node out/bench/q8Kernels.js)
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EngineMemory } from '../src/rl/policies/lm/models/engine/engineMemory';
import { engineModule } from '../src/rl/policies/lm/models/engine/hfEngine';
import { EngineKernels, type Matrix } from '../src/rl/policies/lm/models/engine/kernels';
import { Q8Kernels, q8Module, q8Operand, type Q8Operand } from '../src/rl/policies/lm/models/engine/q8Kernels';
import { CONTROL_BYTES, ThreadPool } from '../src/rl/policies/lm/models/engine/threadPool';
import { Rng } from '../src/rl/random';

const ROOT = path.resolve(__dirname, '..', '..');
const ROUNDS = Number(process.env.AGENT_RL_BENCH_ROUNDS ?? 5);
const shapeAt = process.argv.indexOf('--shape');
const shape = shapeAt > 0 ? (process.argv[shapeAt + 1] ?? '').split('x').map(Number) : [4864, 896];
const N = shape[0] ?? NaN,
  K = shape[1] ?? NaN;
if (!(N > 0 && K > 0 && K % 32 === 0)) throw new Error(`--shape NxK: whole numbers, K a multiple of 32 (got ${process.argv[shapeAt + 1]})`);
const rowsAt = process.argv.indexOf('--rows');
const ROWS = rowsAt > 0 ? (process.argv[rowsAt + 1] ?? '').split(',').map(Number) : [1, 12, 512];
const TARGET_S = 0.12; // seconds per side per round
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

type Side = { name: string; run: (M: number) => void; quantize?: (M: number) => void; out: number };

async function generated(o: {
  relaxed?: boolean;
  dot?: 'sign' | 'offset';
  R?: number;
  C?: number;
  C1?: number;
  NB?: number;
}): Promise<{ module: object; build: 'relaxed' | 'plain' }> {
  const gen = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'kernels', 'q8Wat.mjs')).href)) as { q8Wat: (o: object) => string };
  const wat = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'watCompiler.mjs')).href)) as {
    compileWatText: (n: string, t: string) => Promise<Uint8Array>;
  };
  const bytes = await wat.compileWatText('q8-variant.wat', gen.q8Wat({ relaxed: true, ...o }));
  return { module: new WebAssembly.Module(new Uint8Array(bytes)), build: o.relaxed === false ? 'plain' : 'relaxed' };
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--variants');
  const variants = at > 0 ? (process.argv[at + 1] ?? '').split(',').filter(Boolean) : [];
  const mem = new EngineMemory(160 * 2 ** 20, 'q8 bench', CONTROL_BYTES);
  const pool = await ThreadPool.start(mem.memory, engineModule().module, 1);
  try {
    const k = new EngineKernels(pool);
    const rng = new Rng(5);
    const Mmax = Math.max(...ROWS);
    const x = mem.allocF32(Mmax * K, 'x'),
      y = mem.allocF32(Mmax * N, 'y'),
      wf = mem.allocF32(N * K, 'w f32'),
      wb = mem.alloc(N * K * 2, 'w bf16');
    for (let i = 0; i < Mmax * K; i++) mem.f32[x / 4 + i] = (rng.next() - 0.5) * (i % 896 === 7 ? 50 : 1); // one outlier channel
    for (let i = 0; i < N * K; i++) {
      const v = (rng.next() - 0.5) * 0.08;
      mem.f32[wf / 4 + i] = v;
      mem.u16[wb / 2 + i] = new Uint32Array(new Float32Array([v]).buffer)[0]! >>> 16;
    }
    k.interleave8(wb, N * K);
    const q8 = new Q8Kernels(mem.memory);
    const wq: Q8Operand = q8Operand(mem.alloc(q8Operand(0, N, K).layout.bytes, 'w q8'), N, K);
    q8.quantize(wf, K, wq, 'weight');
    const xq: Q8Operand = q8Operand(mem.alloc(q8Operand(0, Mmax, K).layout.bytes, 'x q8'), Mmax, K);
    const wF: Matrix = { ptr: wf, rows: N, cols: K, dtype: 'f32' },
      wB: Matrix = { ptr: wb, rows: N, cols: K, dtype: 'bf16' };
    const xRows = (M: number): Q8Operand => ({ ...xq, layout: { ...xq.layout, rows: M } });
    const q8Side = (name: string, kern: Q8Kernels): Side => {
      const out = mem.allocF32(Mmax * N, `${name} out`);
      return {
        name,
        out,
        quantize: (M) => kern.quantize(x, K, xRows(M), 'activation', M),
        run: (M) => {
          kern.quantize(x, K, xRows(M), 'activation', M);
          kern.nt(xRows(M), wq, out, N, false);
        },
      };
    };
    const sides: Side[] = [
      { name: 'float32', out: y, run: (M) => k.nt(x, K, wF, y, N, M, false) },
      { name: 'bfloat16', out: y, run: (M) => k.nt(x, K, wB, y, N, M, false) },
      q8Side('q8 relaxed', q8),
      q8Side('q8 plain', new Q8Kernels(mem.memory, q8Module('plain'))),
      q8Side('q8 relaxed offset', new Q8Kernels(mem.memory, await generated({ dot: 'offset' }))),
    ];
    for (const v of variants) {
      const plain = v.startsWith('p');
      const [R, C, C1, NB] = v
        .replace(/^p/, '')
        .split(/[x:@]/)
        .map((n) => (n ? Number(n) : undefined));
      sides.push(
        q8Side(`q8 ${plain ? 'plain' : 'relaxed'} ${v.replace(/^p/, '')}`, new Q8Kernels(mem.memory, await generated({ relaxed: !plain, R, C, C1, NB }))),
      );
    }
    console.log(
      `one thread, ${engineModule().relaxed ? 'relaxed SIMD' : 'plain SIMD'} engine; y[M, ${N}] = x[M, ${K}] · W[${N}, ${K}]ᵀ; ${ROUNDS} interleaved rounds; GFLOP/s = 2·M·N·K / s (Q8: quantizing x included)`,
    );
    let agree = true;
    for (const M of ROWS) {
      const flop = 2 * M * N * K;
      const reps = new Map<string, number>();
      for (const s of sides) {
        s.run(M);
        const t = performance.now();
        s.run(M);
        reps.set(s.name, Math.max(1, Math.round(TARGET_S / Math.max(1e-6, (performance.now() - t) / 1000))));
      }
      // the Q8 sides' results: bit for bit the same
      const q8s = sides.filter((s) => s.quantize);
      const ref = mem.f32.slice(q8s[0]!.out / 4, q8s[0]!.out / 4 + M * N);
      for (const s of q8s.slice(1)) {
        const got = mem.f32.subarray(s.out / 4, s.out / 4 + M * N);
        if (!got.every((v, i) => Object.is(v, ref[i]))) {
          agree = false;
          console.log(`M = ${M}: ${s.name} differs from ${q8s[0]!.name}`);
        }
      }
      const rates = new Map<string, number[]>(sides.map((s) => [s.name, []]));
      const qShare = new Map<string, number[]>(q8s.map((s) => [s.name, []]));
      for (let r = 0; r < ROUNDS; r++) {
        const order = sides.map((_, i) => sides[(i + r) % sides.length]!);
        for (const s of order) {
          const n = reps.get(s.name)!;
          const t = performance.now();
          for (let i = 0; i < n; i++) s.run(M);
          const sec = (performance.now() - t) / 1000 / n;
          rates.get(s.name)!.push(flop / sec / 1e9);
          if (s.quantize) {
            const tq = performance.now();
            for (let i = 0; i < n; i++) s.quantize(M);
            qShare.get(s.name)!.push((performance.now() - tq) / 1000 / n / sec);
          }
        }
      }
      console.log(`\nM = ${M} (${(flop / 1e9).toFixed(3)} GFLOP a call)`);
      console.log('| side | GFLOP/s (median) | min–max | ÷ bfloat16 (median, min–max) | ÷ float32 (median, min–max) | quantizing x |');
      console.log('|---|---|---|---|---|---|');
      const ratio = (a: string, b: string): string => {
        const rs = rates.get(a)!.map((v, i) => v / rates.get(b)![i]!);
        return `${median(rs).toFixed(2)}× (${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)})`;
      };
      for (const s of sides) {
        const rs = rates.get(s.name)!;
        const share = qShare.get(s.name);
        console.log(
          `| ${s.name} | ${median(rs).toFixed(1)} | ${Math.min(...rs).toFixed(1)}–${Math.max(...rs).toFixed(1)} | ${ratio(s.name, 'bfloat16')} | ${ratio(s.name, 'float32')} | ${share ? `${(100 * median(share)).toFixed(1)} %` : ''} |`,
        );
      }
      console.log(`relaxed ÷ plain: ${ratio('q8 relaxed', 'q8 plain')}; sign ÷ offset: ${ratio('q8 relaxed', 'q8 relaxed offset')}`);
    }
    // The backward product dx[M, K] = dy[M, N] · W through a frozen q8 base, with dequantized weights:
    // q8_dequantize into a float32 copy of W, then the engine's nn_f32, against nn_bf16 on the bfloat16
    // weights (interleaved rounds, the largest M).
    if (!process.argv.includes('--no-backward')) {
      const M = Math.max(...ROWS);
      const dy = mem.allocF32(M * N, 'dy'),
        dx = mem.allocF32(M * K, 'dx'),
        wd = mem.allocF32(N * K, 'w dequantized');
      for (let i = 0; i < M * N; i++) mem.f32[dy / 4 + i] = rng.next() - 0.5;
      const wD: Matrix = { ptr: wd, rows: N, cols: K, dtype: 'f32' };
      const back: Side[] = [
        { name: 'nn bfloat16', out: dx, run: () => k.nn(dy, N, wB, dx, K, M, false) },
        { name: 'nn float32', out: dx, run: () => k.nn(dy, N, wF, dx, K, M, false) },
        { name: 'q8 dequantize + nn float32', out: dx, run: () => (q8.dequantize(wq, wd, K), k.nn(dy, N, wD, dx, K, M, false)) },
        { name: 'q8 dequantize', out: wd, run: () => q8.dequantize(wq, wd, K) },
      ];
      const rates = new Map<string, number[]>(back.map((b) => [b.name, []]));
      for (const b of back) b.run(M);
      for (let r = 0; r < ROUNDS; r++)
        for (const b of back.map((_, i) => back[(i + r) % back.length]!)) {
          const t = performance.now();
          b.run(M);
          rates.get(b.name)!.push((performance.now() - t) / 1000);
        }
      const ms = (n: string): string => (1000 * median(rates.get(n)!)).toFixed(1);
      const vs = (a: string, b: string): string => {
        const rs = rates.get(b)!.map((v, i) => v / rates.get(a)![i]!);
        return `${median(rs).toFixed(2)}× (${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)})`;
      };
      console.log(`
dx[${M}, ${K}] = dy[${M}, ${N}] · W (backward through the frozen base), ms (median of ${ROUNDS}):`);
      console.log(
        `nn bfloat16 ${ms('nn bfloat16')}; nn float32 ${ms('nn float32')}; q8 dequantize + nn float32 ${ms('q8 dequantize + nn float32')} (the dequantization alone ${ms('q8 dequantize')}); dequantize + nn float32 ÷ nn bfloat16 speed: ${vs('q8 dequantize + nn float32', 'nn bfloat16')}`,
      );
    }
    if (!agree) process.exitCode = 1;
  } finally {
    await pool.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
