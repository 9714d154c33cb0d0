// The top-level run settings as one table (settingsTable.ts): each field's kind, range and meaning, and
// its defaults, one cell per place a default applies (every run, a policy, a policy with a method), each
// cell with its own reason. The RunSettings type is derived from the table; the option sections'
// tables are in optionSpecs.ts, the algorithm's in algorithm.ts.
import type { AlgorithmSettings } from './algorithm';
import type { RewardSettings } from './judgeSettings';
import { ENV_NAMES, METHOD_NAMES, POLICY_NAMES, type EnvName, type PolicyName } from './optionSpecs';
import type { SettingSpecs, SettingsOf } from './settingsTable';

/**
 * The settings every run has, whatever its environment and policy. `base` is seed 002's binary-search
 * experiment on the table policy; a language model's runs take their own cells.
 */
export const RUN_SETTING_SPECS = {
  name: {
    kind: 'string',
    maxLength: 200,
    description: 'Run name shown in lists.',
    defaults: {
      base: { value: '', reason: 'empty = derived from env, method and seed' },
    },
  },
  env: {
    kind: 'enum',
    values: ENV_NAMES,
    description: 'Environment the agent acts in.',
    defaults: {
      base: { value: 'binary-search', reason: 'binary-search is the fully checkable experiment of seed 002' },
    },
  },
  policy: {
    kind: 'enum',
    values: POLICY_NAMES,
    description: 'Policy parameterisation.',
    defaults: {
      base: { value: 'table', reason: 'the table policy makes every probability inspectable' },
    },
  },
  method: {
    kind: 'enum',
    values: METHOD_NAMES,
    description:
      "grpo: group-relative clipped policy gradient (algorithm.* chooses the estimator and any shaping); rs-sft: fine-tune on its own successful samples only; sft: imitate the reference agent's demonstrations; distill: on-policy distillation, the policy's own samples scored token by token by a frozen teacher (policyOptions.teacher), each token's advantage the negated reverse KL log π_teacher − log π_policy.",
    defaults: {
      base: { value: 'grpo', reason: 'GRPO is the method under study; RS-SFT is its control' },
    },
  },
  seed: {
    kind: 'integer',
    min: 0,
    max: 2 ** 31 - 1,
    description: 'Training seed.',
    defaults: {
      base: { value: 7, reason: 'seed 002 reports seeds 7, 19 and 42' },
    },
  },
  evalSeed: {
    kind: 'integer',
    min: 0,
    max: 2 ** 31 - 1,
    description: 'Evaluation seed, independent of the training seed.',
    defaults: {
      base: { value: 20260928, reason: 'fixed so every run is evaluated on the same stream' },
    },
  },
  iterations: {
    kind: 'integer',
    min: 1,
    max: 1_000_000,
    description: 'Training iterations (rollout + update).',
    defaults: {
      base: { value: 100, reason: 'seed 002: 100' },
      transformer: { value: 50, reason: "RL on a warm-started language model: 50 iterations of 32 groups × 8 (the default experiment's GRPO, CHANGELOG)" },
      'transformer/sft': {
        value: 200,
        reason: 'SFT of the calculator protocol: about 800 steps of 16 (notes/calculator-feasibility.md), 200 iterations of 64 demonstrations',
      },
    },
  },
  optimizerSteps: {
    kind: 'integer',
    min: 0,
    max: 100_000_000,
    description:
      "End the run after the iteration in which the learner has taken this many optimizer steps in all, if that comes before `iterations` (0 = run every iteration). A control (RS-SFT, which steps only on iterations with a success) matched to another run's steps and, with a constant learning rate, its summed learning rate.",
    defaults: {
      base: { value: 0, reason: 'off: a run is its iterations' },
    },
  },
  groupsPerIteration: {
    kind: 'integer',
    min: 1,
    max: 10_000,
    description: 'Groups (tasks) sampled per iteration.',
    defaults: {
      base: { value: 4, reason: 'seed 002: 4 groups' },
      transformer: {
        value: 32,
        reason: 'RL on a warm-started language model: 32 groups × 8 per iteration (fewer were too noisy to improve held-out accuracy)',
      },
      'transformer/sft': {
        value: 64,
        reason: 'SFT: 64 demonstrations per iteration, four steps of 16 (algorithm.minibatchSize), each step seeing 16 different tasks',
      },
    },
  },
  groupSize: {
    kind: 'integer',
    min: 1,
    max: 10_000,
    description: 'Trajectories per group (same task); GRPO needs at least 2.',
    defaults: {
      base: { value: 8, reason: 'seed 002: 8; a group needs at least 2 to have a spread' },
      'transformer/sft': { value: 1, reason: 'SFT: one demonstration per task (groups only matter to GRPO), so every step sees 16 different tasks' },
    },
  },
  evalEpisodes: {
    kind: 'integer',
    min: 0,
    max: 1_000_000,
    description:
      'Sampled episodes per evaluation, dealt round-robin over the held-out tasks; greedy decoding runs every task once besides. 0 = no evaluation at all (a warm start whose RL runs evaluate it as their iteration 0).',
    defaults: {
      base: { value: 500, reason: 'seed 002: 500' },
      transformer: { value: 1600, reason: 'pass@8 needs 8 samples of every held-out task (200 tasks: 1,600 episodes)' },
      'transformer/sft': { value: 200, reason: "SFT's evaluations report the sampled and greedy rates: one sample of each of the 200 held-out tasks" },
    },
  },
  evalInterval: {
    kind: 'integer',
    min: 0,
    max: 1_000_000,
    description: 'Also evaluate every N iterations (0 = only before and after training).',
    defaults: {
      base: { value: 0, reason: 'seed 002 evaluates at start and end' },
    },
  },
  evalPassK: {
    kind: 'integer',
    min: 0,
    max: 1000,
    description: 'k of the sampled pass@k every evaluation reports (0 = none); evalEpisodes should give each held-out task at least k samples.',
    defaults: {
      base: { value: 0, reason: 'off for the table: seed 002 reports the success rate alone' },
      transformer: { value: 8, reason: 'a gain in sampled pass@1 with a flat pass@k and greedy is mostly sharpening; all three are reported' },
      'transformer/sft': {
        value: 0,
        reason: 'off for SFT: its evaluations report the sampled and greedy rates; the RL runs that continue from it report pass@k',
      },
    },
  },
  checkpointEvery: {
    kind: 'integer',
    min: 0,
    max: 1_000_000,
    description:
      'Write a resume point (weights, optimizer, KL reference, random generator states, the iteration) every N iterations and when the run is cancelled; 0 = only when cancelled. `agent-rl train --resume RUN` continues from the last one.',
    defaults: {
      base: { value: 10, reason: "a killed run repeats at most 9 iterations; a small model's resume point takes milliseconds" },
    },
  },
  maxInFlight: {
    kind: 'integer',
    min: 0,
    max: 100_000,
    description:
      'Training rollouts on the concurrent schedule: at most this many episodes in flight, an episode whose tool or sandbox call is done joins the next sampling batch at once and a finished one makes room for the next; each episode draws from its own random stream. 0 = lockstep: every live episode sampled together, the next batch waiting for the slowest step (in mode "async", 0 = no bound but the queue\'s).',
    defaults: {
      base: { value: 0, reason: 'lockstep is the measured default; the concurrent schedule pays off when tools are slow and uneven (npm run bench)' },
    },
  },
  mode: {
    kind: 'enum',
    values: ['sync', 'async'],
    description:
      "sync: every iteration samples its groups with the current policy, then updates it (on-policy, exactly reproducible). async: a rollout stream fills a bounded queue of finished groups while the learner takes groupsPerIteration of them per update, each at its own pace, sharing the engines (the stream samples between the learner's steps and fills its tools' waits); samples may be up to maxStaleness versions old, and the algorithm defaults to recomputing π_old with a truncated importance correction. Not reproducible to the episode; no dynamic sampling.",
    defaults: {
      base: { value: 'sync', reason: 'sync is the measured, reproducible default' },
    },
  },
  maxStaleness: {
    kind: 'integer',
    min: 0,
    max: 1000,
    description: 'async: the most policy versions a group may be behind the learner when it is taken; older groups are dropped (counted).',
    defaults: {
      base: { value: 1, reason: 'one version: the rollout may use the weights of the update before, no older' },
    },
  },
  queueGroups: {
    kind: 'integer',
    min: 0,
    max: 100_000,
    description:
      'async: groups queued and in flight at most (the rollout waits for room); 0 = (maxStaleness + 1) × groupsPerIteration. Besides this, a group starts only while it could still be taken within maxStaleness versions.',
    defaults: {
      base: { value: 0, reason: 'as far ahead as the staleness bound lets the rollout run' },
    },
  },
  maxNonFiniteIterations: {
    kind: 'integer',
    min: 1,
    max: 1000,
    description: 'A NaN or infinite loss skips its optimizer step (recorded); this many iterations in a row with one stop the run as failed.',
    defaults: {
      base: { value: 3, reason: 'one bad batch is noise; three in a row mean the run has diverged' },
    },
  },
  maxTurns: {
    kind: 'integer',
    min: 1,
    max: 1000,
    description: 'Agent-loop turn cap, above the environment budget.',
    defaults: {
      base: { value: 16, reason: 'a guard: the environment budget (6 for binary-search) normally ends episodes first' },
    },
  },
} as const satisfies SettingSpecs;

/** The settings every run has, env and policy aside (they choose the option sections' types: RunConfig). */
export interface RunSettings extends Omit<SettingsOf<typeof RUN_SETTING_SPECS>, 'env' | 'policy'> {
  /** The training algorithm's settings (shared/algorithm.ts), defaults resolved per (env, policy, method). */
  algorithm: AlgorithmSettings;
  /** Where the reward comes from besides the environment: a judge model (shared/judgeSettings.ts); {} = the environment's alone. */
  reward: RewardSettings;
}

/** A config on its way through the validator: the choices made, their option sections checked but still plain records. */
export type ConfigDraft = RunSettings & {
  env: EnvName;
  policy: PolicyName;
  envOptions: Record<string, unknown>;
  policyOptions: Record<string, unknown>;
  demonstrations: Record<string, unknown>;
};
