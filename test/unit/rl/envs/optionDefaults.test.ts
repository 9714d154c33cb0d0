// Every default is written once, in its option table (shared/optionSpecs.ts): what an environment
// resolves from an empty envOptions is exactly the table's defaults, key by key, and the engine's own
// constants that mirror a table (the sandbox limits, the expression generator) read the same numbers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calculatorOptions } from '../../../../src/rl/envs/calculator/calculatorEnv';
import { DEFAULT_GENERATOR } from '../../../../src/rl/envs/calculator/expressions';
import { codeEnvOptions } from '../../../../src/rl/envs/codeSandbox/codeEnv';
import { workspaceOptions } from '../../../../src/rl/envs/workspace/workspaceEnv';
import { DEFAULT_LIMITS } from '../../../../src/rl/sandbox/limits';
import {
  CALCULATOR_OPTION_SPECS,
  CODE_OPTION_SPECS,
  ENV_NAMES,
  ENV_OPTION_SPECS,
  optionDefaults,
  POLICY_NAMES,
  POLICY_OPTION_SPECS,
  validateEnvOptions,
  validateRunConfig,
  WORKSPACE_OPTION_SPECS,
} from '../../../../src/shared/runConfig';

const defaults = (specs: Readonly<Record<string, { readonly default: unknown }>>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(specs).map(([k, s]) => [k, s.default]));

describe('option defaults are written once', () => {
  it("validation fills every environment's and policy's options with exactly its table's defaults", () => {
    for (const env of ENV_NAMES) assert.deepEqual(validateEnvOptions(env), defaults(ENV_OPTION_SPECS[env]), env);
    for (const policy of POLICY_NAMES) {
      const c = validateRunConfig({ policy, env: policy === 'table' ? 'binary-search' : 'calculator' });
      assert.deepEqual(c.policyOptions, defaults(POLICY_OPTION_SPECS[policy]), policy);
      assert.deepEqual(c.policyOptions, optionDefaults(POLICY_OPTION_SPECS[policy]));
    }
  });

  it("each environment's parsed options are its table's defaults, nothing restated", () => {
    const calc = calculatorOptions(validateEnvOptions('calculator'));
    const c = defaults(CALCULATOR_OPTION_SPECS);
    assert.deepEqual(
      {
        maxCalls: calc.maxCalls,
        formatWeight: calc.formatWeight,
        callCost: calc.callCost,
        formatErrorCost: calc.formatErrorCost,
        trainTasks: calc.trainTasks,
        heldOutTasks: calc.heldOutTasks,
        evaluationSet: calc.evaluationSet,
        ...calc.generator,
        ops: undefined,
      },
      {
        maxCalls: c.maxCalls,
        formatWeight: c.formatWeight,
        callCost: c.callCost,
        formatErrorCost: c.formatErrorCost,
        trainTasks: c.trainTasks,
        heldOutTasks: c.heldOutTasks,
        evaluationSet: c.evaluationSet,
        minDepth: c.minDepth,
        maxDepth: c.maxDepth,
        minOperand: c.minOperand,
        maxOperand: c.maxOperand,
        ops: undefined,
      },
    );
    assert.deepEqual(calc.generator, DEFAULT_GENERATOR, "the generator constant is the calculator's defaults");

    const code = codeEnvOptions(validateEnvOptions('code'));
    const k = defaults(CODE_OPTION_SPECS);
    assert.deepEqual(
      [code.sandbox, code.python, code.maxExecutions, code.poolSize, code.taskSet],
      [k.sandbox, k.python, k.maxExecutions, k.poolSize, k.taskSet],
    );
    assert.deepEqual([code.limits.timeoutMs, code.limits.tailBytes, code.limits.outputCapBytes], [k.timeoutMs, k.tailBytes, k.outputCapBytes]);
    assert.deepEqual(
      [DEFAULT_LIMITS.timeoutMs, DEFAULT_LIMITS.tailBytes, DEFAULT_LIMITS.outputCapBytes],
      [k.timeoutMs, k.tailBytes, k.outputCapBytes],
      "the sandbox's default limits are the code environment's",
    );

    const ws = workspaceOptions(validateEnvOptions('workspace'));
    const w = defaults(WORKSPACE_OPTION_SPECS);
    for (const key of [
      'root',
      'tasks',
      'taskPreset',
      'heldOutFraction',
      'splitSeed',
      'tools',
      'toolFormat',
      'toolsInPrompt',
      'reward',
      'formatBonus',
      'callCost',
      'successThreshold',
      'maxCalls',
      'sandbox',
      'python',
      'poolSize',
    ] as const) {
      assert.equal(ws[key], w[key], key);
    }
    assert.deepEqual(ws.fields, {}, 'no field renamed by default');
    assert.deepEqual([ws.limits.timeoutMs, ws.limits.tailBytes, ws.limits.outputCapBytes], [w.timeoutMs, w.tailBytes, w.outputCapBytes]);
  });
});
