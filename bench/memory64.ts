// What 64-bit addressing costs the engine's kernels (issue 50, item 4): the same products on the
// wasm32 build (one memory of at most 4 GiB, pointers i32, out-of-bounds caught by guard pages) and on
// the memory64 build (pointers i64, explicit bounds checks), both generated from one source
// (scripts/kernels/engineWat.mjs). Sides, interleaved in every round (the order rotates): wasm32;
// memory64 with the operands low in the memory; memory64 with the operands above 4 GiB (a memory of
// 4 GiB + 96 MiB, as a plan past wasm32's limit would have it). Workloads: the engine's 512² probe
// (x[512, 512] · w[512, 512]ᵀ over float32 and bfloat16 weights: nt_f32, nt_bf16), and the 8-bit
// product q8_nt at 512² and at decoding's 12 rows × Qwen2.5-0.5B's MLP weight [4864, 896] (the
// activations quantized before the timing). Printed: GFLOP/s per side (2·M·N·K per call, the median
// of the rounds) and the median of the per-round ratios memory64 / wasm32 with their spread (min–max).
// The sides must give the same bits (the same kernels), else the bench fails. No speed target: the
// numbers decide the plan's address mode (engineAddress.chooseAddressMode).
// Rounds: AGENT_RL_BENCH_ROUNDS (21) of AGENT_RL_BENCH_SLOT seconds per side and workload (0.1: short
// slots side by side, so a per-round ratio compares sides under the same load); threads:
// AGENT_RL_BENCH_THREADS (1: the addressing cost is per thread, and one thread leaves out the wait for
// the slowest thread of a split call, which on a shared machine is most of the noise).
// Run: npm run bench memory64 (or, built: node out/bench/memory64.js); output: docs/runs/memory64/.
import { MAX_WASM32_BYTES, memory64Support, type AddressMode } from '../src/rl/policies/lm/models/engine/engineAddress';
import { EngineMemory } from '../src/rl/policies/lm/models/engine/engineMemory';
import { engineModule } from '../src/rl/policies/lm/models/engine/hfEngine';
import { EngineKernels, type Matrix } from '../src/rl/policies/lm/models/engine/kernels';
import { q8Operand, type Q8Operand } from '../src/rl/policies/lm/models/engine/q8Kernels';
import { CONTROL_BYTES, ThreadPool } from '../src/rl/policies/lm/models/engine/threadPool';
import { Rng } from '../src/rl/random';

const ROUNDS = Number(process.env.AGENT_RL_BENCH_ROUNDS ?? 21);
const THREADS = Number(process.env.AGENT_RL_BENCH_THREADS ?? 1);
const TARGET_S = Number(process.env.AGENT_RL_BENCH_SLOT ?? 0.1); // seconds per side, workload and round
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const SCRATCH = 96 * 2 ** 20;

interface Workload {
  readonly name: string;
  readonly flops: number;
  /** Runs the product once on a side's operands. */
  readonly run: (s: Side) => void;
  /** Where its output lies on a side (to compare the sides' bits). */
  readonly out: (s: Side) => Float32Array;
}

interface Side {
  readonly name: string;
  readonly mem: EngineMemory;
  readonly pool: ThreadPool;
  readonly k: EngineKernels;
  readonly x: number;
  readonly y: number;
  readonly wf: Matrix;
  readonly wb: Matrix;
  readonly xq: Q8Operand;
  readonly wq: Q8Operand;
  readonly xqd: Q8Operand;
  readonly wqd: Q8Operand;
}

const n = 512,
  DN = 4864,
  DK = 896,
  DM = 12;

/** One side: its memory (`high`: the operands past 4 GiB), threads and operands, filled from one seed. */
async function side(name: string, mode: AddressMode, high: boolean): Promise<Side> {
  const mem = new EngineMemory(high ? MAX_WASM32_BYTES + SCRATCH : SCRATCH, `memory64 bench (${name})`, CONTROL_BYTES, mode);
  if (high) mem.alloc(MAX_WASM32_BYTES - mem.used, 'below 4 GiB');
  const pool = await ThreadPool.start(mem.memory, engineModule(mode).module, THREADS);
  const k = new EngineKernels(pool);
  const x = mem.allocF32(n * n, 'x'),
    y = mem.allocF32(DN * DM + n * n, 'y'),
    wf = mem.allocF32(n * n, 'w f32'),
    wb = mem.alloc(n * n * 2, 'w bf16'),
    xd = mem.allocF32(DM * DK, 'x decoding'),
    wd = mem.allocF32(DN * DK, 'w decoding');
  const q = (rows: number, cols: number): Q8Operand => q8Operand(mem.alloc(q8Operand(0, rows, cols).layout.bytes, 'q8'), rows, cols);
  const s: Side = {
    name,
    mem,
    pool,
    k,
    x,
    y,
    wf: { ptr: wf, rows: n, cols: n, dtype: 'f32' },
    wb: { ptr: wb, rows: n, cols: n, dtype: 'bf16' },
    xq: q(n, n),
    wq: q(n, n),
    xqd: q(DM, DK),
    wqd: q(DN, DK),
  };
  const rng = new Rng(3);
  for (let i = 0; i < n * n; i++) {
    mem.f32[x / 4 + i] = rng.next() - 0.5;
    mem.f32[wf / 4 + i] = rng.next() - 0.5;
    mem.u16[wb / 2 + i] = 0x3c00 + (i % 127); // bfloat16 values in [0.0078, 0.0156): finite, normal
  }
  for (let i = 0; i < DM * DK; i++) mem.f32[xd / 4 + i] = rng.next() - 0.5;
  for (let i = 0; i < DN * DK; i++) mem.f32[wd / 4 + i] = (rng.next() - 0.5) * 0.1;
  k.quantizeQ8(x, n, s.xq, 'activation');
  k.quantizeQ8(wf, n, s.wq, 'weight');
  k.quantizeQ8(xd, DK, s.xqd, 'activation');
  k.quantizeQ8(wd, DK, s.wqd, 'weight');
  return s;
}

const WORKLOADS: Workload[] = [
  { name: 'nt_f32 512²', flops: 2 * n ** 3, run: (s) => s.k.nt(s.x, n, s.wf, s.y, n, n, false), out: (s) => s.mem.f32.slice(s.y / 4, s.y / 4 + n * n) },
  { name: 'nt_bf16 512²', flops: 2 * n ** 3, run: (s) => s.k.nt(s.x, n, s.wb, s.y, n, n, false), out: (s) => s.mem.f32.slice(s.y / 4, s.y / 4 + n * n) },
  { name: 'q8_nt 512²', flops: 2 * n ** 3, run: (s) => s.k.ntQ8(s.xq, s.wq, s.y, n, false), out: (s) => s.mem.f32.slice(s.y / 4, s.y / 4 + n * n) },
  {
    name: `q8_nt ${DM} × [${DN}, ${DK}]`,
    flops: 2 * DM * DN * DK,
    run: (s) => s.k.ntQ8(s.xqd, s.wqd, s.y, DN, false),
    out: (s) => s.mem.f32.slice(s.y / 4, s.y / 4 + DM * DN),
  },
];

/** GFLOP/s of `w` on `s` over about TARGET_S seconds. */
function rate(w: Workload, s: Side): number {
  const t = performance.now();
  let calls = 0;
  while (performance.now() - t < TARGET_S * 1000) {
    w.run(s);
    calls++;
  }
  return (w.flops * calls) / ((performance.now() - t) / 1000) / 1e9;
}

async function main(): Promise<void> {
  const support = memory64Support();
  console.log(
    `Node ${process.version}, ${THREADS} thread${THREADS === 1 ? '' : 's'}, ${ROUNDS} interleaved rounds of ${TARGET_S} s a side; memory64: ${support.ok ? 'yes' : 'no'} (${support.why})`,
  );
  if (!support.ok) {
    console.log('no 64-bit memory on this runtime: nothing to compare');
    return;
  }
  const sides = [await side('wasm32', 'wasm32', false), await side('memory64', 'memory64', false), await side('memory64 > 4 GiB', 'memory64', true)];
  console.log(`relaxed SIMD: ${engineModule('wasm32').relaxed ? 'yes' : 'no'}; operands of the last side from ${(sides[2]!.x / 2 ** 30).toFixed(3)} GiB`);
  let failed = false;
  try {
    for (const w of WORKLOADS) {
      // warm-up, and the sides' outputs compared bit for bit
      for (const s of sides) for (let i = 0; i < 3; i++) w.run(s);
      const ref = new Uint32Array(w.out(sides[0]!).buffer);
      for (const s of sides.slice(1)) {
        const o = new Uint32Array(w.out(s).buffer);
        if (o.length !== ref.length || o.some((v, i) => v !== ref[i])) {
          console.log(`${w.name}: ${s.name} differs from wasm32 — FAILED`);
          failed = true;
        }
      }
    }
    const rates = WORKLOADS.map(() => sides.map(() => [] as number[]));
    for (let r = 0; r < ROUNDS; r++)
      WORKLOADS.forEach((w, wi) => {
        for (let j = 0; j < sides.length; j++) {
          const si = (j + r) % sides.length;
          rates[wi]![si]!.push(rate(w, sides[si]!));
        }
      });
    console.log(
      `\nworkload | ${sides.map((s) => `${s.name} GFLOP/s`).join(' | ')} | ${sides
        .slice(1)
        .map((s) => `${s.name} / wasm32 (median, min–max)`)
        .join(' | ')}`,
    );
    WORKLOADS.forEach((w, wi) => {
      const g = rates[wi]!;
      const ratios = sides.slice(1).map((_, j) => {
        const per = g[j + 1]!.map((v, r) => v / g[0]![r]!);
        return `${median(per).toFixed(3)} (${Math.min(...per).toFixed(3)}–${Math.max(...per).toFixed(3)})`;
      });
      console.log(`${w.name} | ${g.map((xs) => median(xs).toFixed(1)).join(' | ')} | ${ratios.join(' | ')}`);
    });
    console.log('\n(each ratio is per round, the sides run back to back in a rotating order; > 1: memory64 faster)');
  } finally {
    for (const s of sides) await s.pool.close();
  }
  if (failed) process.exitCode = 1;
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
