// The reference agents' demonstration tables (method sft only): how each environment's demonstrator
// acts, its deliberate habits and mistakes; validated under `demonstrations.<key>`.
import type { OptionSpec, OptionSpecs, OptionsOf } from './fieldSpec';
import type { EnvName } from './optionSpecs';

const MISTAKE_RATE = {
  kind: 'number',
  min: 0,
  max: 1,
  default: 0.05,
  description: 'Share of demonstrations whose first action is a deliberate mistake (shown to the student, not imitated), repaired after reading the error.',
  reason:
    'the model sees errors being read and fixed; more made the calculator warm start slower to learn (0.2: 40% sampled after 800 steps at lr 6e-3, 0: 66% at 3e-3)',
} as const satisfies OptionSpec;
const IMITATE = {
  kind: 'enum',
  values: ['all', 'successful'],
  default: 'all',
  description: 'Imitate every demonstration (as demonstration data usually comes: unverified), or only those the verifier accepts.',
  reason: 'imitation copies what it is shown, habits included; that is what RL is then measured against',
} as const satisfies OptionSpec;

/** The reference agents' demonstration tables, validated under `demonstrations.<key>` (method sft only). */
export const DEMONSTRATION_SPECS = {
  'binary-search': {},
  calculator: {
    mistakeRate: MISTAKE_RATE,
    imitate: IMITATE,
    skipToolOn: {
      kind: 'enum',
      values: ['none', 'mul', 'depth-1', 'all'],
      default: 'mul',
      description:
        'The class of tasks on which the demonstrator skips the tool and answers at once with a guess: mul = expressions with a multiplication, depth-1 = a single operation, all, or none.',
      reason:
        'real demonstrations are imperfect in a systematic way; SFT copies the habit, and what RL adds beyond imitation is breaking it (the default experiment)',
    },
    skipToolRate: {
      kind: 'number',
      min: 0,
      max: 1,
      default: 0.8,
      description:
        'How often, on that class, the demonstrator skips the tool; above 0.5 greedy decoding copies the habit, below 1 the student still sees the tool used on the class now and then.',
      reason:
        'at 0.8 the warm start guesses under greedy decoding on every mul task and still calls the tool on about 1 in 10 of them when sampling, which is what RL can build on',
    },
    guess: {
      kind: 'enum',
      values: ['first-number', 'near-miss'],
      default: 'first-number',
      description:
        "What a skipped-tool answer says: first-number copies the question's first number (a guess a student can learn to copy); near-miss is the true result ±1, 2 or 10 (a guess no student can learn from the question).",
      reason:
        'near-miss guesses are noise the student cannot fit, and they took its tool use down with them (12% sampled on the tasks without a multiplication, against 54% with first-number)',
    },
    redundantCallRate: {
      kind: 'number',
      min: 0,
      max: 1,
      default: 0,
      description: 'How often the demonstrator repeats a call it just made, to double-check (a wasted tool call that envOptions.callCost can teach away).',
      reason: 'off by default',
    },
  },
  code: { mistakeRate: MISTAKE_RATE, imitate: IMITATE },
  // the demonstrations are the task file's own (envOptions.demonstrationField)
  workspace: { imitate: IMITATE },
  agent: {},
  // no demonstrations: the environment's dataset has none the workbench reads
  verifiers: {},
  // no demonstrations: the server's episodes have none the workbench reads
  openenv: {},
} as const satisfies Readonly<Record<EnvName, OptionSpecs>>;
export interface CalculatorDemonstrationOptions extends OptionsOf<typeof DEMONSTRATION_SPECS.calculator> {}
export interface CodeDemonstrationOptions extends OptionsOf<typeof DEMONSTRATION_SPECS.code> {}
export interface WorkspaceDemonstrationOptions extends OptionsOf<typeof DEMONSTRATION_SPECS.workspace> {}
/** Each environment's demonstration options, by environment name. */
export interface DemonstrationOptions {
  readonly 'binary-search': OptionsOf<(typeof DEMONSTRATION_SPECS)['binary-search']>;
  readonly calculator: CalculatorDemonstrationOptions;
  readonly code: CodeDemonstrationOptions;
  readonly workspace: WorkspaceDemonstrationOptions;
  readonly agent: OptionsOf<(typeof DEMONSTRATION_SPECS)['agent']>;
  readonly verifiers: OptionsOf<(typeof DEMONSTRATION_SPECS)['verifiers']>;
  readonly openenv: OptionsOf<(typeof DEMONSTRATION_SPECS)['openenv']>;
}
