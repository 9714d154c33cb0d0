// Start Run's reasoning-gym step (src/host/commands/reasoningGymSteps.ts): a dataset's name as typed,
// the common datasets' training configs, the held-out choice, and the config they make (validated here
// by the run config's own validator, so a choice the wizard offers is one a run accepts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  COMMON_DATASETS,
  DATASET_CHOICES,
  DATASET_NAME,
  datasetNameProblem,
  HELD_OUT_CHOICES,
  OTHER_DATASET,
  reasoningGymEnvOptions,
} from '../../../src/host/commands/reasoningGymSteps';
import { METHOD_CHOICES, modelRunConfig } from '../../../src/host/commands/startRunSteps';
import { validateRunConfig } from '../../../src/shared/runConfig';

describe('Start Run: a reasoning-gym task set', () => {
  it('offers the common datasets, then any other by name; held out harder first (the docs’ default)', () => {
    assert.deepEqual(
      DATASET_CHOICES.map((c) => c.value),
      [...COMMON_DATASETS.map((d) => d.name), OTHER_DATASET],
    );
    assert.equal(DATASET_CHOICES.at(-1)!.label, 'Another dataset…');
    for (const d of COMMON_DATASETS) assert.match(d.name, DATASET_NAME, d.name);
    assert.deepEqual(
      HELD_OUT_CHOICES.map((c) => c.value),
      ['harder', 'same'],
    );
  });

  it("takes a dataset's registered name and refuses nothing, the set's prefix, a path or other characters, saying what to type", () => {
    for (const ok of ['basic_arithmetic', ' countdown ', 'gsm_symbolic', 'n_queens']) assert.equal(datasetNameProblem(ok), undefined, ok);
    assert.match(datasetNameProblem(' ') ?? '', /^Type a reasoning-gym dataset's registered name/);
    assert.equal(datasetNameProblem('reasoning-gym:countdown'), 'Leave out reasoning-gym:: type countdown');
    for (const bad of ['basic-arithmetic', 'rg/countdown', 'count down', 'pkg.set', 'x;y'])
      assert.match(datasetNameProblem(bad) ?? '', /^A dataset's registered name: letters, digits and _/, bad);
  });

  it('a common dataset brings its training config; held out harder leaves heldOutConfig to the run, the same settings say harder: false', () => {
    assert.deepEqual(reasoningGymEnvOptions({ dataset: 'basic_arithmetic', heldOut: 'harder', root: '/w' }), {
      root: '/w',
      taskSet: 'reasoning-gym:basic_arithmetic',
      taskConfig: { min_terms: 2, max_terms: 2, min_digits: 1, max_digits: 1 },
    });
    assert.deepEqual(reasoningGymEnvOptions({ dataset: ' countdown ', heldOut: 'same', root: '' }), {
      taskSet: 'reasoning-gym:countdown',
      heldOutConfig: { harder: false },
    });
    assert.deepEqual(reasoningGymEnvOptions({ dataset: 'word_sorting', heldOut: 'harder', root: '' }), { taskSet: 'reasoning-gym:word_sorting' });
    // the config is a copy: a run's edits never reach the table
    const o = reasoningGymEnvOptions({ dataset: 'chain_sum', heldOut: 'harder', root: '' });
    (o.taskConfig as Record<string, unknown>).min_terms = 9;
    assert.equal(COMMON_DATASETS.find((d) => d.name === 'chain_sum')!.taskConfig.min_terms, 2);
  });

  it('every dataset × held-out choice × method makes a workspace config the validator accepts, scored by score_answer', () => {
    for (const dataset of [...COMMON_DATASETS.map((d) => d.name), 'countdown'])
      for (const { value: heldOut } of HELD_OUT_CHOICES)
        for (const { value: method } of METHOD_CHOICES) {
          const raw = modelRunConfig({
            env: 'reasoning-gym',
            model: '/models/student',
            method,
            reasoningGym: { dataset, heldOut, root: '/work/space' },
            ...(method === 'distill' ? { teacher: '/models/teacher' } : {}),
          });
          const c = validateRunConfig(raw);
          assert.equal(c.env, 'workspace');
          if (c.env !== 'workspace') continue;
          assert.equal(c.envOptions.taskSet, `reasoning-gym:${dataset}`);
          assert.equal(c.envOptions.reward, 'score_answer', "the dataset's own scoring, the default with a set");
          assert.equal(c.envOptions.root, '/work/space');
          assert.deepEqual(c.envOptions.heldOutConfig, heldOut === 'same' ? { harder: false } : {});
        }
  });
});
