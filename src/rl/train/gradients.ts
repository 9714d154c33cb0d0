// The gradient work of one shard, the same code for every policy and on every thread: a policy only
// says how to turn a padded batch into logits over its weights (`Differentiable`); log-probs, the
// objective, micro-batching and gradient accumulation are here. Tensor reads are asynchronous
// (`await data()`), which every backend supports (WebGPU in Node has no synchronous read).
import * as tf from '@tensorflow/tfjs';
import { objectiveLoss, type LossSpec, type ObjectiveParts } from '../algo/objective';
import { combineStats, counts, microbatches, padBatch, padRows, partWeight, type LossInput, type LossStats, type PaddedBatch, type TrainSequence } from './batch';

/** What a policy provides for training: its weights and the logits of a padded batch. */
export interface Differentiable {
  readonly weights: readonly tf.Variable[];
  /** Units a position chooses among (vocabulary or action count). */
  readonly vocabularySize: number;
  /**
   * [B, T, A] logits of every position of the batch (position t from inputs[≤ t]). `forwardOnly`: no
   * gradient is wanted, so intermediates may be freed as the pass goes.
   */
  logits(batch: PaddedBatch, forwardOnly: boolean): tf.Tensor3D;
}

/** Log-probs of a batch at `temperature`: every position's distribution [B, T, A], the targets' [B, T], and where the target was the most likely unit. */
export function logprobsOf(model: Differentiable, batch: PaddedBatch, temperature: number, forwardOnly: boolean): { logRows: tf.Tensor3D; logp: tf.Tensor2D; argmaxHit: tf.Tensor2D } {
  const { B, T } = batch;
  const A = model.vocabularySize;
  const logits = model.logits(batch, forwardOnly);
  const scaled = temperature > 0 && temperature !== 1 ? tf.div(logits, temperature) : logits;
  const logRows = tf.logSoftmax(scaled) as tf.Tensor3D;
  // a one-hot product instead of gather: gather has no gradient on wasm
  const onehot = tf.oneHot(tf.tensor1d(batch.targets, 'int32'), A).asType('float32');
  const logp = tf.reshape<tf.Rank.R2>(tf.sum(tf.mul(tf.reshape(logRows, [B * T, A]), onehot), -1), [B, T]);
  const argmaxHit = tf.cast(tf.greaterEqual(logp, tf.max(logRows, -1)), 'float32') as tf.Tensor2D;
  return { logRows, logp, argmaxHit };
}

/** Budget of padded positions per forward and backward pass (see `microbatches`). */
export const MICROBATCH_POSITIONS = 4096;

/**
 * Gradients (in `model.weights` order) and scalars of the objective on one shard, accumulated over
 * micro-batches with the same weights that combine shards, so the result is the shard's gradient.
 * The caller disposes the returned gradients.
 */
export async function shardGradients(model: Differentiable, inputs: readonly LossInput[], spec: LossSpec, budget = MICROBATCH_POSITIONS): Promise<{ grads: tf.Tensor[]; stats: LossStats }> {
  const chunks = microbatches(inputs, budget);
  if (chunks.length === 1) return onePass(model, inputs, spec);
  const total = counts(inputs.map((x) => x.seq));
  let grads: tf.Tensor[] | undefined;
  const parts: LossStats[] = [];
  const weights: number[] = [];
  for (const chunk of chunks) {
    const part = await onePass(model, chunk, spec);
    const w = partWeight(spec.aggregation, part.stats, total);
    const prev: tf.Tensor[] | undefined = grads;
    grads = tf.tidy(() => part.grads.map((g, i) => (prev ? tf.add(prev[i]!, tf.mul(g, w)) : tf.mul(g, w))));
    tf.dispose([...part.grads, ...(prev ?? [])]);
    parts.push(part.stats);
    weights.push(w);
  }
  return { grads: grads!, stats: combineStats(parts, weights, total) };
}

async function onePass(model: Differentiable, inputs: readonly LossInput[], spec: LossSpec): Promise<{ grads: tf.Tensor[]; stats: LossStats }> {
  const batch = padBatch(inputs.map((x) => x.seq));
  const { B, T } = batch;
  const A = model.vocabularySize;
  const temperature = spec.kind === 'policy-gradient' ? spec.temperature : 1;
  const old = inputs.every((x) => x.old) ? padRows(inputs.map((x) => x.old!), T) : batch.behaviour;
  const got: { parts?: ObjectiveParts } = {}; // filled by the objective's callback
  const { value, grads } = tf.variableGrads(() => {
    const { logRows, logp, argmaxHit } = logprobsOf(model, batch, temperature, false);
    return objectiveLoss(spec, {
      logRows, logp, argmaxHit,
      mask: tf.tensor2d(batch.mask, [B, T]),
      oldLogp: tf.tensor2d(old, [B, T]),
      advantages: tf.tensor2d(batch.advantages, [B, 1]),
      ...(inputs.every((x) => x.ref) ? { refLogp: tf.tensor2d(padRows(inputs.map((x) => x.ref!), T), [B, T]) } : {}),
      ...(inputs.every((x) => x.refRows) ? { refRows: tf.tensor3d(padRows(inputs.map((x) => x.refRows!), T, A), [B, T, A]) } : {}),
      ...(inputs.every((x) => x.isWeight) ? { isWeights: tf.tensor2d(padRows(inputs.map((x) => x.isWeight!), T), [B, T]) } : {}),
    }, (p) => (got.parts = p));
  }, model.weights as tf.Variable[]);
  const p = got.parts!;
  const read = async (t: tf.Scalar): Promise<number> => (await t.data())[0]!;
  const c = counts(inputs.map((x) => x.seq));
  const stats: LossStats = {
    loss: await read(value), policyLoss: await read(p.policyLoss), kl: await read(p.kl), entropy: await read(p.entropy),
    clipLow: await read(p.clipLow), clipHigh: await read(p.clipHigh), dualClip: await read(p.dualClip), ratioMin: await read(p.ratioMin),
    ratioMax: await read(p.ratioMax), approxKl: await read(p.approxKl), absLogRatio: await read(p.absLogRatio), tokenAccuracy: await read(p.tokenAccuracy), ...c,
  };
  tf.dispose([value, ...(Object.values(p) as tf.Scalar[])]);
  return { grads: model.weights.map((w) => grads[w.name]!), stats };
}

/** Per sequence, the targets' log-probs [L] and, when asked, every position's whole distribution [L·A], without gradient. */
export interface SequenceLogprobs {
  readonly logp: Float32Array[];
  readonly rows?: Float32Array[];
}

/** Log-probs of each sequence's targets under `model` (forward only, in micro-batches twice the training budget). */
export async function shardLogprobs(model: Differentiable, seqs: readonly TrainSequence[], o: { temperature: number; rows: boolean }, budget = 2 * MICROBATCH_POSITIONS): Promise<SequenceLogprobs> {
  const logp: Float32Array[] = [];
  const rows: Float32Array[] = [];
  const A = model.vocabularySize;
  for (const chunk of microbatches(seqs, budget)) {
    const batch = padBatch(chunk);
    const [lp, lr] = tf.tidy(() => {
      const r = logprobsOf(model, batch, o.temperature, true);
      return [r.logp, o.rows ? r.logRows : tf.zeros([0])];
    });
    const lpData = (await lp.data()) as Float32Array;
    const lrData = o.rows ? ((await lr.data()) as Float32Array) : undefined;
    tf.dispose([lp, lr]);
    chunk.forEach((s, b) => {
      const L = s.targets.length;
      logp.push(lpData.slice(b * batch.T, b * batch.T + L));
      if (lrData) rows.push(lrData.slice(b * batch.T * A, (b * batch.T + L) * A));
    });
  }
  return { logp, ...(o.rows ? { rows } : {}) };
}
