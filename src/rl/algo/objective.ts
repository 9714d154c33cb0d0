// The training objective of one update, as data (`LossSpec`: plain values a resume point or a log can
// hold) and as one function from a batch's tensors to the loss and its parts. Every policy trains
// through this; a new objective is a change here and in the learner, never in a policy, and a new
// policy loss is an entry of policyLosses.ts.
import * as tf from '@tensorflow/tfjs';
import type { Aggregation, KlEstimator, PolicyLossName } from '../../shared/algorithm';
import { aggregate, exactKl, klPenalty, nllLoss, rowEntropy } from './losses';
import { policyLoss } from './policyLosses';

export type LossSpec =
  /** Clipped policy gradient on the advantages + β·KL to the frozen reference (GRPO, Dr. GRPO, RLOO). */
  | {
      readonly kind: 'policy-gradient';
      /** The policy-loss table's entry (policyLosses.ts); absent = clip, PPO's clipped surrogate. */
      readonly policyLoss?: PolicyLossName;
      readonly clipLow: number;
      readonly clipHigh: number;
      readonly dualClip: number;
      readonly klCoef: number;
      readonly klEstimator: KlEstimator;
      readonly aggregation: Aggregation;
      readonly normTokens: number;
      /** Log-probs are taken at the sampling temperature, as the tokens were drawn. */
      readonly temperature: number;
      /** Hand back every trained position's numbers (`ObjectiveParts.perToken`): the learner asks on each sequence's first pass. */
      readonly tokenStats?: boolean;
    }
  /** Negative log-likelihood of the trained positions (SFT on demonstrations, RS-SFT on successes). */
  | { readonly kind: 'nll'; readonly aggregation: Aggregation; readonly normTokens: number; readonly tokenStats?: boolean };

/** Whether the objective needs the reference model's log-probs (and its full rows, for the exact KL). */
export function needsReference(spec: LossSpec): { logprobs: boolean; rows: boolean } {
  const on = spec.kind === 'policy-gradient' && spec.klCoef > 0;
  return { logprobs: on, rows: on && spec.kind === 'policy-gradient' && spec.klEstimator === 'exact' };
}

/** The tensors of one padded batch: [B, T] unless stated. */
export interface ObjectiveInputs {
  /**
   * [B, T, A] log-probs of every position's whole distribution (with gradient); absent for a model that
   * scores its own targets over a large vocabulary, which hands `entropy` instead.
   */
  readonly logRows?: tf.Tensor3D;
  /** [B, T] each position's entropy, when there are no logRows (a constant: entropy is only reported). */
  readonly entropy?: tf.Tensor2D;
  /** log-probs of the targets, picked from logRows (with gradient). */
  readonly logp: tf.Tensor2D;
  readonly mask: tf.Tensor2D;
  /** π_old of the targets (behaviour or recomputed). */
  readonly oldLogp: tf.Tensor2D;
  /** [B, 1] one per trajectory (GRPO), or [B, T] one per position (a teacher's per-token term). */
  readonly advantages: tf.Tensor2D;
  readonly refLogp?: tf.Tensor2D;
  /** [B, T, A], exact KL only. */
  readonly refRows?: tf.Tensor3D;
  /** [B, T] 1 where the target is the row's most likely unit (for token accuracy). */
  readonly argmaxHit: tf.Tensor2D;
  /** [B, T] truncated importance weights π_old/π_behaviour (off-policy correction), when the learner computed them. */
  readonly isWeights?: tf.Tensor2D;
}

/** Scalars of one loss evaluation (kept tensors, read after the gradient is taken). */
export interface ObjectiveParts {
  readonly policyLoss: tf.Scalar;
  readonly kl: tf.Scalar;
  readonly entropy: tf.Scalar;
  /** Share of trained positions a clip held (clip side 1 or 2: low or high; cispo: a truncated weight). */
  readonly clipFraction: tf.Scalar;
  readonly ratioMin: tf.Scalar;
  readonly ratioMax: tf.Scalar;
  readonly tokenAccuracy: tf.Scalar;
  /** The policy loss's own numbers by name (PolicyLossResult.metrics; none for nll). */
  readonly metrics: Readonly<Record<string, tf.Scalar>>;
  /** Per position [B, T], when the spec asks for token statistics (kept tensors, 0 where masked out). */
  readonly perToken?: PerTokenParts;
}

/**
 * What the objective saw at each position, for the inspector's token heat map: the log-prob it trained
 * on, the ratio to π_old and which clip held it, the entropy of the position's distribution, and its
 * KL estimate to the reference (the spec's estimator; absent without a reference).
 */
export interface PerTokenParts {
  readonly logp: tf.Tensor2D;
  readonly ratio: tf.Tensor2D;
  readonly clipSide: tf.Tensor2D;
  readonly entropy: tf.Tensor2D;
  readonly kl?: tf.Tensor2D;
}

/** The loss to minimise for `spec`; `parts` receives its pieces as kept tensors (the caller disposes them). */
export function objectiveLoss(spec: LossSpec, x: ObjectiveInputs, parts?: (p: ObjectiveParts) => void): tf.Scalar {
  const tokens = tf.maximum(tf.sum(x.mask), 1);
  const tokenMean = (v: tf.Tensor2D): tf.Scalar => tf.keep(aggregate(v, x.mask, 'token-mean'));
  const report = (p: Omit<ObjectiveParts, 'entropy' | 'tokenAccuracy' | 'perToken'>, tok?: Omit<PerTokenParts, 'logp' | 'entropy'>): void => {
    const entropy = x.logRows ? rowEntropy(x.logRows) : (x.entropy ?? tf.zerosLike(x.mask));
    const keepMasked = (v: tf.Tensor2D): tf.Tensor2D => tf.keep(tf.where(tf.greater(x.mask, 0), v, tf.zerosLike(v)));
    const perToken: PerTokenParts | undefined = spec.tokenStats
      ? {
          logp: keepMasked(x.logp),
          entropy: keepMasked(entropy),
          ratio: keepMasked(tok?.ratio ?? tf.onesLike(x.mask)),
          clipSide: keepMasked(tok?.clipSide ?? tf.zerosLike(x.mask)),
          ...(tok?.kl ? { kl: keepMasked(tok.kl) } : {}),
        }
      : undefined;
    parts?.({
      ...p,
      entropy: tokenMean(entropy),
      tokenAccuracy: tf.keep(tf.div(tf.sum(tf.mul(x.argmaxHit, x.mask)), tokens)),
      ...(perToken ? { perToken } : {}),
    });
  };
  if (spec.kind === 'nll') {
    const loss = nllLoss(x.logp, x.mask, spec.aggregation, spec.normTokens);
    const zero = (): tf.Scalar => tf.keep(tf.scalar(0));
    report({
      policyLoss: tf.keep(loss.clone()),
      kl: zero(),
      clipFraction: zero(),
      ratioMin: tf.keep(tf.scalar(1)),
      ratioMax: tf.keep(tf.scalar(1)),
      metrics: {},
    });
    return loss;
  }
  const pg = policyLoss(spec.policyLoss ?? 'clip', x.logp, x.oldLogp, x.advantages, x.mask, { ...spec, ...(x.isWeights ? { isWeights: x.isWeights } : {}) });
  let loss: tf.Scalar = pg.loss;
  let kl: tf.Scalar = tf.scalar(0);
  let klPerToken: tf.Tensor2D | undefined;
  if (spec.klCoef > 0) {
    if (spec.klEstimator === 'exact' && !x.logRows)
      throw new Error(
        "objective: the exact KL needs every position's whole distribution (logRows), which this model does not produce; use klEstimator k1, k2 or k3",
      );
    const perToken = spec.klEstimator === 'exact' ? exactKl(x.logRows!, x.refRows!, x.mask) : klPenalty(x.logp, x.refLogp!, spec.klEstimator, x.mask);
    klPerToken = perToken;
    kl = aggregate(perToken, x.mask, spec.aggregation, spec.normTokens);
    loss = tf.add(loss, tf.mul(kl, spec.klCoef));
  }
  const on = tf.greater(x.mask, 0);
  const big = tf.fill(pg.ratio.shape, 1e9);
  report(
    {
      policyLoss: tf.keep(pg.loss.clone()),
      kl: tf.keep(kl.clone()),
      clipFraction: tf.keep(tf.div(tf.sum(tf.mul(tf.cast(tf.logicalAnd(tf.greater(pg.clipSide, 0), tf.less(pg.clipSide, 3)), 'float32'), x.mask)), tokens)),
      ratioMin: tf.keep(tf.min(tf.where(on, pg.ratio, big))),
      ratioMax: tf.keep(tf.max(tf.where(on, pg.ratio, tf.neg(big)))),
      metrics: Object.fromEntries(Object.entries(pg.metrics).map(([k, v]) => [k, tf.keep(v)])),
    },
    { ratio: pg.ratio, clipSide: pg.clipSide, ...(klPerToken ? { kl: klPerToken } : {}) },
  );
  return loss;
}
