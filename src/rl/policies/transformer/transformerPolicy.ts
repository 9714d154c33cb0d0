// The language-model policy: a decoder (the small GPT, or a Hugging Face checkpoint) that writes each
// action as text, sampled with a KV cache, trained on exactly the token ids it sampled (plus the prompt
// and observation ids, each encoded once when it entered the context, with loss mask 0; through the
// model's chat template when it has one). It samples and scores; the learner owns the update, and the
// policy's data-parallel parts are its main thread and its helper replicas (the small GPT only).
import * as tf from '@tensorflow/tfjs';
import type { PolicyStep, Trajectory } from '../../../shared/types';
import { AdamW, type AdamWOptions } from '../../algo/adamw';
import type { LossSpec } from '../../algo/objective';
import { Rng } from '../../random';
import type { StopTest } from '../../envs/parsers';
import type { LossInput, LossStats, TrainSequence } from '../../algo/batch';
import { MICROBATCH_POSITIONS, shardGradients, shardLogprobs, type SequenceLogprobs, type Trainable } from '../../algo/gradients';
import { splitShards } from '../../algo/batch';
import { greedyView, type Policy, type PolicyContext, type PolicySample, type TrainablePolicy } from '../policy';
import { DemonstrationPolicy } from '../scripted/demonstrations';
import { loadPolicyState, saveCheckpoint, savePolicyState } from './checkpoint';
import type { ChatFormat } from '../hf/chatFormat';
import type { HfModelConfig } from '../hf/hfModel';
import { writeHfFolder } from '../hf/hfFolder';
import { Gpt, gptDifferentiable, type GptConfig, type PolicyModel } from './model';
import type { ReplicaPool } from './replicas';
import { sampleBatch, type SampledSequence, type SampleOptions } from './sampler';
import type { Tokenizer } from './tokenizer';
import type { TokenConstraint } from './constraint';

/** Fewest prompts per replica worth a sampling shard (below it, the main thread samples them all). */
const MIN_SHARD = 2;

/**
 * The ids of one trajectory concatenated over turns (never re-encoded) as a training sequence: position
 * t predicts id t+1; mask 1 on ids the policy generated (0 on prompt and observation ids, and on a
 * demonstration's deliberate mistake). With a constraint, the actions sampled under it carry the ids
 * the grammar allowed at each of their positions, under the budget the sampler gave the action.
 */
export function trajectorySequence(
  t: Trajectory,
  constraint?: TokenConstraint,
  /** The tokens an action may take after a prompt of this many (the sampler's row budget). */
  budget: (promptLength: number) => number = () => Infinity,
): TrainSequence | undefined {
  const ids: number[] = [];
  const mask: number[] = [];
  const behaviour: number[] = [];
  const allowed: (Int32Array | undefined)[] = [];
  let constrained = false;
  for (const turn of t.turns) {
    const tk = turn.policy.tokens;
    if (!tk) return undefined;
    for (const id of tk.context) {
      ids.push(id);
      mask.push(0);
      behaviour.push(0);
      allowed.push(undefined);
    }
    const imitate = tk.imitate === false ? 0 : 1;
    if (tk.constrained && !constraint) {
      throw new Error(
        'TransformerPolicy: an action sampled under the action grammar, trained without it (its log-probs are over the allowed tokens only). Fix: train with policyOptions.constrainedDecoding true, as it was sampled',
      );
    }
    const sets = constraint && tk.constrained ? constraint.allowedSets(tk.sampled, budget(ids.length)) : undefined;
    constrained ||= sets !== undefined;
    tk.sampled.forEach((id, i) => {
      ids.push(id);
      mask.push(imitate);
      behaviour.push(tk.logprobs[i]!);
      allowed.push(sets?.[i]);
    });
  }
  // the first token has nothing before it to predict it from: such a sequence cannot be trained
  if (ids.length < 2 || mask[0] === 1) return undefined;
  return {
    inputs: ids.slice(0, -1),
    targets: ids.slice(1),
    mask: mask.slice(1),
    behaviour: behaviour.slice(1),
    advantage: t.advantage,
    ...(constrained ? { allowed: allowed.slice(1) } : {}),
  };
}

/** What the policy needs of its model besides sampling: the frozen reference and the learner's view of either. */
export interface ModelParts<M extends PolicyModel> {
  readonly reference: M;
  differentiable(model: M): Trainable;
  /** Prompts through the model's chat template (token in, token out); absent: observations are encoded as they are. */
  readonly chat?: ChatFormat;
  /** Padded positions per forward and backward pass (gradient accumulation over micro-batches). */
  readonly microBatchPositions?: number;
}

type SerialisableModel = PolicyModel & { readonly config: GptConfig | HfModelConfig };

/** The small GPT's parts: a frozen copy as the reference. */
export function gptParts(model: Gpt, seed: number): ModelParts<Gpt> {
  const reference = new Gpt(model.config, seed, false);
  reference.copyFrom(model);
  return { reference, differentiable: gptDifferentiable };
}

export class TransformerPolicy<M extends SerialisableModel = Gpt> implements TrainablePolicy {
  readonly reference: M;
  readonly optimizer: AdamW;
  private versionCounter = 0;
  private replicas: ReplicaPool | undefined;
  private stopTest: StopTest | undefined;
  /** Milliseconds spent sending new weights to the helper replicas (which sample rollouts too) since the last `takeSyncMs`. */
  private syncMs = 0;

  private readonly parts: ModelParts<M>;

  constructor(
    readonly model: M,
    readonly tokenizer: Tokenizer,
    public sampling: SampleOptions,
    optimizer: AdamWOptions,
    private readonly computeBase: string,
    seedOrParts: number | ModelParts<M> = 0,
  ) {
    this.parts = typeof seedOrParts === 'number' ? (gptParts(model as unknown as Gpt, seedOrParts) as unknown as ModelParts<M>) : seedOrParts;
    this.reference = this.parts.reference;
    this.optimizer = new AdamW([...model.weights], optimizer);
  }

  /** The chat format the policy prompts with, if any. */
  get chat(): ChatFormat | undefined {
    return this.parts.chat;
  }

  /** Backend and size, and the data-parallel replicas when there are any. */
  get compute(): string {
    return this.replicas ? `${this.computeBase}, ${this.replicas.size + 1} data-parallel replicas` : this.computeBase;
  }

  get version(): number {
    return this.versionCounter;
  }

  get parallelism(): number {
    return this.replicas ? this.replicas.size + 1 : 1;
  }

  /** The model embeds positions 0 … contextLength − 1: a sequence scores at most that many. */
  get maxPositions(): number {
    return this.model.config.contextLength;
  }

  get vocabularySize(): number {
    return this.model.config.vocabSize;
  }

  get temperature(): number {
    return this.sampling.temperature > 0 ? this.sampling.temperature : 1;
  }

  /** Makes the current weights the KL reference (after a warm start, the reference is the warm-started model). */
  resetReference(): void {
    this.reference.copyFrom(this.model);
  }

  demonstrator(agent: Policy): Policy {
    return new DemonstrationPolicy(agent, this.tokenizer);
  }

  /** Helper replicas on the other cores (data parallelism), or none. */
  attachReplicas(pool: ReplicaPool, stopTest: StopTest | undefined): void {
    this.replicas = pool;
    this.stopTest = stopTest;
  }

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    return this.sampleWith(this.sampling, contexts, rng);
  }

  /** Samples under explicit options (the greedy view passes temperature 0; nothing is swapped). */
  private async sampleWith(sampling: SampleOptions, contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    const news: number[][] = [];
    const prompts = contexts.map((ctx) => {
      const past: number[] = [];
      for (const turn of ctx.turns) {
        const tk = turn.policy.tokens;
        if (!tk) throw new Error('TransformerPolicy: a turn without token ids (token in, token out)');
        past.push(...tk.context, ...tk.sampled);
      }
      // encoded once, here: as it is, or as the chat template's next message
      const chat = this.parts.chat;
      const last = ctx.turns[ctx.turns.length - 1]?.policy.tokens?.sampled ?? [];
      const fresh = !chat
        ? this.tokenizer.encode(ctx.observation.text)
        : ctx.turns.length === 0
          ? chat.first(ctx.observation)
          : chat.next(ctx.observation, last);
      news.push(fresh);
      return [...past, ...fresh];
    });
    // an episode's own stream (the concurrent schedule) seeds its row: the draw is independent of the batch
    const rowSeeds = contexts.every((c) => c.rng) ? contexts.map((c) => c.rng!.uint32()) : undefined;
    // the version of the last completed update: an update's steps may land between this batch and the
    // next (async), but not within one, and the version moves on only when the whole update is done
    const version = this.versionCounter;
    const out = await this.sampleTokens(prompts, rng, sampling, rowSeeds);
    return out.map((s, i) => {
      const step: PolicyStep = {
        behaviourLogprob: s.logprobs.reduce((a, b) => a + b, 0),
        policyVersion: version,
        tokens: { context: news[i]!, sampled: s.tokens, logprobs: s.logprobs, ...(s.constrained ? { constrained: true } : {}) },
      };
      const text = this.parts.chat ? this.parts.chat.actionText(s.text) : s.text;
      return { text, step, ...(s.stopReason === 'context' && s.tokens.length === 0 ? { exhausted: true } : {}) };
    });
  }

  /**
   * Continues token-id prompts, on every replica at once: prompts are dealt out in order of length
   * (similar lengths per shard), each shard draws from its own stream seeded from `rng`, and results
   * come back in order.
   */
  async sampleTokens(
    prompts: readonly (readonly number[])[],
    rng: Rng,
    sampling: SampleOptions = this.sampling,
    rowSeeds?: readonly number[],
  ): Promise<SampledSequence[]> {
    const pool = this.replicas;
    const rowsOf = (idx: readonly number[]): Rng[] => idx.map((i) => new Rng(rowSeeds![i]!));
    const order = prompts
      .map((p, i) => ({ i, n: p.length }))
      .sort((a, b) => a.n - b.n || a.i - b.i)
      .map((x) => x.i);
    if (!pool || prompts.length < MIN_SHARD * (pool.size + 1))
      return sampleBatch(this.model, this.tokenizer, prompts, sampling, rowSeeds ? rowsOf(prompts.map((_, i) => i)) : rng);
    const shards = splitShards(order, pool.size + 1);
    const seeds = rowSeeds ? shards.map(() => 0) : shards.map(() => rng.int(2 ** 31));
    // stopWhen and the constraint are rebuilt from their names
    const { temperature, topK, topP, maxNewTokens, stop } = sampling;
    if (sampling.constraint && !sampling.constraint.name) throw new Error('TransformerPolicy: replicas sample under named grammars only (ACTION_GRAMMARS)');
    const options = {
      temperature,
      topK,
      topP,
      maxNewTokens,
      stop,
      ...(this.stopTest ? { stopTest: this.stopTest } : {}),
      ...(sampling.constraint ? { grammar: sampling.constraint.name } : {}),
    };
    const asked = shards.slice(1).map((idx, h) =>
      pool.helper(h).call({
        kind: 'sample',
        prompts: idx.map((i) => prompts[i]!),
        options,
        seed: seeds[h + 1]!,
        ...(rowSeeds ? { rowSeeds: idx.map((i) => rowSeeds[i]!) } : {}),
      }),
    );
    const mine = await sampleBatch(
      this.model,
      this.tokenizer,
      shards[0]!.map((i) => prompts[i]!),
      sampling,
      rowSeeds ? rowsOf(shards[0]!) : new Rng(seeds[0]!),
    );
    const theirs = await Promise.all(asked);
    const out: SampledSequence[] = new Array<SampledSequence>(prompts.length);
    shards[0]!.forEach((i, k) => (out[i] = mine[k]!));
    theirs.forEach((r, h) => {
      if (r.kind !== 'sample') throw new Error(`replica: unexpected reply ${r.kind}`);
      shards[h + 1]!.forEach((i, k) => (out[i] = r.sequences[k]!));
    });
    return out;
  }

  sequence(t: Trajectory): TrainSequence | undefined {
    const { maxNewTokens } = this.sampling;
    return trajectorySequence(t, this.sampling.constraint, (n) => Math.min(maxNewTokens, this.model.config.contextLength - n));
  }

  async logprobs(
    part: number,
    seqs: readonly TrainSequence[],
    o: { model: 'current' | 'reference'; temperature: number; rows: boolean },
  ): Promise<SequenceLogprobs> {
    if (part === 0)
      return shardLogprobs(
        this.parts.differentiable(o.model === 'reference' ? this.reference : this.model),
        seqs,
        o,
        this.parts.microBatchPositions ? 2 * this.parts.microBatchPositions : undefined,
      );
    const r = await this.helper(part).call({ kind: 'logprobs', seqs, model: o.model, temperature: o.temperature, rows: o.rows });
    if (r.kind !== 'logprobs') throw new Error(`replica: unexpected reply ${r.kind}`);
    return { logp: r.logp, ...(r.rows ? { rows: r.rows } : {}) };
  }

  async gradients(part: number, inputs: readonly LossInput[], spec: LossSpec): Promise<{ grads: tf.Tensor[]; stats: LossStats }> {
    if (part === 0) return shardGradients(this.parts.differentiable(this.model), inputs, spec, this.parts.microBatchPositions ?? MICROBATCH_POSITIONS);
    const r = await this.helper(part).call({ kind: 'grads', inputs, spec });
    if (r.kind !== 'grads') throw new Error(`replica: unexpected reply ${r.kind}`);
    return { grads: r.grads.map((g, i) => tf.tensor(g, this.model.weights[i]!.shape)), stats: r.stats };
  }

  async applyGradients(grads: readonly tf.Tensor[], lr: number): Promise<number> {
    const norm = await this.optimizer.apply(grads, lr);
    this.model.weightsChanged?.();
    // every replica holds the new weights before anything else is asked of it
    if (this.replicas) {
      const t = Date.now();
      await this.replicas.syncWeights(this.model, 'model');
      this.syncMs += Date.now() - t;
    }
    return norm;
  }

  completeUpdate(): void {
    this.versionCounter += 1;
  }

  /** The weight-sync time since the last call (0 without helper replicas). */
  takeSyncMs(): number {
    const ms = this.syncMs;
    this.syncMs = 0;
    return ms;
  }

  private helper(part: number): ReturnType<ReplicaPool['helper']> {
    if (!this.replicas || part < 1 || part > this.replicas.size) throw new Error(`TransformerPolicy: no data-parallel part ${part}`);
    return this.replicas.helper(part - 1);
  }

  greedy(): Policy {
    return greedyView(
      () => this.versionCounter,
      this.compute,
      (contexts, rng) => this.sampleWith({ ...this.sampling, temperature: 0 }, contexts, rng),
    );
  }

  /** A checkpoint; under full fine-tuning of a Hugging Face model it is a Hugging Face folder too (policyOptions.model reads it). */
  async save(dir: string, note: string): Promise<string> {
    const file = await saveCheckpoint(dir, this.model, this.tokenizer, this.optimizer, this.versionCounter, note);
    const weights = await this.model.hfTensors?.();
    if (weights && 'kind' in this.model.config) writeHfFolder(dir, this.model.config.dir, weights);
    return file;
  }

  async saveState(dir: string): Promise<void> {
    await savePolicyState(dir, this.model, this.reference, this.tokenizer, this.optimizer, this.versionCounter);
  }

  async loadState(dir: string): Promise<void> {
    this.versionCounter = loadPolicyState(dir, this.model, this.reference, this.optimizer);
    if (this.replicas) {
      await this.replicas.syncWeights(this.model, 'model');
      await this.replicas.syncWeights(this.reference, 'reference');
    }
  }

  async dispose(): Promise<void> {
    await this.replicas?.close();
    this.replicas = undefined;
    this.model.dispose();
    this.reference.dispose();
    this.optimizer.dispose();
  }
}

export type { GptConfig };
