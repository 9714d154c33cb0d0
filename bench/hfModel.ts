// A Hugging Face checkpoint's throughput on the chosen tfjs backend beside the same model and workload
// in PyTorch (Debian python3-torch; bench/torch_hf.py reads the same safetensors), in one run: the
// largest fixture (test/fixtures/hf/qwen2) with LoRA rank 8 on every linear layer. Training: batch 8 ×
// 128 tokens, cross-entropy, AdamW on the adapters with gradient clipping. Sampling: 16 rows, 16-token
// prompt, 48 new tokens, KV cache, temperature 1. Reported, no target: the fixture is tiny (111 k
// parameters), so this measures the per-operation overhead a real checkpoint amortises.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ADAM_DEFAULTS, AdamW } from '../src/rl/algo/adamw';
import { HfModel, hfDifferentiable } from '../src/rl/policies/hf/hfModel';
import { describeBackend, initBackend } from '../src/rl/policies/transformer/backend';
import { sampleBatch } from '../src/rl/policies/transformer/sampler';
import { HfTokenizer } from '../src/rl/policies/transformer/tokenizer';
import { Rng } from '../src/rl/random';
import type { TrainSequence } from '../src/rl/algo/batch';
import { shardGradients } from '../src/rl/algo/gradients';

const DIR = path.join(__dirname, '..', '..', 'test', 'fixtures', 'hf', 'qwen2');
const RANK = 8;
const TRAIN: [number, number] = [8, 128];
const SAMPLE: [number, number, number] = [16, 16, 48];
const ROUNDS = 5;
const WARMUP = 2;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const NLL = { kind: 'nll', aggregation: 'token-mean', normTokens: 1 } as const;

async function tfjsRates(rounds = ROUNDS): Promise<{ train: number; sample: number }> {
  const model = HfModel.load(DIR, { lora: { rank: RANK, alpha: 2 * RANK, dropout: 0, targets: ['all-linear'] }, contextLength: 256 });
  const tokenizer = HfTokenizer.fromDirectory(DIR);
  const optimizer = new AdamW([...model.weights], { ...ADAM_DEFAULTS, maxGradNorm: 1 });
  const rng = new Rng(1);
  const V = model.config.vocabSize;
  const [B, T] = TRAIN;
  const seqs: TrainSequence[] = Array.from({ length: B }, () => {
    const ids = Array.from({ length: T }, () => rng.int(V));
    return { inputs: ids.slice(0, -1), targets: ids.slice(1), mask: ids.slice(1).map(() => 1), behaviour: ids.slice(1).map(() => 0), advantage: 0 };
  });
  const [SB, P, N] = SAMPLE;
  const rates = { train: [] as number[], sample: [] as number[] };
  for (let r = 0; r < WARMUP + rounds; r++) {
    let t = performance.now();
    const { grads } = await shardGradients(
      hfDifferentiable(model),
      seqs.map((seq) => ({ seq })),
      NLL,
      B * T,
    );
    await optimizer.apply(grads, 1e-3);
    grads.forEach((g) => g.dispose());
    model.weightsChanged();
    const dt = performance.now() - t;
    t = performance.now();
    const prompts = Array.from({ length: SB }, () => Array.from({ length: P }, () => rng.int(V)));
    const out = await sampleBatch(model, tokenizer, prompts, { temperature: 1, topK: 0, topP: 1, maxNewTokens: N, stop: [] }, rng);
    const ds = performance.now() - t;
    if (r >= WARMUP) {
      rates.train.push((B * (T - 1)) / (dt / 1000));
      rates.sample.push(out.reduce((n, s) => n + s.tokens.length, 0) / (ds / 1000));
    }
  }
  optimizer.dispose();
  model.dispose();
  return { train: median(rates.train), sample: median(rates.sample) };
}

function torchRates(threads: number): { torch: string; threads: number; train: number; sample: number } | string {
  const python = '/usr/bin/python3';
  if (!fs.existsSync(python)) return 'no /usr/bin/python3';
  const script = path.join(__dirname, '..', '..', 'bench', 'torch_hf.py');
  const r = spawnSync(python, [script, JSON.stringify({ dir: DIR, threads, rounds: ROUNDS, rank: RANK, train: TRAIN, sample: SAMPLE })], {
    encoding: 'utf8',
    env: { ...process.env, OPENBLAS_NUM_THREADS: String(threads), OMP_NUM_THREADS: String(threads) },
    timeout: 600_000,
  });
  if (r.status !== 0) {
    const err = (r.stderr || r.error?.message || '').trim().split('\n').pop() ?? '';
    return /No module named 'torch'/.test(err) ? 'python3-torch is not installed (apt-get install python3-torch)' : `PyTorch run failed: ${err}`;
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { torch: string; threads: number; train: number; sample: number };
}

/** The same workload on WebGPU in a child process (one backend per process): its rates and adapter, or why not. */
function webgpuRates(env: Record<string, string>): { train: number; sample: number; adapter: string } | string {
  const r = spawnSync(process.execPath, [__filename, '--webgpu'], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 900_000 });
  if (r.status !== 0)
    return (
      (r.stderr || r.error?.message || '')
        .trim()
        .split('\n')
        .filter((l) => !/^\s+at /.test(l))
        .pop() ?? 'failed'
    );
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as { train: number; sample: number; adapter: string };
}

async function main(): Promise<void> {
  if (process.argv[2] === '--webgpu') {
    const info = await initBackend('webgpu');
    // a software adapter runs at well under a GFLOP/s: fewer rounds
    const rates = await tfjsRates(info.adapter?.software ? 1 : ROUNDS);
    console.log(JSON.stringify({ ...rates, adapter: describeBackend(info) }));
    return;
  }
  const backend = await initBackend('auto');
  const fmt = (x: number): string => Math.round(x).toLocaleString('en').padStart(8);
  const first = await tfjsRates();
  const torch = [1, 2].map((n) => torchRates(n));
  const second = await tfjsRates();
  const mine = { train: (first.train + second.train) / 2, sample: (first.sample + second.sample) / 2 };
  console.log(
    `qwen2 fixture (111,168 parameters), LoRA rank ${RANK} on every linear layer; training ${TRAIN.join(' × ')} tokens, sampling ${SAMPLE[0]} rows × ${SAMPLE[2]} new tokens`,
  );
  console.log(`  ${`tfjs ${describeBackend(backend)}, one engine`.padEnd(30)} train ${fmt(mine.train)} tokens/s   sample ${fmt(mine.sample)} tokens/s`);
  // WebGPU where an adapter exists: the machine's own, and SwiftShader's software one where chromium ships it
  const gpus: [string, Record<string, string>][] = [['WebGPU', {}]];
  if (fs.existsSync('/usr/lib/chromium/vk_swiftshader_icd.json'))
    gpus.push(['WebGPU, SwiftShader', { VK_ICD_FILENAMES: '/usr/lib/chromium/vk_swiftshader_icd.json', LD_LIBRARY_PATH: '/usr/lib/chromium' }]);
  for (const [label, env] of gpus) {
    if (backend.name === 'webgpu' && label === 'WebGPU') continue;
    const g = webgpuRates(env);
    if (typeof g === 'string') console.log(`  ${label}: not available (${g})`);
    else
      console.log(
        `  ${`tfjs ${g.adapter}`.slice(0, 60).padEnd(30)} train ${fmt(g.train)} tokens/s   sample ${fmt(g.sample)} tokens/s   (to wasm: training ${(g.train / mine.train).toFixed(2)}×, sampling ${(g.sample / mine.sample).toFixed(2)}×)`,
      );
  }
  for (const t of torch) {
    if (typeof t === 'string') {
      console.log(`  PyTorch: ${t}`);
      continue;
    }
    console.log(
      `  ${`PyTorch ${t.torch}, ${t.threads} thread(s)`.padEnd(30)} train ${fmt(t.train)} tokens/s   sample ${fmt(t.sample)} tokens/s   (tfjs / PyTorch: training ${(mine.train / t.train).toFixed(2)}×, sampling ${(mine.sample / t.sample).toFixed(2)}×)`,
    );
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
