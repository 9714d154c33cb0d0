// Seed 000 at its real scale: Qwen2.5-0.5B-Instruct's shapes (a random-weight checkpoint the bench writes
// itself, test/helpers/scaleCheckpoint.ts), LoRA rank 8 on every linear layer, on the workbench's wasm
// engine against PyTorch at its best on the same cores (bench/torch_baseline.py, bench/torchServer.ts: a preallocated KV cache,
// grouped-query attention by broadcasting, one mask per length, warm-up, OpenBLAS in float32 and oneDNN
// in bfloat16, one thread count everywhere):
//   sampling  12 rows × 256 new tokens from a 300-token prompt (the real sampler: log-softmax and draws),
//             prefill (the prompts' pass and the first draw) and decoding timed apart
//   training  the reference pass and a training pass (forward, backward, AdamW) over S sequences of
//             1,024 tokens, 724 of them trained (S = 2; --full: 12, seed 000's 3 groups × 4)
// Sampling also on the native rollout engine, llama.cpp through node-llama-cpp (the checkpoint written
// as GGUF, bfloat16, its CPU build on the same threads), with the training–inference mismatch of its
// samples (mean and p99 |Δ log p| of each sampled token against the engine's recomputed log-prob) and
// its top-5 next tokens after a prompt against PyTorch's (float32).
// The sides are interleaved (engine, PyTorch float32, PyTorch bfloat16, llama.cpp, then the reverse order …;
// --pairs N rounds, default 3):
// each ratio is the median of the per-round ratios with their spread (min–max), so a slow minute of a
// noisy machine lands on one round, not on one side. Each side's achieved GFLOP/s (the model's own
// multiply-adds: the same count for both sides, recomputation not counted) stands beside probes of the
// machine at the same thread count: PyTorch's 512² and 1,024² products in float32 and bfloat16, and
// the engine's own kernel (x·wᵀ) on a 512² product, the wasm SIMD ceiling. Each PyTorch server runs
// under `/usr/bin/time -v` (its peak RSS and CPU time printed); the engine's from the process's own
// resource usage. Also the memory plan against the engine's measured peak.
// AGENT_RL_ENGINE_PROFILE=1 adds the engine's time per kernel for each round (it synchronises the
// threads at every call: the profile, not the figures, is what such a run is for).
// Targets: the plan fits at 1,024 tokens; sampling at least float32 PyTorch's speed (issue 24); training
// at least float32 PyTorch's speed (issue 40); llama.cpp sampling at least bfloat16 PyTorch's (issue 40).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ADAM_DEFAULTS, AdamW } from '../src/rl/algo/adamw';
import { fittingEnginePlan } from '../src/rl/policies/lm/models/engine/enginePlan';
import { EngineMemory } from '../src/rl/policies/lm/models/engine/engineMemory';
import { EngineModel } from '../src/rl/policies/lm/models/engine/engineModel';
import { engineModule } from '../src/rl/policies/lm/models/engine/hfEngine';
import { EngineKernels } from '../src/rl/policies/lm/models/engine/kernels';
import { CONTROL_BYTES, ThreadPool } from '../src/rl/policies/lm/models/engine/threadPool';
import { readHfConfig, type HfArchitecture } from '../src/rl/policies/lm/models/hfConfig';
import { LlamaCppSampler, mismatch } from '../src/rl/policies/lm/rolloutEngines/llamaCpp';
import { describePlan, formatBytes } from '../src/rl/policies/lm/models/memoryPlan';
import { initBackend } from '../src/rl/policies/lm/models/tfjsBackend';
import { sampleBatch, type SampledSequence, type SampleOptions } from '../src/rl/policies/lm/sampler';
import { HfTokenizer } from '../src/rl/policies/lm/tokenizer';
import { Rng } from '../src/rl/random';
import type { TrainSequence } from '../src/rl/algo/trainSequence';
import { shardLogprobs } from '../src/rl/algo/gradients';
import { writeScaleCheckpoint } from '../test/helpers/scaleCheckpoint';
import { engineTrainStep, randomSequences } from './engineWorkload';
import { DTYPES, describeTorch, median, ratioText, speedups, startTorch, type Dtype, type SampleTimes, type TrainTimes } from './torchServer';

const DIR = path.join(os.tmpdir(), 'agent-rl-scale', 'qwen2.5-0.5b');
const RANK = 8;
const LORA = { rank: RANK, alpha: 16, dropout: 0, targets: ['all-linear'] };
/** `--smoke`: every step of the bench on small workloads (a check of the bench itself, not a figure). */
const smoke = process.argv.includes('--smoke');
const SAMPLE: [number, number, number] = smoke ? [12, 30, 8] : [12, 300, 256];
const T = smoke ? 128 : 1024,
  TRAINED_FROM = smoke ? 30 : 300;
const full = process.argv.includes('--full');
const S = full ? 12 : 2;
const pairsAt = process.argv.indexOf('--pairs');
const PAIRS = pairsAt > 0 ? Number(process.argv[pairsAt + 1]) : 3;
const threads = Math.min(os.availableParallelism(), 14);
// ---- the model's multiply-adds (×2 = FLOPs), the same count for both sides ----

/** FLOPs of the linear layers (with LoRA) per token, of attention per token per key attended, of the head per position. */
function flopModel(a: HfArchitecture): { linear: number; attention: number; head: number } {
  const D = a.hidden,
    kv = a.kvHeads * a.headDim,
    q = a.heads * a.headDim;
  const shapes: [number, number][] = [
    [D, q],
    [D, kv],
    [D, kv],
    [q, D],
    [D, a.intermediate],
    [D, a.intermediate],
    [a.intermediate, D],
  ];
  const perLayer = shapes.reduce((n, [i, o]) => n + 2 * i * o + 2 * RANK * (i + o), 0);
  return { linear: a.layers * perLayer, attention: a.layers * 4 * q, head: 2 * D * a.vocabSize };
}

function sampleFlops(a: HfArchitecture): { prefill: number; decode: number } {
  const f = flopModel(a);
  const [B, P, N] = SAMPLE;
  // the prompt: every position through the layers, causal attention (position i attends i + 1 keys), the head at the last
  const prefill = B * (P * f.linear + ((P * (P + 1)) / 2) * f.attention + f.head);
  let decode = 0;
  for (let s = 1; s < N; s++) decode += B * (f.linear + (P + s) * f.attention + f.head);
  return { prefill, decode };
}

/** The reference pass (forward) and the training pass (forward, backward to the inputs of frozen weights and the adapters). */
function trainFlops(a: HfArchitecture): number {
  const f = flopModel(a);
  const forward = T * f.linear + ((T * (T + 1)) / 2) * f.attention + (T - TRAINED_FROM) * f.head;
  // backward: dx through every linear layer (frozen weights: no weight gradient; the adapters' small
  // products counted in f.linear once more), both attention products twice, the head's dx once
  const backward = T * f.linear + 2 * ((T * (T + 1)) / 2) * f.attention + (T - TRAINED_FROM) * f.head;
  return S * (2 * forward + backward);
}

// ---- the engine's own kernel on a 512² product ----

async function engineProbe(): Promise<Record<'f32' | 'bf16', number>> {
  const n = 512;
  const mem = new EngineMemory(32 * 2 ** 20, 'probe', CONTROL_BYTES);
  const pool = await ThreadPool.start(mem.memory, engineModule().module, threads);
  try {
    const k = new EngineKernels(pool);
    const x = mem.allocF32(n * n, 'probe'),
      y = mem.allocF32(n * n, 'probe'),
      wf = mem.allocF32(n * n, 'probe'),
      wb = mem.alloc(n * n * 2, 'probe');
    const rng = new Rng(3);
    for (let i = 0; i < n * n; i++) {
      mem.f32[x / 4 + i] = rng.next() - 0.5;
      mem.f32[wf / 4 + i] = rng.next() - 0.5;
      mem.u16[wb / 2 + i] = 0x3c00 + (i % 127); // bfloat16 values in [0.0078, 0.0156): finite, normal
    }
    const out = { f32: 0, bf16: 0 };
    for (const dtype of ['f32', 'bf16'] as const) {
      const w = { ptr: dtype === 'f32' ? wf : wb, rows: n, cols: n, dtype };
      for (let i = 0; i < 3; i++) k.nt(x, n, w, y, n, n, false);
      for (let r = 0; r < 5; r++) {
        const t = performance.now();
        let calls = 0;
        while (performance.now() - t < 500) {
          k.nt(x, n, w, y, n, n, false);
          calls++;
        }
        out[dtype] = Math.max(out[dtype], (2 * n ** 3 * calls) / ((performance.now() - t) / 1000) / 1e9);
      }
    }
    return out;
  } finally {
    await pool.close();
  }
}

const gflops = (flops: number, seconds: readonly number[]): string => (flops / median(seconds) / 1e9).toFixed(1);

async function main(): Promise<void> {
  if (!Number.isInteger(PAIRS) || PAIRS < 1) throw new Error(`--pairs must be a whole number ≥ 1 (got ${process.argv[pairsAt + 1]})`);
  const t0 = performance.now();
  writeScaleCheckpoint(DIR, 'qwen2.5-0.5b');
  console.log(`checkpoint: ${DIR} (Qwen2.5-0.5B-Instruct's shapes, bfloat16, written in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  const arch = readHfConfig(DIR);
  const kernel = await engineProbe();
  console.log(
    `engine kernel x·wᵀ on a 512² product, ${threads} threads (wasm SIMD ceiling): ${kernel.f32.toFixed(1)} GFLOP/s float32 weights, ${kernel.bf16.toFixed(1)} GFLOP/s bfloat16 weights`,
  );

  // one 1,024-token sequence per micro-batch: two at once take ~16 GiB in float32 (attention scores and
  // full-vocabulary logits kept for the backward pass), past what this machine has beside the engine
  const torch = await startTorch({ dir: DIR, threads, sequences: S, micro: 1, train: [T, TRAINED_FROM], sample: SAMPLE });
  const described = describeTorch(torch, threads);
  console.log(described.text);
  if (!described.baseline) {
    for (const d of DTYPES) await torch[d].server.quit();
    process.exitCode = 1;
    return;
  }

  const backend = await initBackend('wasm');
  const plan = fittingEnginePlan(arch, { lora: LORA, contextLength: T, sampleRows: SAMPLE[0], threads, dtype: 'auto' });
  console.log(`memory plan at ${T}-token contexts (${plan.fits ? 'fits' : 'DOES NOT FIT'}):\n${describePlan(plan)}`);
  if (!plan.fits) process.exitCode = 1;
  const model = await EngineModel.create({ dir: DIR, arch, contextLength: T, lora: LORA, seed: 1, threads, plan, planText: describePlan(plan) });
  const reference = model.reference();
  const tokenizer = HfTokenizer.fromDirectory(DIR);
  const optimizer = new AdamW([...model.weights], { ...ADAM_DEFAULTS, maxGradNorm: 1 });
  const rng = new Rng(7);
  const V = arch.vocabSize;
  const [B, P, N] = SAMPLE;
  const gguf = `${DIR}.gguf`;
  let t1 = performance.now();
  fs.rmSync(gguf, { force: true });
  const llama = await LlamaCppSampler.open({ dir: DIR, gguf, contextLength: T, rows: B, threads, tokenizer });
  console.log(
    `llama.cpp: ${llama.describe()}; GGUF written and loaded in ${((performance.now() - t1) / 1000).toFixed(1)} s (${formatBytes(fs.statSync(gguf).size)})`,
  );
  const probePrompt = Array.from({ length: 64 }, () => rng.int(V));
  t1 = performance.now();
  const mine = await llama.topNext(probePrompt, 5);
  for (const d of DTYPES) {
    const theirs = (await torch[d].server.run<{ top5: number[] }>(`top5 ${JSON.stringify(probePrompt)}`)).top5;
    const same = mine.join() === theirs.join();
    const sameSet = [...mine].sort().join() === [...theirs].sort().join();
    console.log(
      `  top-5 next tokens after a 64-token prompt: llama.cpp [${mine.join(', ')}], PyTorch ${d} [${theirs.join(', ')}] — ${same ? 'equal' : sameSet ? 'the same five, in another order' : 'DIFFERENT'}`,
    );
    if (d === 'float32' && !sameSet) process.exitCode = 1;
  }
  let lastLlama: { prompts: number[][]; rows: SampledSequence[] } | undefined;
  /**
   * B rows × n new tokens from fresh random prompts through `sampler` (the engine's sampleBatch or
   * llama.cpp's), timed in all and up to the prompts' pass. The engine's first draw comes after
   * onPrefilled (in decoding there, in prefill on PyTorch's side: tens of ms of 100+ s).
   */
  const timedSample = async (
    sampler: (prompts: number[][], o: SampleOptions) => Promise<SampledSequence[]>,
    n: number,
  ): Promise<{ times: SampleTimes; prompts: number[][]; rows: SampledSequence[] }> => {
    const prompts = Array.from({ length: B }, () => Array.from({ length: P }, () => rng.int(V)));
    const t = performance.now();
    let prefilled = t;
    const rows = await sampler(prompts, { temperature: 1, topK: 0, topP: 1, maxNewTokens: n, stop: [], onPrefilled: () => (prefilled = performance.now()) });
    const end = performance.now();
    return { times: { seconds: (end - t) / 1000, prefill_seconds: (prefilled - t) / 1000, decode_seconds: (end - prefilled) / 1000 }, prompts, rows };
  };
  const llamaSample = async (n: number): Promise<SampleTimes> => {
    const r = await timedSample((prompts, o) => llama.sample(prompts, o, rng), n);
    lastLlama = { prompts: r.prompts, rows: r.rows };
    return r.times;
  };
  const engineSample = async (n: number): Promise<SampleTimes> => (await timedSample((prompts, o) => sampleBatch(model, tokenizer, prompts, o, rng), n)).times;
  const engineTrain = (len: number, from: number): Promise<TrainTimes> => engineTrainStep(model, reference, optimizer, randomSequences(rng, V, S, len, from));

  try {
    // warm-up, as PyTorch's: both workloads, shorter
    await engineSample(4);
    await llamaSample(4);
    await engineTrain(128, 64);
    model.engine.takeProfile();
    model.engine.mem.resetPeak();
    const rounds = { engine: { sample: [] as SampleTimes[], train: [] as TrainTimes[] } } as Record<
      'engine' | Dtype,
      { sample: SampleTimes[]; train: TrainTimes[] }
    >;
    const llamaRounds: SampleTimes[] = [];
    /** Each PyTorch dtype's largest peak RSS over its servers (one per round: restarted after training). */
    const peaks: Record<Dtype, number> = { float32: 0, bfloat16: 0 };
    for (const d of DTYPES) rounds[d] = { sample: [], train: [] };
    for (let i = 0; i < PAIRS; i++) {
      // every other round in the reverse order (A B C D, D C B A, …): no side always runs first
      const samplers: (() => Promise<void>)[] = [
        async () => void rounds.engine.sample.push(await engineSample(N)),
        ...DTYPES.map((d) => async () => void rounds[d].sample.push(await torch[d].server.run<SampleTimes>('sample'))),
        async () => void llamaRounds.push(await llamaSample(N)),
      ];
      for (const run of i % 2 ? samplers.reverse() : samplers) await run();
      const profiled = model.engine.takeProfile(); // AGENT_RL_ENGINE_PROFILE=1: time per kernel
      if (profiled) console.log(`  engine kernels, round ${i + 1} sampling: ${profiled}`);
      const trainers: (() => Promise<void>)[] = [
        async () => {
          rounds.engine.train.push(await engineTrain(T, TRAINED_FROM));
          const trainProfile = model.engine.takeProfile();
          if (trainProfile) console.log(`  engine kernels, round ${i + 1} reference + training: ${trainProfile}`);
        },
        ...DTYPES.map((d) => async () => {
          rounds[d].train.push(await torch[d].server.run<TrainTimes>('train'));
          const { next, usage } = await torch[d].server.restart();
          torch[d].server = next;
          peaks[d] = Math.max(peaks[d], usage.rssBytes);
        }),
      ];
      for (const run of i % 2 ? trainers.reverse() : trainers) await run();
      const e = rounds.engine,
        a = rounds.float32,
        b = rounds.bfloat16;
      console.log(
        `round ${i + 1}: sampling engine ${e.sample[i]!.seconds.toFixed(1)} s, PyTorch float32 ${a.sample[i]!.seconds.toFixed(1)} s, bfloat16 ${b.sample[i]!.seconds.toFixed(1)} s, llama.cpp ${llamaRounds[i]!.seconds.toFixed(1)} s; ` +
          `training engine ${e.train[i]!.seconds.toFixed(1)} s, float32 ${a.train[i]!.seconds.toFixed(1)} s, bfloat16 ${b.train[i]!.seconds.toFixed(1)} s`,
      );
    }
    const peak = model.engine.mem.peak;
    const usage = process.resourceUsage();
    const torchUsage = {} as Record<Dtype, { rssBytes: number; cpuSeconds: number }>;
    for (const d of DTYPES) {
      torchUsage[d] = await torch[d].server.quit();
      torchUsage[d].rssBytes = Math.max(torchUsage[d].rssBytes, peaks[d]);
    }

    // the training–inference mismatch: llama.cpp's behaviour log-probs of its last round's samples
    // against the engine's (the base model: the samples came from llama.cpp's base GGUF)
    const { prompts: lp, rows: lr } = lastLlama!;
    const seqs: TrainSequence[] = lr.map((r, i) => {
      const ids = [...lp[i]!, ...r.tokens];
      return {
        inputs: ids.slice(0, -1),
        targets: ids.slice(1),
        mask: ids.slice(1).map((_, j) => (j >= P - 1 ? 1 : 0)),
        behaviour: ids.slice(1).map(() => 0),
        advantage: 0,
      };
    });
    const { logp } = await shardLogprobs(reference.scorer(), seqs, { temperature: 1, rows: false });
    const gap = mismatch(
      lr.flatMap((r, i) => r.tokens.map((_, j) => logp[i]![P - 1 + j]!)),
      lr.flatMap((r) => r.logprobs),
    );
    await llama.dispose();

    type Side = 'engine' | Dtype | 'llama';
    const sf = sampleFlops(arch),
      tf = trainFlops(arch);
    const sampled = (side: Side): SampleTimes[] => (side === 'llama' ? llamaRounds : rounds[side].sample);
    const sec =
      (k: 'seconds' | 'prefill_seconds' | 'decode_seconds') =>
      (side: Side): number[] =>
        sampled(side).map((r) => r[k]);
    const tsec = (side: Side): number[] => (side === 'llama' ? [] : rounds[side].train.map((r) => r.seconds));
    console.log(
      `\nengine: ${model.engine.threads} threads, ${model.engine.relaxed ? 'relaxed SIMD' : 'SIMD'}, ${plan.dtype} weights (tfjs ${backend.name} holds the adapters and AdamW); ${PAIRS} interleaved rounds, medians`,
    );
    const rows: [string, number, (side: Side) => number[]][] = [
      [`sampling ${B} rows × ${N} new tokens from ${P}-token prompts`, sf.prefill + sf.decode, sec('seconds')],
      ['  prefill (the prompts and the first draw)', sf.prefill, sec('prefill_seconds')],
      ['  decoding', sf.decode, sec('decode_seconds')],
      [`reference + training pass over ${S} × ${T} tokens (${T - TRAINED_FROM} trained)`, tf, tsec],
    ];
    console.log(
      '| workload | engine s (GFLOP/s) | PyTorch float32 | PyTorch bfloat16 | llama.cpp | engine / float32, median (min–max) | engine / bfloat16 | llama.cpp / bfloat16 |\n|---|---|---|---|---|---|---|---|',
    );
    for (const [label, flops, times] of rows) {
      const cell = (s: Side): string => (times(s).length ? `${median(times(s)).toFixed(1)} (${gflops(flops, times(s))})` : '–');
      const vs = (a: Side, b: Side): string => (times(a).length ? ratioText(times(a), times(b)) : '–');
      console.log(
        `| ${label} | ${cell('engine')} | ${cell('float32')} | ${cell('bfloat16')} | ${cell('llama')} | ${vs('engine', 'float32')} | ${vs('engine', 'bfloat16')} | ${vs('llama', 'bfloat16')} |`,
      );
    }
    console.log(
      `llama.cpp's behaviour log-probs against the engine's, ${gap.n} sampled tokens: mean |Δ log p| ${gap.mean.toExponential(2)}, p99 ${gap.p99.toExponential(2)}`,
    );
    console.log(
      `probes at ${threads} threads, GFLOP/s: engine kernel 512² ${kernel.f32.toFixed(1)} (float32 weights) / ${kernel.bf16.toFixed(1)} (bfloat16 weights); ` +
        `PyTorch 512² ${torch.float32.ready.probe['512'].toFixed(1)} float32 / ${torch.bfloat16.ready.probe['512'].toFixed(1)} bfloat16`,
    );
    console.log(
      `memory and CPU: engine plan ${formatBytes(plan.total)}, engine peak ${formatBytes(peak)} (plan / peak ${(plan.total / peak).toFixed(3)}); ` +
        `this process (engine, llama.cpp, tfjs, the bench): peak RSS ${formatBytes(usage.maxRSS * 1024)}, CPU ${((usage.userCPUTime + usage.systemCPUTime) / 1e6).toFixed(0)} s; ` +
        DTYPES.map(
          (d) => `PyTorch ${d} (time -v): peak RSS ${formatBytes(torchUsage[d].rssBytes)}, CPU of the last server ${torchUsage[d].cpuSeconds.toFixed(0)} s`,
        ).join('; '),
    );
    const speedup = (a: number[], b: number[]): number => median(speedups(a, b));
    /** Against the faster PyTorch of each round (bfloat16 where the CPU has its dot product). */
    const fastest = (times: (s: Side) => number[]): number[] => times('float32').map((x, i) => Math.min(x, times('bfloat16')[i]!));
    const sampleRatio = speedup(sec('seconds')('engine'), sec('seconds')('float32'));
    const trainRatio = speedup(tsec('engine'), tsec('float32'));
    const llamaRatio = speedup(sec('seconds')('llama'), sec('seconds')('bfloat16'));
    console.log(
      `against the faster PyTorch of each round: engine sampling ${speedup(sec('seconds')('engine'), fastest(sec('seconds'))).toFixed(2)}×, ` +
        `engine training ${speedup(tsec('engine'), fastest(tsec)).toFixed(2)}×, llama.cpp sampling ${speedup(sec('seconds')('llama'), fastest(sec('seconds'))).toFixed(2)}× ` +
        '(the engine holds bfloat16 weights: its float32 opponent reads twice the bytes)',
    );
    console.log(
      `targets: engine sampling ≥ 1× float32 PyTorch (issue 24): ${sampleRatio >= 1 ? 'met' : 'MISSED'} (${sampleRatio.toFixed(2)}×); ` +
        `engine training ≥ 1× float32 PyTorch (issue 40): ${trainRatio >= 1 ? 'met' : 'MISSED'} (${trainRatio.toFixed(2)}×); ` +
        `llama.cpp sampling ≥ 1× bfloat16 PyTorch (issue 40): ${llamaRatio >= 1 ? 'met' : 'MISSED'} (${llamaRatio.toFixed(2)}×)`,
    );
    if (sampleRatio < 1 || trainRatio < 1 || llamaRatio < 1) process.exitCode = 1;
  } finally {
    optimizer.dispose();
    reference.dispose();
    model.dispose();
  }
}

main().catch((e: unknown) => {
  console.error(`bench seed000Scale: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
