// The table policy of seed 002: a trainable logit for each (visible state, action) pair, initialised
// to 0 (uniform), trained with Adam on exact analytic gradients. Its reference is the frozen initial
// table, so the KL term is exact over the whole action distribution.
import type { PolicyStep, Trajectory } from '../../../shared/types';
import { Adam } from '../../algo/adam';
import { clippedSurrogate, dLogpDLogits, entropy, exactKl, logSoftmax } from '../../algo/losses';
import type { TabularSpec } from '../../envs/environment';
import type { Rng } from '../../random';
import type { Objective, Policy, PolicyContext, PolicySample, UpdateStats } from '../policy';

export class TablePolicy implements Policy {
  /** [S·A] row-major logits; row s is state s. */
  readonly logits: Float64Array;
  /** [S·A] frozen reference logits (the initial table). */
  readonly refLogits: Float64Array;
  readonly compute = 'js-float64 (table policy, analytic gradients)';
  private readonly optimizer: Adam;
  private versionCounter = 0;
  private readonly nActions: number;

  constructor(readonly spec: TabularSpec, learningRate: number) {
    this.nActions = spec.actions.length;
    this.logits = new Float64Array(spec.stateCount * this.nActions);
    this.refLogits = new Float64Array(this.logits);
    this.optimizer = new Adam(this.logits.length, { lr: learningRate });
  }

  get version(): number {
    return this.versionCounter;
  }

  private row(params: Float64Array, state: number): Float64Array {
    return params.subarray(state * this.nActions, (state + 1) * this.nActions);
  }

  /** log π(· | state): [A]. */
  logProbs(state: number): Float64Array {
    return logSoftmax(this.row(this.logits, state));
  }

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    return Promise.resolve(
      contexts.map((ctx) => {
        const state = this.spec.stateOf(ctx.observation);
        const logp = this.logProbs(state);
        const probs = logp.map((l) => Math.exp(l));
        const action = rng.categorical(probs);
        const step: PolicyStep = { behaviourLogprob: logp[action] as number, policyVersion: this.versionCounter, stateIndex: state, actionIndex: action };
        return { text: this.spec.actions[action] as string, step };
      }),
    );
  }

  /**
   * Batch loss at the current logits and its exact gradient [S·A]. Each step weighs 1/(T_i · N):
   * mean over a trajectory's T_i steps, then mean over the N trajectories.
   */
  lossAndGradient(batch: readonly Trajectory[], objective: Objective): BatchLoss {
    const grad = new Float64Array(this.logits.length);
    let loss = 0, policyLoss = 0, kl = 0, ent = 0, terms = 0, clipped = 0;
    let ratioMin = Infinity, ratioMax = -Infinity;
    for (const traj of batch) {
      const w = 1 / (traj.turns.length * batch.length);
      for (const turn of traj.turns) {
        const { stateIndex: s, actionIndex: a } = turn.policy;
        if (s === undefined || a === undefined) throw new Error('TablePolicy: turn lacks stateIndex/actionIndex');
        const logp = this.logProbs(s);
        const g = this.row(grad, s);
        const dLogp = dLogpDLogits(logp, a); // [A] ∂ log π(a|s) / ∂ logits[s]
        ent += w * entropy(logp);
        if (objective.kind === 'nll') {
          const nll = -(logp[a] as number);
          loss += w * nll;
          policyLoss += w * nll;
          for (let i = 0; i < g.length; i++) g[i] = (g[i] as number) - w * (dLogp[i] as number);
          continue;
        }
        const term = clippedSurrogate(logp[a] as number, turn.policy.behaviourLogprob, traj.advantage, objective.clipEpsilon);
        terms += 1;
        if (term.clippedHigh || term.clippedLow) clipped += 1;
        ratioMin = Math.min(ratioMin, term.ratio);
        ratioMax = Math.max(ratioMax, term.ratio);
        const k = exactKl(logp, logSoftmax(this.row(this.refLogits, s)));
        kl += w * k.kl;
        policyLoss -= w * term.objective;
        loss += w * (-term.objective + objective.klCoef * k.kl);
        // ∂loss/∂logits = −(∂obj/∂logp) · ∂logp/∂logits + β · ∂KL/∂logits
        for (let i = 0; i < g.length; i++) {
          g[i] = (g[i] as number) + w * (-term.dLogp * (dLogp[i] as number) + objective.klCoef * (k.dLogits[i] as number));
        }
      }
    }
    return { loss, policyLoss, kl, entropy: ent, grad, terms, clipped, ratioMin, ratioMax };
  }

  update(trajectories: readonly Trajectory[], objective: Objective, epochs: number): UpdateStats {
    const batch = trajectories.filter((t) => t.turns.length > 0);
    if (batch.length === 0) throw new Error('TablePolicy.update: empty batch');
    let loss = 0, policyLoss = 0, kl = 0, ent = 0, gradNorm = 0, terms = 0, clipped = 0;
    let ratioMin = Infinity, ratioMax = -Infinity;
    for (let epoch = 0; epoch < epochs; epoch++) {
      const r = this.lossAndGradient(batch, objective);
      let sq = 0;
      for (const g of r.grad) sq += g * g;
      gradNorm += Math.sqrt(sq);
      this.optimizer.apply(this.logits, r.grad);
      loss += r.loss;
      policyLoss += r.policyLoss;
      kl += r.kl;
      ent += r.entropy;
      terms += r.terms;
      clipped += r.clipped;
      ratioMin = Math.min(ratioMin, r.ratioMin);
      ratioMax = Math.max(ratioMax, r.ratioMax);
    }
    this.versionCounter += 1;
    return {
      loss: loss / epochs,
      policyLoss: policyLoss / epochs,
      kl: kl / epochs,
      clipFraction: terms > 0 ? clipped / terms : 0,
      entropy: ent / epochs,
      gradNorm: gradNorm / epochs,
      ratioMin: terms > 0 ? ratioMin : 1,
      ratioMax: terms > 0 ? ratioMax : 1,
      optimizerSteps: epochs,
    };
  }
}

export interface BatchLoss {
  readonly loss: number;
  readonly policyLoss: number;
  readonly kl: number;
  readonly entropy: number;
  /** [S·A] ∂loss/∂logits */
  readonly grad: Float64Array;
  /** Surrogate terms (one per step) and how many took the clipped branch. */
  readonly terms: number;
  readonly clipped: number;
  readonly ratioMin: number;
  readonly ratioMax: number;
}
