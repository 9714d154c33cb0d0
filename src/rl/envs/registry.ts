// Name → environment definition. Every environment registers here and nowhere else, so the CLI, the
// worker and the VS Code presets see the same set. openEnvironment is where a run's environment choice
// and its options meet: narrowed on the name, each definition receives its own typed options.
import type { EnvName, EnvSelection } from '../../shared/runConfig';
import { agentEnvironment } from './agent/agentEnv';
import { binarySearchRepair } from './binarySearchRepair';
import { calculator } from './calculator/calculatorEnv';
import { codeEnvironment } from './codeSandbox/codeEnv';
import type { RunEnvironment } from './environment';
import { openenvEnvironment } from './openenv/openenvEnv';
import { verifiersEnvironment } from './verifiers/verifiersEnv';
import { workspaceEnvironment } from './workspace/workspaceEnv';

/** The environments' names and descriptions, for lists and help. */
export const ENVIRONMENTS: Readonly<Record<EnvName, { readonly name: EnvName; readonly description: string }>> = {
  'binary-search': binarySearchRepair,
  calculator,
  code: codeEnvironment,
  workspace: workspaceEnvironment,
  agent: agentEnvironment,
  verifiers: verifiersEnvironment,
  openenv: openenvEnvironment,
};

/** Opens the environment a config names with its options (files read and checked); dispose() the result. */
export function openEnvironment(c: EnvSelection): Promise<RunEnvironment> {
  switch (c.env) {
    case 'binary-search':
      return binarySearchRepair.open(c.envOptions);
    case 'calculator':
      return calculator.open(c.envOptions);
    case 'code':
      return codeEnvironment.open(c.envOptions);
    case 'workspace':
      return workspaceEnvironment.open(c.envOptions);
    case 'agent':
      return agentEnvironment.open(c.envOptions);
    case 'verifiers':
      return verifiersEnvironment.open(c.envOptions);
    case 'openenv':
      return openenvEnvironment.open(c.envOptions);
  }
}
