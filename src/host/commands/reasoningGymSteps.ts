// Start Run's reasoning-gym step for a Hugging Face model (issue 53; docs/reasoning-gym.md), the parts
// that need no VS Code (tested in test/unit/host/reasoningGymSteps.test.ts): a few common datasets,
// each with a training config low enough on its curriculum that the default held-out split — one
// curriculum level harder — exists; any other dataset by name, checked as typed by the config rule's
// form; and the held-out choice (harder, the default, or the training settings with other seeds). The
// names and settings are checked against reasoning-gym itself when the run opens (an unknown name is
// an error naming the closest ones).
import { messageText } from '../../shared/untrustedText';
import type { Choice } from './stepChoice';

/** A dataset's name as envOptions.taskSet takes it after "reasoning-gym:" (configRules.ts workspace-task-set). */
export const DATASET_NAME = /^[A-Za-z0-9_]+$/;
/** The prefix of a workspace environment's reasoning-gym task set. */
export const TASK_SET_PREFIX = 'reasoning-gym:';

/** A dataset the step offers, with the training config it starts from (empty: the dataset's defaults). */
export interface CommonDataset {
  readonly name: string;
  readonly description: string;
  readonly taskConfig: Readonly<Record<string, unknown>>;
}

/**
 * The datasets offered first: short single answers a small instruct model can learn to give. Each
 * training config is below the top of its curriculum (reasoning-gym 0.1.25's ladders), so the default
 * held-out split is one level harder: basic_arithmetic's and chain_sum's defaults are at their top
 * (up to 6 terms of 4 digits), so they start at two one-digit terms, as docs/reasoning-gym.md's first run.
 * Each was generated at both splits with reasoning-gym 0.1.25's harness; spell_backward is not offered: its
 * harder split (11-letter words) is refused, as its word list ends at 10 letters.
 */
export const COMMON_DATASETS: readonly CommonDataset[] = [
  {
    name: 'basic_arithmetic',
    description: 'arithmetic expressions: trained on two one-digit terms, held out on three two-digit ones',
    taskConfig: { min_terms: 2, max_terms: 2, min_digits: 1, max_digits: 1 },
  },
  {
    name: 'chain_sum',
    description: 'sums and differences of a chain of numbers: trained on two one-digit terms',
    taskConfig: { min_terms: 2, max_terms: 2, min_digits: 1, max_digits: 1 },
  },
  { name: 'letter_counting', description: 'how many times a letter occurs in a text (its defaults)', taskConfig: {} },
  { name: 'word_sorting', description: 'sort words alphabetically; partial credit for words in place (its defaults)', taskConfig: {} },
  { name: 'leg_counting', description: 'the legs of a list of animals, summed (its defaults)', taskConfig: {} },
  { name: 'propositional_logic', description: 'what follows from a set of propositional statements (its defaults)', taskConfig: {} },
];

/** The dataset pick: a common dataset's name, or OTHER_DATASET for one typed by name. */
export const OTHER_DATASET = '';

export const DATASET_CHOICES: readonly Choice<string>[] = [
  ...COMMON_DATASETS.map((d) => ({ value: d.name, label: d.name, description: d.description })),
  {
    value: OTHER_DATASET,
    label: 'Another dataset…',
    description: "any of reasoning-gym's registered datasets by name (its default settings)",
  },
];

export type HeldOutChoice = 'harder' | 'same';

/** The held-out step; harder first, as docs/reasoning-gym.md's default. */
export const HELD_OUT_CHOICES: readonly Choice<HeldOutChoice>[] = [
  {
    value: 'harder',
    label: 'Harder: one curriculum level up (the default)',
    description:
      "each difficulty setting raised past the training range, so no held-out task has a training setting (a dataset at its curriculum's top is refused when the run opens)",
  },
  { value: 'same', label: 'The same settings, other seeds', description: 'a split by seed, {"harder": false}: other tasks of the training difficulty' },
];

/** Why a typed dataset name is not one envOptions.taskSet takes (undefined: it is). */
export function datasetNameProblem(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return "Type a reasoning-gym dataset's registered name, e.g. basic_arithmetic, word_sorting or countdown";
  if (t.startsWith(TASK_SET_PREFIX)) return `Leave out ${TASK_SET_PREFIX}: type ${messageText(t.slice(TASK_SET_PREFIX.length), 100)}`;
  if (!DATASET_NAME.test(t)) return "A dataset's registered name: letters, digits and _ (e.g. basic_arithmetic), no spaces, dots or slashes";
  return undefined;
}

/** What the reasoning-gym steps chose. `root`: the workspace folder (the environment's files, none here), '' when none is open. */
export interface ReasoningGymChoices {
  readonly dataset: string;
  readonly heldOut: HeldOutChoice;
  readonly root: string;
}

/** The workspace environment's envOptions for the choices: the task set, a common dataset's training config, the held-out choice. */
export function reasoningGymEnvOptions(c: ReasoningGymChoices): Record<string, unknown> {
  const dataset = c.dataset.trim();
  const common = COMMON_DATASETS.find((d) => d.name === dataset);
  return {
    ...(c.root !== '' ? { root: c.root } : {}),
    taskSet: `${TASK_SET_PREFIX}${dataset}`,
    ...(common && Object.keys(common.taskConfig).length > 0 ? { taskConfig: { ...common.taskConfig } } : {}),
    ...(c.heldOut === 'same' ? { heldOutConfig: { harder: false } } : {}),
  };
}
