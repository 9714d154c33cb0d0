// The reward verl calls for exported tasks (custom_reward_function.path/name): python/reward.py (what it
// scores and how is said there), written as agent_rl_reward.py. Its settings are data, never spliced
// into its code: agent_rl_reward.json beside it, and the verifier program it sends to the sandbox, the
// code environment's own verifier, as agent_rl_verifier.py; the reward reads both from its own folder.
import { VERIFIER_PY } from '../../rl/envs/codeSandbox/verifierPy.generated';
import { REWARD_PY } from './rewardPy.generated';
import { CALCULATOR_SOURCE, CODE_SOURCE, WORKSPACE_SOURCE } from './verlTasks';

export const REWARD_FILE = 'agent_rl_reward.py';
export const REWARD_CONFIG_FILE = 'agent_rl_reward.json';
export const VERIFIER_FILE = 'agent_rl_verifier.py';

/** What agent_rl_reward.py reads from agent_rl_reward.json. */
export interface VerlRewardConfig {
  /** The /run_code URL (AGENT_RL_SANDBOX_URL overrides it when the reward runs). */
  readonly sandbox_url: string;
  /** Calculator: the score of a boxed integer, right or wrong. */
  readonly format_weight: number;
  /** The data_source of each task set's rows (verlTasks.ts). */
  readonly data_sources: { readonly calculator: string; readonly code: string; readonly workspace: string };
}

/** The reward's files, name → content, written side by side in the export folder. */
export function verlRewardFiles(sandboxUrl: string, formatWeight: number): [string, string][] {
  const config: VerlRewardConfig = {
    sandbox_url: sandboxUrl,
    format_weight: formatWeight,
    data_sources: { calculator: CALCULATOR_SOURCE, code: CODE_SOURCE, workspace: WORKSPACE_SOURCE },
  };
  return [
    [REWARD_FILE, REWARD_PY],
    [REWARD_CONFIG_FILE, `${JSON.stringify(config, null, 2)}\n`],
    [VERIFIER_FILE, VERIFIER_PY],
  ];
}
