// Builds the policy a config names. Impossible combinations were rejected by validateRunConfig already;
// the checks here guard programmatic callers.
import type { RunConfig } from '../../shared/runConfig';
import type { EnvironmentFactory } from '../envs/environment';
import type { Policy } from './policy';
import { TablePolicy } from './table/tablePolicy';

export function createPolicy(config: RunConfig, env: EnvironmentFactory): Policy {
  switch (config.policy) {
    case 'table': {
      if (!env.tabular) throw new Error(`policy "table" needs a tabular environment; "${env.name}" is not`);
      return new TablePolicy(env.tabular(config.envOptions), config.learningRate);
    }
  }
}
