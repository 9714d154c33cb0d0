// Start Run's steps for a Hugging Face model on an environment (issues 51 and 53), the parts that need
// no VS Code (tested in test/unit/host/startRunSteps.test.ts): the environment step's choices (the
// calculator, the code sandbox, a verifiers environment: a module name and its arguments as JSON,
// each checked as typed, an OpenEnv server the user runs: its URL, checked as typed, or a reasoning-gym
// task set: reasoningGymSteps.ts), the method step's (GRPO, RS-SFT, on-policy distillation from a
// teacher), the config they make (with a judge's reward from judgeSteps.ts on GRPO), the verifiers interpreter filled in from the machine setting, and what Start Run
// says when a teacher or an interpreter is refused before the run starts.
import { PYTHON_MODULE_NAME } from '../../shared/verifiersOptionSpecs';
import { messageText } from '../../shared/untrustedText';
import { judgeRewardSection, type JudgeChoices } from './judgeSteps';
import { reasoningGymEnvOptions, type ReasoningGymChoices } from './reasoningGymSteps';
import type { Choice } from './stepChoice';

/**
 * The sizes of a first run Start Run makes without a config file ("Your own agent program…", and a
 * model on an environment): long enough to see a reward (or a reverse KL) move on a laptop, short enough
 * to look at its episodes today; a *.agentrl.json asks for more (examples/own-agent/run.agentrl.json's).
 */
export const FIRST_AGENT_RUN = { iterations: 10, groupsPerIteration: 4, groupSize: 4, evalEpisodes: 24 } as const;

/** The environment step's values; 'reasoning-gym' is a workspace environment whose tasks are a generated set. */
export type StepEnv = 'calculator' | 'code' | 'verifiers' | 'openenv' | 'reasoning-gym';
export type StepMethod = 'grpo' | 'rs-sft' | 'distill';

export type { Choice } from './stepChoice';

/** The environment step: environments a Hugging Face model trains on with no file of its own, and a verifiers module. */
export const ENVIRONMENT_CHOICES: readonly Choice<StepEnv>[] = [
  { value: 'calculator', label: 'Calculator', description: 'arithmetic with a calculator tool, scored by the answer' },
  { value: 'code', label: 'Code', description: 'Python tasks the model writes and runs in the sandbox (agentRl.sandboxLevel), scored by their tests' },
  {
    value: 'verifiers',
    label: 'A verifiers environment…',
    description: 'your Python module written with verifiers (load_environment(**args)), trained unchanged: its name and its arguments as JSON',
  },
  {
    value: 'openenv',
    label: 'An OpenEnv server…',
    description: 'an environment served by openenv-core that you run (reset, step, state over its WebSocket session), trained unchanged: its URL',
  },
  {
    value: 'reasoning-gym',
    label: 'A reasoning-gym task set…',
    description:
      "one of reasoning-gym's generated datasets, scored by its own score_answer, held out on harder settings (a Python with reasoning-gym: docs/reasoning-gym.md)",
  },
];

/** The method step. */
export const METHOD_CHOICES: readonly Choice<StepMethod>[] = [
  { value: 'grpo', label: 'GRPO', description: "the environment's reward, group-relative advantages" },
  { value: 'rs-sft', label: 'RS-SFT', description: "fine-tune on the model's own successes (GRPO's control)" },
  {
    value: 'distill',
    label: 'On-policy distillation from a teacher…',
    description: 'a larger model with the same tokenizer scores every sampled token: the per-token reverse KL is the advantage',
  },
];

/** Why a typed module name is not one envOptions.module takes (undefined: it is). */
export function moduleNameProblem(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return 'Name the Python module that defines load_environment, e.g. vf_gsm8k for vf_gsm8k.py in the workspace folder';
  if (t.endsWith('.py')) return `Leave out .py: the module of ${t} is ${t.slice(0, -3)}`;
  if (!PYTHON_MODULE_NAME.test(t)) return 'A Python module name: letters, digits and _, dotted for a package (my_env, pkg.my_env), no path';
  return undefined;
}

/** load_environment's keyword arguments typed as JSON: the object, or why it is not one. */
export function parseEnvArgs(text: string): { readonly args: Record<string, unknown> } | { readonly problem: string } {
  const t = text.trim() === '' ? '{}' : text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(t);
  } catch (e) {
    return { problem: `Not valid JSON (${e instanceof Error ? e.message : String(e)}): e.g. {"num_train_examples": 200}, or {} for its defaults` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { problem: 'load_environment takes keyword arguments: a JSON object, e.g. {"num_train_examples": 200}, or {} for its defaults' };
  return { args: parsed as Record<string, unknown> };
}

/**
 * Why a typed OpenEnv server address is not one envOptions.url takes (undefined: it is): an http(s) URL,
 * as the run checks it when it opens (the session's ws:// address follows from it). A server the run
 * would start is a config file's `command`, never typed here: Start Run shows that command before it runs.
 */
export function openenvUrlProblem(text: string): string | undefined {
  const t = text.trim();
  if (t === '') return 'Type the address of your running OpenEnv server, e.g. http://127.0.0.1:8000';
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    return `Not a URL: the server's address with its scheme, e.g. http://127.0.0.1:8000`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `${u.protocol} is not http: or https:: the server's http address (the WebSocket session's ws:// address follows from it)`;
  return undefined;
}

/**
 * What the steps chose. `verifiers.root`: the folder the module is imported from (the workspace
 * folder); `openenv.url`: the server's address; `judge`: a judge's score added to the reward (GRPO only).
 */
export interface ModelRunChoices {
  readonly env: StepEnv;
  readonly model: string;
  readonly method: StepMethod;
  readonly teacher?: string;
  readonly verifiers?: { readonly module: string; readonly args: Record<string, unknown>; readonly root: string };
  readonly openenv?: { readonly url: string };
  readonly reasoningGym?: ReasoningGymChoices;
  readonly judge?: JudgeChoices;
}

/** The run config the steps make (validated by Start Run as any other: the first problem names the field). */
export function modelRunConfig(c: ModelRunChoices): Record<string, unknown> {
  return {
    env: c.env === 'reasoning-gym' ? 'workspace' : c.env,
    policy: 'transformer',
    method: c.method,
    ...FIRST_AGENT_RUN,
    ...(c.verifiers ? { envOptions: { root: c.verifiers.root, module: c.verifiers.module, args: c.verifiers.args } } : {}),
    ...(c.openenv ? { envOptions: { url: c.openenv.url } } : {}),
    ...(c.reasoningGym ? { envOptions: reasoningGymEnvOptions(c.reasoningGym) } : {}),
    policyOptions: { model: c.model, ...(c.method === 'distill' && c.teacher ? { teacher: c.teacher } : {}) },
    // a judge's score feeds GRPO's group advantages: the config rules refuse it on another method
    ...(c.judge && c.method === 'grpo' ? { reward: judgeRewardSection(c.judge) } : {}),
  };
}

/**
 * A verifiers config with its interpreter from this machine: agentRl.verifiersPythonPath where the
 * config names none (a config's own envOptions.python is kept, and shown before it runs).
 */
export function withVerifiersPython(config: Record<string, unknown>, setting: string): Record<string, unknown> {
  if (config.env !== 'verifiers' || setting === '') return config;
  const eo = typeof config.envOptions === 'object' && config.envOptions !== null ? (config.envOptions as Record<string, unknown>) : {};
  if (typeof eo.python === 'string' && eo.python !== '') return config;
  return { ...config, envOptions: { ...eo, python: setting } };
}

/** A teacher refused before the run starts: the run's own message (it names both folders and the fix). */
export function teacherRefusedMessage(problem: string): string {
  return messageText(`Agent RL: the run was not started: ${problem}`, 900);
}

/** The Python a verifiers environment would run on cannot import verifiers: which one, why it was chosen, the fix. */
export function verifiersMissingMessage(problem: string, setting: string): string {
  const chosen =
    setting !== ''
      ? 'agentRl.verifiersPythonPath'
      : 'no agentRl.verifiersPythonPath, so $AGENT_RL_VERIFIERS_PYTHON, else the cached venv ~/.cache/agent-rl-workbench/venvs/verifiers-0.3.1, else python3';
  return messageText(
    `Agent RL: the verifiers environment was not started: ${problem} (the interpreter from ${chosen}). Fix: install verifiers there (pip install verifiers==0.3.1 for a load_environment module, verifiers==0.4.0 for a verifiers.v1 taskset), or set agentRl.verifiersPythonPath to a Python that has it (node scripts/pythonVenv.mjs verifiers-0.3.1 or verifiers-0.4.0 makes one)`,
    900,
  );
}
