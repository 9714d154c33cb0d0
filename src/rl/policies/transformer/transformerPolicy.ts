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
import { sampleBatch, type SampleOptions } from './sampler';
import { buildTokenBatch, grpoLoss, nllLoss, targetLogprobs, type Aggregation, type KlEstimator, type LossParts, type TokenSequence } from './tokenLoss';
import type { Tokenizer } from './tokenizer';

export interface TransformerTrainOptions {
  readonly clipLow: number;
  readonly clipHigh: number;
  readonly klEstimator: KlEstimator;
  readonly aggregation: Aggregation;
  /** Trajectories per optimizer step (0 = the whole batch). */
  readonly minibatchSize: number;
  /** Drop trajectories with advantage 0 (zero-variance groups) from GRPO updates. */
  readonly skipZeroAdvantage: boolean;
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

  constructor(
    readonly model: Gpt,
    readonly tokenizer: Tokenizer,
    public sampling: SampleOptions,
    public train: TransformerTrainOptions,
    readonly compute: string,
    seed = 0,
  ) {
    this.reference = new Gpt(model.config, seed, false);
    this.reference.copyFrom(model);
    this.optimizer = new AdamW(model.weights, train.optimizer);
    this.shuffleRng = Rng.stream(seed, 'transformer/minibatches');
  }

  get version(): number {
    return this.versionCounter;
  }

  /** Makes the current weights the KL reference (after a warm start, the reference is the warm-started model). */
  resetReference(): void {
    this.reference.copyFrom(this.model);
  }

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
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
    const out = sampleBatch(this.model, this.tokenizer, prompts, this.sampling, rng);
    return Promise.resolve(
      out.map((s, i) => {
        const step: PolicyStep = {
          behaviourLogprob: s.logprobs.reduce((a, b) => a + b, 0),
          policyVersion: this.versionCounter,
          tokens: { context: news[i]!, sampled: s.tokens, logprobs: s.logprobs },
        };
        return { text: s.text, step, ...(s.stopReason === 'context' && s.tokens.length === 0 ? { exhausted: true } : {}) };
      }),
    );
  }

  /**
   * Minibatches of similar length (a batch is padded to its longest sequence, and attention costs
   * grow with the square of that length), visited in a shuffled order.
   */
  private minibatches(seqs: TokenSequence[]): TokenSequence[][] {
    const size = this.train.minibatchSize > 0 ? this.train.minibatchSize : seqs.length;
    const byLength = seqs.map((s, i) => ({ s, key: s.ids.length + this.shuffleRng.next() * 1e-3, i })).sort((a, b) => a.key - b.key);
    const out: TokenSequence[][] = [];
    for (let i = 0; i < byLength.length; i += size) out.push(byLength.slice(i, i + size).map((x) => x.s));
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.shuffleRng.int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  update(trajectories: readonly Trajectory[], objective: Objective, epochs: number): UpdateStats {
    let seqs = trajectories.map(trajectoryTokens).filter((s): s is TokenSequence => s !== undefined && s.mask.some((m) => m === 1));
    if (objective.kind === 'clipped-pg' && this.train.skipZeroAdvantage) seqs = seqs.filter((s) => s.advantage !== 0);
    const empty: UpdateStats = { loss: 0, policyLoss: 0, kl: 0, clipFraction: 0, entropy: 0, gradNorm: 0, ratioMin: 1, ratioMax: 1, optimizerSteps: 0 };
    if (seqs.length === 0) return empty;
    const lossOpts = { clipLow: this.train.clipLow, clipHigh: this.train.clipHigh, klCoef: objective.kind === 'clipped-pg' ? objective.klCoef : 0, klEstimator: this.train.klEstimator, aggregation: this.train.aggregation, temperature: this.sampling.temperature > 0 ? this.sampling.temperature : 1 };

    // Before any step (GRPO): the reference log-probs, fixed for the batch, and the mismatch between
    // sampling-time and training-time log-probs of the same tokens. Forward passes in chunks.
    let mismatchSum = 0;
    let mismatchTokens = 0;
    const refs = new Map<TokenSequence, Float32Array>(); // per sequence, [len − 1]
    if (objective.kind === 'clipped-pg') {
      const chunk = Math.max(1, this.train.minibatchSize || seqs.length);
      for (let i = 0; i < seqs.length; i += chunk) {
        const part = seqs.slice(i, i + chunk);
        const batch = buildTokenBatch(part);
        const [ref, cur] = tf.tidy(() => [
          targetLogprobs(this.reference, batch, lossOpts.temperature).logp.dataSync() as Float32Array,
          targetLogprobs(this.model, batch, lossOpts.temperature).logp.dataSync() as Float32Array,
        ]);
        part.forEach((s, b) => {
          const row = b * (batch.T - 1);
          refs.set(s, ref.slice(row, row + s.ids.length - 1));
          for (let t = 0; t < batch.T - 1; t++) mismatchSum += batch.mask[row + t]! * Math.abs(cur[row + t]! - batch.behaviour[row + t]!);
        });
        mismatchTokens += batch.tokens;
      }
    }

    let loss = 0, policyLoss = 0, kl = 0, entropy = 0, gradNorm = 0, clipLow = 0, clipHigh = 0, steps = 0;
    let ratioMin = Infinity, ratioMax = -Infinity;
    try {
      for (let epoch = 0; epoch < epochs; epoch++) {
        for (const mb of this.minibatches(seqs)) {
          const batch = buildTokenBatch(mb);
          let parts: LossParts | undefined;
          let ent: tf.Scalar | undefined;
          const { value, grads } = tf.variableGrads(() => {
            if (objective.kind === 'nll') return nllLoss(this.model, batch, this.train.aggregation, (p) => (ent = p.entropy));
            // reference log-probs of the minibatch, padded to its length
            const ref = new Float32Array(batch.B * (batch.T - 1));
            mb.forEach((s, b) => ref.set(refs.get(s)!, b * (batch.T - 1)));
            return grpoLoss(this.model, batch, tf.tensor2d(ref, [batch.B, batch.T - 1]), lossOpts, (p) => (parts = p));
          }, this.model.weights);
          const ordered = this.model.weights.map((w) => grads[w.name]!);
          gradNorm += this.optimizer.apply(ordered, this.train.lrSchedule?.(this.optimizer.step + 1) ?? 1);
          const v = value.dataSync()[0]!;
          loss += v;
          if (objective.kind === 'nll') policyLoss += v;
          tf.dispose([value, ...Object.values(grads)]);
          steps += 1;
          if (parts) {
            const p: LossParts = parts;
            policyLoss += p.policyLoss.dataSync()[0]!;
            kl += p.kl.dataSync()[0]!;
            entropy += p.entropy.dataSync()[0]!;
            clipLow += p.clipLow.dataSync()[0]!;
            clipHigh += p.clipHigh.dataSync()[0]!;
            ratioMin = Math.min(ratioMin, p.ratioMin.dataSync()[0]!);
            ratioMax = Math.max(ratioMax, p.ratioMax.dataSync()[0]!);
            tf.dispose(Object.values(p));
          } else if (ent) {
            const e: tf.Scalar = ent;
            entropy += e.dataSync()[0]!;
            e.dispose();
          }
        }
      }
    } finally {
      refs.clear();
    }
    this.versionCounter += 1;
    return {
      loss: loss / steps,
      policyLoss: policyLoss / steps,
      kl: kl / steps,
      clipFraction: (clipLow + clipHigh) / steps,
      clipFractionLow: clipLow / steps,
      clipFractionHigh: clipHigh / steps,
      entropy: entropy / steps,
      gradNorm: gradNorm / steps,
      ratioMin: Number.isFinite(ratioMin) ? ratioMin : 1,
      ratioMax: Number.isFinite(ratioMax) ? ratioMax : 1,
      ...(objective.kind === 'clipped-pg' ? { logprobMismatch: mismatchTokens > 0 ? mismatchSum / mismatchTokens : 0 } : {}),
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
      sample: (contexts, rng) => {
        const saved = this.sampling;
        this.sampling = { ...saved, temperature: 0 };
        try {
          return this.sample(contexts, rng);
        } finally {
          this.sampling = saved;
        }
      },
      update: () => {
        throw new Error('the greedy view is for evaluation only');
      },
    };
  }

  save(dir: string, note: string): string {
    return saveCheckpoint(dir, this.model, this.tokenizer, this.optimizer, this.versionCounter, note);
  }

  dispose(): void {
    this.model.dispose();
    this.reference.dispose();
    this.optimizer.dispose();
  }
}

export type { GptConfig };
