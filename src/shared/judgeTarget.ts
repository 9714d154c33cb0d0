// Where a config's judge would send its requests and the key (issue 51), read from a config as data
// (an unchecked config file, a stored run's config): the host decides from it whether to ask before a
// run (Start Run, Resume Run, Fork Run) and whether a run worker is handed the stored key at all.
import { JUDGE_OPTION_SPECS } from './judgeSettings';

export interface JudgeTarget {
  /** reward.judge.baseUrl as written ('' when missing: the config's check refuses it later). */
  readonly baseUrl: string;
  /** The environment variable whose value is sent as the key (reward.judge.apiKeyEnv, else its default). */
  readonly variable: string;
}

/** The judge a config names, or undefined when it has no reward.judge object. */
export function judgeTarget(config: unknown): JudgeTarget | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const reward = (config as Record<string, unknown>).reward;
  if (typeof reward !== 'object' || reward === null) return undefined;
  const judge = (reward as Record<string, unknown>).judge;
  if (typeof judge !== 'object' || judge === null) return undefined;
  const j = judge as Record<string, unknown>;
  return {
    baseUrl: typeof j.baseUrl === 'string' ? j.baseUrl : '',
    variable: typeof j.apiKeyEnv === 'string' ? j.apiKeyEnv : JUDGE_OPTION_SPECS.apiKeyEnv.default,
  };
}
