// The run config's rules on a judge's reward (issue 51, reward.judge: shared/judgeSettings.ts), run by
// configRules.ts after every field is checked on its own. Each has its case in
// test/unit/shared/judgeSettings.test.ts.
import { issue, type ConfigRule } from './configRule';
import type { ConfigIssue } from './fieldSpec';

/** An environment variable's name as POSIX shells write one. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * What in a judge's endpoint could carry a credential (a user name, a password, a query such as
 * ?api_key=…, a fragment), named for the message; empty when none. The key belongs in the variable
 * apiKeyEnv names (or Set Judge API Key), never in an address a config or the database stores.
 */
export function judgeUrlCredentialParts(url: string): readonly string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return []; // not a URL: the endpoint rule says so
  }
  const parts: string[] = [];
  if (u.username !== '') parts.push('a user name');
  if (u.password !== '') parts.push('a password');
  if (u.search !== '' || url.includes('?')) parts.push('a query (?…)');
  if (u.hash !== '' || url.includes('#')) parts.push('a fragment (#…)');
  return parts;
}

export const JUDGE_RULES: readonly ConfigRule[] = [
  {
    id: 'judge-needs-endpoint-model-rubric',
    description: 'A judge names its endpoint (reward.judge.baseUrl, http or https), its model and its rubric.',
    check({ reward }) {
      const j = reward.judge;
      if (!j) return [];
      const out: ConfigIssue[] = [];
      if (typeof j.baseUrl === 'string' && !/^https?:\/\/[^\s]+$/.test(j.baseUrl))
        out.push(
          ...issue(
            'reward.judge.baseUrl',
            j.baseUrl,
            j.baseUrl === '' ? 'a judge needs the endpoint it asks' : 'is not an http(s) URL',
            'name the OpenAI-compatible endpoint up to /v1, e.g. "http://127.0.0.1:8080/v1"',
          ),
        );
      if (j.model === '')
        out.push(...issue('reward.judge.model', j.model, 'a judge needs the model it asks', "name the endpoint's model (its own name for it)"));
      if (j.rubric === '')
        out.push(...issue('reward.judge.rubric', j.rubric, 'a judge needs a rubric to score against', 'write what a good trajectory does, in words'));
      return out;
    },
  },
  {
    id: 'judge-url-no-credentials',
    description: "reward.judge.baseUrl carries no user name, password, query or fragment: the key goes in apiKeyEnv's variable, never in the address.",
    check({ reward }) {
      const url = reward.judge?.baseUrl;
      const parts = typeof url === 'string' ? judgeUrlCredentialParts(url) : [];
      if (parts.length === 0) return [];
      // the address may hold a key: it is not echoed
      return issue(
        'reward.judge.baseUrl',
        '(hidden)',
        `holds ${parts.join(' and ')}, which can carry a credential that would be stored with the run`,
        'name the endpoint alone up to /v1 (e.g. "https://api.example.com/v1") and put the key in the variable reward.judge.apiKeyEnv names (or Agent RL: Set Judge API Key)',
      );
    },
  },
  {
    id: 'judge-key-env-name',
    description: "reward.judge.apiKeyEnv is an environment variable's name (letters, digits, _), never the key itself.",
    check({ reward }) {
      const name = reward.judge?.apiKeyEnv;
      if (typeof name !== 'string' || name === '' || ENV_NAME.test(name)) return [];
      // the value may be a key pasted by mistake: it is not echoed
      return issue(
        'reward.judge.apiKeyEnv',
        '(hidden)',
        "is not an environment variable's name (letters, digits and _, not starting with a digit)",
        'name the variable that holds the key, e.g. "AGENT_RL_JUDGE_API_KEY", and set the key there',
      );
    },
  },
  {
    id: 'judge-for-grpo-only',
    description: "A judge's reward feeds GRPO's group advantages: sft imitates demonstrations, rs-sft keeps successes, distill trains on the teacher's term.",
    check({ reward, method }) {
      if (!reward.judge || method === 'grpo') return [];
      return issue('reward.judge', '{…}', `method ${method} does not train on the reward`, 'remove reward.judge, or use method "grpo"');
    },
  },
];
