// A task set as the rows of verl's RL parquet (the columns its RLHFDataset and ToolAgentLoop read, as in
// verl's examples/data_preprocess/gsm8k_tool_agent_loop.py): data_source, agent_name, prompt (chat
// messages), ability, reward_model {style, ground_truth}, extra_info {split, index, tools_kwargs, …}.
// In verl the model calls tools in Hermes format, so the prompts here name the export's tools (verlTools.ts:
// calculator for the calculator, code_interpreter, run in `agent-rl sandbox serve`, for code and a plain
// workspace) instead of our text protocols.
import type { RunEnvironment } from '../../rl/envs/environment';
import { codeTaskOf } from '../../rl/envs/codeSandbox/codeEnv';
import { scalarText, workspaceTaskData } from '../../rl/envs/workspace/taskRecords';
import type { RunConfig } from '../../shared/runConfig';
import { CALCULATOR_TOOL, CODE_TOOL } from './verlTools';

export interface ChatMessage {
  readonly role: 'system' | 'user';
  readonly content: string;
}

export interface VerlRow {
  readonly data_source: string;
  readonly agent_name: string;
  readonly prompt: readonly ChatMessage[];
  readonly ability: string;
  readonly reward_model: { readonly style: 'rule'; readonly ground_truth: string };
  readonly extra_info: {
    readonly split: 'train' | 'test';
    readonly index: bigint;
    readonly task_id: string;
    readonly need_tools_kwargs: boolean;
    /** Tool name → its create_kwargs (verl's ToolAgentLoop passes them to the tool's create()). */
    readonly tools_kwargs: Readonly<Record<string, { readonly create_kwargs: Readonly<Record<string, string>> }>>;
    /** A workspace environment's task as its reward reads it (JSON; verlWorkspace.ts). */
    readonly agent_rl_task?: string;
  };
}

export interface VerlTaskSet {
  readonly train: VerlRow[];
  readonly heldOut: VerlRow[];
  /** Tool calls a task allows (the environment's budget): verl's max_assistant_turns is this + 1 (the answer). */
  readonly toolCalls: number;
}

/** Builds the rows of a run config's task set, or undefined when the provider does not know its environment. */
/** A task set for verl from a config and its opened environment (undefined: not this provider's environment). */
export type VerlTaskProvider = (config: RunConfig, env: RunEnvironment) => VerlTaskSet | undefined;

export const CALCULATOR_SOURCE = 'agent-rl/calculator';
export const CODE_SOURCE = 'agent-rl/code';

const TOOL_HINT = `You can run Python with the ${CODE_TOOL} tool and read its output.`;
const CALCULATOR_HINT = `You can call the ${CALCULATOR_TOOL} tool (add, sub, mul, div of two integers) and read its result.`;

function row(
  source: string,
  ability: string,
  system: string,
  user: string,
  groundTruth: string,
  split: 'train' | 'test',
  index: number,
  taskId: string,
  tool: string = CODE_TOOL,
): VerlRow {
  return {
    data_source: source,
    agent_name: 'tool_agent',
    ability,
    prompt: [
      { role: 'system', content: system },
      { role: 'user', content: user },
    ],
    reward_model: { style: 'rule', ground_truth: groundTruth },
    extra_info: {
      split,
      index: BigInt(index),
      task_id: taskId,
      need_tools_kwargs: true,
      tools_kwargs: { [tool]: { create_kwargs: { ground_truth: groundTruth } } },
    },
  };
}

/** The built-in environments' task sets: calculator (expressions) and code (functions or formulas). */
const builtIn: VerlTaskProvider = (config, env) => {
  const tasks = env.tasks();
  if (config.env === 'calculator') {
    const system = `You solve integer arithmetic (/ is floor division). ${CALCULATOR_HINT} End with the final answer as \\boxed{N}.`;
    const build =
      (split: 'train' | 'test') =>
      (t: (typeof tasks.train)[number], i: number): VerlRow =>
        row(CALCULATOR_SOURCE, 'math', system, `Compute ${String(t.data.expression)}.`, String(t.data.answer), split, i, t.id, CALCULATOR_TOOL);
    return { train: tasks.train.map(build('train')), heldOut: tasks.heldOut.map(build('test')), toolCalls: config.envOptions.maxCalls };
  }
  if (config.env === 'code') {
    const o = config.envOptions;
    const system = `You are a careful Python programmer. ${TOOL_HINT} When your function is right, give its final version in one \`\`\`python block.`;
    const build =
      (split: 'train' | 'test') =>
      (task: (typeof tasks.train)[number], i: number): VerlRow => {
        const t = codeTaskOf(task);
        const user = `Write a Python function ${t.fn} that should ${t.description}. For example, print(${t.fn}(${t.publicArgs})) prints ${t.publicOutput}.`;
        const truth = JSON.stringify({ fn: t.fn, public_args: t.publicArgs, public_output: t.publicOutput, hidden: t.hidden, reference: t.reference });
        return row(CODE_SOURCE, 'code', system, user, truth, split, i, t.id);
      };
    return { train: tasks.train.map(build('train')), heldOut: tasks.heldOut.map(build('test')), toolCalls: o.maxExecutions };
  }
  return undefined;
};

export const WORKSPACE_SOURCE = 'agent-rl/workspace';

/** Why a config cannot be exported: thrown before any file is read or written. */
export function checkVerlExportable(config: RunConfig): void {
  if (config.policy === 'transformer' && config.policyOptions.constrainedDecoding) {
    throw new VerlExportError(
      "policyOptions.constrainedDecoding true: the exported verl rollout samples without the environment's action grammar, so it would train on other episodes than this config does. Fix: set it to false to export",
    );
  }
  if (config.env === 'verifiers' || config.env === 'agent') {
    // their tasks and rewards live in the user's Python (a verifiers module, an agent program): reading them means running it
    throw new VerlExportError(
      `env "${config.env}": its tasks and rewards are the user's own program's, which export verl would have to run to read. Fix: export an environment whose tasks the workbench holds (calculator, code, workspace)`,
    );
  }
  if (config.env === 'openenv') {
    // its episodes and rewards are a server's, which verl's rollout would have to reach: no task file holds them
    throw new VerlExportError(
      'env "openenv": its episodes and rewards are an OpenEnv server\'s, which no exported task file holds. Fix: export an environment whose tasks the workbench holds (calculator, code, workspace)',
    );
  }
  if (config.env === 'calculator') {
    // the exported calculator reward scores the answer and its format only
    const { callCost, formatErrorCost } = config.envOptions;
    const charged = Object.entries({ callCost, formatErrorCost }).filter(([, v]) => v > 0);
    if (charged.length > 0)
      throw new VerlExportError(
        `${charged.map(([k, v]) => `envOptions.${k} ${v}`).join(', ')}: the exported calculator reward (agent_rl_reward.py) scores the answer and its format only and would train on a different reward. Fix: set ${charged.length > 1 ? 'them' : 'it'} to 0 to export`,
      );
    return;
  }
  if (config.env !== 'workspace') return;
  const o = config.envOptions;
  if (o.reward !== 'exact_match' && o.reward !== 'unit_tests' && !o.reward.endsWith('.py')) {
    throw new VerlExportError(
      `envOptions.reward "${o.reward}": neither a built-in (exact_match, unit_tests) nor a Python file. Fix: name a .py file defining reward(task, trajectory), or a built-in`,
    );
  }
}

/**
 * A workspace task set without a tool file or a reward file (its files were read by the environment's
 * prepare()): the task's own chat messages or its prompt as the user's, the ground truth as text, the
 * tests as JSON for unit_tests, scored by agent_rl_reward.py from the decoded text. A workspace with a
 * tool file or a reward file exports through verlWorkspace.ts instead.
 */
const workspace: VerlTaskProvider = (config, env) => {
  if (config.env !== 'workspace') return undefined;
  checkVerlExportable(config);
  const o = config.envOptions;
  // a tool file or a reward file: exportVerl takes verlWorkspace.ts's route, never this one
  if (o.tools !== '' || (o.reward !== 'exact_match' && o.reward !== 'unit_tests')) return undefined;
  const tasks = env.tasks();
  const system =
    o.reward === 'unit_tests'
      ? `You write Python. ${TOOL_HINT} When your code is right, give its final version in one \`\`\`python block.`
      : `${TOOL_HINT} End with the final answer as \\boxed{...}.`;
  const build =
    (split: 'train' | 'test') =>
    (t: (typeof tasks.train)[number], i: number): VerlRow => {
      const d = workspaceTaskData(t);
      const truth =
        o.reward === 'unit_tests'
          ? JSON.stringify({ tests: d.privateTests, public_tests: d.publicTests })
          : d.groundTruth === undefined
            ? ''
            : scalarText(d.groundTruth);
      const r = row(WORKSPACE_SOURCE, o.reward === 'unit_tests' ? 'code' : 'qa', system, t.prompt, truth, split, i, t.id);
      const own = d.messages?.filter((m): m is ChatMessage => m.role === 'system' || m.role === 'user');
      return own && own.length > 0 ? { ...r, prompt: own.some((m) => m.role === 'system') ? own : [{ role: 'system', content: system }, ...own] } : r;
    };
  return { train: tasks.train.map(build('train')), heldOut: tasks.heldOut.map(build('test')), toolCalls: o.maxCalls };
};

/** Providers, most specific first. */
const providers: VerlTaskProvider[] = [workspace, builtIn];

export function registerVerlTaskProvider(p: VerlTaskProvider): void {
  providers.unshift(p);
}

export class VerlExportError extends Error {
  override name = 'VerlExportError';
}

export function verlTaskSet(config: RunConfig, env: RunEnvironment): VerlTaskSet {
  for (const p of providers) {
    const set = p(config, env);
    if (set) return set;
  }
  throw new VerlExportError(
    `env ${config.env}: no verl task set for it (its actions are not tool calls a language model makes). Fix: export a calculator or code config.`,
  );
}
