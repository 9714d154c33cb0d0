// Built-in environments opened for a test with the options given (validated, the rest at their
// defaults), synchronously; every one opened is disposed by disposeOpened() (its sandbox pools closed).
import { openBinarySearch } from '../../src/rl/envs/binarySearchRepair';
import { openCalculator } from '../../src/rl/envs/calculator/calculatorEnv';
import { openCodeEnvironment } from '../../src/rl/envs/codeSandbox/codeEnv';
import type { RunEnvironment } from '../../src/rl/envs/environment';
import { validateEnvOptions } from '../../src/shared/runConfig';

const opened: RunEnvironment[] = [];

function kept(env: RunEnvironment): RunEnvironment {
  opened.push(env);
  return env;
}

export const binarySearchEnv = (given: Record<string, unknown> = {}): RunEnvironment => kept(openBinarySearch(validateEnvOptions('binary-search', given)));
export const calculatorEnv = (given: Record<string, unknown> = {}): RunEnvironment => kept(openCalculator(validateEnvOptions('calculator', given)));
export const codeEnv = (given: Record<string, unknown> = {}): RunEnvironment => kept(openCodeEnvironment(validateEnvOptions('code', given)));

/** Disposes every environment these helpers opened. */
export async function disposeOpened(): Promise<void> {
  const all = opened.splice(0);
  await Promise.all(all.map((e) => e.dispose()));
}

/** One of the built-in environments by name, opened with these options. */
export function builtInEnv(name: 'binary-search' | 'calculator' | 'code', given: Record<string, unknown> = {}): RunEnvironment {
  return name === 'binary-search' ? binarySearchEnv(given) : name === 'calculator' ? calculatorEnv(given) : codeEnv(given);
}
