// A Hugging Face checkpoint's throughput on the chosen tfjs backend beside the same model and workload
// in PyTorch float32 and bfloat16 (Debian python3-torch; bench/torch_baseline.py reads the same
// safetensors, as a server: bench/torchServer.ts), interleaved round by round, in one run: the
// largest fixture (test/fixtures/hf/qwen2) with LoRA rank 8 on every linear layer. Training: batch 8 ×
// 128 tokens, cross-entropy, AdamW on the adapters with gradient clipping. Sampling: 16 rows, 16-token
// prompt, 48 new tokens, KV cache, temperature 1. Ratios are medians of the per-round ratios with their
// spread. Reported, no target: the fixture is tiny (111 k parameters), so this measures the
// per-operation overhead a real checkpoint amortises.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ADAM_DEFAULTS, AdamW } from '../src/rl/algo/adamw';
import { HfModel, hfDifferentiable } from '../src/rl/policies/lm/models/hfModel';
import { describeBackend, initBackend } from '../src/rl/policies/lm/models/tfjsBackend';
import { sampleBatch } from '../src/rl/policies/lm/sampler';
import { HfTokenizer } from '../src/rl/policies/lm/tokenizer';
import { Rng } from '../src/rl/random';
import type { TrainSequence } from '../src/rl/algo/trainSequence';
import { shardGradients } from '../src/rl/algo/gradients';
import { DTYPES, describeTorch, median, ratioText, startTorch, type Dtype, type SampleTimes, type TrainTimes } from './torchServer';

const DIR = path.join(__dirname, '..', '..', 'test', 'fixtures', 'hf', 'qwen2');
const RANK = 8;
const TRAIN: [number, number] = [8, 128];
const SAMPLE: [number, number, number] = [16, 16, 48];
const ROUNDS = 5;
const WARMUP = 2;
const TRAIN_TOKENS = TRAIN[0] * (TRAIN[1] - 1);
const SAMPLE_TOKENS = SAMPLE[0] * SAMPLE[2];
const NLL = { kind: 'nll', aggregation: 'token-mean', normTokens: 1 } as const;

/** The tfjs side, ready to run rounds: each trains one step and samples once; seconds of each. */
async function tfjsSide(): Promise<{ round: () => Promise<{ train: number; sample: number }>; dispose: () => void }> {
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
  const round = async (): Promise<{ train: number; sample: number }> => {
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
    const train = (performance.now() - t) / 1000;
    t = performance.now();
    const prompts = Array.from({ length: SB }, () => Array.from({ length: P }, () => rng.int(V)));
    await sampleBatch(model, tokenizer, prompts, { temperature: 1, topK: 0, topP: 1, maxNewTokens: N, stop: [] }, rng);
    return { train, sample: (performance.now() - t) / 1000 };
  };
  for (let r = 0; r < WARMUP; r++) await round();
  return {
    round,
    dispose: () => {
      optimizer.dispose();
      model.dispose();
    },
  };
}

/** Tokens per second of the median round (the WebGPU child's figure). */
async function tfjsRates(rounds = ROUNDS): Promise<{ train: number; sample: number }> {
  const side = await tfjsSide();
  const times = { train: [] as number[], sample: [] as number[] };
  for (let r = 0; r < rounds; r++) {
    const t = await side.round();
    times.train.push(t.train);
    times.sample.push(t.sample);
  }
  side.dispose();
  return { train: TRAIN_TOKENS / median(times.train), sample: SAMPLE_TOKENS / median(times.sample) };
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
  const threads = os.availableParallelism();
  const [B, T] = TRAIN;
  const torch = await startTorch({ dir: DIR, threads, sequences: B, micro: B, train: [T - 1, 0], sample: SAMPLE });
  const described = describeTorch(torch, threads);
  const tfjs = await tfjsSide();
  const times = { tfjs: { train: [] as number[], sample: [] as number[] } } as Record<'tfjs' | Dtype, { train: number[]; sample: number[] }>;
  for (const d of DTYPES) times[d] = { train: [], sample: [] };
  for (let r = 0; r < ROUNDS; r++) {
    const t = await tfjs.round();
    times.tfjs.train.push(t.train);
    times.tfjs.sample.push(t.sample);
    for (const d of DTYPES) {
      // the same step as the tfjs side: the training pass alone (the server's reference pass is timed apart)
      const tr = await torch[d].server.run<TrainTimes>('train');
      times[d].train.push(tr.seconds - tr.reference_seconds);
      times[d].sample.push((await torch[d].server.run<SampleTimes>('sample')).seconds);
    }
  }
  tfjs.dispose();
  for (const d of DTYPES) await torch[d].server.quit();
  const mine = { train: TRAIN_TOKENS / median(times.tfjs.train), sample: SAMPLE_TOKENS / median(times.tfjs.sample) };
  console.log(
    `qwen2 fixture (111,168 parameters), LoRA rank ${RANK} on every linear layer; training ${TRAIN.join(' × ')} tokens, sampling ${SAMPLE[0]} rows × ${SAMPLE[2]} new tokens; ${ROUNDS} interleaved rounds after ${WARMUP} of warm-up`,
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
  console.log(described.text);
  if (!described.baseline) return;
  for (const d of DTYPES)
    console.log(
      `  ${`PyTorch ${d}, ${threads} threads`.padEnd(30)} train ${fmt(TRAIN_TOKENS / median(times[d].train))} tokens/s   sample ${fmt(SAMPLE_TOKENS / median(times[d].sample))} tokens/s   (tfjs / PyTorch, median of rounds (min–max): training ${ratioText(times.tfjs.train, times[d].train)}, sampling ${ratioText(times.tfjs.sample, times[d].sample)})`,
    );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
