// Transformer throughput on the chosen tfjs backend against the same model and workload in PyTorch
// (Debian python3-torch, OpenBLAS, 1 or 2 threads, whichever is faster), in one run, as ratios.
// Training: batch 16 × 128 tokens, masked cross-entropy, AdamW with gradient clipping. Sampling: 32
// sequences, 32-token prompt, 64 new tokens, KV cache, temperature 1.
// Targets (issue 4): sampling ≥ 1.0× PyTorch, training ≥ 0.5×.
import * as tf from '@tensorflow/tfjs';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AdamW } from '../src/rl/policies/transformer/adamw';
import { initBackend } from '../src/rl/policies/transformer/backend';
import { batchMatMulImplementation } from '../src/rl/policies/transformer/kernels/batchMatMul';
import { Gpt } from '../src/rl/policies/transformer/model';
import { sampleBatch } from '../src/rl/policies/transformer/sampler';
import { buildTokenBatch, nllLoss, type TokenSequence } from '../src/rl/policies/transformer/tokenLoss';
import { CharTokenizer } from '../src/rl/policies/transformer/tokenizer';
import { Rng } from '../src/rl/random';

const MODELS = [
  { name: '0.8M', vocab: 96, dModel: 128, nLayers: 4, nHeads: 4 },
  { name: '5M', vocab: 512, dModel: 256, nLayers: 6, nHeads: 8 },
].map((m) => ({ ...m, context: 128, trainBatch: 16, trainLength: 128, sampleBatch: 32, promptLength: 32, newTokens: 64 }));
type Model = (typeof MODELS)[number];
const ROUNDS = 5;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function tfjsRates(m: Model, rounds: number): { train: number; sample: number; params: number } {
  const model = new Gpt({ vocabSize: m.vocab, contextLength: m.context, dModel: m.dModel, nLayers: m.nLayers, nHeads: m.nHeads, mlpRatio: 4, tiedHead: true }, 1);
  const opt = new AdamW(model.weights, { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 });
  const rng = new Rng(1);
  const seqs: TokenSequence[] = Array.from({ length: m.trainBatch }, () => {
    const ids = Array.from({ length: m.trainLength }, () => rng.int(m.vocab));
    return { ids, mask: ids.map((_, i) => (i === 0 ? 0 : 1)), behaviour: ids.map(() => 0), advantage: 0 };
  });
  const batch = buildTokenBatch(seqs);
  const step = (): void => {
    const { value, grads } = tf.variableGrads(() => nllLoss(model, batch, 'token-mean'), model.weights);
    opt.apply(model.weights.map((w) => grads[w.name]!));
    value.dataSync();
    tf.dispose([value, ...Object.values(grads)]);
  };
  const tokenizer = new CharTokenizer();
  const sample = (): void => {
    const prompts = Array.from({ length: m.sampleBatch }, () => Array.from({ length: m.promptLength }, () => rng.int(m.vocab)));
    const out = sampleBatch(model, tokenizer, prompts, { temperature: 1, topK: 0, topP: 1, maxNewTokens: m.newTokens, stop: [] }, rng);
    if (out.some((s) => s.tokens.length !== m.newTokens)) throw new Error('sampling stopped early');
  };
  step();
  sample();
  const train: number[] = [];
  const samp: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let t0 = performance.now();
    step();
    train.push((m.trainBatch * m.trainLength) / ((performance.now() - t0) / 1000));
    t0 = performance.now();
    sample();
    samp.push((m.sampleBatch * m.newTokens) / ((performance.now() - t0) / 1000));
  }
  const params = model.parameterCount();
  opt.dispose();
  model.dispose();
  return { train: median(train), sample: median(samp), params };
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
    encoding: 'utf8', env: { ...process.env, OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads) }, timeout: 600_000,
  });
  if (r.status !== 0) {
    const err = (r.stderr || r.error?.message || '').trim().split('\n').pop() ?? '';
    return /No module named 'torch'/.test(err) ? 'python3-torch is not installed (apt-get install python3-torch libopenblas0-pthread)' : `PyTorch run failed: ${err}`;
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as TorchResult;
}

async function main(): Promise<void> {
  const backend = await initBackend('auto');
  console.log(`tfjs backend: ${backend.name}; attention products: ${batchMatMulImplementation()}`);
  // tfjs rounds before and after PyTorch's, so both see the same machine state; medians of all.
  const first = MODELS.map((m) => tfjsRates(m, ROUNDS));
  const torch = [1, 2].map((n) => torchRates(n));
  const second = MODELS.map((m) => tfjsRates(m, ROUNDS));
  const ours = MODELS.map((_, i) => ({ train: median([first[i]!.train, second[i]!.train]), sample: median([first[i]!.sample, second[i]!.sample]), params: first[i]!.params }));
  const fmt = (x: number): string => Math.round(x).toLocaleString('en').padStart(8);
  let missed = 0;
  for (const [i, m] of MODELS.entries()) {
    const o = ours[i]!;
    console.log(`\nmodel ${m.name} (${o.params.toLocaleString('en')} parameters: vocab ${m.vocab}, width ${m.dModel}, ${m.nLayers} layers, ${m.nHeads} heads)`);
    console.log(`  tfjs ${backend.name.padEnd(8)}       train ${fmt(o.train)} tokens/s   sample ${fmt(o.sample)} tokens/s`);
    const runs = torch.filter((t): t is TorchResult => typeof t !== 'string');
    for (const t of runs) console.log(`  PyTorch ${t.torch}, ${t.threads} thr  train ${fmt(t.models[m.name]!.train)} tokens/s   sample ${fmt(t.models[m.name]!.sample)} tokens/s`);
    if (runs.length === 0) {
      console.log(`  PyTorch: ${torch.find((t): t is string => typeof t === 'string') ?? ''}`);
      continue;
    }
    const bestTrain = Math.max(...runs.map((t) => t.models[m.name]!.train));
    const bestSample = Math.max(...runs.map((t) => t.models[m.name]!.sample));
    const tr = o.train / bestTrain;
    const sr = o.sample / bestSample;
    if (tr < 0.5) missed++;
    if (sr < 1) missed++;
    console.log(`  ratio to PyTorch's faster setting: training ${tr.toFixed(2)}× (target ≥ 0.5: ${tr >= 0.5 ? 'met' : 'missed'}), sampling ${sr.toFixed(2)}× (target ≥ 1.0: ${sr >= 1 ? 'met' : 'missed'})`);
  }
  console.log(missed === 0 ? '\nall targets met' : `\n${missed} target(s) missed`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
