// The settings tables (top-level run settings and the algorithm's) resolve, for every (env, policy,
// method), to exactly the defaults the layered code resolved to before them: the fixture
// test/fixtures/settingsDefaults.json was generated once from that code (DEFAULT_RUN_CONFIG,
// POLICY_DEFAULTS, METHOD_DEFAULTS, algorithmDefaults) and is never regenerated from the tables.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ALGORITHM_SPECS, algorithmDefaults, type AlgorithmSettings } from '../../../src/shared/algorithm';
import { checkField, type ConfigIssue } from '../../../src/shared/fieldSpec';
import {
  ConfigError,
  DEFAULT_RUN_CONFIG,
  ENV_NAMES,
  METHOD_NAMES,
  POLICY_NAMES,
  RUN_SETTING_SPECS,
  validateRunConfig,
  type RunSettings,
} from '../../../src/shared/runConfig';
import { defaultCell, layers, resolveDefaults, type DefaultCell, type SettingSpec, type SettingSpecs } from '../../../src/shared/settingsTable';

interface Snapshot {
  readonly unnamed: Readonly<Record<string, unknown>>;
  readonly combinations: Readonly<Record<string, { run: Readonly<Record<string, unknown>>; algorithm: Readonly<Record<string, unknown>> }>>;
}
const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const snapshot = JSON.parse(fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'settingsDefaults.json'), 'utf8')) as Snapshot;

const COMBINATIONS = ENV_NAMES.flatMap((env) => POLICY_NAMES.flatMap((policy) => METHOD_NAMES.map((method) => ({ env, policy, method }))));
const TABLES: readonly [string, SettingSpecs][] = [
  ['run settings', RUN_SETTING_SPECS],
  ['algorithm', ALGORITHM_SPECS],
];

describe('settings tables: the resolved defaults are those of the layered code they replace', () => {
  it('the fixture covers every (env, policy, method)', () => {
    assert.deepEqual(Object.keys(snapshot.combinations).sort(), COMBINATIONS.map((c) => `${c.env}/${c.policy}/${c.method}`).sort());
  });

  for (const { env, policy, method } of COMBINATIONS) {
    it(`${env}/${policy}/${method}`, () => {
      const before = snapshot.combinations[`${env}/${policy}/${method}`]!;
      // a config that names the env, policy and method: they are its own, every other setting from the table
      assert.deepEqual({ ...resolveDefaults(RUN_SETTING_SPECS, env, policy, method), env, policy, method }, before.run);
      assert.deepEqual(algorithmDefaults(env, policy, method), before.algorithm);
    });
  }

  it('a config that names nothing takes the base cells', () => {
    // reward (issue 51's judge) is a section the layered code did not have: empty unless a judge is named
    const { demonstrations, envOptions, policyOptions, reward, ...settings } = DEFAULT_RUN_CONFIG;
    assert.deepEqual([demonstrations, envOptions, policyOptions, reward], [{}, {}, {}, {}]);
    assert.deepEqual(settings, snapshot.unnamed);
  });

  it('the validator fills the same defaults for every combination it accepts (the name aside, which it derives)', () => {
    let accepted = 0;
    for (const { env, policy, method } of COMBINATIONS) {
      let config;
      try {
        config = validateRunConfig({ env, policy, method });
      } catch (e) {
        assert.ok(e instanceof ConfigError, String(e)); // refused combinations (table × calculator, sft × table, …) are the rules' business
        continue;
      }
      accepted++;
      const before = snapshot.combinations[`${env}/${policy}/${method}`]!;
      const { algorithm, envOptions, policyOptions, demonstrations, name, reward, ...run } = config;
      void [envOptions, policyOptions, demonstrations];
      assert.deepEqual(reward, {}, `${env}/${policy}/${method}: no judge unless one is named`);
      assert.equal(name, `${env}-${policy}-${method}-s${before.run.seed as number}`);
      assert.deepEqual({ ...run, name: '' }, before.run, `${env}/${policy}/${method}`);
      assert.deepEqual(algorithm, before.algorithm, `${env}/${policy}/${method}`);
    }
    assert.ok(accepted >= 8, `only ${accepted} combinations validated`);
  });
});

describe('settings tables: every cell', () => {
  for (const [name, table] of TABLES) {
    it(`${name}: each cell's value is one its own spec admits, with a reason`, () => {
      const issues: ConfigIssue[] = [];
      for (const [key, spec] of Object.entries(table)) {
        for (const [where, cell] of Object.entries(spec.defaults as Readonly<Record<string, DefaultCell>>)) {
          checkField(`${key} (${where})`, spec, cell.value, issues);
          assert.ok(cell.reason.trim().length > 10, `${key} (${where}) has no reason`);
        }
      }
      assert.deepEqual(issues, []);
    });

    it(`${name}: each cell's key names a policy, a policy/method or an env/policy/method that exists`, () => {
      const known = new Set<string>([
        ...POLICY_NAMES,
        ...POLICY_NAMES.flatMap((p) => METHOD_NAMES.map((m) => `${p}/${m}`)),
        ...COMBINATIONS.map((c) => `${c.env}/${c.policy}/${c.method}`),
      ]);
      assert.deepEqual(
        Object.keys(layers(table)).filter((k) => !known.has(k)),
        [],
      );
    });

    it(`${name}: a cell beyond base changes the value (a cell that repeats what a run would get anyway says nothing)`, () => {
      const repeats: string[] = [];
      for (const [key, spec] of Object.entries(table)) {
        for (const [where, cell] of Object.entries(spec.defaults as Readonly<Record<string, DefaultCell>>)) {
          if (where === 'base') continue;
          // the value the run would take without this cell: the next more general cell
          const parts = where.split('/');
          const without = { ...spec, defaults: Object.fromEntries(Object.entries(spec.defaults).filter(([k]) => k !== where)) } as SettingSpec;
          const [env, policy, method] = parts.length === 3 ? parts : parts.length === 2 ? ['-', ...parts] : ['-', parts[0], '-'];
          if (JSON.stringify(defaultCell(without, env, policy, method).value) === JSON.stringify(cell.value)) repeats.push(`${key} (${where})`);
        }
      }
      assert.deepEqual(repeats, []);
    });
  }
});

describe('settings tables: resolution', () => {
  const spec: SettingSpec = {
    kind: 'integer',
    min: 0,
    max: 100,
    description: 'a test setting',
    defaults: {
      base: { value: 1, reason: 'base' },
      transformer: { value: 2, reason: 'policy' },
      'transformer/sft': { value: 3, reason: 'policy and method' },
      'code/transformer/sft': { value: 4, reason: 'env, policy and method' },
    },
  };

  it('takes the most specific cell: env/policy/method, then policy/method, then policy, then base', () => {
    assert.deepEqual(defaultCell(spec, 'code', 'transformer', 'sft'), { key: 'code/transformer/sft', value: 4, reason: 'env, policy and method' });
    assert.deepEqual(defaultCell(spec, 'calculator', 'transformer', 'sft'), { key: 'transformer/sft', value: 3, reason: 'policy and method' });
    assert.deepEqual(defaultCell(spec, 'code', 'transformer', 'grpo'), { key: 'transformer', value: 2, reason: 'policy' });
    assert.deepEqual(defaultCell(spec, 'code', 'table', 'sft'), { key: 'base', value: 1, reason: 'base' });
  });

  it('a name that is not one (a config not yet validated) reads base, never an inherited property', () => {
    assert.equal(defaultCell(spec, undefined, 'constructor', 7).key, 'base');
    assert.equal(defaultCell(spec, 'x', 'toString', 'y').value, 1);
  });

  // compile-time only: tsc fails this file when a setting's type no longer follows its table
  it("the types follow the tables: an enum setting's type is its own values, a number's number", () => {
    const schedule: AlgorithmSettings['lrSchedule'] = 'linear';
    // @ts-expect-error -- not one of the schedules
    const wrong: AlgorithmSettings['lrSchedule'] = 'sometimes';
    const mode: RunSettings['mode'] = 'async';
    // @ts-expect-error -- iterations is a number
    const iterations: RunSettings['iterations'] = '100';
    void [schedule, wrong, mode, iterations];
  });
});
