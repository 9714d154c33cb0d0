// The option tables of the environments the seeds define: seed 002's binary-search repair, seed 003's
// calculator and seed 000's code environment.
import type { OptionSpecs } from './fieldSpec';
import { PYTHON_OPTION, SANDBOX_RANGES } from './sandboxOptionSpecs';

/** Seed 002's binary-search repair. */
export const BINARY_SEARCH_OPTION_SPECS = {
  stepBudget: {
    kind: 'integer',
    min: 1,
    max: 100,
    default: 6,
    description: 'Tool calls allowed per episode (finish included).',
    reason: 'seed 002: six-step budget',
  },
} as const satisfies OptionSpecs;

/** Seed 003's calculator tool environment. */
export const CALCULATOR_OPTION_SPECS = {
  maxCalls: {
    kind: 'integer',
    min: 1,
    max: 64,
    default: 10,
    description: 'Tool calls (and malformed turns) allowed before the episode ends.',
    reason: 'a depth-3 expression needs at most 7 calls; 3 spare for repaired mistakes',
  },
  formatWeight: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description: 'Reward for a well-formed final answer, right or wrong (seed 003 uses 0.1).',
    reason:
      "a format bonus makes a tidy guess outrank an honest attempt at the tool that ends malformed, and GRPO then reinforces guessing: from the default experiment's warm start, 30 iterations of plain GRPO gained 0.0 greedy points with 0.1 and 21.5 with 0 (RS-SFT, which only imitates successes, is unaffected)",
  },
  minDepth: {
    kind: 'integer',
    min: 1,
    max: 3,
    default: 1,
    description: 'Smallest expression depth (operations on the longest path).',
    reason: 'depth 1 = one tool call',
  },
  maxDepth: {
    kind: 'integer',
    min: 1,
    max: 3,
    default: 2,
    description: 'Largest expression depth.',
    reason: 'depth ≤ 2 is what a small model learns in minutes here (notes/calculator-feasibility.md)',
  },
  minOperand: { kind: 'integer', min: 0, max: 1_000_000, default: 0, description: 'Smallest literal.', reason: 'digits 0–9 as in the feasibility notes' },
  maxOperand: { kind: 'integer', min: 0, max: 1_000_000, default: 9, description: 'Largest literal.', reason: 'digits 0–9 as in the feasibility notes' },
  trainTasks: {
    kind: 'integer',
    min: 1,
    max: 100_000,
    default: 2000,
    description: 'Distinct training expressions.',
    reason: 'enough that groups rarely repeat',
  },
  heldOutTasks: {
    kind: 'integer',
    min: 1,
    max: 10_000,
    default: 200,
    description: 'Distinct held-out expressions (never trained on; none shares its call plan, up to operand order, with a training one).',
    reason: '200 as in the feasibility notes',
  },
  callCost: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description: 'Reward subtracted per tool call (a per-call cost; malformed turns count too).',
    reason: "off: the reward is seed 003's; a small cost teaches an agent not to call more than it needs",
  },
  formatErrorCost: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description:
      'Reward subtracted per malformed turn (neither a well-formed <call> nor a well-formed <answer>), on top of callCost: a success that stuttered on its way earns less than a clean one (0.1 less at 0.1), so within a group it ranks below it, and a stuttered failure below a clean failure.',
    reason: "off: the reward is seed 003's",
  },
  evaluationSet: {
    kind: 'enum',
    values: ['held-out', 'validation', 'test'],
    default: 'held-out',
    description:
      "What evaluations run on. held-out: the held-out split of the training generator (one call plan in five by a hash). validation and test: heldOutTasks expressions one level deeper than maxDepth (operands as in training), only those whose text as parsed is deeper than every training task's (4–7 calls at the defaults, against at most 3) — validation from the call plans the hash puts on the training side, test from the held-out side, so the two share no call plan; test is verify:distill's test split, written down before its first run.",
    reason: 'a run reports on its held-out split; the deeper expressions are for the learning check that claims a result',
  },
} as const satisfies OptionSpecs;

/** Seed 000's code environment. */
export const CODE_OPTION_SPECS = {
  sandbox: {
    ...SANDBOX_RANGES.sandbox,
    description: 'Isolation level: auto = strongest available; a named level fails the run if it is not available here.',
    reason: 'auto runs everywhere and takes bubblewrap when it is installed',
  },
  python: PYTHON_OPTION,
  timeoutMs: {
    ...SANDBOX_RANGES.timeoutMs,
    description: 'Wall-clock limit per execution (ms).',
    reason: 'small programs finish in well under a second; 5 s catches slow but correct code',
  },
  tailBytes: {
    ...SANDBOX_RANGES.tailBytes,
    description: 'Bytes of stdout and of stderr kept for the observation (the tail).',
    reason: 'a traceback fits; a flood does not reach the model',
  },
  outputCapBytes: {
    ...SANDBOX_RANGES.outputCapBytes,
    description: 'Output after which the program is killed.',
    reason: '1 MB is far above any task and bounds the cost of a flood',
  },
  maxExecutions: {
    kind: 'integer',
    min: 1,
    max: 100,
    default: 4,
    description: 'execute_code turns (and malformed turns) per episode.',
    reason: 'room to fail, read the error and fix twice',
  },
  poolSize: {
    ...SANDBOX_RANGES.poolSize,
    description: 'Warm interpreter servers (parallel executions).',
    reason: 'one per core on the 2-core machines this runs on',
  },
  taskSet: {
    kind: 'enum',
    values: ['functions', 'formulas', 'formula-shapes'],
    default: 'functions',
    description:
      "functions: 65 hand-written function tasks (seed 000's three among them); formulas: generated one-line f(x) tasks of five forms, learnable by a small model trained here; formula-shapes: the same kind of task over 90-odd formula shapes (every shape of up to four terms but the new-families and test families'), so that a model learns to write any formula, not to recall five.",
    reason: 'the hand-written tasks are the benchmark; formulas are the learning check',
  },
  evaluationSet: {
    kind: 'enum',
    values: ['held-out', 'new-families', 'test'],
    default: 'held-out',
    description:
      "What evaluations run on. held-out: the task set's held-out split (for formulas, one function in four by a hash of its values; looked at while designing). Formulas only — new-families: four formula families no training task has, 117 tasks, a validation split for designing; test: four other such families, 158 tasks, verify:seed000's test split, written down before its first run.",
    reason: 'a run reports on its held-out split; the test split is for the learning check that claims a result',
  },
} as const satisfies OptionSpecs;
