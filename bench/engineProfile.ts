// Where the engine's time goes in seed 000's training step at its real scale (issue 40, item 3): the
// reference pass and the training pass (forward, backward, AdamW) over S × 1,024 tokens of
// Qwen2.5-0.5B's shapes with LoRA rank 8, as bench/seed000Scale.ts times them, with every kernel call
// timed (AGENT_RL_ENGINE_PROFILE: the threads synchronise at each call, so the wall times here are a
// little above the bench's). Prints, per pass, each kernel's seconds, calls and share of the pass, and
// what ran outside the kernels (JavaScript: packing, the adapters' and AdamW's tfjs work, copies).
// Also the sampling workload (12 rows × 256 new tokens from 300-token prompts, prefill and decoding
// apart) with its kernels, and `--weight-dtype q8` profiles the engine on its Q8_0 base (issue 50).
// Run: npm run build && npm run compile-tests && node out/bench/engineProfile.js [--sequences S] [--weight-dtype auto|q8]
process.env.AGENT_RL_ENGINE_PROFILE = '1';
import * as os from 'node:os';
import * as path from 'node:path';
import { ADAM_DEFAULTS, AdamW } from '../src/rl/algo/adamw';
import { shardGradients, shardLogprobs } from '../src/rl/algo/gradients';
import { fittingEnginePlan } from '../src/rl/policies/lm/models/engine/enginePlan';
import { EngineModel } from '../src/rl/policies/lm/models/engine/engineModel';
import { readHfConfig } from '../src/rl/policies/lm/models/hfConfig';
import { describePlan } from '../src/rl/policies/lm/models/memoryPlan';
import { initBackend } from '../src/rl/policies/lm/models/tfjsBackend';
import { sampleBatch } from '../src/rl/policies/lm/sampler';
import { HfTokenizer } from '../src/rl/policies/lm/tokenizer';
import { Rng } from '../src/rl/random';
import { writeScaleCheckpoint } from '../test/helpers/scaleCheckpoint';
import { engineTrainStep, randomSequences } from './engineWorkload';

const DIR = path.join(os.tmpdir(), 'agent-rl-scale', 'qwen2.5-0.5b');
const LORA = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
const T = 1024,
  FROM = 300;
const at = process.argv.indexOf('--sequences');
const S = at > 0 ? Number(process.argv[at + 1]) : 2;
const dtypeAt = process.argv.indexOf('--weight-dtype');
const DTYPE_ARG = dtypeAt > 0 ? process.argv[dtypeAt + 1] : 'auto';
/** The sampling workload: rows × new tokens from prompts of this many tokens (bench seed000Scale's). */
const [ROWS, PROMPT, NEW] = [12, 300, 256];
const threads = Math.min(os.availableParallelism(), 14);
const NLL = { kind: 'nll', aggregation: 'token-mean', normTokens: 1 } as const;

function report(label: string, seconds: number, entries: [string, { ms: number; calls: number }][]): void {
  const inKernels = entries.reduce((s, [, v]) => s + v.ms, 0) / 1000;
  console.log(
    `\n${label}: ${seconds.toFixed(1)} s; in kernels ${inKernels.toFixed(1)} s (${((100 * inKernels) / seconds).toFixed(0)} %), outside ${(seconds - inKernels).toFixed(1)} s`,
  );
  console.log('| kernel | s | calls | share of the pass |\n|---|---|---|---|');
  for (const [k, v] of entries.filter(([, v]) => v.ms >= 5))
    console.log(`| ${k} | ${(v.ms / 1000).toFixed(2)} | ${v.calls} | ${((100 * v.ms) / 1000 / seconds).toFixed(1)} % |`);
}

async function main(): Promise<void> {
  if (!Number.isInteger(S) || S < 1) throw new Error(`--sequences must be a whole number ≥ 1 (got ${process.argv[at + 1]})`);
  if (DTYPE_ARG !== 'auto' && DTYPE_ARG !== 'q8') throw new Error(`--weight-dtype must be auto or q8 (got ${String(DTYPE_ARG)})`);
  const DTYPE: 'auto' | 'q8' = DTYPE_ARG;
  writeScaleCheckpoint(DIR, 'qwen2.5-0.5b');
  const arch = readHfConfig(DIR);
  const backend = await initBackend('wasm');
  const plan = fittingEnginePlan(arch, { lora: LORA, contextLength: T, sampleRows: ROWS, threads, dtype: DTYPE });
  const model = await EngineModel.create({ dir: DIR, arch, contextLength: T, lora: LORA, seed: 1, threads, plan, planText: describePlan(plan) });
  const reference = model.reference();
  const optimizer = new AdamW([...model.weights], { ...ADAM_DEFAULTS, maxGradNorm: 1 });
  const rng = new Rng(7);
  console.log(
    `engine: ${model.engine.threads} threads, ${model.engine.relaxed ? 'relaxed SIMD' : 'SIMD'}, ${plan.dtype} weights (tfjs ${backend.name} holds the adapters and AdamW); ${S} × ${T} tokens, ${T - FROM} trained`,
  );
  console.log(describePlan(plan));
  try {
    await engineTrainStep(model, reference, optimizer, randomSequences(rng, arch.vocabSize, S, 128, 64)); // warm-up
    const tokenizer = HfTokenizer.fromDirectory(DIR);
    const prompts = (): number[][] => Array.from({ length: ROWS }, () => Array.from({ length: PROMPT }, () => rng.int(arch.vocabSize)));
    const options = { temperature: 1, topK: 0, topP: 1, stop: [] };
    await sampleBatch(model, tokenizer, prompts(), { ...options, maxNewTokens: 4 }, rng); // warm-up
    model.engine.takeProfileEntries();
    const start = performance.now();
    let prefilled = start;
    await sampleBatch(model, tokenizer, prompts(), { ...options, maxNewTokens: NEW, onPrefilled: () => (prefilled = performance.now()) }, rng);
    const decoded = performance.now();
    report(
      `sampling ${ROWS} rows × ${NEW} new tokens from ${PROMPT}-token prompts (prefill ${((prefilled - start) / 1000).toFixed(1)} s, decoding ${((decoded - prefilled) / 1000).toFixed(1)} s)`,
      (decoded - start) / 1000,
      model.engine.takeProfileEntries(),
    );
    const seqs = randomSequences(rng, arch.vocabSize, S, T, FROM);
    let t = performance.now();
    await shardLogprobs(reference.scorer(), seqs, { temperature: 1, rows: false });
    report('reference pass (forward, the frozen reference)', (performance.now() - t) / 1000, model.engine.takeProfileEntries());
    t = performance.now();
    const { grads } = await shardGradients(
      model.scorer(),
      seqs.map((seq) => ({ seq })),
      NLL,
    );
    const gradSeconds = (performance.now() - t) / 1000;
    report('training pass (forward, recompute, backward)', gradSeconds, model.engine.takeProfileEntries());
    t = performance.now();
    await optimizer.apply(grads, 1e-4);
    grads.forEach((g) => g.dispose());
    model.weightsChanged();
    report('AdamW step and the new weights handed to the engine', (performance.now() - t) / 1000, model.engine.takeProfileEntries());
  } finally {
    await model.dispose();
  }
}

void main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : String(e));
  process.exitCode = 1;
});
