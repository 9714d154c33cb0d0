// The gradient work of one minibatch, the same code for every policy: a policy only
// says how to turn a padded batch into logits over its weights (`Differentiable`); log-probs, the
// objective, micro-batching and gradient accumulation are here. Tensor reads are asynchronous
// (`await data()`), which every backend supports (WebGPU in Node has no synchronous read).
import * as tf from '@tensorflow/tfjs';
import { assertBackendHealthy } from '../tfjsHealth';
import { objectiveLoss, type LossSpec, type ObjectiveParts, type PerTokenParts } from './objective';
import {
  combineStats,
  counts,
  microbatches,
  padBatch,
  padRows,
  partWeight,
  positions,
  type LossInput,
  type LossStats,
  type PaddedBatch,
  type TokenColumns,
  type TrainSequence,
} from './trainSequence';

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

/**
 * A model that scores its own targets (the Hugging Face engine: the vocabulary is visited in chunks,
 * so no [positions, vocabulary] tensor exists; a position a grammar constrained is scored over its
 * allowed ids) and gives the gradients of Σ g·logp for the sequences it scored last with `keep`. The
 * learner's objective runs on the [B, T] log-probs, in tfjs.
 */
export interface TokenScorer {
  readonly kind: 'tokens';
  readonly weights: readonly tf.Variable[];
  readonly vocabularySize: number;
  /** Packed positions per pass. */
  readonly positionsPerPass: number;
  /** Per sequence [L]: the targets' log-probs at `temperature`, the entropies and argmax hits at trained positions (0 elsewhere). */
  score(seqs: readonly TrainSequence[], temperature: number, keep: boolean): Promise<{ logp: Float32Array; entropy: Float32Array; argmaxHit: Float32Array }[]>;
  /** Gradients (in `weights` order) of Σ_b Σ_t g[b][t]·logp[b][t] over the last kept pass. */
  backward(g: readonly Float32Array[]): Promise<tf.Tensor[]>;
  /** Gives back a kept pass (after a failure). */
  release(): void;
}

/**
 * A model whose logits over a few units are computed outside tfjs (candidate scoring on the engine: a
 * unit's logit is a language model's score of a candidate after the position's prompt): the [B, T, A]
 * logits of a batch as a constant tensor, and the gradients of Σ dlogits·logits over the batch it last
 * scored with `keep`. The learner's objective runs on those logits in tfjs, whole distributions
 * included, and hands back its gradient with respect to them.
 */
export interface LogitScorer {
  readonly kind: 'logits';
  readonly weights: readonly tf.Variable[];
  readonly vocabularySize: number;
  /** What a sequence costs one of the model's passes, and how much a pass takes (the learner's micro-batches). */
  cost(seq: TrainSequence): number;
  readonly costPerPass: number;
  /** [B, T, A] the batch's logits, without gradient; `keep`: what `backward` needs stays until `backward` or `release`. */
  logits(batch: PaddedBatch, keep: boolean): Promise<tf.Tensor3D>;
  /** Gradients (in `weights` order) of Σ dlogits·logits ([B·T·A], row-major) over the last kept batch. */
  backward(dlogits: Float32Array): Promise<tf.Tensor[]>;
  /** Gives back a kept batch (after a failure). */
  release(): void;
}

export type Trainable = Differentiable | TokenScorer | LogitScorer;

const scoresOwn = (m: Trainable): m is TokenScorer => 'kind' in m && m.kind === 'tokens';
const logitsOutside = (m: Trainable): m is LogitScorer => 'kind' in m && m.kind === 'logits';

/** A batch's logits computed already, as the `Differentiable` that `logprobsOf` reads (no weights of its own). */
const givenLogits = (logits: tf.Tensor3D, vocabularySize: number): Differentiable => ({ weights: [], vocabularySize, logits: () => logits });

/**
 * Consecutive chunks whose summed positions (or `cost`) stay within `budget` (packed passes; one
 * sequence at the least).
 */
export function packedChunks<T extends { readonly seq: TrainSequence } | TrainSequence>(
  items: readonly T[],
  budget: number,
  cost: (s: TrainSequence) => number = positions,
): T[][] {
  const len = (x: T): number => cost('seq' in x ? x.seq : x);
  const out: T[][] = [];
  let cur: T[] = [];
  let n = 0;
  for (const x of items) {
    if (cur.length > 0 && n + len(x) > budget) {
      out.push(cur);
      cur = [];
      n = 0;
    }
    cur.push(x);
    n += len(x);
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/** Log-probs of a batch at `temperature`: every position's distribution [B, T, A], the targets' [B, T], and where the target was the most likely unit. */
export function logprobsOf(
  model: Differentiable,
  batch: PaddedBatch,
  temperature: number,
  forwardOnly: boolean,
): { logRows: tf.Tensor3D; logp: tf.Tensor2D; argmaxHit: tf.Tensor2D } {
  const { B, T } = batch;
  const A = model.vocabularySize;
  const logits = model.logits(batch, forwardOnly);
  const scaled = temperature > 0 && temperature !== 1 ? tf.div(logits, temperature) : logits;
  const logRows = tf.logSoftmax(batch.allowed ? tf.add(scaled, grammarBias(batch.allowed, B, T, A)) : scaled) as tf.Tensor3D;
  // a one-hot product instead of gather: gather has no gradient on wasm
  const onehot = tf.oneHot(tf.tensor1d(batch.targets, 'int32'), A).asType('float32');
  const logp = tf.reshape<tf.Rank.R2>(tf.sum(tf.mul(tf.reshape(logRows, [B * T, A]), onehot), -1), [B, T]);
  const argmaxHit = tf.cast(tf.greaterEqual(logp, tf.max(logRows, -1)), 'float32') as tf.Tensor2D;
  return { logRows, logp, argmaxHit };
}

/**
 * [B, T, A] 0 where a token may be drawn, −1e9 where a grammar forbade it (constrained decoding): the
 * log softmax renormalises over the allowed tokens as the sampler did. Finite, so that a forbidden
 * token's p·log p is 0 in the entropy and the full-distribution KL, not NaN.
 */
const FORBIDDEN_LOGIT = -1e9;

function grammarBias(allowed: readonly (Int32Array | undefined)[], B: number, T: number, A: number): tf.Tensor3D {
  const bias = new Float32Array(B * T * A);
  allowed.forEach((ids, p) => {
    if (!ids) return;
    const row = bias.subarray(p * A, (p + 1) * A);
    row.fill(FORBIDDEN_LOGIT);
    for (const id of ids) row[id] = 0;
  });
  return tf.tensor3d(bias, [B, T, A]);
}

/** Budget of padded positions per forward and backward pass (see `microbatches`). */
export const MICROBATCH_POSITIONS = 4096;

/**
 * Gradients (in `model.weights` order) and scalars of the objective on a minibatch, accumulated over
 * micro-batches weighted by their share of the aggregation, so the result is the minibatch's gradient.
 * The caller disposes the returned gradients.
 */
export async function shardGradients(
  model: Trainable,
  inputs: readonly LossInput[],
  spec: LossSpec,
  budget = MICROBATCH_POSITIONS,
): Promise<{ grads: tf.Tensor[]; stats: LossStats }> {
  const pass = (chunk: readonly LossInput[]): Promise<{ grads: tf.Tensor[]; stats: LossStats }> =>
    scoresOwn(model) ? tokenPass(model, chunk, spec) : logitsOutside(model) ? logitPass(model, chunk, spec) : onePass(model, chunk, spec);
  const chunks = scoresOwn(model)
    ? packedChunks(inputs, model.positionsPerPass)
    : logitsOutside(model)
      ? packedChunks(inputs, model.costPerPass, (s) => model.cost(s))
      : microbatches(inputs, budget);
  if (chunks.length === 1) return pass(inputs);
  const total = counts(inputs.map((x) => x.seq));
  let grads: tf.Tensor[] | undefined;
  const parts: LossStats[] = [];
  const weights: number[] = [];
  for (const chunk of chunks) {
    const part = await pass(chunk);
    const w = partWeight(spec.aggregation, part.stats, total);
    const prev: tf.Tensor[] | undefined = grads;
    grads = tf.tidy(() => part.grads.map((g, i) => (prev ? tf.add(prev[i]!, tf.mul(g, w)) : tf.mul(g, w))));
    tf.dispose([...part.grads, ...(prev ?? [])]);
    parts.push(part.stats);
    weights.push(w);
  }
  return { grads: grads!, stats: combineStats(parts, weights, total) };
}

/** The objective's inputs other than the model's own outputs, for a padded batch of `inputs`. */
function objectiveInputs(inputs: readonly LossInput[], batch: PaddedBatch, A: number): Omit<Parameters<typeof objectiveLoss>[1], 'logp' | 'argmaxHit'> {
  const { B, T } = batch;
  const old = inputs.every((x) => x.old)
    ? padRows(
        inputs.map((x) => x.old!),
        T,
      )
    : batch.behaviour;
  return {
    mask: tf.tensor2d(batch.mask, [B, T]),
    oldLogp: tf.tensor2d(old, [B, T]),
    // [B, T] where each position carries its own (a teacher's term), else GRPO's one per trajectory [B, 1]
    advantages: batch.tokenAdvantages ? tf.tensor2d(batch.tokenAdvantages, [B, T]) : tf.tensor2d(batch.advantages, [B, 1]),
    ...(inputs.every((x) => x.ref)
      ? {
          refLogp: tf.tensor2d(
            padRows(
              inputs.map((x) => x.ref!),
              T,
            ),
            [B, T],
          ),
        }
      : {}),
    ...(inputs.every((x) => x.refRows)
      ? {
          refRows: tf.tensor3d(
            padRows(
              inputs.map((x) => x.refRows!),
              T,
              A,
            ),
            [B, T, A],
          ),
        }
      : {}),
    ...(inputs.every((x) => x.isWeight)
      ? {
          isWeights: tf.tensor2d(
            padRows(
              inputs.map((x) => x.isWeight!),
              T,
            ),
            [B, T],
          ),
        }
      : {}),
  };
}

async function readStats(value: tf.Scalar, p: ObjectiveParts, inputs: readonly LossInput[]): Promise<LossStats> {
  const read = async (t: tf.Scalar): Promise<number> => (await t.data())[0]!;
  const c = counts(inputs.map((x) => x.seq));
  const stats: LossStats = {
    loss: await read(value),
    policyLoss: await read(p.policyLoss),
    kl: await read(p.kl),
    entropy: await read(p.entropy),
    clipFraction: await read(p.clipFraction),
    ratioMin: await read(p.ratioMin),
    ratioMax: await read(p.ratioMax),
    tokenAccuracy: await read(p.tokenAccuracy),
    metrics: Object.fromEntries(await Promise.all(Object.entries(p.metrics).map(async ([k, t]) => [k, await read(t)] as const))),
    ...c,
    ...(p.perToken ? { perSequence: await readPerToken(p.perToken, inputs) } : {}),
  };
  const { metrics, perToken, ...scalars } = p;
  tf.dispose([value, ...Object.values(scalars), ...Object.values(metrics), ...(perToken ? (Object.values(perToken) as tf.Tensor[]) : [])]);
  return stats;
}

/** The objective's [B, T] per-position numbers as each sequence's columns at its trained positions. */
async function readPerToken(p: PerTokenParts, inputs: readonly LossInput[]): Promise<TokenColumns[]> {
  const T = p.logp.shape[1] ?? 0;
  const [logp, ratio, side, entropy] = (await Promise.all([p.logp.data(), p.ratio.data(), p.clipSide.data(), p.entropy.data()])) as Float32Array[];
  const kl = p.kl ? ((await p.kl.data()) as Float32Array) : undefined;
  return inputs.map(({ seq }, b) => {
    const at: number[] = [];
    seq.mask.forEach((m, t) => m === 1 && at.push(b * T + t));
    const pick = (a: Float32Array): Float32Array => Float32Array.from(at, (i) => a[i]!);
    return {
      logp: pick(logp!),
      ratio: pick(ratio!),
      clipSide: Uint8Array.from(at, (i) => side![i]!),
      entropy: pick(entropy!),
      ...(kl ? { kl: pick(kl) } : {}),
    };
  });
}

/**
 * A pass of a model that scores its own targets: the model's forward pass (keeping what its backward
 * pass needs), the objective and its gradient with respect to the [B, T] log-probs in tfjs, then the
 * model's backward pass from that gradient.
 */
async function tokenPass(model: TokenScorer, inputs: readonly LossInput[], spec: LossSpec): Promise<{ grads: tf.Tensor[]; stats: LossStats }> {
  const seqs = inputs.map((x) => x.seq);
  const temperature = spec.kind === 'policy-gradient' ? spec.temperature : 1;
  const scored = await model.score(seqs, temperature, true);
  try {
    const batch = padBatch(seqs);
    const { B, T } = batch;
    const got: { parts?: ObjectiveParts } = {};
    const logp = tf.tensor2d(
      padRows(
        scored.map((s) => s.logp),
        T,
      ),
      [B, T],
    );
    const entropy = tf.tensor2d(
      padRows(
        scored.map((s) => s.entropy),
        T,
      ),
      [B, T],
    );
    const argmaxHit = tf.tensor2d(
      padRows(
        scored.map((s) => s.argmaxHit),
        T,
      ),
      [B, T],
    );
    const rest = objectiveInputs(inputs, batch, model.vocabularySize);
    const { value, grads } = tf.valueAndGrads((lp: tf.Tensor) =>
      objectiveLoss(spec, { ...rest, logp: lp as tf.Tensor2D, entropy, argmaxHit }, (p) => (got.parts = p)),
    )([logp]);
    const g = (await grads[0]!.data()) as Float32Array;
    tf.dispose([logp, entropy, argmaxHit, ...grads, ...(Object.values(rest) as tf.Tensor[])]);
    const stats = await readStats(value, got.parts!, inputs);
    const perSeq = seqs.map((s, b) => g.slice(b * T, b * T + positions(s)));
    return { grads: await model.backward(perSeq), stats };
  } finally {
    model.release();
  }
}

/**
 * A pass of a model whose logits come from outside tfjs: its logits (keeping what its backward pass
 * needs), the objective on them and its gradient with respect to them in tfjs, then the model's
 * backward pass from that gradient.
 */
async function logitPass(model: LogitScorer, inputs: readonly LossInput[], spec: LossSpec): Promise<{ grads: tf.Tensor[]; stats: LossStats }> {
  const batch = padBatch(inputs.map((x) => x.seq));
  const temperature = spec.kind === 'policy-gradient' ? spec.temperature : 1;
  const A = model.vocabularySize;
  let logits: tf.Tensor3D | undefined;
  try {
    logits = await model.logits(batch, true);
    const got: { parts?: ObjectiveParts } = {};
    const rest = objectiveInputs(inputs, batch, A);
    const { value, grads } = tf.valueAndGrads((z: tf.Tensor) => {
      const { logRows, logp, argmaxHit } = logprobsOf(givenLogits(z as tf.Tensor3D, A), batch, temperature, false);
      return objectiveLoss(spec, { ...rest, logRows, logp, argmaxHit }, (p) => (got.parts = p));
    })([logits]);
    const dlogits = (await grads[0]!.data()) as Float32Array;
    tf.dispose([...grads, ...(Object.values(rest) as tf.Tensor[])]);
    const stats = await readStats(value, got.parts!, inputs);
    return { grads: await model.backward(dlogits), stats };
  } finally {
    logits?.dispose();
    model.release();
  }
}

async function onePass(model: Differentiable, inputs: readonly LossInput[], spec: LossSpec): Promise<{ grads: tf.Tensor[]; stats: LossStats }> {
  const batch = padBatch(inputs.map((x) => x.seq));
  const temperature = spec.kind === 'policy-gradient' ? spec.temperature : 1;
  const got: { parts?: ObjectiveParts } = {}; // filled by the objective's callback
  const { value, grads } = tf.variableGrads(() => {
    const { logRows, logp, argmaxHit } = logprobsOf(model, batch, temperature, false);
    return objectiveLoss(spec, { ...objectiveInputs(inputs, batch, model.vocabularySize), logRows, logp, argmaxHit }, (p) => (got.parts = p));
  }, model.weights as tf.Variable[]);
  const stats = await readStats(value, got.parts!, inputs);
  const out = model.weights.map((w) => grads[w.name]!);
  try {
    assertBackendHealthy('the gradients');
  } catch (e) {
    tf.dispose(out);
    throw e;
  }
  return { grads: out, stats };
}

/** Per sequence, the targets' log-probs [L] and, when asked, every position's whole distribution [L·A], without gradient. */
export interface SequenceLogprobs {
  readonly logp: Float32Array[];
  readonly rows?: Float32Array[];
}

/** Log-probs of each sequence's targets under `model` (forward only, in micro-batches twice the training budget). */
export async function shardLogprobs(
  model: Trainable,
  seqs: readonly TrainSequence[],
  o: { temperature: number; rows: boolean },
  budget = 2 * MICROBATCH_POSITIONS,
): Promise<SequenceLogprobs> {
  if (scoresOwn(model)) {
    if (o.rows) throw new Error('log-probs of whole distributions are not kept for this model (a large vocabulary); use klEstimator k1, k2 or k3');
    const out: Float32Array[] = [];
    for (const chunk of packedChunks(seqs, model.positionsPerPass)) out.push(...(await model.score(chunk, o.temperature, false)).map((s) => s.logp));
    return { logp: out };
  }
  const logp: Float32Array[] = [];
  const rows: Float32Array[] = [];
  const A = model.vocabularySize;
  const chunks = logitsOutside(model) ? packedChunks(seqs, model.costPerPass, (s) => model.cost(s)) : microbatches(seqs, budget);
  for (const chunk of chunks) {
    const batch = padBatch(chunk);
    const given = logitsOutside(model) ? await model.logits(batch, false) : undefined;
    const source = logitsOutside(model) ? givenLogits(given!, A) : model;
    const [lp, lr] = tf.tidy(() => {
      const r = logprobsOf(source, batch, o.temperature, true);
      return [r.logp, o.rows ? r.logRows : tf.zeros([0])];
    });
    given?.dispose();
    const lpData = (await lp.data()) as Float32Array;
    assertBackendHealthy('the log-probs');
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
