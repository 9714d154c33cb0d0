// The policy losses by name (verl's POLICY_LOSS_REGISTRY): one signature for every entry, each
// returning its loss, what the inspector's heat map shows per position, and its own metrics as a
// name → scalar map. The learner averages the map and stores it as it is (IterationMetrics.lossMetrics),
// and the dashboard draws one chart per name (shared/lossMetrics.ts says its title and unit): a new
// metric is a line here and a line there. Inputs are [B, T] as in losses.ts; `advantages` is [B, T] or
// [B, 1]; masked positions add exactly zero to the loss and to the gradient.
import * as tf from '@tensorflow/tfjs';
import type { PolicyLossName } from '../../shared/algorithm';
import { aggregate, LOG_RATIO_CLAMP, policyGradientLoss, type PolicyLossOptions } from './losses';

export type { PolicyLossOptions };

export interface PolicyLossResult {
  /** Aggregated loss to minimise. */
  readonly loss: tf.Scalar;
  /** [B, T] per-position loss, 0 where masked out. */
  readonly perToken: tf.Tensor2D;
  /** [B, T] the ratio the loss used at each position (gspo: its sequence's ratio); 1 where masked out. */
  readonly ratio: tf.Tensor2D;
  /** [B, T] which clip held the position: 0 none, 1 low, 2 high, 3 the dual clip (cispo: 2 = weight truncated); 0 where masked out. */
  readonly clipSide: tf.Tensor2D;
  /** The loss's own numbers, each a mean over trained positions (or sequences: shared/lossMetrics.ts says which). */
  readonly metrics: Readonly<Record<string, tf.Scalar>>;
}

export type PolicyLossFn = (logp: tf.Tensor2D, oldLogp: tf.Tensor2D, advantages: tf.Tensor2D, mask: tf.Tensor2D, o: PolicyLossOptions) => PolicyLossResult;

/**
 * GSPO's clip range on the sequence ratio s_i (Zheng et al. 2025, §5.1; verl's and TRL's GSPO recipes):
 * s_i is a geometric mean over the sequence's tokens, whose log-ratios largely cancel, so it moves far
 * less than one token's ratio and the token clip's 0.2/0.28 would rarely bind. Fixed here rather than
 * read from clipLow/clipHigh, which keep their token meaning (and their defaults) for the clip loss.
 */
export const GSPO_CLIP_LOW = 3e-4;
export const GSPO_CLIP_HIGH = 4e-4;

/** Values at the masked-in positions, 0 elsewhere. */
function masked(x: tf.Tensor, mask: tf.Tensor): tf.Tensor2D {
  return tf.where(tf.greater(mask, 0), x, tf.zerosLike(x)) as tf.Tensor2D;
}

/** The value of x with no gradient (tfjs has no stop_gradient op). */
const stopGradient = tf.customGrad((...args) => ({ value: tf.clone(args[0] as tf.Tensor), gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy) }));

/** log π − log π_old, clamped to ±20 (see LOG_RATIO_CLAMP), 0 where masked out. */
function logRatioOf(logp: tf.Tensor2D, oldLogp: tf.Tensor2D, mask: tf.Tensor2D): tf.Tensor2D {
  return masked(tf.clipByValue(tf.sub(logp, oldLogp), -LOG_RATIO_CLAMP, LOG_RATIO_CLAMP), mask);
}

/** Mean over trained positions of a [B, T] quantity (0 where masked out). */
function tokenShare(x: tf.Tensor, mask: tf.Tensor2D): tf.Scalar {
  return tf.div<tf.Scalar>(tf.sum(masked(tf.cast(x, 'float32'), mask)), tf.maximum(tf.sum(mask), 1));
}

/** How far the policy moved from π_old, for every loss: PPO's approx_kl (mean log π_old − log π) and the mean |log-ratio|. */
function driftMetrics(logRatio: tf.Tensor2D, mask: tf.Tensor2D): { approxKl: tf.Scalar; absLogRatio: tf.Scalar } {
  return { approxKl: tokenShare(tf.neg(logRatio), mask), absLogRatio: tokenShare(tf.abs(logRatio), mask) };
}

/** The PPO/GRPO clipped surrogate with clip-low/high and the dual clip: losses.ts's policyGradientLoss. */
const clip: PolicyLossFn = (logp, oldLogp, advantages, mask, o) => {
  const pg = policyGradientLoss(logp, oldLogp, advantages, mask, o);
  return {
    loss: pg.loss,
    perToken: pg.perToken,
    ratio: pg.ratio,
    clipSide: pg.clipSide,
    metrics: {
      clipFractionLow: pg.clipFractionLow,
      clipFractionHigh: pg.clipFractionHigh,
      approxKl: pg.approxKl,
      absLogRatio: pg.absLogRatio,
      // reported only where the dual clip is on: a run without it has nothing to chart
      ...(o.dualClip > 0 ? { dualClipFraction: pg.dualClipFraction } : {}),
    },
  };
};

/**
 * GSPO (Zheng et al. 2025): the importance ratio of a whole sequence, s_i = exp(mean over its trained
 * tokens of log π − log π_old), clipped at the sequence level to [1 − 3e-4, 1 + 4e-4]. In its per-token
 * form s_i,t = sg[s_i]·π(y_t)/sg[π(y_t)] every token carries its sequence's ratio as value and its own
 * ∇log π scaled by s_i as gradient:
 *   loss_t = max(−A·s_i,t, −A·clip(s_i,t, 1 − ε_low, 1 + ε_high))
 * so a sequence on the clipped branch (A > 0 above, A < 0 below) gives no gradient at all. Aggregated
 * with the run's lossAggregation: its default seq-mean-token-mean is the one GSPO prescribes (the mean
 * over a sequence's tokens of s_i·∇log π is exactly ∇s_i); the validator refuses another for gspo. A
 * TrainSequence is a sequence here (an agent program's segments each get their own ratio).
 */
const gspo: PolicyLossFn = (logp, oldLogp, advantages, mask, o) => {
  const on = tf.greater(mask, 0);
  const adv = tf.broadcastTo(advantages, logp.shape);
  const logRatio = logRatioOf(logp, oldLogp, mask);
  const counts = tf.sum(mask, 1, true); // [B, 1]
  const seqLogRatio = tf.div(tf.sum(logRatio, 1, true), tf.maximum(counts, 1)); // [B, 1], within ±20 as a mean of clamped values
  // value s_i at every position; gradient s_i·∇log π(y_t)
  const tokenLogRatio = tf.add(stopGradient(tf.broadcastTo(seqLogRatio, logp.shape)), tf.sub(logp, stopGradient(logp)));
  const s = tf.exp(masked(tokenLogRatio, mask));
  const unclipped = tf.neg(tf.mul(adv, s));
  const clipped = tf.neg(tf.mul(adv, tf.clipByValue(s, 1 - GSPO_CLIP_LOW, 1 + GSPO_CLIP_HIGH)));
  let perToken: tf.Tensor = tf.maximum(unclipped, clipped);
  if (o.isWeights) perToken = tf.mul(perToken, o.isWeights);
  perToken = masked(perToken, mask);
  const seqRatio = tf.exp(seqLogRatio); // [B, 1], constant for the clip test
  const high = tf.logicalAnd(tf.greater(seqRatio, 1 + GSPO_CLIP_HIGH), tf.greater(adv, 0));
  const low = tf.logicalAnd(tf.less(seqRatio, 1 - GSPO_CLIP_LOW), tf.less(adv, 0));
  const side = tf.add(tf.cast(low, 'float32'), tf.mul(tf.cast(high, 'float32'), 2));
  // a sequence counts once however long it is: its clip test is on s_i and the sign of its advantage
  const trained = tf.cast(tf.greater(counts, 0), 'float32'); // [B, 1]
  const seqClipped = tf.mul(tf.cast(tf.logicalOr(tf.any(high, 1, true), tf.any(low, 1, true)), 'float32'), trained);
  return {
    loss: aggregate(perToken as tf.Tensor2D, mask, o.aggregation, o.normTokens),
    perToken: perToken as tf.Tensor2D,
    ratio: tf.where(on, tf.broadcastTo(seqRatio, logp.shape), tf.onesLike(logp)),
    clipSide: masked(side, mask),
    metrics: {
      sequenceClipFraction: tf.div<tf.Scalar>(tf.sum(seqClipped), tf.maximum(tf.sum(trained), 1)),
      ...driftMetrics(logRatio, mask),
    },
  };
};

/**
 * CISPO (MiniMax-M1, 2025): the clipped importance weight as a constant coefficient of a REINFORCE
 * term, so every token keeps its gradient (a clipped PPO token gives none):
 *   loss_t = −sg[min(r_t, 1 + ε_high)]·A·log π(y_t),   r_t = π/π_old
 * No lower bound: MiniMax sets ε_low large enough never to bind. ε_high is the run's clipHigh (0.28 for
 * a language model, as DAPO's clip-higher; MiniMax tunes only this bound). At r = 1 its gradient is the
 * clipped surrogate's, −A·∇log π. `dualClip` and `clipLow` are not used (the validator refuses a dual clip).
 */
const cispo: PolicyLossFn = (logp, oldLogp, advantages, mask, o) => {
  const on = tf.greater(mask, 0);
  const adv = tf.broadcastTo(advantages, logp.shape);
  const logRatio = logRatioOf(logp, oldLogp, mask);
  const ratio = tf.exp(logRatio);
  const weight = stopGradient(tf.minimum(ratio, 1 + o.clipHigh));
  let perToken: tf.Tensor = tf.neg(tf.mul(tf.mul(weight, adv), masked(logp, mask)));
  if (o.isWeights) perToken = tf.mul(perToken, o.isWeights);
  perToken = masked(perToken, mask);
  const truncated = tf.greater(ratio, 1 + o.clipHigh);
  return {
    loss: aggregate(perToken as tf.Tensor2D, mask, o.aggregation, o.normTokens),
    perToken: perToken as tf.Tensor2D,
    ratio: tf.where(on, ratio, tf.onesLike(ratio)),
    clipSide: masked(tf.mul(tf.cast(truncated, 'float32'), 2), mask),
    metrics: { truncatedFraction: tokenShare(truncated, mask), ...driftMetrics(logRatio, mask) },
  };
};

/** Every policy loss by its `algorithm.policyLoss` name. */
export const POLICY_LOSS_TABLE: Readonly<Record<PolicyLossName, PolicyLossFn>> = { clip, gspo, cispo };

/** The named loss on one batch; its tensors are tidied except those returned. */
export function policyLoss(
  name: PolicyLossName,
  logp: tf.Tensor2D,
  oldLogp: tf.Tensor2D,
  advantages: tf.Tensor2D,
  mask: tf.Tensor2D,
  o: PolicyLossOptions,
): PolicyLossResult {
  // tidy keeps the tensors it finds in the returned object, the metrics map's included
  return tf.tidy(() => POLICY_LOSS_TABLE[name](logp, oldLogp, advantages, mask, o) as unknown as tf.TensorContainer) as unknown as PolicyLossResult;
}
