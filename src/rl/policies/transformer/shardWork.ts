// The computations a replica does on its shard of a batch, the same code on the main thread and in a
// helper thread (replicas.ts): gradients of a minibatch shard, and the log-probs GRPO needs before its
// first step. Shard results are combined with the weights `shardWeight` gives, which make the sum of
// weighted shard losses equal the loss of the whole minibatch under every aggregation mode.
import * as tf from '@tensorflow/tfjs';
import type { Gpt } from './model';
import { buildTokenBatch, grpoLoss, nllLoss, targetLogprobs, type Aggregation, type LossParts, type TokenLossOptions, type TokenSequence } from './tokenLoss';

export interface ShardLoss {
  readonly objective: 'nll' | 'clipped-pg';
  readonly aggregation: Aggregation;
  readonly lossOpts: TokenLossOptions;
}

/** Scalars of one shard's loss evaluation. */
export interface ShardStats {
  readonly loss: number;
  readonly policyLoss: number;
  readonly kl: number;
  readonly entropy: number;
  readonly clipLow: number;
  readonly clipHigh: number;
  readonly ratioMin: number;
  readonly ratioMax: number;
  /** Generated (mask 1) tokens, and sequences with at least one. */
  readonly tokens: number;
  readonly sequences: number;
}

/** What a shard's loss counts: the denominators of the aggregation. */
export function shardCounts(seqs: readonly TokenSequence[]): { tokens: number; sequences: number } {
  let tokens = 0, sequences = 0;
  for (const s of seqs) {
    let n = 0;
    for (let t = 1; t < s.mask.length; t++) n += s.mask[t]!;
    tokens += n;
    sequences += n > 0 ? 1 : 0;
  }
  return { tokens, sequences };
}

/**
 * Weight of a shard in the minibatch loss: token-mean divides by generated tokens, the other modes by
 * sequences, so a shard's share is its share of that denominator.
 */
export function shardWeight(aggregation: Aggregation, shard: { tokens: number; sequences: number }, total: { tokens: number; sequences: number }): number {
  return aggregation === 'token-mean' ? shard.tokens / Math.max(1, total.tokens) : shard.sequences / Math.max(1, total.sequences);
}

/**
 * Tokens (rows × padded length) one forward and backward pass may hold. tfjs keeps every activation
 * for the backward pass and the wasm heap never shrinks (32-bit: 4 GB at most): a 16 × 180-token step
 * of the 64-wide model peaks at about 640 MB, and a 128-sequence minibatch in one pass ran out of
 * memory. Larger shards are cut into micro-batches whose gradients are accumulated.
 */
export const MICROBATCH_TOKENS = 4096;

/** Consecutive chunks of `seqs` whose padded size (count × longest) stays within `budget` tokens. */
export function microbatches<T extends { readonly ids: readonly unknown[] }>(seqs: readonly T[], budget = MICROBATCH_TOKENS): T[][] {
  const out: T[][] = [];
  let cur: T[] = [];
  let longest = 0;
  for (const s of seqs) {
    const l = Math.max(longest, s.ids.length);
    if (cur.length > 0 && (cur.length + 1) * l > budget) {
      out.push(cur);
      cur = [];
      longest = 0;
    }
    cur.push(s);
    longest = Math.max(longest, s.ids.length);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Gradients (in `model.weights` order) and scalars of the loss on one shard, accumulated over
 * micro-batches with the same weights that combine shards, so the result is the shard's gradient.
 * `refs` holds each sequence's reference log-probs ([len − 1]) for GRPO. The caller disposes the
 * returned gradients.
 */
export function shardGradients(model: Gpt, seqs: readonly TokenSequence[], refs: readonly Float32Array[] | undefined, o: ShardLoss, budget = MICROBATCH_TOKENS): { grads: tf.Tensor[]; stats: ShardStats } {
  const chunks = microbatches(seqs.map((s, i) => ({ ids: s.ids, s, ref: refs?.[i] })), budget);
  if (chunks.length === 1) return onePass(model, seqs, refs, o);
  const total = shardCounts(seqs);
  let grads: tf.Tensor[] | undefined;
  const parts: ShardStats[] = [];
  const weights: number[] = [];
  for (const chunk of chunks) {
    const part = onePass(model, chunk.map((c) => c.s), refs ? chunk.map((c) => c.ref!) : undefined, o);
    const w = shardWeight(o.aggregation, part.stats, total);
    const prev: tf.Tensor[] | undefined = grads;
    grads = tf.tidy(() => part.grads.map((g, i) => (prev ? tf.add(prev[i]!, tf.mul(g, w)) : tf.mul(g, w))));
    tf.dispose([...part.grads, ...(prev ?? [])]);
    parts.push(part.stats);
    weights.push(w);
  }
  return { grads: grads!, stats: combineStats(parts, weights, total) };
}

/**
 * The scalars of a whole batch from those of its parts (shards or micro-batches): losses with the
 * parts' loss weights, per-token quantities weighted by generated tokens, ratio extremes over all.
 */
export function combineStats(parts: readonly ShardStats[], weights: readonly number[], total: { tokens: number; sequences: number }): ShardStats {
  const tokenWeights = parts.map((st) => st.tokens / Math.max(1, total.tokens));
  const sum = (f: (st: ShardStats) => number, w: readonly number[]): number => parts.reduce((acc, st, k) => acc + f(st) * w[k]!, 0);
  return {
    loss: sum((st) => st.loss, weights), policyLoss: sum((st) => st.policyLoss, weights), kl: sum((st) => st.kl, weights),
    entropy: sum((st) => st.entropy, tokenWeights), clipLow: sum((st) => st.clipLow, tokenWeights), clipHigh: sum((st) => st.clipHigh, tokenWeights),
    ratioMin: Math.min(...parts.map((st) => st.ratioMin)), ratioMax: Math.max(...parts.map((st) => st.ratioMax)), ...total,
  };
}

function onePass(model: Gpt, seqs: readonly TokenSequence[], refs: readonly Float32Array[] | undefined, o: ShardLoss): { grads: tf.Tensor[]; stats: ShardStats } {
  const batch = buildTokenBatch(seqs);
  const got: { parts?: LossParts; entropy?: tf.Scalar } = {}; // filled by the loss callbacks
  const { value, grads } = tf.variableGrads(() => {
    if (o.objective === 'nll') return nllLoss(model, batch, o.aggregation, (p) => (got.entropy = p.entropy));
    const ref = new Float32Array(batch.B * (batch.T - 1));
    refs!.forEach((r, b) => ref.set(r, b * (batch.T - 1)));
    return grpoLoss(model, batch, tf.tensor2d(ref, [batch.B, batch.T - 1]), o.lossOpts, (p) => (got.parts = p));
  }, model.weights);
  const read = (t: tf.Scalar | undefined): number => (t ? t.dataSync()[0]! : 0);
  const loss = read(value);
  const { parts: p, entropy: ent } = got;
  const counts = shardCounts(seqs);
  const stats: ShardStats = p
    ? { loss, policyLoss: read(p.policyLoss), kl: read(p.kl), entropy: read(p.entropy), clipLow: read(p.clipLow), clipHigh: read(p.clipHigh), ratioMin: read(p.ratioMin), ratioMax: read(p.ratioMax), ...counts }
    : { loss, policyLoss: loss, kl: 0, entropy: read(ent), clipLow: 0, clipHigh: 0, ratioMin: 1, ratioMax: 1, ...counts };
  tf.dispose([value, ...(p ? (Object.values(p) as tf.Scalar[]) : []), ...(ent ? [ent] : [])]);
  return { grads: model.weights.map((w) => grads[w.name]!), stats };
}

/**
 * Before GRPO's first step: per sequence, the reference model's log-probs of its tokens ([len − 1]),
 * and the summed |current − behaviour| log-prob gap over its generated tokens (the mismatch metric).
 */
export function shardLogprobs(model: Gpt, reference: Gpt, seqs: readonly TokenSequence[], temperature: number): { refs: Float32Array[]; mismatchSum: number; tokens: number } {
  const chunks = microbatches(seqs, 2 * MICROBATCH_TOKENS); // forward only: no activations kept
  if (chunks.length > 1) {
    const parts = chunks.map((c) => shardLogprobs(model, reference, c, temperature));
    return { refs: parts.flatMap((p) => p.refs), mismatchSum: parts.reduce((a, p) => a + p.mismatchSum, 0), tokens: parts.reduce((a, p) => a + p.tokens, 0) };
  }
  const batch = buildTokenBatch(seqs);
  const [ref, cur] = tf.tidy(() => [
    targetLogprobs(reference, batch, temperature, true).logp.dataSync() as Float32Array,
    targetLogprobs(model, batch, temperature, true).logp.dataSync() as Float32Array,
  ]);
  let mismatchSum = 0;
  const refs = seqs.map((s, b) => {
    const row = b * (batch.T - 1);
    for (let t = 0; t < batch.T - 1; t++) mismatchSum += batch.mask[row + t]! * Math.abs(cur[row + t]! - batch.behaviour[row + t]!);
    return ref.slice(row, row + s.ids.length - 1);
  });
  return { refs, mismatchSum, tokens: batch.tokens };
}

/** Splits a list into `n` shards by alternating assignment (sorted input → shards of similar lengths). */
export function splitShards<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = Array.from({ length: n }, () => []);
  items.forEach((x, i) => out[i % n]!.push(x));
  return out;
}
