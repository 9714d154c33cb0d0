// A workspace environment with a tool file or a reward file, exported for verl:
//   agent_rl_tools.yaml              verl's tool config: AgentRlWorkspaceTool once per tool of the file, each
//                                    with its schema (as the workbench shows it to a model, in verl's schema model)
//   agent_rl_workspace_tool.py       the tool class (verl BaseTool), which runs the calls in `agent-rl sandbox serve`
//   agent_rl_workspace_reward.py     compute_score: the episode rebuilt from verl's decoded text, the workspace's
//                                    reward run in the same sandbox
//   agent_rl_tool_runner.py          the program both send to /run_code (the tool zygote's session half + toolRunner.py)
//   agent_rl_workspace.json          their settings (sandbox URL, limits, reward settings, tool names): data, never code
//   agent_rl_env/<tools>, <reward>   the workspace's files, read as text and sent to the sandbox
// The rows carry the task as the reward reads it (extra_info.agent_rl_task, JSON) and a create_kwargs per tool.
import * as path from 'node:path';
import { stringify } from 'yaml';
import { FINAL_ACTIONS } from '../../shared/episodeStats';
import type { RunConfig } from '../../shared/runConfig';
import type { Task } from '../../rl/envs/environment';
import { MAX_ACTION_CHARS } from '../../rl/envs/parsers';
import { RESERVED_TOOL_NAMES } from '../../rl/envs/workspace/toolCalls';
import type { ToolSpec } from '../../rl/envs/workspace/toolSession';
import { TOOL_ZYGOTE_PY } from '../../rl/envs/workspace/toolZygotePy.generated';
import { rewardTask } from '../../rl/envs/workspace/taskSource';
import { prepareWorkspace, type PreparedWorkspace } from '../../rl/envs/workspace/workspaceEnv';
import { scalarText, workspaceTaskData } from '../../rl/envs/workspace/taskRecords';
import { TOOL_RUNNER_PY, WORKSPACE_REWARD_PY, WORKSPACE_TOOL_PY } from './workspacePy.generated';
import { VerlExportError, WORKSPACE_SOURCE, type ChatMessage, type VerlRow, type VerlTaskSet } from './verlTasks';
import { TOOL_WORKERS } from './verlTools';

export const WORKSPACE_TOOL_CONFIG = 'agent_rl_tools.yaml';
export const WORKSPACE_REWARD_FILE = 'agent_rl_workspace_reward.py';
export const WORKSPACE_TOOL_MODULE = 'agent_rl_workspace_tool';
const SETTINGS_FILE = 'agent_rl_workspace.json';
const RUNNER_FILE = 'agent_rl_tool_runner.py';
const ENV_DIR = 'agent_rl_env';

/** Whether a config takes this route: a workspace environment with its own tools or reward. */
export function isWorkspaceWithFiles(config: RunConfig): boolean {
  return (
    config.env === 'workspace' && (config.envOptions.tools !== '' || (config.envOptions.reward !== 'exact_match' && config.envOptions.reward !== 'unit_tests'))
  );
}

// The session half of the tool zygote: from its imports to the line where the zygote's own part begins.
const SESSION_START = 'import ast, inspect, io, re, traceback, types, typing\n';
const SESSION_END = '# ---- the zygote:';

/**
 * The program sent to /run_code: the workbench's own session code (load, invoke, the argument checks and
 * the cut of long results), so an answer there is the answer a workbench session gives, then the runner.
 */
export function toolRunnerProgram(): string {
  const start = TOOL_ZYGOTE_PY.indexOf(SESSION_START);
  const end = TOOL_ZYGOTE_PY.indexOf(SESSION_END);
  if (start < 0 || end < start)
    throw new Error(
      'toolZygote.py no longer has its session half between "import ast, inspect, …" and "# ---- the zygote:"; update toolRunnerProgram in verlWorkspace.ts',
    );
  return `# agent-rl's tool runner for \`agent-rl sandbox serve\` (written by agent-rl export verl; sent as code, never imported)\nimport json, linecache, os, signal, sys\n${TOOL_ZYGOTE_PY.slice(start, end)}${TOOL_RUNNER_PY}`;
}

type VerlProperty = { type: string; description?: string; enum?: string[] };

/** What the workbench's signature shows for a parameter's type (toolZygote.py type_name), as verl's one type string. */
function typeText(s: Record<string, unknown>): string {
  if (typeof s.type === 'string') return s.type;
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (Array.isArray(s.anyOf)) return (s.anyOf as Record<string, unknown>[]).map(typeText).join(' | ');
  return 'any';
}

/**
 * A parameter's JSON schema in verl's OpenAIFunctionPropertySchema (type: str, description, enum: list[str]);
 * verl's model keeps nothing else, so a union or a non-text enum becomes its type text, and items and
 * defaults are dropped (the workbench's <tools> JSON shows them).
 */
export function verlProperty(s: Record<string, unknown>): VerlProperty {
  const stringEnum = Array.isArray(s.enum) && s.enum.every((v) => typeof v === 'string');
  return {
    type: stringEnum ? 'string' : typeText(s),
    ...(typeof s.description === 'string' ? { description: s.description } : {}),
    ...(stringEnum ? { enum: s.enum as string[] } : {}),
  };
}

/** The tool config verl's registry reads (verl/tools/utils/tool_registry.py): one entry per tool. */
export function workspaceToolConfigYaml(tools: readonly ToolSpec[]): string {
  return stringify({
    tools: tools.map((t) => ({
      class_name: `${WORKSPACE_TOOL_MODULE}.AgentRlWorkspaceTool`,
      // the sandbox and the tool file are in agent_rl_workspace.json, beside the module; num_workers: the
      // threads the calls wait for the sandbox on (one pool for the file's tools, not verl's default executor)
      config: { type: 'native', num_workers: TOOL_WORKERS },
      tool_schema: {
        type: 'function',
        function: {
          name: t.name,
          description: t.description,
          parameters: {
            type: 'object',
            properties: Object.fromEntries(Object.entries(t.parameters.properties).map(([k, v]) => [k, verlProperty(v as Record<string, unknown>)])),
            required: [...t.parameters.required],
          },
        },
      },
    })),
  });
}

const SYSTEM = 'Call the tools when they help. End with the final answer as <answer>...</answer>.';

/** The rows: the task's own messages or its prompt, the task for the reward, a create_kwargs per tool. */
export function workspaceRows(p: PreparedWorkspace): VerlTaskSet {
  const names = p.tools.map((t) => t.name);
  const build =
    (split: 'train' | 'test') =>
    (t: Task, i: number): VerlRow => {
      const d = workspaceTaskData(t);
      const gt = d.groundTruth;
      const golds = gt === undefined || gt === null ? null : Array.isArray(gt) ? gt.map(scalarText) : [scalarText(gt)];
      const own = d.messages?.filter((m): m is ChatMessage => m.role === 'system' || m.role === 'user') ?? [];
      const prompt: ChatMessage[] =
        own.length > 0
          ? own.some((m) => m.role === 'system')
            ? own
            : [{ role: 'system', content: SYSTEM }, ...own]
          : [
              { role: 'system', content: SYSTEM },
              { role: 'user', content: t.prompt },
            ];
      return {
        data_source: WORKSPACE_SOURCE,
        agent_name: 'tool_agent',
        prompt,
        ability: 'tools',
        reward_model: { style: 'rule', ground_truth: golds?.[0] ?? '' },
        extra_info: {
          split,
          index: BigInt(i),
          task_id: t.id,
          need_tools_kwargs: names.length > 0,
          tools_kwargs: Object.fromEntries(names.map((n) => [n, { create_kwargs: { task_id: t.id } }])),
          agent_rl_task: JSON.stringify({ task: rewardTask(t), golds }),
        },
      };
    };
  return { train: p.tasks.train.map(build('train')), heldOut: p.tasks.heldOut.map(build('test')), toolCalls: p.options.maxCalls };
}

/** The settings both modules read (agent_rl_workspace.json). */
export function workspaceSettings(p: PreparedWorkspace, sandboxUrl: string): Record<string, unknown> {
  const o = p.options;
  return {
    sandbox_url: sandboxUrl,
    runner_file: RUNNER_FILE,
    tools_file: p.toolFile ? `${ENV_DIR}/${p.toolFile.name}` : null,
    tools_filename: p.toolFile?.name ?? null,
    tool_names: p.tools.map((t) => t.name),
    limits: {
      timeout_ms: o.limits.timeoutMs,
      tail_bytes: o.limits.tailBytes,
      output_cap_bytes: o.limits.outputCapBytes,
      memory_limit_mb: Math.round(o.limits.memoryBytes / 2 ** 20),
    },
    max_calls: o.maxCalls,
    max_action_chars: MAX_ACTION_CHARS,
    reserved_tool_names: [...new Set([...FINAL_ACTIONS, ...RESERVED_TOOL_NAMES])],
    reward: {
      kind: p.rewardFile ? 'file' : o.reward,
      file: p.rewardFile ? `${ENV_DIR}/${p.rewardFile.name}` : null,
      filename: p.rewardFile?.name ?? null,
      format_bonus: o.formatBonus,
      call_cost: o.callCost,
      success_threshold: o.successThreshold,
    },
  };
}

/**
 * Tool responses verl must pass whole (actor_rollout_ref.rollout.multi_turn.max_tool_response_length,
 * 256 characters by default, cuts the middle out): a reply's printed text and result, each up to
 * tailBytes plus the cut notice, and the restart notice.
 */
export const toolResponseChars = (p: PreparedWorkspace): number => 2 * p.options.limits.tailBytes + 400;

/**
 * The longest run_timeout (seconds) the exported tool and reward ask the sandbox for: an episode's replay
 * (workspaceSession.py run_in_sandbox) gets timeoutMs for each call and one more for the import, up to
 * maxCalls calls.
 */
export const workspaceSandboxSeconds = (p: PreparedWorkspace): number => (p.options.limits.timeoutMs / 1000) * (Math.max(1, p.options.maxCalls) + 1);

export interface WorkspaceExport {
  readonly set: VerlTaskSet;
  readonly files: [string, string][];
  readonly toolResponseChars: number;
  readonly sandboxSeconds: number;
}

/** Loads and checks the workspace (tasks, tools, the reward on a recorded episode) and builds its export. */
export async function exportWorkspace(config: RunConfig, sandboxUrl: string): Promise<WorkspaceExport> {
  if (config.env !== 'workspace') throw new Error('exportWorkspace: not a workspace config');
  if (config.envOptions.toolFormat === 'code')
    throw new VerlExportError(
      'envOptions.toolFormat "code": in verl the model calls tools as Hermes <tool_call> JSON (verl\'s tool parser), not in Python blocks. Fix: use "hermes" (or "call") to export; the tools are exported as function tools either way',
    );
  const p = await prepareWorkspace(config.envOptions);
  try {
    const files: [string, string][] = [
      [WORKSPACE_TOOL_CONFIG, workspaceToolConfigYaml(p.tools)],
      [`${WORKSPACE_TOOL_MODULE}.py`, WORKSPACE_TOOL_PY],
      [WORKSPACE_REWARD_FILE, WORKSPACE_REWARD_PY],
      [RUNNER_FILE, toolRunnerProgram()],
      [SETTINGS_FILE, `${JSON.stringify(workspaceSettings(p, sandboxUrl), null, 2)}\n`],
      ...(p.toolFile ? [[path.posix.join(ENV_DIR, p.toolFile.name), p.toolFile.source] as [string, string]] : []),
      ...(p.rewardFile ? [[path.posix.join(ENV_DIR, p.rewardFile.name), p.rewardFile.source] as [string, string]] : []),
    ];
    if (p.toolFile && p.rewardFile && p.toolFile.name === p.rewardFile.name)
      throw new VerlExportError(
        `envOptions.tools and envOptions.reward are both named ${p.toolFile.name}: the export copies both into ${ENV_DIR}/. Fix: rename one of the files`,
      );
    return { set: workspaceRows(p), files, toolResponseChars: toolResponseChars(p), sandboxSeconds: workspaceSandboxSeconds(p) };
  } finally {
    await p.close();
  }
}
