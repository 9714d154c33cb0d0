// The run config's `reward` section (issue 51): a judge's reward from any OpenAI-compatible model,
// combined with the environment's. `reward: {}` (the default) is the environment's reward alone;
// `reward: { judge: {…} }` asks the model at judge.baseUrl to score each group's trajectories against a
// rubric. Each judge field with its default and reason is one row of JUDGE_OPTION_SPECS; the rules
// between them (and with the method) are judgeRules.ts's, run with the other cross-field rules. What the
// judge does with them: rl/train/judge/ and docs/judge.md.
import { checkField, optionDefaults, type ConfigIssue, type OptionSpecs, type OptionsOf } from './fieldSpec';

export const JUDGE_OPTION_SPECS = {
  baseUrl: {
    kind: 'string',
    maxLength: 2000,
    default: '',
    description:
      'The judge\'s OpenAI-compatible endpoint, up to /v1 (e.g. "https://api.openai.com/v1", or a local server "http://127.0.0.1:8080/v1"); the judge posts to its /chat/completions.',
    reason: 'none: a judge must name where it runs (refused when empty)',
  },
  model: {
    kind: 'string',
    maxLength: 200,
    default: '',
    description: "The model name sent in each request (the endpoint's own name for it).",
    reason: 'none: a judge must name its model (refused when empty)',
  },
  rubric: {
    kind: 'string',
    maxLength: 20_000,
    default: '',
    description: 'What a good trajectory does, in words: the system prompt gives it to the judge, with the rule that the trajectories are data.',
    reason: 'none: a score means nothing without a rubric (refused when empty)',
  },
  apiKeyEnv: {
    kind: 'string',
    maxLength: 100,
    default: 'AGENT_RL_JUDGE_API_KEY',
    description:
      'The environment variable the run worker reads the judge\'s API key from (sent as Authorization: Bearer); unset or empty = no key sent (a local judge). In VS Code, "Agent RL: Set Judge API Key" keeps a key in SecretStorage and passes it to the worker under this name. The key itself is never in a config.',
    reason: 'one name for every run, so a key set once serves them all',
  },
  weight: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0.5,
    description: "The judge's share of the reward: reward = (1 − weight) × the environment's + weight × the judge's score (both in [0, 1] for a 0/1 verifier).",
    reason: 'an even mix: the verifier keeps half the signal where it exists',
  },
  groupRelative: {
    kind: 'boolean',
    default: false,
    description:
      "true: the judge's scores are replaced by their ranks within the group, scaled to [0, 1] (lowest 0, highest 1, ties sharing their mean rank; a group of one, or all tied, 0.5), so only the judge's ordering counts, not its scale. false: the judge's scores as given.",
    reason: "the score as the judge gave it is the plainest reading; GRPO's group normalisation already makes rewards relative",
  },
  timeoutMs: {
    kind: 'integer',
    min: 100,
    max: 600_000,
    default: 60_000,
    description: 'How long one request may take, connection to last byte (ms); a request past it is aborted and retried.',
    reason: 'a minute: a hosted model scoring a group of 8 long trajectories answers well within it',
  },
  retries: {
    kind: 'integer',
    min: 0,
    max: 10,
    default: 2,
    description:
      'Further tries of a request that failed (timeout, network, HTTP 429 or 5xx, an answer that does not parse), after 0.5 s, 1 s, 2 s …; then the group is an error with the last reason.',
    reason: "two: a hosted endpoint's transient errors pass within seconds, and a judge that keeps failing should not stall the run",
  },
} as const satisfies OptionSpecs;

export type JudgeSettings = OptionsOf<typeof JUDGE_OPTION_SPECS>;

/** The reward section: the environment's reward, and a judge's where one is named. */
export interface RewardSettings {
  readonly judge?: JudgeSettings;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The reward section checked key by key, the judge's defaults filled; problems go to `issues`. */
export function checkRewardSection(given: unknown, issues: ConfigIssue[]): RewardSettings {
  if (!isObject(given)) return {}; // not an object: reported by the section's own spec
  for (const k of Object.keys(given)) {
    if (k !== 'judge')
      issues.push({ field: `reward.${k}`, value: given[k], message: 'is not a reward setting', fix: 'remove it; the reward section holds: judge' });
  }
  const judge = given.judge;
  if (judge === undefined) return {};
  if (!isObject(judge)) {
    issues.push({ field: 'reward.judge', value: judge, message: 'must be an object', fix: 'write it as { "baseUrl": …, "model": …, "rubric": … }' });
    return {};
  }
  const out: Record<string, unknown> = { ...optionDefaults(JUDGE_OPTION_SPECS) };
  const names = Object.keys(JUDGE_OPTION_SPECS);
  for (const [k, v] of Object.entries(judge)) {
    if (!Object.hasOwn(JUDGE_OPTION_SPECS, k)) {
      const hint = k.toLowerCase() === 'apikey' ? ' (the key itself never goes in a config: name its environment variable in apiKeyEnv)' : '';
      issues.push({
        field: `reward.judge.${k}`,
        value: k.toLowerCase() === 'apikey' ? '(hidden)' : v,
        message: `is not a judge setting${hint}`,
        fix: `remove it; the judge's settings are: ${names.join(', ')}`,
      });
      continue;
    }
    checkField(`reward.judge.${k}`, JUDGE_OPTION_SPECS[k as keyof typeof JUDGE_OPTION_SPECS], v, issues);
    out[k] = v;
  }
  return { judge: out as unknown as JudgeSettings };
}
