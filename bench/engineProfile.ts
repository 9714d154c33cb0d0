// Where the engine's time goes in seed 000's training step at its real scale (issue 40, item 3): the
// reference pass and the training pass (forward, backward, AdamW) over S × 1,024 tokens of
// Qwen2.5-0.5B's shapes with LoRA rank 8, as bench/seed000Scale.ts times them, with every kernel call
// timed (AGENT_RL_ENGINE_PROFILE: the threads synchronise at each call, so the wall times here are a
// little above the bench's). Prints, per pass, each kernel's seconds, calls and share of the pass, and
// what ran outside the kernels (JavaScript: packing, the adapters' and AdamW's tfjs work, copies).
// Run: npm run build && npm run compile-tests && node out/bench/engineProfile.js [--sequences S]
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
import { Rng } from '../src/rl/random';
import { writeScaleCheckpoint } from '../test/helpers/scaleCheckpoint';
import { engineTrainStep, randomSequences } from './engineWorkload';

const DIR = path.join(os.tmpdir(), 'agent-rl-scale', 'qwen2.5-0.5b');
const LORA = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
const T = 1024,
  FROM = 300;
const at = process.argv.indexOf('--sequences');
const S = at > 0 ? Number(process.argv[at + 1]) : 2;
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
  writeScaleCheckpoint(DIR, 'qwen2.5-0.5b');
  const arch = readHfConfig(DIR);
  const backend = await initBackend('wasm');
  const plan = fittingEnginePlan(arch, { lora: LORA, contextLength: T, sampleRows: 12, threads, dtype: 'auto' });
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
    model.engine.takeProfileEntries();
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
