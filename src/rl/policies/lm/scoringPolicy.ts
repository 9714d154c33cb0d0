// Seed 002's candidate-scoring mode: a language model scores each of a discrete environment's action
// strings after the episode's history, s(a, h) = Σⱼ log p(cⱼ⁽ᵃ⁾ | prompt(h), c₍<ⱼ₎⁽ᵃ⁾) over the candidate's
// tokens (the action's name and the end-of-sequence token), and the policy is softmax over a of s(a, h):
// an A-way policy, not free generation. It trains through the learner like the table policy does — one
// position per turn, choosing among A units — with the model's LoRA adapters (or every weight) as the
// parameters, the base model with frozen adapters (under full fine-tuning, a frozen copy) as the KL
// reference, and action-level ratios and KL. The same policy runs on either decoder: a
// `CandidateScorer` scores the prompt + candidate rows, with tfjs autodiff (the tfjs decoder, here) or
// with the engine's own backward pass (engine/engineCandidates.ts).
import * as tf from '@tensorflow/tfjs';
import type { PolicyStep, Trajectory } from '../../../shared/types';
import type { AdamWOptions } from '../../algo/adamw';
import type { TabularSpec } from '../../envs/environment';
import type { Rng } from '../../random';
import type { TrainSequence } from '../../algo/trainSequence';
import type { Differentiable, Trainable } from '../../algo/gradients';
import { greedyView, type Policy, type PolicyContext, type PolicySample, type TrainablePolicy } from '../policy';
import { ModelPolicy, type SerialisableModel } from './modelPolicy';
import type { Tokenizer } from './tokenizer';
import type { CandidateRows, CandidateScorer } from './models/candidateScorer';
import type { HfModel } from './models/hfModel';

/** Prompts scored in one pass at most (each with every candidate): the learner's micro-batch, in turns. */
const PROMPTS_PER_PASS = 8;

/**
 * The prompt is the episode's history, token in, token out: each observation as it came, then "Action:";
 * a chosen action's candidate ids follow it. A turn records the ids it added (its observation) and the
 * candidate it chose, so the prompt of every turn is rebuilt from the stored turns, never re-encoded.
 */
function observationText(text: string, first: boolean): string {
  return `${first ? '' : '\n'}${text}\nAction:`;
}

/**
 * What a candidate-scoring policy is made of; M is the decoder it trains (its weights, a serialisable
 * config, and the reference it copies into).
 */
export interface ScoringParts<M extends SerialisableModel> {
  readonly model: M;
  /** The KL reference: the base model with frozen adapters (full fine-tuning: a frozen copy). */
  readonly reference: M;
  /** How `model` and `reference` score candidate rows. */
  readonly scorer: CandidateScorer<M>;
  readonly tokenizer: Tokenizer;
  /** The environment's fixed action set and visible state. */
  readonly spec: TabularSpec;
  /** Appended to every candidate (its end), when the model has one. */
  readonly eosId: number | undefined;
  readonly optimizer: AdamWOptions;
  /** The backend and model, for the run's compute string. */
  readonly computeBase: string;
  /** Why the model computes on its path (chooseComputePath), recorded with the run beside the compute string. */
  readonly computeReason?: string;
  /** π(a | h) = softmax(s(a, h) / temperature): seed 002's policy at 1; higher flattens a peaked model's start. */
  readonly temperature?: number;
  /** sum: seed 002's s(a, h), which prefers candidates of fewer tokens; mean: divided by the candidate's token count. */
  readonly normalization?: 'sum' | 'mean';
}

/**
 * [P, A] s(a, h) of the rows under the tfjs decoder, one padded pass, the candidates' token log-probs
 * summed (or averaged). Differentiable in the model's weights (`training`: intermediates are kept).
 */
function tfjsScores(model: HfModel, c: CandidateRows, training: boolean): tf.Tensor2D {
  const { rows } = c;
  const L = Math.max(...rows.map((r) => r.ids.length));
  const N = rows.length;
  const input = new Int32Array(N * (L - 1));
  const target = new Int32Array(N * (L - 1));
  const mask = new Float32Array(N * (L - 1));
  rows.forEach((r, n) => {
    for (let t = 0; t < L - 1; t++) {
      input[n * (L - 1) + t] = r.ids[t] ?? 0;
      target[n * (L - 1) + t] = r.ids[t + 1] ?? 0;
      // position t predicts token t + 1: the candidate's tokens are from..end-1
      mask[n * (L - 1) + t] = t + 1 >= r.from && t + 1 < r.ids.length ? 1 : 0;
    }
  });
  return tf.tidy(() => {
    const V = model.config.vocabSize;
    // sampling frees each layer's intermediates as it goes; a training pass keeps them for the gradient
    const logits = model.forward(tf.tensor2d(input, [N, L - 1], 'int32'), !training, training);
    const logRows = tf.logSoftmax(tf.reshape(logits, [N * (L - 1), V]));
    const picked = tf.sum(tf.mul(logRows, tf.cast(tf.oneHot(tf.tensor1d(target, 'int32'), V), 'float32')), -1);
    let perRow = tf.sum(tf.reshape(tf.mul(picked, tf.tensor1d(mask)), [N, L - 1]), -1);
    if (c.mean) perRow = tf.div(perRow, tf.tensor1d(rows.map((r) => r.ids.length - r.from)));
    return tf.reshape<tf.Rank.R2>(perRow, [c.prompts, c.actions]);
  });
}

/** Candidate scoring on the tfjs decoder: the scores are tfjs ops, their gradient tfjs autodiff. */
export const tfjsCandidateScorer: CandidateScorer<HfModel> = {
  async scores(model, c) {
    const s = tfjsScores(model, c, false);
    const values = (await s.data()) as Float32Array;
    s.dispose();
    return values;
  },
  trainable(model, actions, rowsOf): Differentiable {
    return {
      weights: model.weights,
      vocabularySize: actions,
      logits: (batch, forwardOnly) =>
        tf.tidy(() => {
          const unique = [...new Set(batch.inputs)];
          const at = new Map(unique.map((p, i) => [p, i]));
          const c = rowsOf(unique);
          const scores = tfjsScores(model, c, !forwardOnly); // [U, A]
          // each position's row of scores: a one-hot product (gather has no gradient on wasm)
          const rows =
            unique.length === 1
              ? tf.tile(scores, [batch.inputs.length, 1])
              : tf.matMul(
                  tf.cast(
                    tf.oneHot(
                      tf.tensor1d(
                        batch.inputs.map((p) => at.get(p)!),
                        'int32',
                      ),
                      unique.length,
                    ),
                    'float32',
                  ),
                  scores,
                );
          return tf.reshape<tf.Rank.R3>(rows, [batch.B, batch.T, actions]);
        }),
    };
  },
};

export class CandidateScoringPolicy<M extends SerialisableModel = SerialisableModel> extends ModelPolicy<M> implements TrainablePolicy {
  readonly maxPositions = Number.POSITIVE_INFINITY;
  readonly vocabularySize: number;
  readonly compute: string;
  readonly computeReason: string | undefined;
  /** Every candidate's ids: " " + the action string, then the end-of-sequence token. */
  private readonly candidates: number[][];
  /** Every prompt seen, by id (ids are never reused: a queued group of an async run may still hold one). */
  private readonly promptIds = new Map<string, number>();
  /** Prompt ids (the batch's inputs) → their token ids. */
  private readonly prompts: number[][] = [];

  readonly spec: TabularSpec;
  readonly temperature: number;
  readonly normalization: 'sum' | 'mean';
  private readonly scorer: CandidateScorer<M>;

  constructor({
    model,
    reference,
    scorer,
    tokenizer,
    spec,
    eosId,
    optimizer,
    computeBase,
    computeReason,
    temperature = 1,
    normalization = 'sum',
  }: ScoringParts<M>) {
    super(model, reference, tokenizer, optimizer);
    this.scorer = scorer;
    this.spec = spec;
    this.temperature = temperature;
    this.normalization = normalization;
    this.vocabularySize = spec.actions.length;
    this.candidates = spec.actions.map((a) => [...tokenizer.encode(` ${a}`), ...(eosId !== undefined ? [eosId] : [])]);
    this.computeReason = computeReason;
    this.compute = `${computeBase}, candidate scoring over ${spec.actions.length} actions (${normalization === 'mean' ? 'mean log-prob per candidate token' : 'summed log-prob'}${temperature !== 1 ? `, temperature ${temperature}` : ''})`;
  }

  /** The id of a prompt (its token ids kept once). */
  private promptId(ids: readonly number[]): number {
    const key = ids.join(',');
    let id = this.promptIds.get(key);
    if (id === undefined) {
      id = this.prompts.length;
      this.prompts.push([...ids]);
      this.promptIds.set(key, id);
    }
    return id;
  }

  /** The ids before turn `turns.length`'s action: every earlier turn's observation and candidate, then `fresh`. */
  private static history(turns: readonly { readonly policy: PolicyStep }[], fresh: readonly number[]): number[] {
    const ids: number[] = [];
    for (const t of turns) {
      const tk = t.policy.tokens;
      if (!tk) throw new Error('CandidateScoringPolicy: a turn without token ids (not sampled by candidate scoring)');
      ids.push(...tk.context, ...tk.sampled);
    }
    ids.push(...fresh);
    return ids;
  }

  /** The rows of prompts (by id): every prompt followed by every candidate. */
  private rowsOf(ids: readonly number[]): CandidateRows {
    // a history longer than the context keeps its most recent tokens (the same cut for every candidate)
    const contextLength = this.model.config.contextLength;
    const room = contextLength - Math.max(...this.candidates.map((c) => c.length));
    if (room < 1)
      throw new Error(`candidate scoring: the longest candidate does not fit the context length ${contextLength}. Fix: raise policyOptions.contextLength`);
    const rows: { ids: number[]; from: number }[] = [];
    for (const p of ids) {
      const prompt = this.prompts[p]!.slice(-room);
      for (const c of this.candidates) rows.push({ ids: [...prompt, ...c], from: prompt.length });
    }
    return { rows, prompts: ids.length, actions: this.candidates.length, mean: this.normalization === 'mean' };
  }

  /** s(a, h) [U·A] of prompts (by id) under `model`, a few prompts per pass (each is scored with every candidate). */
  private async scoreTable(model: M, ids: readonly number[]): Promise<Float32Array> {
    const A = this.vocabularySize;
    const values = new Float32Array(ids.length * A);
    for (let i = 0; i < ids.length; i += PROMPTS_PER_PASS) values.set(await this.scorer.scores(model, this.rowsOf(ids.slice(i, i + PROMPTS_PER_PASS))), i * A);
    return values;
  }

  /** The learner's view of `model`: a batch's inputs are prompt ids, its logits the candidates' scores. */

  /** The ids of each context's prompt (its history, then its fresh observation), and the fresh observation's ids. */
  private promptsOf(contexts: readonly PolicyContext[]): { ids: number[]; fresh: number[][] } {
    const fresh = contexts.map((ctx) => this.tokenizer.encode(observationText(ctx.observation.text, ctx.turns.length === 0)));
    return { ids: contexts.map((ctx, i) => this.promptId(CandidateScoringPolicy.history(ctx.turns, fresh[i]!))), fresh };
  }

  /** s(a, h) of every candidate [A] after each context's history, under the current weights or the reference. */
  async candidateScores(contexts: readonly PolicyContext[], model: 'current' | 'reference' = 'current'): Promise<Float32Array[]> {
    const { ids } = this.promptsOf(contexts);
    const unique = [...new Set(ids)];
    const values = await this.scoreTable(model === 'reference' ? this.reference : this.model, unique);
    const A = this.vocabularySize;
    return ids.map((p) => values.slice(unique.indexOf(p) * A, (unique.indexOf(p) + 1) * A));
  }

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    return this.choose(contexts, rng, false);
  }

  /** The same scores, taking the most likely action (greedy evaluation). */
  greedy(): Policy {
    return greedyView(
      () => this.versionCounter,
      this.compute,
      (contexts, rng) => this.choose(contexts, rng, true),
    );
  }

  private async choose(contexts: readonly PolicyContext[], rng: Rng, greedy: boolean): Promise<PolicySample[]> {
    const { ids, fresh } = this.promptsOf(contexts);
    const unique = [...new Set(ids)];
    const A = this.vocabularySize;
    const scores = await this.scoreTable(this.model, unique);
    const part = tf.tidy(() => tf.logSoftmax(tf.div(tf.tensor2d(scores, [unique.length, A]), this.temperature)));
    const values = (await part.data()) as Float32Array;
    part.dispose();
    return contexts.map((ctx, i) => {
      const at = unique.indexOf(ids[i]!);
      const row = values.subarray(at * A, (at + 1) * A);
      const action = greedy ? row.indexOf(Math.max(...row)) : (ctx.rng ?? rng).categorical(Array.from(row, (l) => Math.exp(l)));
      const candidate = this.candidates[action]!;
      // the action-level log-prob (what the ratio and the KL use) stands on the candidate's first token
      const step: PolicyStep = {
        behaviourLogprob: row[action]!,
        policyVersion: this.versionCounter,
        actionIndex: action,
        tokens: { context: fresh[i]!, sampled: candidate, logprobs: candidate.map((_, k) => (k === 0 ? row[action]! : 0)) },
      };
      return { text: this.spec.actions[action]!, step };
    });
  }

  sequence(t: Trajectory): TrainSequence | undefined {
    if (t.turns.length === 0) return undefined;
    const inputs: number[] = [];
    const targets: number[] = [];
    t.turns.forEach((turn, i) => {
      const a = turn.policy.actionIndex;
      if (a === undefined || !turn.policy.tokens)
        throw new Error('CandidateScoringPolicy: a turn without actionIndex or token ids (not sampled by candidate scoring)');
      inputs.push(this.promptId(CandidateScoringPolicy.history(t.turns.slice(0, i), turn.policy.tokens.context)));
      targets.push(a);
    });
    return { inputs, targets, mask: inputs.map(() => 1), behaviour: t.turns.map((turn) => turn.policy.behaviourLogprob), advantage: 0 };
  }

  trainable(model: 'current' | 'reference'): Trainable {
    return this.scorer.trainable(model === 'reference' ? this.reference : this.model, this.vocabularySize, (ids) => this.rowsOf(ids));
  }

  /** Prompts per pass, both ways (a pass scores every candidate of each prompt: its cost is the scorer's). */
  readonly passBudget = { train: PROMPTS_PER_PASS, logprobs: PROMPTS_PER_PASS };
}
