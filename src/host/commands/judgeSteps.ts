// Start Run's reward step for a Hugging Face model on an environment (issue 51), the parts that need no
// VS Code (tested in test/unit/host/judgeSteps.test.ts): the choice between the environment's reward
// alone and a judge's score added to it, each judge field checked as typed by the rules the run config
// applies to it (shared/judgeSettings.ts, judgeRules.ts), a rubric read from a workspace file, and the
// reward section the answers make. That section never holds a key: the run reads it from the variable
// reward.judge.apiKeyEnv names (its default, AGENT_RL_JUDGE_API_KEY, is where "Agent RL: Set Judge API
// Key" puts the stored one), and the wizard only asks whether one is there.
import { count } from '../../shared/format';
import { JUDGE_OPTION_SPECS } from '../../shared/judgeSettings';
import { judgeUrlCredentialParts } from '../../shared/judgeRules';
import { messageText } from '../../shared/untrustedText';
import type { Choice } from './stepChoice';

export type RewardChoice = 'environment' | 'judge';

/** The reward step (offered on GRPO only: the judge's score feeds GRPO's group advantages, and the config rules refuse it elsewhere). */
export const REWARD_CHOICES: readonly Choice<RewardChoice>[] = [
  { value: 'environment', label: "The environment's reward only", description: 'its verifier or rubric scores each episode' },
  {
    value: 'judge',
    label: "Add a judge's score…",
    description:
      'an OpenAI-compatible model (hosted, with your key; or local: agent-rl serve, llama.cpp) scores each group against your rubric, mixed in by a weight (docs/judge.md)',
  },
];

/** What the judge steps chose: reward.judge's fields the wizard asks for (the rest keep their defaults). */
export interface JudgeChoices {
  readonly baseUrl: string;
  readonly model: string;
  readonly rubric: string;
  readonly weight: number;
}

/** The variable the run reads the key from: apiKeyEnv's default, the one the stored key is handed to the worker in. */
export const JUDGE_KEY_VARIABLE = JUDGE_OPTION_SPECS.apiKeyEnv.default;

/** The judge's share of the reward offered first: reward.judge.weight's default, an even mix. */
export const DEFAULT_WEIGHT = String(JUDGE_OPTION_SPECS.weight.default);

/**
 * Why a typed endpoint is not one reward.judge.baseUrl takes (undefined: it is): an http(s) URL without
 * spaces (the run's rule), up to /v1 — the judge adds /chat/completions itself.
 */
export function judgeUrlProblem(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return "Type the judge's OpenAI-compatible endpoint up to /v1, e.g. http://127.0.0.1:8080/v1 or https://api.openai.com/v1";
  if (t.length > JUDGE_OPTION_SPECS.baseUrl.maxLength) return `At most ${JUDGE_OPTION_SPECS.baseUrl.maxLength} characters: the endpoint's address up to /v1`;
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    return 'Not a URL: the endpoint with its scheme, e.g. http://127.0.0.1:8080/v1';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `${u.protocol} is not http: or https:: the judge posts to an http(s) endpoint`;
  if (/\s/.test(t)) return 'No spaces in the address: e.g. http://127.0.0.1:8080/v1';
  const credentials = judgeUrlCredentialParts(t);
  if (credentials.length > 0)
    return `No ${credentials.join(' or ').replaceAll('a ', '')} in the address: it is stored with the run. Type the endpoint alone up to /v1 and give the key with Agent RL: Set Judge API Key (or a config's apiKeyEnv variable)`;
  if (/\/chat\/completions\/?$/.test(u.pathname)) return `Leave out /chat/completions: the judge adds it (type ${t.replace(/\/chat\/completions\/?$/, '')})`;
  return undefined;
}

/** Why a typed model name is not one reward.judge.model takes (undefined: it is). */
export function judgeModelProblem(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return "Type the model's name as the endpoint knows it, e.g. gpt-4o-mini (a local agent-rl serve answers to any name)";
  if (t.length > JUDGE_OPTION_SPECS.model.maxLength) return `At most ${JUDGE_OPTION_SPECS.model.maxLength} characters`;
  return undefined;
}

/** Why a rubric (typed, or a file's text) is not one reward.judge.rubric takes (undefined: it is). */
export function rubricProblem(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return 'Write what a good trajectory does, e.g. "A good answer shows its working and ends with the right number."';
  if (t.length > JUDGE_OPTION_SPECS.rubric.maxLength)
    return `A rubric of at most ${count(JUDGE_OPTION_SPECS.rubric.maxLength)} characters (this one has ${count(t.length)}): the judge reads it with every group`;
  return undefined;
}

/** The largest rubric file read (bytes): the rubric's character limit at UTF-8's longest, so a larger file is refused unread. */
export const RUBRIC_FILE_MAX_BYTES = 4 * JUDGE_OPTION_SPECS.rubric.maxLength;

/**
 * A workspace file's bytes as a rubric: its UTF-8 text, trimmed, or why not (a binary file, not UTF-8,
 * empty or too long), naming the file (untrusted: a workspace's file name).
 */
export function rubricFromFile(file: string, bytes: Uint8Array): { readonly rubric: string } | { readonly problem: string } {
  const where = messageText(file, 200);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { problem: `Agent RL: ${where} is not UTF-8 text. Fix: choose a text or Markdown file that holds the rubric` };
  }
  if (text.includes('\u0000')) return { problem: `Agent RL: ${where} holds NUL bytes, so it is not a text file. Fix: choose a text or Markdown file` };
  const problem = rubricProblem(text);
  return problem === undefined ? { rubric: text.trim() } : { problem: `Agent RL: ${where} cannot be the rubric: ${problem}` };
}

/** The weight as typed: a decimal number in [0, 1] (not Number's other forms: 0x1, 1e0, Infinity), or why not. */
export function parseWeight(text: string): { readonly weight: number } | { readonly problem: string } {
  const t = text.trim();
  const w = /^(\d+(\.\d*)?|\.\d+)$/.test(t) ? Number(t) : Number.NaN;
  if (!Number.isFinite(w) || w < 0 || w > 1)
    return { problem: "A number from 0 to 1: the judge's share of the reward (0.5: half the environment's, half the judge's; 1: the judge's alone)" };
  return { weight: w };
}

/** The run config's reward section for the judge chosen: the fields typed, trimmed, and no key (nor apiKeyEnv: its default is where the stored key goes). */
export function judgeRewardSection(j: JudgeChoices): { readonly judge: JudgeChoices } {
  return { judge: { baseUrl: j.baseUrl.trim(), model: j.model.trim(), rubric: j.rubric.trim(), weight: j.weight } };
}

/** Whether a judged run's worker would find a key: VS Code's stored one (`stored`: JudgeKey.isSet(), handed to the worker) or the variable in this process's environment. */
export function judgeKeyAvailable(stored: boolean, env: Readonly<Record<string, string | undefined>>): boolean {
  return stored || (env[JUDGE_KEY_VARIABLE] ?? '') !== '';
}

/** What the key step says when no key is there: the two ways on, and which one a local judge takes. */
export function noKeyQuestion(baseUrl: string): string {
  return messageText(
    `No judge API key is set: neither stored by "Agent RL: Set Judge API Key" nor in $${JUDGE_KEY_VARIABLE}. A hosted judge at ${baseUrl.trim()} needs one (agent-rl serve too: the key it printed or its --key-env variable's); a local server that checks no key (llama-server, Ollama) needs none.`,
    900,
  );
}
