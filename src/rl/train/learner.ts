// The learner: everything about an update that is the algorithm's, for every policy. It assigns group
// advantages, decides which trajectories enter the loss (and records why the others do not), shapes
// the advantages, runs the reference pass, cuts the batch into shuffled minibatches for each epoch,
// takes each minibatch's gradient (rl/algo over the policy's weights: passes.ts) and steps the
// optimizer on the learning-rate schedule. The policy only exposes its weights and takes the steps it
// is given (policies/policy.ts).
import * as tf from '@tensorflow/tfjs';
import type { AlgorithmSettings } from '../../shared/algorithm';
import type { MethodName } from '../../shared/runConfig';
import { TRUNCATED_TERMINATIONS, type ExclusionReason, type TokenStats, type Trajectory } from '../../shared/types';
import { groupAdvantages } from '../algo/advantages';
import { needsReference, type LossSpec } from '../algo/objective';
import type { TrainablePolicy } from '../policies/policy';
import { Rng } from '../random';
import type { LossInput, LossStats, TokenColumns, TrainSequence } from '../algo/trainSequence';
import { logprobGap, truncatedImportanceWeights } from '../algo/offPolicy';
import type { TeacherScorer } from '../algo/distill';
import { teacherPass, type TeacherPass } from './teacherPass';
import { joinTokenStats } from './tokenStatsJoin';
import { policyGradients, policyLogprobs } from './passes';
import { lrMultiplier } from './schedule';

export interface LearnerOptions {
  readonly method: MethodName;
  readonly settings: AlgorithmSettings;
  /** SFT: imitate every demonstration, or only those the verifier accepted. */
  readonly imitate: 'all' | 'successful';
  /** Optimizer steps the whole run takes at most (the end of a decay). */
  readonly totalSteps: number;
  readonly seed: number;
  /** The frozen teacher that scores the sampled tokens (method distill, or GRPO with algorithm.teacherWeight > 0). */
  readonly teacher?: TeacherScorer;
}

export interface AdvantageReport {
  /** Groups whose (non-failed) rewards were all equal: every advantage 0. */
  readonly zeroVarianceGroups: number;
  /** Episodes the environment or verifier failed (not the agent's fault): advantage 0, never trained on. */
  readonly envErrors: number;
}

/** What one update did and measured. Means are over optimizer steps. */
export interface UpdateReport {
  readonly loss: number;
  readonly policyLoss: number;
  readonly kl: number;
  /** Share of trained positions a clip held. */
  readonly clipFraction: number;
  /** The policy loss's own metrics by name (rl/algo/policyLosses.ts), means over the steps; empty for nll. */
  readonly lossMetrics: Readonly<Record<string, number>>;
  readonly entropy: number;
  readonly gradNorm: number;
  readonly ratioMin: number;
  readonly ratioMax: number;
  readonly tokenAccuracy: number;
  /**
   * Mean |log π_train − log π_behaviour| over trained positions before any step (policy-gradient
   * objectives): over the whole batch when π_old is recomputed, else over the first minibatch (its
   * gradient pass sees the weights that sampled it, so no extra forward pass is needed).
   */
  readonly logprobMismatch?: number;
  /** Off-policy correction: the mean truncated importance weight, and the share of tokens at the cap. */
  readonly importanceWeightMean?: number;
  readonly importanceTruncated?: number;
  readonly optimizerSteps: number;
  /** Minibatches whose loss or gradient was not finite: their step was skipped. */
  readonly nonFiniteSteps: number;
  /** Trajectories whose positions entered the loss. */
  readonly trainedTrajectories: number;
  /** Trajectories left out, by reason. */
  readonly excluded: Readonly<Partial<Record<ExclusionReason, number>>>;
  /** Sequences cut to the policy's longest (their later positions are not trained). */
  readonly truncatedSequences: number;
  /** Learning rate of the last step. */
  readonly learningRate: number;
  readonly phaseReferenceMs: number;
  readonly phaseUpdateMs: number;
}

export const EMPTY_UPDATE: UpdateReport = {
  loss: 0,
  policyLoss: 0,
  kl: 0,
  clipFraction: 0,
  lossMetrics: {},
  entropy: 0,
  gradNorm: 0,
  ratioMin: 1,
  ratioMax: 1,
  tokenAccuracy: 0,
  optimizerSteps: 0,
  nonFiniteSteps: 0,
  trainedTrajectories: 0,
  excluded: {},
  truncatedSequences: 0,
  learningRate: 0,
  phaseReferenceMs: 0,
  phaseUpdateMs: 0,
};

/** The loss an (algorithm, method) pair trains with, as data. */
export function lossSpecFor(method: MethodName, a: AlgorithmSettings, temperature: number): LossSpec {
  // distillation trains through the same policy-gradient loss, on per-token advantages
  if (method !== 'grpo' && method !== 'distill') return { kind: 'nll', aggregation: a.lossAggregation, normTokens: a.lossNormTokens };
  return {
    kind: 'policy-gradient',
    policyLoss: a.policyLoss,
    clipLow: a.clipLow,
    clipHigh: a.clipHigh,
    dualClip: a.dualClip,
    klCoef: a.klCoef,
    klEstimator: a.klEstimator,
    aggregation: a.lossAggregation,
    normTokens: a.lossNormTokens,
    temperature,
  };
}

/** What a learner carries from one iteration to the next: a resume point stores it. */
export interface LearnerState {
  readonly steps: number;
  readonly shuffle: readonly number[];
}

export class Learner {
  private steps = 0;
  private shuffleRng: Rng;
  readonly spec: LossSpec;

  constructor(
    readonly policy: TrainablePolicy,
    readonly o: LearnerOptions,
  ) {
    this.shuffleRng = Rng.stream(o.seed, 'learner/minibatches');
    this.spec = lossSpecFor(o.method, o.settings, policy.temperature);
    if (this.teacherWeight > 0 && !o.teacher) {
      throw new Error(
        `method ${o.method} with algorithm.teacherWeight ${o.settings.teacherWeight} needs a teacher to score the sampled tokens. Fix: name one (policyOptions.teacher)`,
      );
    }
    if (this.spec.kind === 'policy-gradient' && this.spec.klEstimator === 'exact' && this.spec.klCoef > 0 && policy.vocabularySize > 4096) {
      throw new Error(
        `algorithm.klEstimator "exact" needs the reference's whole distribution at every position, and this policy has ${policy.vocabularySize} units per position. Fix: use klEstimator "k3" (or k1, k2)`,
      );
    }
  }

  /** w of the teacher's per-token term: distill's and GRPO's teacherWeight; 0 for the supervised methods. */
  get teacherWeight(): number {
    return this.o.method === 'distill' || this.o.method === 'grpo' ? this.o.settings.teacherWeight : 0;
  }

  /** Optimizer steps taken so far. */
  get stepsTaken(): number {
    return this.steps;
  }

  get state(): LearnerState {
    return { steps: this.steps, shuffle: this.shuffleRng.state() };
  }

  restore(s: LearnerState): void {
    this.steps = s.steps;
    this.shuffleRng = Rng.fromState(s.shuffle);
  }

  /**
   * Group advantages (stored with each trajectory). An episode the environment failed (`env_error`) is
   * left out of its group's statistics and gets advantage 0: its reward says nothing about the agent.
   */
  assignAdvantages(trajectories: readonly Trajectory[]): AdvantageReport {
    const groups = new Map<number, Trajectory[]>();
    for (const t of trajectories) {
      t.advantage = 0;
      // distillation's advantages are per token (the teacher's term, in update): no group advantage
      if (this.o.method === 'distill') continue;
      if (t.termination === 'env_error') continue;
      let g = groups.get(t.group);
      if (!g) groups.set(t.group, (g = []));
      g.push(t);
    }
    const a = this.o.settings;
    let zeroVarianceGroups = 0;
    for (const group of groups.values()) {
      if (group.length < 2) {
        zeroVarianceGroups += 1;
        continue;
      }
      const r = groupAdvantages(
        group.map((t) => t.outcome.reward),
        { estimator: a.advantageEstimator, std: a.advantageStd, epsilon: a.advantageEpsilon },
      );
      if (r.zeroVariance) zeroVarianceGroups += 1;
      group.forEach((t, i) => (t.advantage = r.advantages[i]!));
    }
    return { zeroVarianceGroups, envErrors: trajectories.filter((t) => t.termination === 'env_error').length };
  }

  /** The advantage a trajectory trains with: negative ones scaled (the stored advantage is the estimator's). */
  shapedAdvantage(t: Trajectory): number {
    if (this.o.method === 'distill') return 0;
    return t.advantage < 0 ? t.advantage * this.o.settings.negativeAdvantageScale : t.advantage;
  }

  /** Why a trajectory does not enter this method's loss, or undefined when it does. `replaced`: groups dynamic sampling replaced. */
  exclusion(t: Trajectory, replaced: ReadonlySet<number> = new Set()): ExclusionReason | undefined {
    if (t.termination === 'env_error') return 'env_error';
    const a = this.o.settings;
    switch (this.o.method) {
      case 'grpo':
        if (replaced.has(t.group)) return 'replaced';
        if (a.overlongFilter && TRUNCATED_TERMINATIONS.has(t.termination)) return 'overlong';
        // with a teacher term every token has an advantage of its own, whatever the group's
        if (a.skipZeroAdvantage && this.teacherWeight === 0 && t.advantage === 0) return 'zero_advantage';
        if (a.skipZeroAdvantage && this.teacherWeight === 0 && this.shapedAdvantage(t) === 0) return 'failure_not_pushed';
        return undefined;
      case 'distill':
        // an episode cut by the context or the turn cap: its tokens were still scored by the teacher, but the filter is asked for
        return a.overlongFilter && TRUNCATED_TERMINATIONS.has(t.termination) ? 'overlong' : undefined;
      case 'rs-sft':
        return t.outcome.success ? undefined : 'unsuccessful';
      case 'sft':
        return this.o.imitate === 'successful' && !t.outcome.success ? 'unsuccessful' : undefined;
    }
  }

  /**
   * One update on an iteration's trajectories (advantages assigned); marks each left-out trajectory
   * with its reason. `replaced`: the groups dynamic sampling replaced by new ones (never trained on).
   */
  async update(trajectories: readonly Trajectory[], replaced: ReadonlySet<number> = new Set()): Promise<UpdateReport> {
    const excluded: Partial<Record<ExclusionReason, number>> = {};
    const exclude = (t: Trajectory, why: ExclusionReason): void => {
      t.excluded = why;
      excluded[why] = (excluded[why] ?? 0) + 1;
    };
    const pg = this.spec.kind === 'policy-gradient';
    let truncated = 0;
    const pending: { seq: TrainSequence; t: Trajectory; segment: number }[] = [];
    const max = this.policy.maxPositions;
    for (const t of trajectories) {
      delete t.tokenStats;
      const why = this.exclusion(t, replaced);
      if (why) {
        exclude(t, why);
        continue;
      }
      const segments = this.policy.sequences ? this.policy.sequences(t) : [this.policy.sequence(t)];
      let kept = 0;
      for (let s of segments) {
        if (!s) continue;
        if (s.targets.length > max) {
          truncated += 1;
          s = {
            inputs: s.inputs.slice(0, max),
            targets: s.targets.slice(0, max),
            mask: s.mask.slice(0, max),
            behaviour: s.behaviour.slice(0, max),
            advantage: s.advantage,
            ...(s.allowed ? { allowed: s.allowed.slice(0, max) } : {}),
          };
        }
        if (!s.mask.some((m) => m === 1)) continue;
        pending.push({ seq: { ...s, advantage: pg ? this.shapedAdvantage(t) : 0 }, t, segment: kept++ });
      }
      if (kept === 0) exclude(t, 'no_trainable_positions');
    }
    const teacher = this.o.teacher
      ? await teacherPass(
          this.o.teacher,
          pending.map((p) => p.seq),
          this.teacherWeight,
          this.policy.temperature,
        )
      : undefined;
    const seqs: TrainSequence[] = [];
    /** Each training sequence's trajectory and its segment there (an agent program's trajectory may have several). */
    const of = new Map<TrainSequence, { t: Trajectory; segment: number; teacher?: TeacherPass['tokens'][number] }>();
    pending.forEach((p, i) => {
      const seq = teacher ? teacher.seqs[i]! : p.seq;
      seqs.push(seq);
      of.set(seq, { t: p.t, segment: p.segment, ...(teacher ? { teacher: teacher.tokens[i]! } : {}) });
    });
    // versions between the oldest turn's sampler and the weights this update starts from (async mode)
    const version = this.policy.version;
    const segmentStats = new Map<Trajectory, TokenStats[]>();
    const report = await this.train(seqs, (seq, stats) => {
      const o = of.get(seq);
      if (!o) return;
      const lag = Math.max(0, version - Math.min(o.t.policyVersion, ...o.t.turns.map((u) => u.policy.policyVersion)));
      const got = segmentStats.get(o.t) ?? [];
      // the teacher's columns follow the same trained positions as the pass's (both over mask 1, in order)
      got[o.segment] = { ...stats, lag, ...(o.teacher ? { teacher: o.teacher.teacher, reverseKl: o.teacher.reverseKl } : {}) };
      segmentStats.set(o.t, got);
    });
    for (const [t, segs] of segmentStats) t.tokenStats = joinTokenStats(segs.filter((p) => p !== undefined));
    const lossMetrics = teacher ? { ...report.lossMetrics, ...teacher.metrics } : report.lossMetrics;
    return { ...report, lossMetrics, excluded, truncatedSequences: truncated };
  }

  /**
   * The update on training sequences (their advantages shaped): reference pass, then epochs × minibatches
   * (each one step). `onTokens` hears each sequence's per-position numbers from its first pass (epoch 0).
   */
  async train(seqs: readonly TrainSequence[], onTokens?: (seq: TrainSequence, stats: TokenStats) => void): Promise<UpdateReport> {
    if (seqs.length === 0) return EMPTY_UPDATE;
    const tRef = Date.now();
    const before = await this.beforeSteps(seqs);
    const phaseReferenceMs = Date.now() - tRef;
    const tUpdate = Date.now();
    const stepsBefore = this.steps;
    let done: StepsDone;
    try {
      done = await this.runSteps(seqs, before.inputs, onTokens);
    } finally {
      // a new version only when the weights changed
      if (this.steps > stepsBefore) this.policy.completeUpdate();
    }
    const times = { phaseReferenceMs, phaseUpdateMs: Date.now() - tUpdate };
    const stats = done.stats;
    const n = stats.length;
    if (n === 0) return { ...EMPTY_UPDATE, trainedTrajectories: seqs.length, nonFiniteSteps: done.nonFinite, ...times };
    const pg = this.spec.kind === 'policy-gradient';
    // the first minibatch's pass ran on the weights that sampled it: without π_old recomputed, its |log-ratio| is the mismatch
    const mismatch = before.mismatch ?? (pg ? stats[0]!.metrics.absLogRatio : undefined);
    const mean = (f: (s: LossStats) => number): number => stats.reduce((acc, s) => acc + f(s), 0) / n;
    // every step runs the same loss, so each reports the same names
    const names = [...new Set(stats.flatMap((s) => Object.keys(s.metrics)))];
    return {
      loss: mean((s) => s.loss),
      policyLoss: mean((s) => s.policyLoss),
      kl: mean((s) => s.kl),
      clipFraction: mean((s) => s.clipFraction),
      lossMetrics: Object.fromEntries(names.map((k) => [k, mean((s) => s.metrics[k] ?? 0)])),
      entropy: mean((s) => s.entropy),
      gradNorm: done.gradNorm / n,
      ratioMin: pg ? Math.min(...stats.map((s) => s.ratioMin)) : 1,
      ratioMax: pg ? Math.max(...stats.map((s) => s.ratioMax)) : 1,
      tokenAccuracy: mean((s) => s.tokenAccuracy),
      ...(mismatch !== undefined ? { logprobMismatch: mismatch } : {}),
      ...(before.importance ? { importanceWeightMean: before.importance.mean, importanceTruncated: before.importance.truncated } : {}),
      optimizerSteps: n,
      nonFiniteSteps: done.nonFinite,
      trainedTrajectories: seqs.length,
      excluded: {},
      truncatedSequences: 0,
      learningRate: done.lr,
      ...times,
    };
  }

  /**
   * Before any step: the reference's log-probs (fixed for the batch) and, when π_old is recomputed, the
   * current ones, which also give the sampler/trainer mismatch over the whole batch and, with the
   * off-policy correction, each token's truncated importance weight.
   */
  private async beforeSteps(
    seqs: readonly TrainSequence[],
  ): Promise<{ inputs: Map<TrainSequence, Omit<LossInput, 'seq'>>; mismatch?: number; importance?: { mean: number; truncated: number } }> {
    const inputs = new Map<TrainSequence, Omit<LossInput, 'seq'>>();
    if (this.spec.kind !== 'policy-gradient') return { inputs };
    const a = this.o.settings;
    const recompute = a.oldLogprobs === 'recompute';
    const need = needsReference(this.spec);
    const temperature = this.policy.temperature;
    const ref = need.logprobs ? await policyLogprobs(this.policy, seqs, { model: 'reference', temperature, rows: need.rows }) : undefined;
    const currents = recompute ? await policyLogprobs(this.policy, seqs, { model: 'current', temperature, rows: false }) : undefined;
    const gap = { sum: 0, tokens: 0 };
    const is = { sum: 0, truncated: 0, tokens: 0 };
    seqs.forEach((s, i) => {
      const cur = currents?.logp[i];
      let isWeight: Float32Array | undefined;
      if (cur) {
        const g = logprobGap(cur, s.behaviour, s.mask);
        gap.sum += g.sum;
        gap.tokens += g.tokens;
        if (a.offPolicyCorrection === 'truncated-is') {
          const w = truncatedImportanceWeights(cur, s.behaviour, s.mask, a.isCap);
          isWeight = w.weights;
          is.sum += w.sum;
          is.truncated += w.truncated;
          is.tokens += w.tokens;
        }
      }
      inputs.set(s, {
        ...(cur ? { old: cur } : {}),
        ...(ref ? { ref: ref.logp[i]! } : {}),
        ...(ref?.rows ? { refRows: ref.rows[i]! } : {}),
        ...(isWeight ? { isWeight } : {}),
      });
    });
    return {
      inputs,
      ...(recompute ? { mismatch: gap.tokens > 0 ? gap.sum / gap.tokens : 0 } : {}),
      ...(is.tokens > 0 ? { importance: { mean: is.sum / is.tokens, truncated: is.truncated / is.tokens } } : {}),
    };
  }

  /** Epochs × shuffled minibatches: each minibatch's gradient and one optimizer step. */
  private async runSteps(
    seqs: readonly TrainSequence[],
    inputs: ReadonlyMap<TrainSequence, Omit<LossInput, 'seq'>>,
    onTokens?: (seq: TrainSequence, stats: TokenStats) => void,
  ): Promise<StepsDone> {
    const done: StepsDone = { stats: [], gradNorm: 0, lr: 0, nonFinite: 0 };
    const first = this.steps;
    // a supervised objective's positions were not sampled by this policy at its temperature (demonstrations
    // carry log-prob 0; RS-SFT scores at temperature 1): no training log-prob before the update is claimed
    const sampled = this.spec.kind === 'policy-gradient';
    // the first epoch's pass of each sequence hands back its per-position numbers (a few [B, T] reads per pass)
    const tokens = (epoch: number): TokenSink | undefined =>
      epoch === 0 && onTokens
        ? (seq, cols) => {
            const stepsBefore = this.steps - first;
            const old = inputs.get(seq)?.old;
            const beforeUpdate = !sampled ? undefined : old ? trainedPositions(old, seq.mask) : stepsBefore === 0 ? cols.logp : undefined;
            onTokens(seq, { stepsBefore, old: old ? 'recomputed' : 'behaviour', lag: 0, ...(beforeUpdate ? { before: beforeUpdate } : {}), ...cols });
          }
        : undefined;
    const size = this.o.settings.minibatchSize > 0 ? this.o.settings.minibatchSize : seqs.length;
    for (let epoch = 0; epoch < this.o.settings.epochs; epoch++) {
      const order = seqs
        .map((s) => ({ s, key: this.shuffleRng.next() }))
        .sort((x, y) => x.key - y.key)
        .map((x) => x.s);
      for (let i = 0; i < order.length; i += size) await this.step(order.slice(i, i + size), inputs, done, tokens(epoch));
    }
    return done;
  }

  /** One minibatch: its gradient, then the step (skipped, and counted, when not finite). */
  private async step(
    mb: readonly TrainSequence[],
    inputs: ReadonlyMap<TrainSequence, Omit<LossInput, 'seq'>>,
    done: StepsDone,
    tokens?: TokenSink,
  ): Promise<void> {
    const { grads, stats } = await policyGradients(
      this.policy,
      mb.map((s): LossInput => ({ seq: s, ...inputs.get(s) })),
      tokens ? { ...this.spec, tokenStats: true } : this.spec,
    );
    // the per-position numbers go to the sink (before the step: those of the weights this pass saw), the scalars on
    const { perSequence, ...st } = stats;
    if (tokens)
      mb.forEach((s, i) => {
        const cols = perSequence?.[i];
        if (cols) tokens(s, cols);
      });
    try {
      if (!Number.isFinite(st.loss)) {
        done.nonFinite += 1; // a NaN or infinite loss: its step is skipped, and counted
        return;
      }
      const stepLr = this.o.settings.learningRate * lrMultiplier(this.steps + 1, this.o.settings, this.o.totalSteps);
      const norm = await this.policy.applyGradients(grads, stepLr);
      if (!Number.isFinite(norm)) {
        done.nonFinite += 1; // the optimizer refused a gradient that is not finite
        return;
      }
      this.steps += 1;
      done.lr = stepLr;
      done.gradNorm += norm;
      done.stats.push(st);
    } finally {
      tf.dispose(grads);
    }
  }
}

/** Hears a sequence's per-position numbers from a pass. */
type TokenSink = (seq: TrainSequence, cols: TokenColumns) => void;

/** An [L] array's values at the trained positions (mask 1), in order. */
function trainedPositions(values: Float32Array, mask: readonly number[]): Float32Array {
  const out: number[] = [];
  mask.forEach((m, t) => m === 1 && out.push(values[t]!));
  return Float32Array.from(out);
}

/** What the optimizer steps of one update did. */
interface StepsDone {
  readonly stats: LossStats[];
  gradNorm: number;
  lr: number;
  nonFinite: number;
}
