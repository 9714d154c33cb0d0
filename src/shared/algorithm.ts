// The training algorithm's settings: typed fields of the run config (`algorithm.*`), each with what it
// trades, and its defaults as a settings table (settingsTable.ts): one cell per place a default
// applies, each with its reason, so the schema, `agent-rl train --help`, the reference page and the
// validator all show the value a run will use and why. Shared by every runtime (no Node built-ins):
// the validator, the JSON schema, the CLI, the learner and the views that label results.
import { resolveDefaults, type SettingSpecs, type SettingsOf } from './settingsTable';

export const ADVANTAGE_ESTIMATORS = ['grpo', 'dr-grpo', 'rloo'] as const;
export type AdvantageEstimator = (typeof ADVANTAGE_ESTIMATORS)[number];
export const STD_MODES = ['population', 'sample'] as const;
export type StdMode = (typeof STD_MODES)[number];
export const KL_ESTIMATORS = ['k1', 'k2', 'k3', 'exact'] as const;
export type KlEstimator = (typeof KL_ESTIMATORS)[number];
export const AGGREGATIONS = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];
export const LR_SCHEDULES = ['constant', 'linear', 'cosine'] as const;
export type LrSchedule = (typeof LR_SCHEDULES)[number];
export const OLD_LOGPROBS = ['behaviour', 'recompute'] as const;
export type OldLogprobs = (typeof OLD_LOGPROBS)[number];
export const OFF_POLICY_CORRECTIONS = ['none', 'truncated-is'] as const;
export type OffPolicyCorrection = (typeof OFF_POLICY_CORRECTIONS)[number];
export const POLICY_LOSSES = ['clip', 'gspo', 'cispo'] as const;
export type PolicyLossName = (typeof POLICY_LOSSES)[number];

/**
 * The algorithm's settings table: what each setting does, what it trades, its range, and its defaults.
 * `base` is seed 002's (the table policy); a cell under a policy, a policy/method or an
 * env/policy/method replaces it for those runs, and says why.
 */
export const ALGORITHM_SPECS = {
  advantageEstimator: {
    kind: 'enum',
    values: ADVANTAGE_ESTIMATORS,
    description: "How a group's rewards become advantages: grpo (r − mean) / (std + ε); dr-grpo r − mean (no std); rloo r − mean of the others.",
    trade:
      "grpo gives every informative group the same weight however small its reward gap (a 0.02 difference counts like a 1.0 one); dr-grpo and rloo keep the gap's size, so groups with small differences push less",
    defaults: {
      base: { value: 'grpo', reason: 'GRPO is the method under study (DeepSeekMath; seed 002)' },
    },
  },
  advantageStd: {
    kind: 'enum',
    values: STD_MODES,
    description: "grpo only: the group's standard deviation over the population (÷G) or the sample (÷(G−1)).",
    trade: 'the sample std is larger for small groups, so advantages are smaller; no effect on their signs',
    defaults: {
      base: { value: 'population', reason: 'seed 002 uses the population std' },
    },
  },
  advantageEpsilon: {
    kind: 'number',
    min: 0,
    max: 1,
    description: 'grpo only: added to the std before dividing.',
    trade: 'larger damps groups with a small spread; a group with no spread gets advantage 0 whatever its value',
    defaults: {
      base: { value: 0, reason: 'seed 002 divides by the std alone (a group without spread is detected exactly, not by an epsilon); verl adds 1e-6' },
    },
  },
  negativeAdvantageScale: {
    kind: 'number',
    min: 0,
    max: 1,
    description:
      'Multiplies negative advantages in the loss (stored advantages are unchanged). 1 = plain GRPO; 0 = positive-only reinforcement (failures are not pushed down); results are then labelled so.',
    trade:
      "below 1 a failure's gradient, often on text that has already derailed, stops dominating, but the policy is no longer pushed away from what fails: it only imitates its successes (close to RS-SFT)",
    defaults: {
      base: { value: 1, reason: '1 is the algorithm as published' },
    },
  },
  skipZeroAdvantage: {
    kind: 'boolean',
    description: "Leave trajectories with advantage 0 (their group's rewards were all equal) out of the update.",
    trade:
      'saves a forward and backward pass per such trajectory; keeping them lets the KL term act on them (seed 002: "even an all-correct group still gets the KL gradient")',
    defaults: {
      base: { value: false, reason: 'seed 002 keeps them: "even an all-correct group still gets the KL gradient"' },
      transformer: { value: true, reason: 'a language model skips them: they carry only the KL term, and each costs a forward and a backward pass' },
    },
  },
  dynamicSampling: {
    kind: 'integer',
    min: 0,
    max: 100,
    description:
      'DAPO\'s dynamic sampling: up to this many extra rollout rounds per iteration replace groups whose rewards were all equal, until the batch has groupsPerIteration informative groups; 0 = off. Results are labelled "+ dynamic sampling".',
    trade: 'every update sees a full batch of informative groups, at the cost of more sampled episodes per iteration (counted in the metrics)',
    defaults: {
      base: { value: 0, reason: 'off: the plain algorithm' },
    },
  },
  overlongFilter: {
    kind: 'boolean',
    description: "DAPO's overlong filtering: leave episodes cut by the context window or the turn cap out of the loss (they are stored and counted).",
    trade: 'a truncated episode is not punished for being unfinished, which keeps long reasoning from being discouraged; it also gets no push at all',
    defaults: {
      base: { value: false, reason: 'off: the plain algorithm' },
    },
  },
  learningRate: {
    kind: 'number',
    min: 0,
    max: 10,
    minExclusive: true,
    description: 'Adam learning rate (the peak, after warm-up).',
    trade: 'larger learns faster and undoes more of a warm start; RL on a warm-started model wants a far smaller step than SFT',
    defaults: {
      base: { value: 0.08, reason: "seed 002: Adam 0.08 on the table's logits" },
      transformer: { value: 2e-4, reason: "a language model: a step 400× smaller than the table's (larger ones undid the warm start)" },
      'transformer/sft': { value: 3e-3, reason: 'SFT of the calculator protocol: Adam 3e-3 (notes/calculator-feasibility.md)' },
      'code/transformer/grpo': {
        value: 5e-4,
        reason: 'code GRPO: 5e-4 with 5 warm-up steps gained 8.5 points in 30 iterations where 2e-4 with 20 gained 5.0 (CHANGELOG)',
      },
    },
  },
  warmupSteps: {
    kind: 'integer',
    min: 0,
    max: 1_000_000,
    description: 'Linear learning-rate warm-up, in optimizer steps.',
    trade:
      "a fresh Adam's first steps move every weight by the full learning rate whatever the gradient's size; warm-up avoids that at the cost of slower first steps",
    defaults: {
      base: { value: 0, reason: "seed 002: the table's full step from the first iteration" },
      transformer: { value: 20, reason: 'one GRPO step at 3e-3 without warm-up took the calculator from 35% to 9% (earlier measurement)' },
      'code/transformer/grpo': {
        value: 5,
        reason: 'code GRPO: 5 warm-up steps at 5e-4 gained 8.5 points in 30 iterations where 20 at 2e-4 gained 5.0 (CHANGELOG)',
      },
    },
  },
  lrSchedule: {
    kind: 'enum',
    values: LR_SCHEDULES,
    description: "After warm-up: constant, or a linear or cosine decay to minLrRatio × learningRate at the run's last optimizer step.",
    trade: 'decay settles a supervised fit; RL keeps a constant step so late iterations still learn from new samples',
    defaults: {
      base: { value: 'constant', reason: 'RL keeps a constant step, so late iterations still learn from new samples' },
      'transformer/sft': {
        value: 'linear',
        reason: 'SFT of the calculator protocol: a linear decay to minLrRatio settles the fit (notes/calculator-feasibility.md)',
      },
    },
  },
  minLrRatio: {
    kind: 'number',
    min: 0,
    max: 1,
    description: 'Where a linear or cosine decay ends, as a share of learningRate.',
    trade: 'lower ends with smaller steps',
    defaults: {
      base: { value: 0.1, reason: '10%, as before' },
    },
  },
  epochs: {
    kind: 'integer',
    min: 1,
    max: 100,
    description: "Passes over each iteration's batch.",
    trade: 'more passes use each sample more, and move the policy further from the one that sampled it (the ratio clip then bites)',
    defaults: {
      base: { value: 2, reason: 'seed 002: 2 passes over each batch' },
      transformer: { value: 1, reason: 'a language model: one pass, in four steps of 64 (minibatchSize), so the policy stays near the one that sampled' },
    },
  },
  minibatchSize: {
    kind: 'integer',
    min: 0,
    max: 100_000,
    description: 'Trajectories per optimizer step; 0 = the whole batch in one step.',
    trade: 'smaller takes more, noisier steps per batch; larger averages more episodes per step',
    defaults: {
      base: { value: 0, reason: 'seed 002: the table takes the whole batch in one step' },
      transformer: { value: 64, reason: 'a language model: four steps per batch of 32 groups × 8' },
      'transformer/sft': { value: 16, reason: 'SFT of the calculator protocol: steps of 16 (notes/calculator-feasibility.md)' },
    },
  },
  clipLow: {
    kind: 'number',
    min: 0,
    max: 1,
    minExclusive: true,
    description: 'Lower ratio clip ε_low: a token whose ratio π/π_old fell below 1 − ε_low with a negative advantage stops being pushed down.',
    trade: 'smaller keeps each update closer to the sampling policy',
    defaults: {
      base: { value: 0.2, reason: 'PPO and seed 002: 0.2' },
    },
  },
  clipHigh: {
    kind: 'number',
    min: 0,
    max: 10,
    minExclusive: true,
    description: 'Upper ratio clip ε_high: a token whose ratio rose above 1 + ε_high with a positive advantage stops being pushed up.',
    trade: "larger lets rare (exploratory) tokens gain more per update (DAPO's clip-higher); smaller is more conservative",
    defaults: {
      base: { value: 0.2, reason: "the table: seed 002's one ε, so it follows clipLow unless given" },
      transformer: { value: 0.28, reason: "a language model: DAPO's clip-higher, so rare (exploratory) tokens can gain more per update" },
    },
  },
  dualClip: {
    kind: 'number',
    min: 0,
    max: 100,
    description: "Dual-clip PPO's bound c (> 1): a token with a negative advantage contributes at most c·|A| to the loss, however large its ratio; 0 = off.",
    trade: 'bounds the push on tokens whose probability already rose a lot since sampling (stale or off-policy data); off keeps the plain clipped objective',
    defaults: {
      base: { value: 0, reason: 'off: the plain objective (verl uses 3 when on)' },
    },
  },
  policyLoss: {
    kind: 'enum',
    values: POLICY_LOSSES,
    description:
      "GRPO's policy loss (rl/algo/policyLosses.ts): clip = PPO's clipped token ratio (clipLow, clipHigh, dualClip); gspo = GSPO's sequence ratio (the geometric mean of the token ratios), clipped per sequence to [1 − 3e-4, 1 + 4e-4]; cispo = CISPO's REINFORCE term weighted by the token ratio truncated at 1 + clipHigh, as a constant.",
    trade:
      "clip drops the gradient of every token on a clipped branch; gspo clips whole sequences, matching a sequence-level reward and damping one token's noisy ratio (it needs lossAggregation seq-mean-token-mean and no dual clip); cispo keeps every token's gradient and only bounds its weight, so rare tokens whose ratio jumps still learn (no lower bound; no dual clip)",
    defaults: {
      base: { value: 'clip', reason: 'clip is the algorithm the defaults were measured with (seed 002, DAPO clip-higher for a language model)' },
    },
  },
  klCoef: {
    kind: 'number',
    min: 0,
    max: 100,
    description: 'Coefficient β of the KL penalty to the frozen reference (the initial or warm-started policy) in the loss; RL methods only.',
    trade: 'larger keeps the policy closer to its start (less drift, less forgetting, less learning)',
    defaults: {
      base: { value: 0.02, reason: 'seed 002: 0.02' },
      'table/rs-sft': { value: 0, reason: 'RS-SFT fine-tunes on its own successes by negative log-likelihood: no KL term' },
      'transformer/rs-sft': { value: 0, reason: 'RS-SFT fine-tunes on its own successes by negative log-likelihood, from a warm start: no KL term' },
      'transformer/sft': { value: 0, reason: 'SFT imitates demonstrations by negative log-likelihood: no KL term' },
      'transformer/distill': {
        value: 0,
        reason:
          'on-policy distillation: the reverse KL to the teacher is the objective, which anchors the policy; a second KL to the start would pull it back from the teacher',
      },
    },
  },
  klEstimator: {
    kind: 'enum',
    values: KL_ESTIMATORS,
    description:
      'Per-token KL(π‖π_ref) estimator, with d = log π − log π_ref (clamped to ±20): k1 = d; k2 = d²/2; k3 = e^(−d) + d − 1 (clamped to ±10); exact = the sum over the whole vocabulary or action set.',
    trade:
      "as a loss, k1's gradient is 0 in expectation (it does not regularise); k2's expected gradient is that of KL(π‖π_ref); k3's is that of the reverse direction KL(π_ref‖π), with low variance; exact costs the reference's full distribution (small vocabularies only)",
    defaults: {
      base: { value: 'exact', reason: "the table: exact over seed 002's six actions" },
      transformer: { value: 'k3', reason: "a language model: k3 (the GRPO paper); exact would read the reference's whole vocabulary" },
    },
  },
  lossAggregation: {
    kind: 'enum',
    values: AGGREGATIONS,
    description:
      "How per-token losses become one number: token-mean over all generated tokens; seq-mean-token-mean (each trajectory's mean, then the mean over trajectories); seq-mean-token-sum (sums, then mean); seq-mean-token-sum-norm (sums ÷ lossNormTokens, then mean: Dr. GRPO).",
    trade:
      'seq-mean-token-mean weighs every trajectory equally (short ones get more per token); token-mean weighs every token equally (long trajectories dominate); the sum modes make long trajectories push harder',
    defaults: {
      base: { value: 'seq-mean-token-mean', reason: 'seed 000 and seed 002: per-trajectory mean, then batch mean' },
      'transformer/sft': {
        value: 'token-mean',
        reason:
          "SFT: every demonstrated token weighs alike, as TRL's and verl's SFT trainers; per-episode means let a short answer's tokens outweigh a long one's, and verify:own-agent's first warm start learnt to answer before calling its tool from that 19-to-1 weight",
      },
    },
  },
  lossNormTokens: {
    kind: 'integer',
    min: 1,
    max: 10_000_000,
    description: "seq-mean-token-sum-norm only: the constant a trajectory's token sum is divided by (Dr. GRPO: the generation budget).",
    trade: 'a constant keeps every micro-batch and shard on the same scale, unlike dividing by the padded length',
    defaults: {
      base: { value: 256, reason: "about a calculator or code episode's generated tokens at most" },
    },
  },
  oldLogprobs: {
    kind: 'enum',
    values: OLD_LOGPROBS,
    description:
      "π_old in the ratio: behaviour = the log-probs recorded when the tokens were sampled; recompute = the training model's log-probs of the same tokens before the first step (what verl does when the sampler is another engine).",
    trade:
      'recompute costs one more forward pass and hides any sampler/trainer mismatch from the ratio (the mismatch is still measured); behaviour keeps the ratio exact with respect to what was sampled',
    defaults: {
      base: { value: 'behaviour', reason: 'one engine samples and trains here: the behaviour log-probs are exact' },
    },
  },
  offPolicyCorrection: {
    kind: 'enum',
    values: OFF_POLICY_CORRECTIONS,
    description:
      'For tokens sampled by an older policy (mode "async"): truncated-is weighs each token\'s loss by min(π_old/π_behaviour, isCap), with π_old recomputed (oldLogprobs "recompute"); none trusts the clip alone.',
    trade:
      'the correction removes most of the bias of stale samples at the price of variance, which the cap bounds; on fresh (synchronous) samples every weight is 1',
    defaults: {
      base: { value: 'none', reason: 'synchronous runs sample on-policy: nothing to correct' },
    },
  },
  isCap: {
    kind: 'number',
    min: 1,
    max: 100,
    description: 'truncated-is only: the largest importance weight a token gets.',
    trade: 'lower trades bias for variance',
    defaults: {
      base: { value: 2, reason: '2, as truncated importance sampling is commonly run' },
    },
  },
  teacherWeight: {
    kind: 'number',
    min: 0,
    max: 100,
    description:
      "The teacher's per-token term w·(log π_teacher − log π_student) at each sampled token (policyOptions.teacher): method distill trains on it alone; on a GRPO run it is added to every token's GRPO advantage. 0 = no teacher term.",
    trade:
      'larger follows the teacher more and the reward less; the term is in nats per token while a GRPO advantage is about ±1 per episode, so w near 1 lets a teacher that disagrees by a nat outweigh the reward on that token',
    defaults: {
      base: { value: 0, reason: 'no teacher: the reward alone trains' },
      'transformer/distill': {
        value: 1,
        reason: "on-policy distillation: the negated reverse KL is the whole advantage (Tinker cookbook's kl_penalty_coef 1)",
      },
    },
  },
  weightDecay: {
    kind: 'number',
    min: 0,
    max: 1,
    description: 'AdamW decoupled weight decay (matrices only).',
    trade: 'shrinks weights towards 0 each step',
    defaults: {
      base: { value: 0, reason: 'short runs; the KL term already regularises' },
    },
  },
  maxGradNorm: {
    kind: 'number',
    min: 0,
    max: 1e6,
    description: 'Global gradient-norm clip; 0 = off.',
    trade: 'bounds a step after a rare huge ratio or loss; too small slows every step',
    defaults: {
      base: { value: 0, reason: 'the table: off (seed 002: exact gradients, no clip)' },
      transformer: { value: 1, reason: 'a language model: 1 bounds the step after a rare huge ratio or loss' },
    },
  },
} as const satisfies SettingSpecs;

/** A run's algorithm settings, every one present: the type is the table's (a key, its type and its defaults written once). */
export interface AlgorithmSettings extends SettingsOf<typeof ALGORITHM_SPECS> {}

/** The defaults a run of (env, policy, method) uses for every algorithm field: each from its most specific cell. */
export function algorithmDefaults(env: string, policy: string, method: string): AlgorithmSettings {
  return resolveDefaults(ALGORITHM_SPECS, env, policy, method);
}

/**
 * The honest name of what a run trains with, for every place results are printed: the method, and
 * any setting that makes it something other than the plain algorithm. Plain GRPO clips at 0.2/0.2 and
 * keeps every group in the loss; another policy loss (GSPO, CISPO: it names the run, with the advantage
 * estimator beside it when that is not GRPO's), clip-higher, another clip range, zero-advantage
 * filtering (which drops the groups whose episodes all scored alike, and so the KL term on them) and
 * truncated importance sampling (asynchronous runs, or another engine sampling) are named, and so is a
 * teacher: distillation names its reverse KL (and a weight other than 1), a GRPO run its teacher term.
 */
export function methodLabel(method: string, a: Partial<AlgorithmSettings> | undefined): string {
  if (method === 'sft') return 'SFT';
  if (method === 'rs-sft') return 'RS-SFT';
  const distill = method === 'distill';
  if (!distill && method !== 'grpo') return method;
  const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);
  const teacherWeight = num(a?.teacherWeight) ?? 0;
  const estimator = a?.advantageEstimator === 'dr-grpo' ? 'Dr. GRPO' : a?.advantageEstimator === 'rloo' ? 'RLOO' : 'GRPO';
  // stored configs are untrusted: only a known name counts as a loss, only a finite number as a scale or a clip
  const loss = a?.policyLoss === 'gspo' ? 'GSPO' : a?.policyLoss === 'cispo' ? 'CISPO' : undefined;
  // distillation has no group advantages: no estimator, no scaling of negative ones, no group filters
  const base = distill
    ? `on-policy distillation (reverse KL to the teacher${teacherWeight !== 1 ? ` ×${teacherWeight}` : ''})${loss ? ` with the ${loss} loss` : ''}`
    : loss === undefined
      ? estimator
      : estimator === 'GRPO'
        ? loss
        : `${loss} with ${estimator} advantages`;
  const scale = distill ? 1 : (num(a?.negativeAdvantageScale) ?? 1);
  const parts = [scale === 0 ? `positive-only ${base} (failures not pushed down)` : scale < 1 ? `${base} (negative advantages × ${scale})` : base];
  const low = num(a?.clipLow);
  const high = num(a?.clipHigh) ?? low;
  // GSPO clips its sequence ratio at its own fixed range; CISPO bounds its weight by clipHigh alone
  if (loss === 'CISPO') {
    if (high !== undefined) parts.push(`(weights truncated at 1 + ${high})`);
  } else if (loss === undefined && low !== undefined && high !== undefined) {
    if (high > low) parts.push(`+ clip-higher ${low}/${high}`);
    else if (low !== 0.2 || high !== 0.2) parts.push(`(clip ${low}/${high})`);
  }
  if (!distill) {
    // with a teacher term no trajectory is filtered for its group's advantage (learner.ts)
    if (a?.skipZeroAdvantage === true && teacherWeight === 0) parts.push('+ zero-advantage filtering');
    if (typeof a?.dynamicSampling === 'number' && a.dynamicSampling > 0) parts.push('+ dynamic sampling');
  }
  if (a?.overlongFilter === true) parts.push('+ overlong filter');
  if (a?.offPolicyCorrection === 'truncated-is') parts.push(`+ truncated IS (cap ${num(a.isCap) ?? 2})`);
  if (!distill && teacherWeight > 0) parts.push(`+ teacher term ×${teacherWeight}`);
  const klCoef = num(a?.klCoef);
  if (distill && klCoef !== undefined && klCoef > 0) parts.push(`+ KL to the start ×${klCoef}`);
  return parts.join(' ');
}

/**
 * The algorithm settings of a stored run's config, whichever release wrote it: the `algorithm` section,
 * or (runs stored before it existed) the top-level and policyOptions keys it replaced.
 */
export function storedAlgorithm(config: unknown): Partial<AlgorithmSettings> {
  if (typeof config !== 'object' || config === null) return {};
  const c = config as Record<string, unknown>;
  if (typeof c.algorithm === 'object' && c.algorithm !== null) return c.algorithm;
  const po = (typeof c.policyOptions === 'object' && c.policyOptions !== null ? c.policyOptions : {}) as Record<string, unknown>;
  const legacy: Record<string, unknown> = {
    learningRate: c.learningRate,
    clipLow: c.clipEpsilon,
    klCoef: c.klCoef,
    epochs: c.epochs,
    advantageStd: c.advantageStd,
    // before the section, minibatchSize 0 meant a quarter of the batch (unknown here) and "seq-sum" was seq-mean-token-sum
    clipHigh: po.clipHigh,
    klEstimator: po.klEstimator,
    lossAggregation: po.aggregation === 'seq-sum' ? 'seq-mean-token-sum' : po.aggregation,
    minibatchSize: po.minibatchSize === 0 ? undefined : po.minibatchSize,
    negativeAdvantageScale: po.negativeAdvantageScale,
    skipZeroAdvantage: po.skipZeroAdvantage,
    warmupSteps: po.warmupSteps,
  };
  return Object.fromEntries(Object.entries(legacy).filter(([, v]) => v !== undefined));
}

/** One line of the settings that matter most when comparing runs. */
export function algorithmSummary(a: Partial<AlgorithmSettings>): string {
  const parts: string[] = [];
  if (a.advantageEstimator && a.advantageEstimator !== 'grpo') parts.push(`${a.advantageEstimator} advantages`);
  if (a.learningRate !== undefined) parts.push(`lr ${a.learningRate}`);
  if (a.clipLow !== undefined) parts.push(`clip ${a.clipLow}${a.clipHigh !== undefined && a.clipHigh !== a.clipLow ? `/${a.clipHigh}` : ''}`);
  if (a.klCoef !== undefined) parts.push(`KL ${a.klCoef}${a.klCoef > 0 && a.klEstimator ? ` (${a.klEstimator})` : ''}`);
  if (a.epochs !== undefined) parts.push(`${a.epochs} epoch${a.epochs === 1 ? '' : 's'}`);
  if (a.minibatchSize !== undefined) parts.push(a.minibatchSize > 0 ? `minibatch ${a.minibatchSize}` : 'whole-batch steps');
  if (a.advantageStd !== undefined) parts.push(`${a.advantageStd} std`);
  return parts.join(', ');
}
