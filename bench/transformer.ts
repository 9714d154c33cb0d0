// Transformer throughput on the chosen tfjs backend against the same model and workload in PyTorch
// (Debian python3-torch, OpenBLAS, 1 or 2 threads, whichever is faster), in one run, as ratios.
// Training: batch 16 × 128 tokens, masked cross-entropy, AdamW with gradient clipping. Sampling: 32
// sequences, 32-token prompt, 64 new tokens, KV cache, temperature 1.
// Two tfjs figures per model: one engine on one core, and the policy as runs use it (TransformerPolicy
// with its data-parallel replicas, one per core on wasm). PyTorch may use 1 or 2 threads; both tfjs and
// PyTorch get WARMUP untimed rounds first.
// Targets (issue 4), on the policy's figures: sampling ≥ 1.0× PyTorch, training ≥ 0.5×.
import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ADAM_DEFAULTS, AdamW } from '../src/rl/algo/adamw';
import { initBackend } from '../src/rl/policies/transformer/backend';
import { batchMatMulImplementation } from '../src/rl/policies/transformer/kernels/batchMatMul';
import { Gpt, gptDifferentiable, type GptConfig } from '../src/rl/policies/transformer/model';
import { autoReplicas, ReplicaPool } from '../src/rl/policies/transformer/replicas';
import { sampleBatch, type SampledSequence, type SampleOptions } from '../src/rl/policies/transformer/sampler';
import { CharTokenizer } from '../src/rl/policies/transformer/tokenizer';
import { TransformerPolicy } from '../src/rl/policies/transformer/transformerPolicy';
import { Rng } from '../src/rl/random';
import type { TrainSequence } from '../src/rl/algo/batch';
import { shardGradients } from '../src/rl/algo/gradients';
import { Learner } from '../src/rl/train/learner';
import { algorithmDefaults } from '../src/shared/algorithm';

const MODELS = [
  { name: '0.8M', vocab: 96, dModel: 128, nLayers: 4, nHeads: 4 },
  { name: '5M', vocab: 512, dModel: 256, nLayers: 6, nHeads: 8 },
].map((m) => ({ ...m, context: 128, trainBatch: 16, trainLength: 128, sampleBatch: 32, promptLength: 32, newTokens: 64 }));
type Model = (typeof MODELS)[number];
const ROUNDS = 5;
const WARMUP = 2;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The training batch and a prompt generator, the same for every engine (random tokens, fixed seed). */
function workload(m: Model): { seqs: TrainSequence[]; prompts: () => number[][] } {
  const rng = new Rng(1);
  const seqs: TrainSequence[] = Array.from({ length: m.trainBatch }, () => {
    const ids = Array.from({ length: m.trainLength }, () => rng.int(m.vocab));
    return { inputs: ids.slice(0, -1), targets: ids.slice(1), mask: ids.slice(1).map(() => 1), behaviour: ids.slice(1).map(() => 0), advantage: 0 };
  });
  const prompts = (): number[][] => Array.from({ length: m.sampleBatch }, () => Array.from({ length: m.promptLength }, () => rng.int(m.vocab)));
  return { seqs, prompts };
}

const gptConfig = (m: Model): GptConfig => ({
  vocabSize: m.vocab,
  contextLength: m.context,
  dModel: m.dModel,
  nLayers: m.nLayers,
  nHeads: m.nHeads,
  mlpRatio: 4,
  tiedHead: true,
});
const OPTIMIZER = { ...ADAM_DEFAULTS, maxGradNorm: 1 };
const LR = 1e-3;
const NLL = { kind: 'nll', aggregation: 'token-mean', normTokens: 1 } as const;
const SAMPLING = (m: Model): SampleOptions => ({ temperature: 1, topK: 0, topP: 1, maxNewTokens: m.newTokens, stop: [] });

/** Tokens per second of each timed round. */
interface Rates {
  readonly train: number[];
  readonly sample: number[];
}

/** Times `WARMUP` untimed then `rounds` timed training steps and sampling batches. */
async function timeRounds(m: Model, rounds: number, step: () => unknown, sample: () => Promise<SampledSequence[]> | SampledSequence[]): Promise<Rates> {
  const train: number[] = [];
  const samp: number[] = [];
  for (let r = 0; r < WARMUP + rounds; r++) {
    let t0 = performance.now();
    await step();
    const trainRate = (m.trainBatch * m.trainLength) / ((performance.now() - t0) / 1000);
    t0 = performance.now();
    const out = await sample();
    const sampleRate = (m.sampleBatch * m.newTokens) / ((performance.now() - t0) / 1000);
    if (out.length !== m.sampleBatch || out.some((x) => x.tokens.length !== m.newTokens)) throw new Error('sampling stopped early');
    if (r >= WARMUP) {
      train.push(trainRate);
      samp.push(sampleRate);
    }
  }
  return { train, sample: samp };
}

/** One tfjs engine on this thread: a masked cross-entropy step with AdamW, and `sampleBatch`. */
async function engineRates(m: Model, rounds: number): Promise<Rates> {
  const model = new Gpt(gptConfig(m), 1);
  const opt = new AdamW(model.weights, OPTIMIZER);
  const { seqs, prompts } = workload(m);
  const inputs = seqs.map((seq) => ({ seq }));
  const rng = new Rng(2);
  const tokenizer = new CharTokenizer();
  try {
    return await timeRounds(
      m,
      rounds,
      async () => {
        const { grads } = await shardGradients(gptDifferentiable(model), inputs, NLL, Number.POSITIVE_INFINITY);
        await opt.apply(grads, LR);
        tf.dispose(grads);
      },
      () => sampleBatch(model, tokenizer, prompts(), SAMPLING(m), rng),
    );
  } finally {
    opt.dispose();
    model.dispose();
  }
}

/**
 * The policy as runs use it: `TransformerPolicy` with its data-parallel replicas (`autoReplicas`: one
 * per core on wasm), one optimizer step over the whole batch (shards' gradients combined, weights sent
 * back to the helpers) and sharded sampling.
 */
async function policyRates(m: Model, rounds: number, backend: string, replicas: number): Promise<Rates> {
  const model = new Gpt(gptConfig(m), 1);
  const tokenizer = new CharTokenizer();
  const policy = new TransformerPolicy(model, tokenizer, SAMPLING(m), OPTIMIZER, backend, 1);
  // one optimizer step over the whole batch through the learner, as SFT takes them
  const settings = {
    ...algorithmDefaults('calculator', 'transformer', 'sft'),
    learningRate: LR,
    warmupSteps: 0,
    minibatchSize: 0,
    lossAggregation: 'token-mean' as const,
  };
  const learner = new Learner(policy, { method: 'sft', settings, imitate: 'all', totalSteps: 1000, seed: 1 });
  try {
    if (replicas > 1) policy.attachReplicas(await ReplicaPool.start(replicas - 1, backend, model, policy.reference, tokenizer), undefined);
    const { seqs, prompts } = workload(m);
    const rng = new Rng(2);
    return await timeRounds(
      m,
      rounds,
      () => learner.train(seqs),
      () => policy.sampleTokens(prompts(), rng),
    );
  } finally {
    await policy.dispose();
  }
}

interface TorchResult {
  torch: string;
  threads: number;
  models: Record<string, { params: number; train: number; sample: number }>;
}

function torchRates(threads: number): TorchResult | string {
  const python = '/usr/bin/python3'; // Debian's, with python3-torch (a python3 earlier on PATH may lack it)
  if (!fs.existsSync(python)) return 'no /usr/bin/python3';
  const script = path.join(__dirname, '..', '..', 'bench', 'torch_gpt.py');
  const r = spawnSync(python, [script, JSON.stringify({ models: MODELS, threads, rounds: ROUNDS })], {
    encoding: 'utf8',
    env: { ...process.env, OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads) },
    timeout: 600_000,
  });
  if (r.status !== 0) {
    const err = (r.stderr || r.error?.message || '').trim().split('\n').pop() ?? '';
    return /No module named 'torch'/.test(err)
      ? 'python3-torch is not installed (apt-get install python3-torch libopenblas0-pthread)'
      : `PyTorch run failed: ${err}`;
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as TorchResult;
}

async function main(): Promise<void> {
  const backend = await initBackend('auto');
  const replicas = autoReplicas(backend.name);
  console.log(`tfjs backend: ${backend.name}; attention products: ${batchMatMulImplementation()}; runs use ${replicas} data-parallel replica(s) here`);
  const tfjsPass = async (): Promise<{ engine: Rates; policy: Rates }[]> => {
    const out: { engine: Rates; policy: Rates }[] = [];
    for (const m of MODELS) out.push({ engine: await engineRates(m, ROUNDS), policy: await policyRates(m, ROUNDS, backend.name, replicas) });
    return out;
  };
  // tfjs rounds before and after PyTorch's, so both see the same machine state; medians of all rounds.
  const first = await tfjsPass();
  const torch = [1, 2].map((n) => torchRates(n));
  const second = await tfjsPass();
  const pooled = (pick: (x: { engine: Rates; policy: Rates }) => Rates, i: number): { train: number; sample: number } => ({
    train: median([...pick(first[i]!).train, ...pick(second[i]!).train]),
    sample: median([...pick(first[i]!).sample, ...pick(second[i]!).sample]),
  });
  const fmt = (x: number): string => Math.round(x).toLocaleString('en').padStart(8);
  const row = (label: string, r: { train: number; sample: number }): void =>
    console.log(`  ${label.padEnd(34)} train ${fmt(r.train)} tokens/s   sample ${fmt(r.sample)} tokens/s`);
  let missed = 0;
  for (const [i, m] of MODELS.entries()) {
    const probe = new Gpt(gptConfig(m), 1);
    const params = probe.parameterCount();
    probe.dispose();
    const engine = pooled((x) => x.engine, i);
    const policy = pooled((x) => x.policy, i);
    console.log(`\nmodel ${m.name} (${params.toLocaleString('en')} parameters: vocab ${m.vocab}, width ${m.dModel}, ${m.nLayers} layers, ${m.nHeads} heads)`);
    row(`tfjs ${backend.name}, one engine`, engine);
    row(`tfjs ${backend.name}, policy, ${replicas} replica(s)`, policy);
    const runs = torch.filter((t): t is TorchResult => typeof t !== 'string');
    for (const t of runs) row(`PyTorch ${t.torch}, ${t.threads} thread(s)`, t.models[m.name]!);
    if (runs.length === 0) {
      console.log(`  PyTorch: ${torch.find((t): t is string => typeof t === 'string') ?? ''}`);
      continue;
    }
    const bestTrain = Math.max(...runs.map((t) => t.models[m.name]!.train));
    const bestSample = Math.max(...runs.map((t) => t.models[m.name]!.sample));
    const tr = policy.train / bestTrain;
    const sr = policy.sample / bestSample;
    if (tr < 0.5) missed++;
    if (sr < 1) missed++;
    console.log(
      `  the policy as runs use it, to PyTorch's faster setting: training ${tr.toFixed(2)}× (target ≥ 0.5: ${tr >= 0.5 ? 'met' : 'missed'}), sampling ${sr.toFixed(2)}× (target ≥ 1.0: ${sr >= 1 ? 'met' : 'missed'})`,
    );
    console.log(
      `  one engine (one core), to the same: training ${(engine.train / bestTrain).toFixed(2)}×, sampling ${(engine.sample / bestSample).toFixed(2)}×`,
    );
  }
  console.log(missed === 0 ? '\nall targets met' : `\n${missed} target(s) missed`);
  if (missed > 0) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
