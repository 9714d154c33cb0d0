// A Hugging Face checkpoint as the policy's model on the wasm engine (hfEngine.ts): the base weights in
// the engine's memory, what is trained — the LoRA adapters, or under full fine-tuning every weight — as
// tfjs variables (so AdamW, checkpoints and resume points are the same as for every policy) copied into
// the engine when they change. The KL reference is the same engine with the reference's adapter set
// (under full fine-tuning, its own frozen copy of the weights). It samples through decoding sessions and scores its own
// targets (the learner's `TokenScorer`), vocabulary-chunked: no [positions, vocabulary] tensor exists.
import * as tf from '@tensorflow/tfjs';
import type { BaseWeights } from '../../../../../shared/baseWeights';
import type { TokenScorer } from '../../../../algo/gradients';
import type { PolicyModel } from '../policyModel';
import { parameterCount } from '../families/familyOf';
import type { HfArchitecture } from '../hfConfig';
import type { HfModelConfig, LoraOptions } from '../hfModel';
import type { EnginePlan } from './enginePlan';
import type { LoraTensor } from '../gguf';
import { HfEngine, type AdapterRole, type DecodeSession } from './hfEngine';

export interface EngineModelOptions {
  readonly dir: string;
  readonly arch: HfArchitecture;
  readonly contextLength: number;
  /** Absent: full fine-tuning. */
  readonly lora?: LoraOptions;
  readonly seed: number;
  readonly threads: number;
  readonly plan: EnginePlan;
  readonly planText: string;
}

export class EngineModel implements PolicyModel {
  readonly names: string[];
  private dirty = true;

  private constructor(
    readonly engine: HfEngine,
    readonly config: HfModelConfig,
    private readonly role: AdapterRole,
    readonly weights: tf.Variable[],
    /** The adapters' b are all zero (a fresh LoRA): forward passes skip the adapter products. */
    private zero: boolean,
    /** Packed positions per training or log-prob pass, and per prefill (the plan's). */
    readonly positionsPerPass: number,
    /** Rows the plan's KV cache holds at the full context. */
    private readonly sampleRows: number,
    /** How the engine holds the weights (the plan's dtype: the frozen base as q8 blocks, bf16 or f32; f32 under full fine-tuning). */
    readonly baseWeights: BaseWeights,
  ) {
    this.names = engine.trainableShapes().map((s) => s.name);
  }

  /** Loads the checkpoint into a new engine with fresh adapters (PEFT's initialisation, the tfjs model's seeds). */
  static async create(o: EngineModelOptions): Promise<EngineModel> {
    const engine = await HfEngine.create({
      dir: o.dir,
      arch: o.arch,
      contextLength: o.contextLength,
      lora: o.lora,
      threads: o.threads,
      dtype: o.plan.dtype,
      bytes: o.plan.total,
      planText: o.planText,
      address: o.plan.address.mode,
      keepActivations: o.plan.keepsActivations,
    });
    let s = o.seed * 7919 + 17;
    const id = (name: string): string => `${name}_${Math.random().toString(36).slice(2, 8)}`;
    // full fine-tuning starts from the checkpoint's weights; LoRA from PEFT's initialisation (b = 0)
    const start = o.lora ? undefined : engine.readTrainable('policy');
    const weights = engine.trainableShapes().map(({ name, shape }, i) => {
      if (start) return tf.variable(tf.tensor(start[i]!, shape), true, id(name));
      if (name.endsWith('lora_B')) return tf.variable(tf.zeros(shape), true, id(name));
      const bound = 1 / Math.sqrt(shape[0]!);
      return tf.variable(tf.randomUniform(shape, -bound, bound, 'float32', ++s), true, id(name));
    });
    const config: HfModelConfig = {
      kind: 'hf',
      dir: o.dir,
      arch: o.arch,
      contextLength: o.contextLength,
      vocabSize: o.arch.vocabSize,
      ...(o.lora ? { lora: o.lora } : {}),
    };
    const model = new EngineModel(engine, config, 'policy', weights, o.lora !== undefined, o.plan.positionsPerPass, o.plan.sampleRows, o.plan.dtype);
    model.dirty = o.lora !== undefined;
    return model;
  }

  /** The frozen KL reference: the same engine and base weights with a frozen copy of the adapters. */
  reference(): EngineModel {
    return new EngineModel(
      this.engine,
      this.config,
      'reference',
      this.weights.map((v) => tf.variable(v, false)),
      this.zero,
      this.positionsPerPass,
      this.sampleRows,
      this.baseWeights,
    );
  }

  get arch(): HfArchitecture {
    return this.config.arch;
  }

  parameterCount(): number {
    return parameterCount(this.arch);
  }

  trainableCount(): number {
    return this.weights.reduce((n, v) => n + v.size, 0);
  }

  copyFrom(other: PolicyModel): void {
    other.weights.forEach((v, i) => this.weights[i]!.assign(v));
    this.zero = other instanceof EngineModel ? other.zero : false;
    this.dirty = true;
  }

  weightsChanged(): void {
    this.zero = false;
    this.dirty = true;
  }

  /** Copies the adapters into the engine when they changed since the last pass. */
  private async sync(): Promise<void> {
    if (!this.dirty) return;
    const values = await Promise.all(this.weights.map(async (w) => (await w.data()) as Float32Array));
    this.engine.setTrainable(this.role, values, this.zero);
    this.dirty = false;
  }

  /** A decoding session over `prompts` with room for `capacity` positions per row. */
  async session(prompts: readonly (readonly number[])[], capacity: number): Promise<DecodeSession> {
    await this.sync();
    return this.engine.session(this.role, prompts, capacity, this.positionsPerPass, this.sampleRows);
  }

  /** Logits of every position of one sequence [L, V] (tests: what the adapted model computes). */
  async positionLogits(ids: readonly number[]): Promise<Float32Array> {
    await this.sync();
    return this.engine.logits(this.role, [ids], 'all');
  }

  /** Rows a session holds at `capacity` positions: the plan's KV cache is sampleRows × the context. */
  sessionRows(capacity: number): number {
    return Math.max(1, Math.floor((this.sampleRows * this.config.contextLength) / Math.max(1, capacity)));
  }

  /** Logits of each row's last position [rows, V] (model check, tests). */
  async lastLogits(rows: readonly (readonly number[])[]): Promise<Float32Array> {
    await this.sync();
    return this.engine.logits(this.role, rows, 'last');
  }

  /**
   * Full fine-tuning: every weight in the checkpoint's own names and layouts (what a Hugging Face folder
   * holds); undefined under LoRA (its adapters are merged by `model export`).
   */
  async hfTensors(): Promise<Map<string, { data: Float32Array; shape: number[] }> | undefined> {
    if (this.config.lora) return undefined;
    const values = await Promise.all(this.weights.map(async (w) => (await w.data()) as Float32Array));
    return this.engine.checkpointTensors(values);
  }

  /** LoRA: the adapters per module (a [in, r], b [r, out]: y += x·a·b · alpha/r), as a rollout engine loads them; undefined under full fine-tuning. */
  async loraTensors(): Promise<LoraTensor[] | undefined> {
    if (!this.config.lora) return undefined;
    const values = await Promise.all(this.weights.map((w) => w.data() as Promise<Float32Array>));
    const out: LoraTensor[] = [];
    for (let i = 0; i + 1 < this.names.length; i += 2) {
      const [inn, outDim] = [this.weights[i]!.shape[0], this.weights[i + 1]!.shape[1]!];
      out.push({ module: this.names[i]!.replace(/\.lora_A$/, ''), a: values[i]!, b: values[i + 1]!, in: inn, out: outDim });
    }
    return out;
  }

  /** The learner's view: the model scores its own targets and returns its adapters' gradients. */
  scorer(): TokenScorer {
    return {
      kind: 'tokens',
      weights: this.weights,
      vocabularySize: this.config.vocabSize,
      positionsPerPass: this.positionsPerPass,
      score: async (seqs, temperature, keep) => {
        await this.sync();
        if (keep && this.role !== 'policy') throw new Error('EngineModel: the reference is never trained');
        return this.engine.score(this.role, seqs, temperature, keep);
      },
      backward: async (g) => {
        const grads = await this.engine.backward(g);
        return grads.map((d, i) => tf.tensor(d, this.weights[i]!.shape));
      },
      release: () => this.engine.release(),
    };
  }

  dispose(): Promise<void> {
    tf.dispose(this.weights);
    // the policy's model owns the engine; its reference shares it
    return this.role === 'policy' ? this.engine.close() : Promise.resolve();
  }
}
