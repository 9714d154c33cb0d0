// Name → environment factory. Every environment registers here and nowhere else, so the CLI, the worker
// and the VS Code presets see the same set.
import type { EnvName } from '../../shared/runConfig';
import { binarySearchRepair } from './binarySearchRepair';
import { calculator } from './calculator/calculatorEnv';
import { codeEnvironment } from './codeSandbox/codeEnv';
import type { EnvironmentFactory } from './environment';
import { workspaceEnvironment } from './workspace/workspaceEnv';

const REGISTRY: Readonly<Record<EnvName, EnvironmentFactory>> = {
  'binary-search': binarySearchRepair,
  calculator,
  code: codeEnvironment,
  workspace: workspaceEnvironment,
};

export function environmentFactory(name: EnvName): EnvironmentFactory {
  return REGISTRY[name];
}
