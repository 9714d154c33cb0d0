// A task set as the rows of verl's RL parquet (the columns its RLHFDataset and ToolAgentLoop read, as in
// verl's examples/data_preprocess/gsm8k_tool_agent_loop.py): data_source, agent_name, prompt (chat
// messages), ability, reward_model {style, ground_truth}, extra_info {split, index, tools_kwargs, …}.
// In verl the model calls tools in Hermes format, so the prompts here ask for verl's code_interpreter
// tool (SandboxFusionTool pointed at `agent-rl sandbox serve`) instead of our text protocols.
import { environmentFactory } from '../../rl/envs/registry';
import { codeEnvOptions } from '../../rl/envs/codeSandbox/codeEnv';
import { calculatorOptions } from '../../rl/envs/calculator/calculatorEnv';
import { CODE_TASKS, formulaTasks } from '../../rl/tasks/codeTasks';
import type { RunConfig } from '../../shared/runConfig';

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
    readonly tools_kwargs: { readonly code_interpreter: { readonly create_kwargs: { readonly ground_truth: string } } };
  };
}

export interface VerlTaskSet {
  readonly train: VerlRow[];
  readonly heldOut: VerlRow[];
  /** Tool calls a task allows (the environment's budget): verl's max_assistant_turns is this + 1 (the answer). */
  readonly toolCalls: number;
}

/** Builds the rows of a run config's task set, or undefined when the provider does not know its environment. */
export type VerlTaskProvider = (config: RunConfig) => VerlTaskSet | undefined;

export const CALCULATOR_SOURCE = 'agent-rl/calculator';
export const CODE_SOURCE = 'agent-rl/code';

const TOOL_HINT = 'You can run Python with the code_interpreter tool and read its output.';

function row(source: string, ability: string, system: string, user: string, groundTruth: string, split: 'train' | 'test', index: number, taskId: string): VerlRow {
  return {
    data_source: source, agent_name: 'tool_agent', ability,
    prompt: [{ role: 'system', content: system }, { role: 'user', content: user }],
    reward_model: { style: 'rule', ground_truth: groundTruth },
    extra_info: { split, index: BigInt(index), task_id: taskId, need_tools_kwargs: true, tools_kwargs: { code_interpreter: { create_kwargs: { ground_truth: groundTruth } } } },
  };
}

/** The built-in environments' task sets: calculator (expressions) and code (functions or formulas). */
const builtIn: VerlTaskProvider = (config) => {
  const tasks = environmentFactory(config.env).tasks(config.envOptions);
  if (config.env === 'calculator') {
    const system = `You solve integer arithmetic (/ is floor division). ${TOOL_HINT} End with the final answer as \\boxed{N}.`;
    const build = (split: 'train' | 'test') => (t: (typeof tasks.train)[number], i: number): VerlRow =>
      row(CALCULATOR_SOURCE, 'math', system, `Compute ${String(t.data.expression)}.`, String(t.data.answer), split, i, t.id);
    return { train: tasks.train.map(build('train')), heldOut: tasks.heldOut.map(build('test')), toolCalls: calculatorOptions(config.envOptions).maxCalls };
  }
  if (config.env === 'code') {
    const o = codeEnvOptions(config.envOptions);
    const byId = new Map((o.taskSet === 'formulas' ? formulaTasks() : CODE_TASKS).map((t) => [t.id, t]));
    const system = `You are a careful Python programmer. ${TOOL_HINT} When your function is right, give its final version in one \`\`\`python block.`;
    const build = (split: 'train' | 'test') => (task: (typeof tasks.train)[number], i: number): VerlRow => {
      const t = byId.get(task.id)!;
      const user = `Write a Python function ${t.fn} that should ${t.description}. For example, print(${t.fn}(${t.publicArgs})) prints ${t.publicOutput}.`;
      const truth = JSON.stringify({ fn: t.fn, public_args: t.publicArgs, public_output: t.publicOutput, hidden: t.hidden, reference: t.reference });
      return row(CODE_SOURCE, 'code', system, user, truth, split, i, t.id);
    };
    return { train: tasks.train.map(build('train')), heldOut: tasks.heldOut.map(build('test')), toolCalls: o.maxExecutions };
  }
  return undefined;
};

/** Providers, most specific first; workspace task sets (JSONL/CSV/Parquet files) plug in with registerVerlTaskProvider. */
const providers: VerlTaskProvider[] = [builtIn];

export function registerVerlTaskProvider(p: VerlTaskProvider): void {
  providers.unshift(p);
}

export class VerlExportError extends Error {
  override name = 'VerlExportError';
}

export function verlTaskSet(config: RunConfig): VerlTaskSet {
  for (const p of providers) {
    const set = p(config);
    if (set) return set;
  }
  throw new VerlExportError(`env ${config.env}: no verl task set for it (its actions are not tool calls a language model makes). Fix: export a calculator or code config.`);
}
