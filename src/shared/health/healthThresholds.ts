// Every bar the run-health findings (findings.ts) compare against, in one table with the reason beside
// each (the house's { value, reason } cell; not a run setting, so not in the settings table: a bar is
// the same for every run and changing it changes what "healthy" means, which docs/health.md states).
// The reasons quote the runs that set them: the seed 002 defaults (binary-search, table policy, GRPO,
// seed 7, 100 iterations) must raise no warning, and a learning rate of 3 on the same run (entropy
// 1.37 → 0.02 in two iterations) must raise a severe one.
import type { DefaultCell } from '../settingsTable';

export const HEALTH_THRESHOLDS = {
  baselineIterations: {
    value: 3,
    reason:
      'a trend compares the mean of the last 3 iterations with the mean of the first 3: one noisy iteration of 32 episodes moves a share by 3%, a mean of three by less',
  },
  noSignalShare: {
    value: 0.5,
    reason: 'half the groups with equal rewards halves the batch that carries a gradient; the seed 002 defaults keep under it until the task is solved',
  },
  noSignalSevereShare: {
    value: 0.9,
    reason:
      'nine groups in ten with no advantage: the update is mostly the KL term, and an unsolved task stops improving (binary-search with a one-step budget: every group equal, reward 0)',
  },
  noSignalIterations: { value: 3, reason: 'three iterations in a row: one batch of four groups can be all-equal by chance early on' },
  solvedSuccess: {
    value: 0.95,
    reason:
      'groups agree because nearly every episode succeeds: nothing is wrong, the task is too easy now (the seed 002 defaults from iteration ~25): info, not a warning',
  },
  entropyWindow: { value: 5, reason: 'a collapse is a fall within a few iterations; the seed 002 defaults lose 56% of their entropy, but over 30 iterations' },
  entropyFall: {
    value: 0.5,
    reason:
      "half the entropy gone within the window: the healthy default run never loses more than 18% within 5 iterations. Not for SFT, whose cross-entropy loss lowers entropy by design and which learns from demonstrations, not from groups that disagree (npm start's SFT warm start: 2.32 → 0.68 nats within 5 iterations)",
  },
  entropySevereFall: {
    value: 0.8,
    reason:
      'four fifths gone within a few iterations leaves a near-deterministic policy whose groups stop disagreeing (learning rate 3: 98% in two iterations)',
  },
  entropyMinFall: {
    value: 0.1,
    reason:
      "a fall of under 0.1 nats per token starts from a policy already near-deterministic (0.1 nats is about 98% on one token): npm start's GRPO run, warm-started by SFT at 0.046 nats, fell to 0.021, 54% but 0.025 nats; whether its groups still disagree is no-signal's to say. Learning rate 3 falls 1.35 nats",
  },
  entropyFloor: {
    value: 1e-6,
    reason: 'below this the run recorded no entropy (an imported verl run stores 0; a skipped update has none): no fall to measure',
  },
  lengthGrowth: {
    value: 0.5,
    reason: 'generated length up by half from the first iterations: worth a look when the reward did not rise with it (a reward that pays for length)',
  },
  lengthSevereGrowth: { value: 1, reason: 'length doubled: the budget will cut episodes soon if it does not already' },
  cutShare: {
    value: 0.2,
    reason: "one episode in five ended by the context window or the turn cap: its reward says little about the policy's answer",
  },
  cutSevereShare: { value: 0.5, reason: 'half the episodes cut: the run mostly learns from unfinished episodes' },
  cutRise: { value: 0.1, reason: 'the share must have risen by 10 points from the first iterations: a task set that is simply long is not drift' },
  rewardRise: {
    value: 0.1,
    reason: 'reward up by 0.1 (on a 0–1 reward) from the first iterations: enough to ask whether the independent check rose with it',
  },
  hackingGap: {
    value: 0.15,
    reason: 'public tests passing 15 points more often than private ones, more than at the start: the policy fits what the verifier sees',
  },
  hackingSevereGap: { value: 0.3, reason: 'a 30-point gap that grew while the reward rose: the reward no longer measures the task' },
  privateStall: {
    value: 0.02,
    reason: 'private pass rate up by less than 2 points while the reward rose by the rewardRise bar: it stalled',
  },
  privateSolved: {
    value: 0.9,
    reason: 'a private pass rate already at 90% has little room to rise: a reward climbing beside it is not a stall',
  },
  componentShare: {
    value: 0.8,
    reason: "one reward extra carrying 80% of the extras' total magnitude: the composite reward is mostly one term (rewardspy's component dominance)",
  },
  klSlope: {
    value: 0.1,
    reason: 'KL to the reference growing by 0.1 nats per iteration: the seed 002 defaults grow by at most 0.09 at their fastest',
  },
  klSevereSlope: { value: 0.5, reason: 'half a nat per iteration: the policy leaves the reference within a few iterations' },
  klAcceleration: {
    value: 2,
    reason: "the recent increments twice the earlier ones: KL accelerating, not just growing (TRL #6350's KL-acceleration monitor)",
  },
  spikeRatio: {
    value: 3,
    reason: 'three times the median of the earlier iterations: a spike, not the steady clipping a tight ε gives',
  },
  spikeWindow: {
    value: 10,
    reason: 'the median of the 10 iterations before: the level the run had just reached, not its start (and a bounded cost: the worker checks every iteration)',
  },
  clipSpike: {
    value: 0.2,
    reason: 'a fifth of the tokens clipped (or dual-clipped): the update has stepped far from π_old; PPO practice keeps it near 0.1',
  },
  clipSevereSpike: { value: 0.4, reason: 'two fifths clipped: most of the batch contributes no gradient' },
  mismatchJump: {
    value: 0.05,
    reason:
      'a mean |Δ log p| of 0.05 nats between the sampler and the trainer: an importance ratio off by ~5% on every token; the table policy stays under 1e-7',
  },
  mismatchSevere: { value: 0.2, reason: "0.2 nats: the sampled tokens are no longer the trainer's policy (a wrong chat template, a stale engine)" },
  toolTrouble: {
    value: 0.3,
    reason: "three calls in ten of a tool failing or timing out at the end of the run: the tool, not the policy, decides the episodes' fate",
  },
  toolSevereTrouble: { value: 0.6, reason: 'most calls failing: the environment is broken or the policy has lost the call format' },
  toolRise: { value: 0.2, reason: 'risen by 20 points from the first iterations: a tool that always failed this often is a known cost, not trouble' },
  episodes: { value: 3, reason: 'the few episodes that show a finding best: enough to compare, few enough to read' },
} as const satisfies Readonly<Record<string, DefaultCell<number>>>;

/** The bar named `name`. */
export const bar = (name: keyof typeof HEALTH_THRESHOLDS): number => HEALTH_THRESHOLDS[name].value;
