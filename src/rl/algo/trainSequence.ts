// What the learner trains on, whatever the policy: one `TrainSequence` per trajectory, every array
// [L] over the positions the policy scores (tokens for a language model, turns for the table), padded
// into [B, T] batches, cut into micro-batches that fit in memory, and combined again with weights that
// make the micro-batches' sum exactly the whole batch's loss.
import { aggregationUnit } from './losses';
import type { Aggregation } from '../../shared/algorithm';
import { lossMetricPer } from '../../shared/lossMetrics';
import type { TokenStats } from '../../shared/types';

/**
 * One trajectory as a policy trains on it, token in, token out. Position t predicts `targets[t]` from
 * `inputs[≤ t]` (a language model: inputs = ids[0..n−2], targets = ids[1..n−1]; the table: the state
 * and the action of turn t).
 */
export interface TrainSequence {
  /** [L] the policy's input at each position (token ids; the table's state indices). */
  readonly inputs: readonly number[];
  /** [L] what was generated at each position (the next token; the table's action index). */
  readonly targets: readonly number[];
  /** [L] 1 = a unit the policy generated and is trained on; 0 = prompt, observation, template, or a demonstration's mistake. */
  readonly mask: readonly number[];
  /** [L] behaviour log-prob recorded at sampling time (0 where mask is 0). */
  readonly behaviour: readonly number[];
  /** The trajectory's (shaped) advantage; 0 for supervised objectives. */
  readonly advantage: number;
  /**
   * [L] each position's own advantage (a teacher's per-token term: rl/algo/distill.ts), which replaces
   * `advantage` in the policy loss; absent = every position carries `advantage` ([B, 1], GRPO).
   */
  readonly tokenAdvantages?: readonly number[];
  /**
   * [L] under constrained decoding: the token ids the grammar allowed at each position (ascending), or
   * undefined where the whole vocabulary was (prompt, observation, an unconstrained action). The
   * learner's log-probs there are over the allowed ids only, as the sampler's were.
   */
  readonly allowed?: readonly (Int32Array | undefined)[];
}

/** A sequence with what the objective needs beside it, each [L] (refRows [L·A]). */
export interface LossInput {
  readonly seq: TrainSequence;
  /** π_old of the targets; absent = the behaviour log-probs. */
  readonly old?: Float32Array;
  readonly ref?: Float32Array;
  readonly refRows?: Float32Array;
  /** Truncated importance weights to the behaviour policy (off-policy correction). */
  readonly isWeight?: Float32Array;
}

/** Sequences right-padded to [B, T], flattened row-major. */
export interface PaddedBatch {
  readonly B: number;
  readonly T: number;
  readonly inputs: Int32Array;
  readonly targets: Int32Array;
  readonly mask: Float32Array;
  readonly behaviour: Float32Array;
  /** [B] */
  readonly advantages: Float32Array;
  /** [B·T] per-position advantages (0 at padding) when every sequence carries its own (TrainSequence.tokenAdvantages). */
  readonly tokenAdvantages?: Float32Array;
  /** [B·T] the allowed ids at each constrained position (TrainSequence.allowed); absent when no sequence has any. */
  readonly allowed?: readonly (Int32Array | undefined)[];
}

export function positions(s: TrainSequence): number {
  return s.targets.length;
}

export function checkSequence(s: TrainSequence): void {
  const L = s.targets.length;
  const tokenAdv = s.tokenAdvantages;
  if (
    s.inputs.length !== L ||
    s.mask.length !== L ||
    s.behaviour.length !== L ||
    (s.allowed && s.allowed.length !== L) ||
    (tokenAdv && tokenAdv.length !== L)
  ) {
    throw new Error(
      `TrainSequence: inputs (${s.inputs.length}), targets (${L}), mask (${s.mask.length}), behaviour (${s.behaviour.length})${s.allowed ? `, allowed (${s.allowed.length})` : ''}${tokenAdv ? `, tokenAdvantages (${tokenAdv.length})` : ''} must have one entry per position`,
    );
  }
}

export function padBatch(seqs: readonly TrainSequence[]): PaddedBatch {
  const B = seqs.length;
  const T = Math.max(1, ...seqs.map(positions));
  const inputs = new Int32Array(B * T);
  const targets = new Int32Array(B * T);
  const mask = new Float32Array(B * T);
  const behaviour = new Float32Array(B * T);
  const advantages = new Float32Array(B);
  // a batch mixes no kinds: per-position advantages only where every sequence has them
  const perToken = seqs.length > 0 && seqs.every((s) => s.tokenAdvantages);
  const tokenAdvantages = perToken ? new Float32Array(B * T) : undefined;
  seqs.forEach((s, b) => {
    checkSequence(s);
    for (let t = 0; t < s.targets.length; t++) {
      inputs[b * T + t] = s.inputs[t]!;
      targets[b * T + t] = s.targets[t]!;
      mask[b * T + t] = s.mask[t]!;
      behaviour[b * T + t] = s.mask[t] ? s.behaviour[t]! : 0;
      if (tokenAdvantages) tokenAdvantages[b * T + t] = s.mask[t] ? s.tokenAdvantages![t]! : 0;
    }
    advantages[b] = s.advantage;
  });
  const allowed = seqs.some((s) => s.allowed) ? seqs.flatMap((s) => Array.from({ length: T }, (_, t) => s.allowed?.[t])) : undefined;
  return { B, T, inputs, targets, mask, behaviour, advantages, ...(tokenAdvantages ? { tokenAdvantages } : {}), ...(allowed ? { allowed } : {}) };
}

/** Per-sequence [L] arrays laid out as one [B, T] array (0-padded); rows of width `A` for [B, T, A]. */
export function padRows(rows: readonly Float32Array[], T: number, A = 1): Float32Array {
  const out = new Float32Array(rows.length * T * A);
  rows.forEach((r, b) => out.set(r.subarray(0, Math.min(r.length, T * A)), b * T * A));
  return out;
}

/** The denominators of the aggregations: trained positions, and sequences with at least one. */
export interface Counts {
  readonly tokens: number;
  readonly sequences: number;
}

export function counts(seqs: readonly { readonly mask: readonly number[] }[]): Counts {
  let tokens = 0,
    sequences = 0;
  for (const s of seqs) {
    let n = 0;
    for (const m of s.mask) n += m;
    tokens += n;
    sequences += n > 0 ? 1 : 0;
  }
  return { tokens, sequences };
}

/** A part's share of the whole under the aggregation's denominator (token-mean: tokens; the rest: sequences). */
export function partWeight(aggregation: Aggregation, part: Counts, total: Counts): number {
  return aggregationUnit(aggregation) === 'tokens' ? part.tokens / Math.max(1, total.tokens) : part.sequences / Math.max(1, total.sequences);
}

/**
 * Consecutive chunks whose padded size (count × longest) stays within `budget` positions: tfjs keeps
 * every activation for the backward pass, and the 32-bit wasm heap (4 GB) never shrinks.
 */
export function microbatches<T extends { readonly seq: TrainSequence } | TrainSequence>(items: readonly T[], budget: number): T[][] {
  const len = (x: T): number => positions('seq' in x ? x.seq : x);
  const out: T[][] = [];
  let cur: T[] = [];
  let longest = 0;
  for (const x of items) {
    const l = Math.max(longest, len(x));
    if (cur.length > 0 && (cur.length + 1) * l > budget) {
      out.push(cur);
      cur = [];
      longest = 0;
    }
    cur.push(x);
    longest = Math.max(longest, len(x));
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** One sequence's numbers at its trained positions (mask 1, in order) from the objective's pass (see TokenStats). */
export type TokenColumns = Pick<TokenStats, 'logp' | 'ratio' | 'clipSide' | 'entropy' | 'kl'>;

/** Scalars of one loss evaluation on a part of a batch. */
export interface LossStats {
  readonly loss: number;
  readonly policyLoss: number;
  readonly kl: number;
  readonly entropy: number;
  /** Share of trained positions a clip held (ObjectiveParts.clipFraction). */
  readonly clipFraction: number;
  readonly ratioMin: number;
  readonly ratioMax: number;
  readonly tokenAccuracy: number;
  /** The policy loss's own numbers by name (policyLosses.ts), each a mean over the part's trained positions or sequences. */
  readonly metrics: Readonly<Record<string, number>>;
  readonly tokens: number;
  readonly sequences: number;
  /** Per sequence of the part, in its order, when the spec asked for token statistics. */
  readonly perSequence?: readonly TokenColumns[];
}

/**
 * The scalars of a whole from those of its parts: losses with the parts' loss weights, per-token
 * quantities weighted by trained positions (a loss metric over sequences by trained sequences: see
 * shared/lossMetrics.ts), ratio extremes over all.
 */
export function combineStats(parts: readonly LossStats[], weights: readonly number[], total: Counts): LossStats {
  const tokenWeights = parts.map((st) => st.tokens / Math.max(1, total.tokens));
  const sequenceWeights = parts.map((st) => st.sequences / Math.max(1, total.sequences));
  const sum = (f: (st: LossStats) => number, w: readonly number[]): number => parts.reduce((acc, st, k) => acc + f(st) * w[k]!, 0);
  const names = [...new Set(parts.flatMap((st) => Object.keys(st.metrics)))];
  return {
    loss: sum((st) => st.loss, weights),
    policyLoss: sum((st) => st.policyLoss, weights),
    kl: sum((st) => st.kl, weights),
    entropy: sum((st) => st.entropy, tokenWeights),
    clipFraction: sum((st) => st.clipFraction, tokenWeights),
    tokenAccuracy: sum((st) => st.tokenAccuracy, tokenWeights),
    metrics: Object.fromEntries(names.map((k) => [k, sum((st) => st.metrics[k] ?? 0, lossMetricPer(k) === 'sequence' ? sequenceWeights : tokenWeights)])),
    ratioMin: Math.min(...parts.map((st) => st.ratioMin)),
    ratioMax: Math.max(...parts.map((st) => st.ratioMax)),
    ...total,
    ...(parts.every((st) => st.perSequence) ? { perSequence: parts.flatMap((st) => st.perSequence!) } : {}),
  };
}
