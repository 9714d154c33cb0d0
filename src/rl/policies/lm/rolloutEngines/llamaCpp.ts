// The native rollout engine: llama.cpp through node-llama-cpp (its npm packages carry prebuilt
// llama.cpp for Linux, macOS and Windows, CPU and Metal/CUDA/Vulkan builds). It samples and evaluates a
// Hugging Face checkpoint written once as GGUF (gguf.ts) with the policy's LoRA adapters written as a
// GGUF adapter after each update and loaded into a fresh context. Token ids go in and come out: the
// workbench's own tokenizer, chat template and stop handling decide where a row ends, as on the engine.
// Every row is a sequence of one llama.cpp context, so rows decode together in one batch per step.
//
// The engine stays the trainer, and the two compute the same model with different kernels (llama.cpp's
// bfloat16 path rounds activations to bfloat16), so the behaviour log-prob of a sampled token here
// differs from the trainer's: measured per token by `mismatch`, corrected by the learner. At
// weightDtype "q8" the GGUF's matrices are the engine's own Q8_0 blocks (gguf.ts), so the two read
// identical weights and differ only in how each quantizes the activations (llama.cpp: float16 scales).
//
// What llama.cpp does not do here, said by `unsupported` so the caller samples on the engine instead:
// constrained decoding (the allowed sets come from our grammar automaton), and top-k / top-p (llama.cpp
// renormalises over the kept tokens, the workbench's behaviour log-prob is over the whole vocabulary).
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Rng } from '../../../random';
import type { SampledSequence, SampleOptions, StopReason } from '../sampler';
import { stopsAt } from '../sampler';
import type { Tokenizer } from '../tokenizer';
import type { RolloutEngine } from '../transformerPolicy';
import { writeCheckpointGguf, writeLoraGguf, type GgufWeightDtype, type LoraTensor } from '../models/gguf';

import type * as NodeLlamaCppModule from 'node-llama-cpp' with { 'resolution-mode': 'import' };
import type { Token } from 'node-llama-cpp' with { 'resolution-mode': 'import' };

type NodeLlamaCpp = typeof NodeLlamaCppModule;
type Llama = Awaited<ReturnType<NodeLlamaCpp['getLlama']>>;
type LlamaModel = Awaited<ReturnType<Llama['loadModel']>>;
type LlamaContext = Awaited<ReturnType<LlamaModel['createContext']>>;

/** node-llama-cpp, when it is installed and its prebuilt binary loads here; else why not. */
export async function loadLlamaCpp(): Promise<{ llama: Llama; lib: NodeLlamaCpp } | { error: string }> {
  let lib: NodeLlamaCpp;
  try {
    // an ES module with top-level await: import(), never require()
    lib = await import('node-llama-cpp');
  } catch (e) {
    return {
      error: `node-llama-cpp is not installed here (${(e as Error).message.split('\n')[0]}). Fix: in VS Code, install this platform's .vsix (agent-rl-workbench-<platform>.vsix carries llama.cpp); in a checkout, npm install node-llama-cpp`,
    };
  }
  try {
    // prebuilt binaries only: never download or build at run time
    const llama = await lib.getLlama({ build: 'never', logLevel: lib.LlamaLogLevel.error, gpu: 'auto' });
    return { llama, lib };
  } catch (e) {
    return { error: `llama.cpp did not load (${(e as Error).message.split('\n')[0]})` };
  }
}

/** Which llama.cpp build loads here (Show Runtime, `probe.js --llama-cpp`), or why none does; unloaded again. */
export async function describeLlamaCpp(): Promise<{ build: string } | { problem: string }> {
  const got = await loadLlamaCpp();
  if ('error' in got) return { problem: got.error };
  const { llama } = got;
  const build = `${llama.gpu === false ? 'CPU' : llama.gpu} build (${llama.buildType}, ggml ${llama.llamaCppRelease.release}), ${llama.cpuMathCores} math cores`;
  await llama.dispose();
  return { build };
}

/** Why llama.cpp cannot draw these samples exactly as the workbench defines them, or undefined when it can. */
export function unsupported(o: SampleOptions): string | undefined {
  if (o.constraint) return 'constrained decoding runs on the engine (the grammar automaton gives the allowed tokens)';
  if (o.topK > 0 || o.topP < 1)
    return "top-k / top-p run on the engine (the behaviour log-prob is over the whole vocabulary; llama.cpp's is over the kept tokens)";
  return undefined;
}

/**
 * Where a checkpoint's GGUF lives: under the workbench's cache, keyed by the base weights' digest and by
 * how its matrices are written (`<digest>.gguf` as stored, `<digest>.q8_0.gguf` as Q8_0), so a float
 * file and a Q8_0 one never stand in for each other.
 */
export function ggufCachePath(cacheDir: string, digest: string, weightDtype: GgufWeightDtype = 'stored'): string {
  return path.join(cacheDir, 'gguf', `${digest}${weightDtype === 'q8' ? '.q8_0' : ''}.gguf`);
}

export interface LlamaCppSamplerOptions {
  /** The Hugging Face checkpoint folder. */
  readonly dir: string;
  /** The GGUF file (written from `dir` when missing). */
  readonly gguf: string;
  /** How the GGUF's matrices are written (default 'stored'): 'q8' for a policy whose engine holds Q8_0 blocks. */
  readonly weightDtype?: GgufWeightDtype;
  /** Positions per row (prompt + new tokens). */
  readonly contextLength: number;
  /** Rows sampled together. */
  readonly rows: number;
  /** CPU threads (0: llama.cpp's choice). */
  readonly threads: number;
  readonly tokenizer: Tokenizer;
}

export class LlamaCppSampler {
  private context: LlamaContext | undefined;
  private adapterFile: string | undefined;
  /** A GGUF of trained weights (full fine-tuning) this sampler wrote, in place of the base file. */
  private weightsFile: string | undefined;
  private version = 0;
  /** One call at a time: a context's sequences are shared, and a weight change replaces the context. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly o: LlamaCppSamplerOptions,
    readonly llama: Llama,
    private model: LlamaModel,
  ) {}

  private serial<T>(f: () => Promise<T>): Promise<T> {
    const next = this.queue.then(f, f);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private static loadModel(llama: Llama, file: string): Promise<LlamaModel> {
    // keys and values kept in float32, as the trainer keeps them (with llama.cpp's defaults, a float16
    // cache and flash attention on the CPU, a float32 model's log-probs moved by ~1e-3)
    return llama.loadModel({
      modelPath: file,
      gpuLayers: 'auto',
      experimentalDefaultContextKvCacheKeyType: 'F32',
      experimentalDefaultContextKvCacheValueType: 'F32',
    });
  }

  /** Loads (writing the GGUF first when it is missing). Throws with the reason when llama.cpp cannot run here. */
  static async open(o: LlamaCppSamplerOptions): Promise<LlamaCppSampler> {
    const got = await loadLlamaCpp();
    if ('error' in got) throw new Error(got.error);
    if (!fs.existsSync(o.gguf)) {
      fs.mkdirSync(path.dirname(o.gguf), { recursive: true });
      writeCheckpointGguf(o.dir, o.gguf, { weightDtype: o.weightDtype ?? 'stored' });
    }
    return new LlamaCppSampler(o, got.llama, await LlamaCppSampler.loadModel(got.llama, o.gguf));
  }

  /** What runs: llama.cpp's build (CPU, Metal, CUDA, Vulkan), its threads, and the weights' format. */
  describe(): string {
    // the float file's line is as it was; a Q8_0 file says so (the run record's sampler)
    const weights = this.o.weightDtype === 'q8' ? ", Q8_0 GGUF (the engine's 8-bit blocks)" : '';
    return `llama.cpp (node-llama-cpp), ${this.llama.gpu === false ? 'CPU' : this.llama.gpu} build, ${this.context?.currentThreads ?? (this.o.threads || this.llama.cpuMathCores)} threads${weights}`;
  }

  /**
   * The policy's adapters from now on (written as a GGUF adapter beside the model's file; a fresh context
   * loads them). `undefined`: the base model alone.
   */
  setAdapters(
    a: { rank: number; alpha: number; tensors: readonly LoraTensor[]; modelType: string; heads: { q: number; kv: number } } | undefined,
  ): Promise<void> {
    return this.serial(async () => {
      await this.closeContext();
      if (this.adapterFile) fs.rmSync(this.adapterFile, { force: true });
      this.adapterFile = undefined;
      if (!a) return;
      this.adapterFile = `${this.o.gguf}.adapter-${process.pid}-${++this.version}.gguf`;
      writeLoraGguf(this.adapterFile, a.modelType, a.rank, a.alpha, a.tensors, a.heads);
    });
  }

  /**
   * Full fine-tuning: every weight from now on (Hugging Face names and layouts, float32), written as a
   * GGUF of this sampler's own and loaded in place of the base.
   */
  setWeights(weights: ReadonlyMap<string, { readonly data: Float32Array; readonly shape: readonly number[] }>): Promise<void> {
    return this.serial(async () => {
      await this.closeContext();
      const file = `${this.o.gguf}.weights-${process.pid}-${++this.version}.gguf`;
      writeCheckpointGguf(this.o.dir, file, { weights, weightDtype: this.o.weightDtype ?? 'stored' });
      const model = await LlamaCppSampler.loadModel(this.llama, file);
      await this.model.dispose();
      this.model = model;
      if (this.weightsFile) fs.rmSync(this.weightsFile, { force: true });
      this.weightsFile = file;
    });
  }

  /** A context of `sequences` rows of `positions` each, with the adapters in use. */
  private async newContext(sequences: number, positions: number): Promise<LlamaContext> {
    return this.model.createContext({
      contextSize: sequences * positions,
      sequences,
      threads: this.o.threads,
      flashAttention: false,
      ...(this.adapterFile ? { lora: { adapters: [{ filePath: this.adapterFile, scale: 1 }] } } : {}),
    });
  }

  private async contextFor(): Promise<LlamaContext> {
    this.context ??= await this.newContext(this.o.rows, this.o.contextLength);
    return this.context;
  }

  private async closeContext(): Promise<void> {
    await this.context?.dispose();
    this.context = undefined;
  }

  /**
   * A continuation for every prompt, as sampleBatch gives on the engine: a row ends at a stop string
   * (the chat template's end of turn among them), maxNewTokens or the context. The behaviour log-prob
   * of each token is llama.cpp's probability of it at the sampling temperature (greedy rows: 0). Rows
   * beyond the context's sequences are sampled in turn.
   */
  sample(prompts: readonly (readonly number[])[], o: SampleOptions, rng: Rng, rowSeeds?: readonly number[]): Promise<SampledSequence[]> {
    return this.serial(() => this.sampleNow(prompts, o, rng, rowSeeds));
  }

  private async sampleNow(prompts: readonly (readonly number[])[], o: SampleOptions, rng: Rng, rowSeeds?: readonly number[]): Promise<SampledSequence[]> {
    const why = unsupported(o);
    if (why) throw new Error(`llama.cpp sampler: ${why}`);
    const out: SampledSequence[] = [];
    for (let b0 = 0; b0 < prompts.length; b0 += this.o.rows) {
      const chunk = prompts.slice(b0, b0 + this.o.rows);
      const ctx = await this.contextFor();
      // llama.cpp's sampler takes a 32-bit seed per row: from the row's own stream, or the batch's
      const seeds = chunk.map((_, i) => 1 + ((rowSeeds?.[b0 + i] ?? Math.floor(rng.next() * 2 ** 32)) % 2 ** 31));
      // the chunk's prompts are done when every row has drawn its first token (or ended)
      let waiting = chunk.length;
      const started = (): void => {
        if (--waiting === 0) o.onPrefilled?.();
      };
      out.push(...(await Promise.all(chunk.map((p, i) => this.row(ctx, p, o, seeds[i]!, started)))));
    }
    return out;
  }

  private async row(ctx: LlamaContext, prompt: readonly number[], o: SampleOptions, seed: number, started: () => void): Promise<SampledSequence> {
    const budget = Math.min(o.maxNewTokens, this.o.contextLength - prompt.length);
    const tokens: number[] = [];
    const logprobs: number[] = [];
    let text = '';
    let stopReason: StopReason = budget < o.maxNewTokens ? 'context' : 'max_tokens';
    if (budget <= 0) {
      started();
      return { tokens, logprobs, text, stopReason: 'context' };
    }
    const seq = ctx.getSequence();
    try {
      const it = seq.evaluateWithMetadata(
        (prompt.length > 0 ? [...prompt] : [0]) as Token[],
        { confidence: true },
        { temperature: o.temperature, topK: 0, topP: 1, minP: 0, seed, yieldEogToken: true },
      );
      for await (const { token, confidence } of it) {
        const id = token as number;
        if (tokens.length === 0) started();
        tokens.push(id);
        logprobs.push(o.temperature > 0 ? Math.log(confidence) : 0);
        text += this.o.tokenizer.decode([id]);
        if (stopsAt(text, o.stop, o.stopWhen)) {
          stopReason = 'stop';
          break;
        }
        if (tokens.length >= budget) break;
      }
    } finally {
      await seq.dispose();
    }
    return { tokens, logprobs, text: this.o.tokenizer.decode(tokens), stopReason };
  }

  /** The k likeliest next tokens after `ids` (the weights and adapters in use), likeliest first. */
  topNext(ids: readonly number[], k: number): Promise<number[]> {
    return this.serial(() => this.topNextNow(ids, k));
  }

  private async topNextNow(ids: readonly number[], k: number): Promise<number[]> {
    const ctx = await this.newContext(1, ids.length + 1);
    try {
      const seq = ctx.getSequence();
      const input = ids.map((t, i) => (i === ids.length - 1 ? ([t, { generateNext: { probabilities: true } }] as const) : t));
      const res = await seq.controlledEvaluate(input as unknown as Parameters<typeof seq.controlledEvaluate>[0]);
      const probs = res[ids.length - 1]?.next?.probabilities;
      if (!probs) throw new Error('llama.cpp returned no probabilities');
      return [...probs.keys()].slice(0, k).map((t) => t as number);
    } finally {
      await ctx.dispose();
    }
  }

  dispose(): Promise<void> {
    return this.serial(async () => {
      await this.closeContext();
      for (const f of [this.adapterFile, this.weightsFile]) if (f) fs.rmSync(f, { force: true });
      await this.model.dispose();
    });
  }
}

/** Mean and 99th percentile of |a − b| over paired log-probs (the training–inference mismatch per token). */
export function mismatch(a: readonly number[], b: readonly number[]): { mean: number; p99: number; n: number } {
  if (a.length !== b.length) throw new Error(`mismatch: ${a.length} against ${b.length} log-probs`);
  const d = a.map((x, i) => Math.abs(x - b[i]!)).sort((x, y) => x - y);
  if (d.length === 0) return { mean: 0, p99: 0, n: 0 };
  return { mean: d.reduce((s, x) => s + x, 0) / d.length, p99: d[Math.min(d.length - 1, Math.ceil(0.99 * d.length) - 1)]!, n: d.length };
}

/**
 * llama.cpp as the policy's rollout engine: it samples what it can draw exactly (else the policy's own
 * sampler does), and before the first sample after a change it loads the policy's weights through
 * `load` (LoRA: an adapter file; full fine-tuning: a GGUF of every weight).
 */
export class LlamaCppRollout implements RolloutEngine {
  private dirty = true;
  constructor(
    readonly sampler: LlamaCppSampler,
    private readonly load: (sampler: LlamaCppSampler) => Promise<void>,
  ) {}

  accepts(o: SampleOptions): boolean {
    return unsupported(o) === undefined;
  }

  async sample(prompts: readonly (readonly number[])[], o: SampleOptions, rng: Rng, rowSeeds?: readonly number[]): Promise<SampledSequence[]> {
    if (this.dirty) {
      // cleared first: a change during the load marks it again; a load that fails leaves it marked
      this.dirty = false;
      try {
        await this.load(this.sampler);
      } catch (e) {
        this.dirty = true;
        throw e;
      }
    }
    return this.sampler.sample(prompts, o, rng, rowSeeds);
  }

  weightsChanged(): void {
    this.dirty = true;
  }

  dispose(): Promise<void> {
    return this.sampler.dispose();
  }
}
