// Seed 000 at its real scale: Qwen2.5-0.5B-Instruct's shapes (a random-weight checkpoint the bench writes
// itself, test/helpers/scaleCheckpoint.ts), LoRA rank 8 on every linear layer, on the workbench's wasm
// engine — its base weights in bfloat16 and as Q8_0 blocks (weightDtype "q8", issue 50) — against
// PyTorch at its best on the same cores (bench/torch_baseline.py, bench/scaleTorch.ts): Debian's 1.13 and
// PyPI's 2.15 (scripts/torchVenv.mjs's cached venv, made on first use), each in float32 (OpenBLAS /
// MKL), bfloat16 (oneDNN) and dynamic int8 (quantize_dynamic over the linear layers, the fastest of its
// quantized engines; sampling only); a preallocated KV cache, grouped-query attention without copies
// (2.15: its fused scaled_dot_product_attention), warm-up, one thread count everywhere:
//   sampling  12 rows × 256 new tokens from a 300-token prompt (the real sampler: log-softmax and draws),
//             prefill (the prompts' pass and the first draw) and decoding timed apart
//   training  the reference pass and a training pass (forward, backward, AdamW) over S sequences of
//             1,024 tokens, 724 of them trained (S = 2; --full: 12, seed 000's 3 groups × 4)
// Sampling also on the native rollout engine, llama.cpp through node-llama-cpp (the checkpoint written
// as a bfloat16 GGUF, its CPU build on the same threads), with the training–inference mismatch of its
// samples (mean and p99 |Δ log p| of each sampled token against the engine's recomputed log-prob) and
// its top-5 next tokens after a prompt against each PyTorch side's; and llama.cpp on a Q8_0 GGUF of the
// same checkpoint (the project's GGUF writer's, the engine's own 8-bit blocks) as one more column.
// Each workload's baseline is PyTorch at its best: per round the fastest PyTorch side that ran it. The
// sides are interleaved (engine bf16, engine q8, llama.cpp, PyTorch …, then the reverse order; --pairs N
// rounds, default 3): each ratio is the median of the per-round ratios with their spread (min–max), so a
// slow minute of a noisy machine lands on one round, not on one side. Each side's achieved GFLOP/s (the
// model's own multiply-adds, bench/scaleReport.ts) stands beside probes at the same thread count: each
// PyTorch side's 512² and 1,024² products, and the engine's own kernels (x·wᵀ) on a 512² product.
// KL(q8 ‖ bfloat16) per token: the engine's q8 logits against its bfloat16 ones on the same sequences.
// Each PyTorch server runs under `/usr/bin/time -v` (its peak RSS and CPU time printed); the engine's
// from the process's own resource usage. Also the memory plans against the engines' measured peaks.
// Memory (issue 50: the OOM killer took this process, 11.4 GiB, beside PyTorch float32's ~14 GiB): each
// llama.cpp side is loaded for its turn only (reloaded from its GGUF and warmed up, untimed; its
// 12 × 1,024 context alone holds ~3.3 GiB), so beside a PyTorch server this process keeps the two
// engines (at most their plans) and Node. Printed: this process's memory after each setup step
// (bench/processMemory.ts), and at each turn the turn's peak (and a PyTorch server's own beside it).
// AGENT_RL_ENGINE_PROFILE=1 adds each engine's time per kernel for each round (it synchronises the
// threads at every call: the profile, not the figures, is what such a run is for).
// Targets: issue 50's (bench/scaleReport.ts), and the earlier ones of issues 24 and 40.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ADAM_DEFAULTS, AdamW } from '../src/rl/algo/adamw';
import { fittingEnginePlan, type EnginePlan } from '../src/rl/policies/lm/models/engine/enginePlan';
import { EngineMemory } from '../src/rl/policies/lm/models/engine/engineMemory';
import { EngineModel } from '../src/rl/policies/lm/models/engine/engineModel';
import { engineModule } from '../src/rl/policies/lm/models/engine/hfEngine';
import { EngineKernels } from '../src/rl/policies/lm/models/engine/kernels';
import { q8Operand } from '../src/rl/policies/lm/models/engine/q8Kernels';
import { CONTROL_BYTES, ThreadPool } from '../src/rl/policies/lm/models/engine/threadPool';
import { readHfConfig } from '../src/rl/policies/lm/models/hfConfig';
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
import { collectGarbage, describeMemory, processMemory, resetPeakRss } from './processMemory';
import { q8Divergence } from './q8Divergence';
import { scaleReport, type OurSide, type Shapes } from './scaleReport';
import { describeSides, sideLabel, torchRound, torchSides, type TorchSide } from './scaleTorch';
import type { SampleTimes, TrainTimes } from './torchServer';

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
/** KL(q8 ‖ bf16): sequences × tokens. */
const KL_SEQS: [number, number] = smoke ? [2, 32] : [4, 256];
const threads = Math.min(os.availableParallelism(), 14);

// ---- the engine's own kernels on a 512² product ----

async function engineProbe(): Promise<Record<'f32' | 'bf16' | 'q8', number>> {
  const n = 512;
  const mem = new EngineMemory(32 * 2 ** 20, 'probe', CONTROL_BYTES);
  const pool = await ThreadPool.start(mem.memory, engineModule().module, threads);
  try {
    const k = new EngineKernels(pool);
    const x = mem.allocF32(n * n, 'probe'),
      y = mem.allocF32(n * n, 'probe'),
      wf = mem.allocF32(n * n, 'probe'),
      wb = mem.alloc(n * n * 2, 'probe');
    const wq = q8Operand(mem.alloc(q8Operand(0, n, n).layout.bytes, 'probe'), n, n),
      xq = q8Operand(mem.alloc(q8Operand(0, n, n).layout.bytes, 'probe'), n, n);
    const rng = new Rng(3);
    for (let i = 0; i < n * n; i++) {
      mem.f32[x / 4 + i] = rng.next() - 0.5;
      mem.f32[wf / 4 + i] = rng.next() - 0.5;
      mem.u16[wb / 2 + i] = 0x3c00 + (i % 127); // bfloat16 values in [0.0078, 0.0156): finite, normal
    }
    k.quantizeQ8(wf, n, wq, 'weight');
    const out = { f32: 0, bf16: 0, q8: 0 };
    for (const dtype of ['f32', 'bf16', 'q8'] as const) {
      // q8: the activations quantized per row and block of 32 in every call, as the engine's products do
      const call =
        dtype === 'q8'
          ? (): void => {
              k.quantizeQ8(x, n, xq, 'activation');
              k.ntQ8(xq, wq, y, n, false);
            }
          : (): void => k.nt(x, n, { ptr: dtype === 'f32' ? wf : wb, rows: n, cols: n, dtype }, y, n, n, false);
      for (let i = 0; i < 3; i++) call();
      for (let r = 0; r < 5; r++) {
        const t = performance.now();
        let calls = 0;
        while (performance.now() - t < 500) {
          call();
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

/** This process's memory after a setup step (after a full GC: what stays, not garbage not yet collected). */
function memoryAfter(step: string): void {
  collectGarbage();
  console.log(`  memory after ${step}: ${describeMemory()}`);
}

async function main(): Promise<void> {
  if (!Number.isInteger(PAIRS) || PAIRS < 1) throw new Error(`--pairs must be a whole number ≥ 1 (got ${process.argv[pairsAt + 1]})`);
  memoryAfter('start');
  const t0 = performance.now();
  writeScaleCheckpoint(DIR, 'qwen2.5-0.5b');
  console.log(`checkpoint: ${DIR} (Qwen2.5-0.5B-Instruct's shapes, bfloat16, written in ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  memoryAfter('the checkpoint');
  const arch = readHfConfig(DIR);
  const kernel = await engineProbe();
  memoryAfter('the kernel probe');
  const kernelText = `${kernel.f32.toFixed(1)} float32 weights, ${kernel.bf16.toFixed(1)} bfloat16 weights, ${kernel.q8.toFixed(1)} Q8_0 (x quantized in each call)`;
  console.log(`engine kernel x·wᵀ on a 512² product, ${threads} threads, GFLOP/s: ${kernelText}`);
  const { sides: torch, missing } = await torchSides();
  for (const m of missing) console.log(`PyTorch build missing from the baseline: ${m}`);

  const backend = await initBackend('wasm');
  memoryAfter('tfjs');
  const rng = new Rng(7);
  const V = arch.vocabSize;
  const [B, P, N] = SAMPLE;
  const tokenizer = HfTokenizer.fromDirectory(DIR);
  type Engine = {
    label: string;
    plan: EnginePlan;
    model: EngineModel;
    reference: EngineModel;
    optimizer: AdamW;
    side: OurSide & { sample: SampleTimes[]; train: TrainTimes[] };
  };
  const engines: Engine[] = [];
  for (const dtype of ['auto', 'q8'] as const) {
    const plan = fittingEnginePlan(arch, { lora: LORA, contextLength: T, sampleRows: B, threads, dtype });
    console.log(`memory plan at ${T}-token contexts, ${plan.dtype} weights (${plan.fits ? 'fits' : 'DOES NOT FIT'}):\n${describePlan(plan)}`);
    if (!plan.fits) process.exitCode = 1;
    const model = await EngineModel.create({ dir: DIR, arch, contextLength: T, lora: LORA, seed: 1, threads, plan, planText: describePlan(plan) });
    const label = `engine ${plan.dtype}`;
    engines.push({
      label,
      plan,
      model,
      reference: model.reference(),
      optimizer: new AdamW([...model.weights], { ...ADAM_DEFAULTS, maxGradNorm: 1 }),
      side: { label, sample: [], train: [] },
    });
    memoryAfter(`${label} (model, reference, AdamW)`);
  }
  const [bf16, q8] = engines as [Engine, Engine];
  const gguf = `${DIR}.gguf`;
  let t1 = performance.now();
  fs.rmSync(gguf, { force: true });
  /**
   * A llama.cpp side: loaded for its turn only (model, context: their buffers are not the engines' to
   * share), so that beside a PyTorch server this process holds the engines and no llama.cpp memory.
   */
  type Llama = {
    label: string;
    options: Parameters<typeof LlamaCppSampler.open>[0];
    sampler?: LlamaCppSampler;
    side: OurSide & { sample: SampleTimes[] };
  };
  const llamas: Llama[] = [];
  const bf16Options = { dir: DIR, gguf, contextLength: T, rows: B, threads, tokenizer };
  const llama = await LlamaCppSampler.open(bf16Options);
  llamas.push({ label: 'llama.cpp bf16', options: bf16Options, sampler: llama, side: { label: 'llama.cpp bf16', sample: [], train: [] } });
  console.log(
    `llama.cpp: ${llama.describe()}; GGUF written and loaded in ${((performance.now() - t1) / 1000).toFixed(1)} s (${formatBytes(fs.statSync(gguf).size)})`,
  );
  memoryAfter('llama.cpp bf16 (GGUF written, model loaded)');
  // llama.cpp on Q8_0: the project's GGUF writer's file of the engine's own 8-bit blocks (issue 50, item 7)
  const ggufQ8 = `${DIR}.q8_0.gguf`;
  t1 = performance.now();
  fs.rmSync(ggufQ8, { force: true });
  const q8Options = { dir: DIR, gguf: ggufQ8, contextLength: T, rows: B, threads, tokenizer, weightDtype: 'q8' as const };
  const llamaQ8 = await LlamaCppSampler.open(q8Options);
  llamas.push({ label: 'llama.cpp Q8_0', options: q8Options, sampler: llamaQ8, side: { label: 'llama.cpp Q8_0', sample: [], train: [] } });
  console.log(
    `llama.cpp Q8_0: ${llamaQ8.describe()}; GGUF written and loaded in ${((performance.now() - t1) / 1000).toFixed(1)} s (${formatBytes(fs.statSync(ggufQ8).size)})`,
  );
  memoryAfter('llama.cpp Q8_0 (GGUF written, model loaded)');

  // KL(q8 ‖ bf16) per token: the two engines' frozen references (the same fresh adapters) on the same sequences
  t1 = performance.now();
  const klSeqs = Array.from({ length: KL_SEQS[0] }, () => Array.from({ length: KL_SEQS[1] }, () => rng.int(V)));
  const kl = await q8Divergence(q8.reference, bf16.reference, klSeqs);
  console.log(
    `KL(q8 ‖ bfloat16) per token, the engine's q8 logits against its bfloat16 ones on ${KL_SEQS[0]} random sequences of ${KL_SEQS[1]} tokens (${kl.positions} positions): ` +
      `mean ${kl.mean.toExponential(2)}, max ${kl.max.toExponential(2)} nats (${((performance.now() - t1) / 1000).toFixed(1)} s)`,
  );
  memoryAfter('the KL pass');

  const probePrompt = Array.from({ length: 64 }, () => rng.int(V));
  const mine = await llama.topNext(probePrompt, 5);
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
  const llamaSample = async (l: Llama, n: number): Promise<SampleTimes> => {
    const sampler = l.sampler!;
    const r = await timedSample((prompts, o) => sampler.sample(prompts, o, rng), n);
    if (l.label === 'llama.cpp bf16') lastLlama = { prompts: r.prompts, rows: r.rows };
    return r.times;
  };
  /** Untimed: the model reloaded from its GGUF (written once) and warmed up as at the start (its context made). */
  const openLlama = async (l: Llama): Promise<void> => {
    if (l.sampler) return;
    l.sampler = await LlamaCppSampler.open(l.options);
    await llamaSample(l, 4);
  };
  /** Untimed: the model, its context and llama.cpp's backend released (their memory back to the system). */
  const closeLlama = async (l: Llama): Promise<void> => {
    const sampler = l.sampler;
    l.sampler = undefined;
    if (!sampler) return;
    await sampler.dispose();
    await sampler.llama.dispose();
  };
  const engineSample = async (e: Engine, n: number): Promise<SampleTimes> =>
    (await timedSample((prompts, o) => sampleBatch(e.model, tokenizer, prompts, o, rng), n)).times;
  const engineTrain = (e: Engine, len: number, from: number): Promise<TrainTimes> =>
    engineTrainStep(e.model, e.reference, e.optimizer, randomSequences(rng, V, S, len, from));
  /** A side's turn in a round; a PyTorch side's also names its server (its own process). */
  type Turn = { label: string; run: () => Promise<void>; torch?: TorchSide };
  const turn = (label: string, run: () => Promise<void>, torchSide?: TorchSide): Turn => ({ label, run, torch: torchSide });
  /**
   * Runs a turn between two memory lines: this process's peak during the turn (VmHWM, reset at its
   * start) — on a PyTorch turn the resident memory of everything idle beside the server — and a PyTorch
   * server's own peak (`time -v`).
   */
  /** This process's largest peak over each side's turns, and over the PyTorch turns (bytes). */
  const turnPeaks = new Map<string, number>();
  let besideTorch = 0;
  const runTurn = async (t: Turn, round: number): Promise<void> => {
    collectGarbage();
    const reset = resetPeakRss();
    const before = processMemory();
    await t.run();
    const after = processMemory();
    const peak = reset ? after.peak : after.rss;
    turnPeaks.set(t.label, Math.max(turnPeaks.get(t.label) ?? 0, peak));
    if (t.torch) besideTorch = Math.max(besideTorch, peak);
    const mine = reset ? `this process's peak ${formatBytes(after.peak)}` : `this process's rss ${formatBytes(after.rss)} (its peak could not be reset)`;
    console.log(
      `  memory, round ${round + 1}, ${t.label}: ` +
        (t.torch
          ? `the server's peak RSS ${formatBytes(t.torch.lastRssBytes ?? 0)}; beside it, ${mine} (rss ${formatBytes(before.rss)}, anon ${formatBytes(before.anon)} at its start)`
          : `${mine} (rss ${formatBytes(before.rss)}, anon ${formatBytes(before.anon)} at its start)`),
    );
  };
  const torchOptions = { dir: DIR, threads, sequences: S, micro: 1, train: [T, TRAINED_FROM] as const, sample: SAMPLE };

  try {
    // warm-up, as PyTorch's: both workloads, shorter
    for (const e of engines) {
      await engineSample(e, 4);
      await engineTrain(e, 128, 64);
      e.model.engine.takeProfile();
      e.model.engine.mem.resetPeak();
    }
    for (const l of llamas) await llamaSample(l, 4);
    memoryAfter('the warm-ups');
    for (const l of llamas) await closeLlama(l);
    memoryAfter('llama.cpp released (reloaded, untimed, for each of its turns)');
    const top5 = new Map<string, number[]>();
    for (let i = 0; i < PAIRS; i++) {
      // every other round in the reverse order (A B C …, … C B A): no side always runs first. One side
      // at a time samples and then trains; a PyTorch side's server lives for its turn only.
      const turns: Turn[] = [
        ...engines.map((e) =>
          turn(e.label, async () => {
            e.side.sample.push(await engineSample(e, N));
            e.side.train.push(await engineTrain(e, T, TRAINED_FROM));
            const profiled = e.model.engine.takeProfile(); // AGENT_RL_ENGINE_PROFILE=1: time per kernel
            if (profiled) console.log(`  ${e.label} kernels, round ${i + 1} sampling, reference + training: ${profiled}`);
          }),
        ),
        ...llamas.map((l) =>
          turn(l.label, async () => {
            await openLlama(l);
            l.side.sample.push(await llamaSample(l, N));
            await closeLlama(l);
          }),
        ),
        ...torch.map((s) =>
          turn(
            sideLabel(s),
            async () => {
              const top = await torchRound(s, torchOptions, i === 0 ? probePrompt : undefined);
              if (top) top5.set(sideLabel(s), top);
            },
            s,
          ),
        ),
      ];
      for (const t of i % 2 ? turns.reverse() : turns) await runTurn(t, i);
      memoryAfter(`round ${i + 1}`);
      if (i === 0) {
        const described = describeSides(torch, threads);
        console.log(described.text);
        if (!described.baseline) process.exitCode = 1;
        for (const [label, theirs] of top5) {
          const same = mine.join() === theirs.join();
          const sameSet = [...mine].sort().join() === [...theirs].sort().join();
          console.log(
            `  top-5 next tokens after a 64-token prompt: llama.cpp [${mine.join(', ')}], ${label} [${theirs.join(', ')}] — ${same ? 'equal' : sameSet ? 'the same five, in another order' : 'DIFFERENT'}`,
          );
          if (label.endsWith('float32') && !sameSet) process.exitCode = 1;
        }
      }
      const fmt = (xs: readonly { seconds: number }[]): string => (xs[i] ? `${xs[i]!.seconds.toFixed(1)} s` : '–');
      console.log(
        `round ${i + 1}: sampling ${[...engines.map((e) => e.side), ...llamas.map((l) => l.side)].map((s) => `${s.label} ${fmt(s.sample)}`).join(', ')}, ` +
          `${torch.map((s) => `${sideLabel(s)} ${fmt(s.sample)}`).join(', ')}; training ${engines.map((e) => `${e.label} ${fmt(e.side.train)}`).join(', ')}, ` +
          `${torch
            .filter((s) => s.dtype !== 'int8')
            .map((s) => `${sideLabel(s)} ${fmt(s.train)}`)
            .join(', ')}`,
      );
    }
    const usage = process.resourceUsage();

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
    const { logp } = await shardLogprobs(bf16.reference.scorer(), seqs, { temperature: 1, rows: false });
    const gap = mismatch(
      lr.flatMap((r, i) => r.tokens.map((_, j) => logp[i]![P - 1 + j]!)),
      lr.flatMap((r) => r.logprobs),
    );

    console.log(
      `\nengine: ${bf16.model.engine.threads} threads, ${bf16.model.engine.relaxed ? 'relaxed SIMD' : 'SIMD'}, ${engines.map((e) => `${e.plan.dtype}`).join(' and ')} weights (tfjs ${backend.name} holds the adapters and AdamW); ${PAIRS} interleaved rounds, medians`,
    );
    const shapes: Shapes = { sample: SAMPLE, sequences: S, tokens: T, trainedFrom: TRAINED_FROM, rank: RANK };
    const report = scaleReport(arch, shapes, [...engines.map((e) => e.side), ...llamas.map((l) => l.side)], torch, PAIRS);
    console.log(report.text);
    if (missing.length) console.log(`PyTorch at its best lacks a build (${missing.join('; ')}): its ratios flatter the engine`);
    console.log(
      `llama.cpp's behaviour log-probs against the engine's, ${gap.n} sampled tokens: mean |Δ log p| ${gap.mean.toExponential(2)}, p99 ${gap.p99.toExponential(2)}`,
    );
    console.log(
      `probes at ${threads} threads, GFLOP/s: engine kernel 512² ${kernelText}; ` +
        torch.map((s) => `${sideLabel(s)} 512² ${s.ready ? s.ready.probe['512'].toFixed(1) : '–'}`).join(', '),
    );
    console.log(
      `memory and CPU: ${engines.map((e) => `${e.label} plan ${formatBytes(e.plan.total)}, peak ${formatBytes(e.model.engine.mem.peak)} (plan / peak ${(e.plan.total / e.model.engine.mem.peak).toFixed(3)})`).join('; ')}; ` +
        `this process (engines, llama.cpp, tfjs, the bench): peak RSS ${formatBytes(usage.maxRSS * 1024)}, CPU ${((usage.userCPUTime + usage.systemCPUTime) / 1e6).toFixed(0)} s; ` +
        torch.map((s) => `${sideLabel(s)} (time -v): peak RSS ${formatBytes(s.rssBytes)}, CPU ${s.cpuSeconds.toFixed(0)} s`).join('; '),
    );
    console.log(
      `this process's peak RSS in each side's turns (largest over the rounds): ${[...turnPeaks].map(([label, bytes]) => `${label} ${formatBytes(bytes)}`).join(', ')}; ` +
        `beside the PyTorch servers at most ${formatBytes(besideTorch)}`,
    );
    if (report.missed || missing.length) process.exitCode = 1;
  } finally {
    for (const l of llamas) await closeLlama(l);
    for (const e of engines) {
      e.optimizer.dispose();
      e.reference.dispose();
      e.model.dispose();
    }
  }
}

main().catch((e: unknown) => {
  console.error(`bench seed000Scale: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
