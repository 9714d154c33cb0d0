// The language-model policy: a GPT that writes each action as text, sampled with a KV cache, trained
// on exactly the token ids it sampled (plus the prompt and observation ids, each encoded once when it
// entered the context, with loss mask 0).
import * as tf from '@tensorflow/tfjs';
import type { PolicyStep, Trajectory } from '../../../shared/types';
import { Rng } from '../../random';
import type { Objective, Policy, PolicyContext, PolicySample, UpdateStats } from '../policy';
import { AdamW, type AdamWOptions } from './adamw';
import { saveCheckpoint } from './checkpoint';
import { Gpt, type GptConfig } from './model';
import type { ReplicaPool } from './replicas';
import { sampleBatch, type SampledSequence, type SampleOptions } from './sampler';
import { combineStats, shardCounts, shardGradients, shardLogprobs, shardWeight, splitShards, type ShardLoss, type ShardStats } from './shardWork';
import type { Aggregation, KlEstimator, TokenSequence } from './tokenLoss';
import type { Tokenizer } from './tokenizer';

/** Fewest sequences per replica worth a shard (below it, one replica does the whole batch). */
const MIN_SHARD = 2;

export interface TransformerTrainOptions {
  readonly clipLow: number;
  readonly clipHigh: number;
  readonly klEstimator: KlEstimator;
  readonly aggregation: Aggregation;
  /** Trajectories per optimizer step (0 = the whole batch). */
  readonly minibatchSize: number;
  /** Drop trajectories with advantage 0 (zero-variance groups) from GRPO updates. */
  readonly skipZeroAdvantage: boolean;
  /** GRPO: negative advantages are multiplied by this in the loss (1 = plain GRPO); default 1. */
  readonly negativeAdvantageScale?: number;
  readonly optimizer: AdamWOptions;
  /** Learning-rate multiplier by optimizer step (1-based); default constant 1. */
  readonly lrSchedule?: (step: number) => number;
}

/** The ids, mask and behaviour log-probs of one trajectory, concatenated over turns (never re-encoded). */
export function trajectoryTokens(t: Trajectory): TokenSequence | undefined {
  const ids: number[] = [];
  const mask: number[] = [];
  const behaviour: number[] = [];
  for (const turn of t.turns) {
    const tk = turn.policy.tokens;
    if (!tk) return undefined;
    for (const id of tk.context) {
      ids.push(id);
      mask.push(0);
      behaviour.push(0);
    }
    const imitate = tk.imitate === false ? 0 : 1;
    tk.sampled.forEach((id, i) => {
      ids.push(id);
      mask.push(imitate);
      behaviour.push(tk.logprobs[i]!);
    });
  }
  return ids.length > 1 ? { ids, mask, behaviour, advantage: t.advantage } : undefined;
}

export class TransformerPolicy implements Policy {
  readonly reference: Gpt;
  readonly optimizer: AdamW;
  private versionCounter = 0;
  private readonly shuffleRng: Rng;
  private replicas: ReplicaPool | undefined;
  private stopEnv: string | undefined;

  constructor(
    readonly model: Gpt,
    readonly tokenizer: Tokenizer,
    public sampling: SampleOptions,
    public train: TransformerTrainOptions,
    private readonly computeBase: string,
    seed = 0,
  ) {
    this.reference = new Gpt(model.config, seed, false);
    this.reference.copyFrom(model);
    this.optimizer = new AdamW(model.weights, train.optimizer);
    this.shuffleRng = Rng.stream(seed, 'transformer/minibatches');
  }

  /** Backend and size, and the data-parallel replicas when there are any. */
  get compute(): string {
    return this.replicas ? `${this.computeBase}, ${this.replicas.size + 1} data-parallel replicas` : this.computeBase;
  }

  get version(): number {
    return this.versionCounter;
  }

  /** Makes the current weights the KL reference (after a warm start, the reference is the warm-started model). */
  resetReference(): void {
    this.reference.copyFrom(this.model);
  }

  /** Helper replicas on the other cores (data parallelism), or none. */
  attachReplicas(pool: ReplicaPool, stopEnv: string | undefined): void {
    this.replicas = pool;
    this.stopEnv = stopEnv;
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
      const fresh = this.tokenizer.encode(ctx.observation.text); // encoded once, here
      news.push(fresh);
      return [...past, ...fresh];
    });
    const out = await this.sampleTokens(prompts, rng, sampling);
    return out.map((s, i) => {
      const step: PolicyStep = {
        behaviourLogprob: s.logprobs.reduce((a, b) => a + b, 0),
        policyVersion: this.versionCounter,
        tokens: { context: news[i]!, sampled: s.tokens, logprobs: s.logprobs },
      };
      return { text: s.text, step, ...(s.stopReason === 'context' && s.tokens.length === 0 ? { exhausted: true } : {}) };
    });
  }

  /**
   * Continues token-id prompts, on every replica at once: prompts are dealt out in order of length
   * (similar lengths per shard), each shard draws from its own stream seeded from `rng`, and results
   * come back in order.
   */
  async sampleTokens(prompts: readonly (readonly number[])[], rng: Rng, sampling: SampleOptions = this.sampling): Promise<SampledSequence[]> {
    const pool = this.replicas;
    if (!pool || prompts.length < MIN_SHARD * (pool.size + 1)) return sampleBatch(this.model, this.tokenizer, prompts, sampling, rng);
    const order = prompts.map((p, i) => ({ i, n: p.length })).sort((a, b) => a.n - b.n || a.i - b.i).map((x) => x.i);
    const shards = splitShards(order, pool.size + 1);
    const seeds = shards.map(() => rng.int(2 ** 31));
    const { temperature, topK, topP, maxNewTokens, stop } = sampling; // stopWhen is rebuilt from stopEnv
    const options = { temperature, topK, topP, maxNewTokens, stop, ...(this.stopEnv ? { stopEnv: this.stopEnv } : {}) };
    const asked = shards.slice(1).map((idx, h) => pool.helper(h).call({ kind: 'sample', prompts: idx.map((i) => prompts[i]!), options, seed: seeds[h + 1]! }));
    const mine = sampleBatch(this.model, this.tokenizer, shards[0]!.map((i) => prompts[i]!), sampling, new Rng(seeds[0]!));
    const theirs = await Promise.all(asked);
    const out: SampledSequence[] = new Array<SampledSequence>(prompts.length);
    shards[0]!.forEach((i, k) => (out[i] = mine[k]!));
    theirs.forEach((r, h) => {
      if (r.kind !== 'sample') throw new Error(`replica: unexpected reply ${r.kind}`);
      shards[h + 1]!.forEach((i, k) => (out[i] = r.sequences[k]!));
    });
    return out;
  }

  /**
   * Random minibatches, a fresh shuffle every epoch. Not bucketed by length, although that would pad
   * less: length correlates with the outcome (failed episodes take more turns), so length buckets
   * bias each step's advantages, and GRPO did not improve with them; in SFT they group the long
   * repaired-mistake demonstrations together.
   */
  private minibatches(seqs: TokenSequence[]): TokenSequence[][] {
    const size = this.train.minibatchSize > 0 ? this.train.minibatchSize : seqs.length;
    const order = seqs.map((s) => ({ s, key: this.shuffleRng.next() })).sort((a, b) => a.key - b.key).map((x) => x.s);
    const out: TokenSequence[][] = [];
    for (let i = 0; i < order.length; i += size) out.push(order.slice(i, i + size));
    return out;
  }

  /** The shards of a list for this policy's replicas: one (the main thread's) when too small to split. */
  private shardsOf<T>(items: readonly T[]): T[][] {
    const n = this.replicas ? this.replicas.size + 1 : 1;
    return n > 1 && items.length >= MIN_SHARD * n ? splitShards(items, n) : [[...items]];
  }

  update(trajectories: readonly Trajectory[], objective: Objective, epochs: number): Promise<UpdateStats> {
    return this.updateSequences(trajectories.map(trajectoryTokens).filter((s): s is TokenSequence => s !== undefined), objective, epochs);
  }

  /** The update on token sequences (a trajectory's are `trajectoryTokens`); sequences without a generated token are skipped. */
  async updateSequences(sequences: readonly TokenSequence[], objective: Objective, epochs: number): Promise<UpdateStats> {
    let seqs = sequences.filter((s) => s.mask.some((m) => m === 1));
    const negScale = this.train.negativeAdvantageScale ?? 1;
    if (objective.kind === 'clipped-pg' && negScale !== 1) seqs = seqs.map((s) => (s.advantage < 0 ? { ...s, advantage: s.advantage * negScale } : s));
    if (objective.kind === 'clipped-pg' && this.train.skipZeroAdvantage) seqs = seqs.filter((s) => s.advantage !== 0);
    const empty: UpdateStats = { loss: 0, policyLoss: 0, kl: 0, clipFraction: 0, entropy: 0, gradNorm: 0, ratioMin: 1, ratioMax: 1, optimizerSteps: 0 };
    if (seqs.length === 0) return empty;
    const lossOpts = { clipLow: this.train.clipLow, clipHigh: this.train.clipHigh, klCoef: objective.kind === 'clipped-pg' ? objective.klCoef : 0, klEstimator: this.train.klEstimator, aggregation: this.train.aggregation, temperature: this.sampling.temperature > 0 ? this.sampling.temperature : 1 };
    const shardLoss: ShardLoss = { objective: objective.kind === 'nll' ? 'nll' : 'clipped-pg', aggregation: this.train.aggregation, lossOpts };

    // Before any step (GRPO): the reference log-probs, fixed for the batch, and the mismatch between
    // sampling-time and training-time log-probs of the same tokens. Forward passes in chunks, sharded.
    let mismatchSum = 0;
    let mismatchTokens = 0;
    const refs = new Map<TokenSequence, Float32Array>(); // per sequence, [len − 1]
    if (objective.kind === 'clipped-pg') {
      const chunk = Math.max(1, this.train.minibatchSize || seqs.length);
      for (let i = 0; i < seqs.length; i += chunk) {
        const shards = this.shardsOf(seqs.slice(i, i + chunk));
        const asked = shards.slice(1).map((part, h) => this.replicas!.helper(h).call({ kind: 'logprobs', seqs: part, temperature: lossOpts.temperature }));
        const results = [shardLogprobs(this.model, this.reference, shards[0]!, lossOpts.temperature), ...(await Promise.all(asked)).map((r) => {
          if (r.kind !== 'logprobs') throw new Error(`replica: unexpected reply ${r.kind}`);
          return r;
        })];
        results.forEach((r, k) => {
          shards[k]!.forEach((s, b) => refs.set(s, r.refs[b]!));
          mismatchSum += r.mismatchSum;
          mismatchTokens += r.tokens;
        });
      }
    }

    let loss = 0, policyLoss = 0, kl = 0, entropy = 0, gradNorm = 0, clipLow = 0, clipHigh = 0, steps = 0;
    let ratioMin = Infinity, ratioMax = -Infinity;
    try {
      for (let epoch = 0; epoch < epochs; epoch++) {
        for (const mb of this.minibatches(seqs)) {
          const shards = this.shardsOf(mb);
          const total = shardCounts(mb);
          const asked = shards.slice(1).map((part, h) => this.replicas!.helper(h).call({ kind: 'grads', seqs: part, loss: shardLoss, ...(refs.size > 0 ? { refs: part.map((s) => refs.get(s)!) } : {}) }));
          const mine = shardGradients(this.model, shards[0]!, refs.size > 0 ? shards[0]!.map((s) => refs.get(s)!) : undefined, shardLoss);
          let theirs: { grads: Float32Array[]; stats: ShardStats }[];
          try {
            theirs = (await Promise.all(asked)).map((r) => {
              if (r.kind !== 'grads') throw new Error(`replica: unexpected reply ${r.kind}`);
              return r;
            });
          } catch (e) {
            tf.dispose(mine.grads);
            throw e;
          }
          const all = [mine.stats, ...theirs.map((t) => t.stats)];
          const weights = all.map((st) => shardWeight(this.train.aggregation, st, total));
          const combined = theirs.length === 0 ? mine.grads : tf.tidy(() => mine.grads.map((g, i) => theirs.reduce((acc, t, h) => tf.add(acc, tf.mul(tf.tensor(t.grads[i]!, g.shape), weights[h + 1]!)), tf.mul(g, weights[0]!))));
          gradNorm += this.optimizer.apply(combined, this.train.lrSchedule?.(this.optimizer.step + 1) ?? 1);
          tf.dispose(combined === mine.grads ? mine.grads : [...mine.grads, ...combined]);
          if (this.replicas) await this.replicas.syncWeights(this.model, 'model');
          const st = combineStats(all, weights, total);
          loss += st.loss;
          policyLoss += st.policyLoss;
          kl += st.kl;
          entropy += st.entropy;
          clipLow += st.clipLow;
          clipHigh += st.clipHigh;
          ratioMin = Math.min(ratioMin, st.ratioMin);
          ratioMax = Math.max(ratioMax, st.ratioMax);
          steps += 1;
        }
      }
    } finally {
      refs.clear();
    }
    this.versionCounter += 1;
    const isPg = objective.kind === 'clipped-pg';
    return {
      loss: loss / steps,
      policyLoss: policyLoss / steps,
      kl: kl / steps,
      clipFraction: (clipLow + clipHigh) / steps,
      clipFractionLow: clipLow / steps,
      clipFractionHigh: clipHigh / steps,
      entropy: entropy / steps,
      gradNorm: gradNorm / steps,
      ratioMin: isPg && Number.isFinite(ratioMin) ? ratioMin : 1,
      ratioMax: isPg && Number.isFinite(ratioMax) ? ratioMax : 1,
      ...(isPg ? { logprobMismatch: mismatchTokens > 0 ? mismatchSum / mismatchTokens : 0 } : {}),
      optimizerSteps: steps,
    };
  }

  greedy(): Policy {
    const version = (): number => this.versionCounter;
    return {
      get version() {
        return version();
      },
      compute: this.compute,
      sample: (contexts, rng) => this.sampleWith({ ...this.sampling, temperature: 0 }, contexts, rng),
      update: () => {
        throw new Error('the greedy view is for evaluation only');
      },
    };
  }

  save(dir: string, note: string): string {
    return saveCheckpoint(dir, this.model, this.tokenizer, this.optimizer, this.versionCounter, note);
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
