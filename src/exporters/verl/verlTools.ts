// The tools of the calculator, code and plain workspace exports (a workspace with a tool file or a reward
// file writes its own: verlWorkspace.ts):
//   agent_rl_tools.yaml   verl's tool config: one of the classes below, its config and its schema
//   agent_rl_tools.py     the workbench's own verl BaseTool classes (python/sandboxClient.py + builtinTools.py):
//                         AgentRlCalculatorTool, the calculator environment's op(a, b), answered in Python;
//                         AgentRlCodeTool, the code environment's execute_code, run in `agent-rl sandbox serve`
//                         and shown as the code environment shows an execution
// verl 0.9.1 ships no SandboxFusionTool (verl.tools.sandbox_fusion_tools is gone), which these exports
// named until then; verl's tool registry imports agent_rl_tools by module name, so the export folder goes
// on the workers' PYTHONPATH (main_ppo.sh sets it; a Ray job's working_dir is on it).
import { stringify } from 'yaml';
import { DEFAULT_LIMITS } from '../../rl/sandbox/limits';
import type { RunConfig } from '../../shared/runConfig';
import { BUILTIN_TOOLS_PY } from './builtinToolsPy.generated';

export const BUILTIN_TOOL_CONFIG = 'agent_rl_tools.yaml';
export const BUILTIN_TOOLS_MODULE = 'agent_rl_tools';
/** The tool names the rows' prompts and tools_kwargs use. */
export const CALCULATOR_TOOL = 'calculator';
export const CODE_TOOL = 'code_interpreter';

/** What AgentRlCodeTool reads from its config entry (builtinTools.py). */
export interface CodeToolConfig {
  readonly type: 'native';
  /** The /run_code URL (AGENT_RL_SANDBOX_URL overrides it when the tool runs). */
  readonly sandbox_url: string;
  /** The environment's wall-clock limit per execution (ms). */
  readonly timeout_ms: number;
  /** The environment's address-space limit (MB; the code environment's 512 MiB default). */
  readonly memory_limit_mb: number;
  /** Bytes of stdout and of stderr the observation keeps (their tails), as the environment's tailBytes. */
  readonly tail_bytes: number;
  /** Threads the tool's sandbox requests wait on (its own pool, not verl's default executor): the most in flight per agent-loop worker. */
  readonly num_workers: number;
}

/**
 * num_workers written in the tool configs (sandboxClient.py's DEFAULT_NUM_WORKERS): sandbox requests one
 * verl agent-loop worker process has in flight at most; they only wait on the network, so a thread each.
 */
export const TOOL_WORKERS = 32;

export interface BuiltinTools {
  /** name → content, written in the export folder. */
  readonly files: [string, string][];
  /**
   * multi_turn.max_tool_response_length where verl's default (256 characters, the middle cut out) would cut
   * the environment's observations: the code tool's two tails and its status lines.
   */
  readonly toolResponseChars?: number;
  /** The longest run_timeout (seconds) the tool asks the sandbox for; absent when it sends no code. */
  readonly sandboxSeconds?: number;
}

const calculatorEntry = {
  class_name: `${BUILTIN_TOOLS_MODULE}.AgentRlCalculatorTool`,
  config: { type: 'native' },
  tool_schema: {
    type: 'function',
    function: {
      name: CALCULATOR_TOOL,
      description: 'Integer arithmetic: add, sub, mul or div (floor division) of two integers a and b; returns the result.',
      parameters: {
        type: 'object',
        properties: {
          op: { type: 'string', description: 'The operation.', enum: ['add', 'sub', 'mul', 'div'] },
          a: { type: 'integer', description: 'The first operand.' },
          b: { type: 'integer', description: 'The second operand.' },
        },
        required: ['op', 'a', 'b'],
      },
    },
  },
};

function codeEntry(config: CodeToolConfig): Record<string, unknown> {
  return {
    class_name: `${BUILTIN_TOOLS_MODULE}.AgentRlCodeTool`,
    config,
    tool_schema: {
      type: 'function',
      function: {
        name: CODE_TOOL,
        description: 'Runs Python code in a sandbox; returns the ends of its stdout and stderr, and its exit code.',
        parameters: { type: 'object', properties: { code: { type: 'string', description: 'The Python program to run.' } }, required: ['code'] },
      },
    },
  };
}

/** The tool config and module of a calculator export (the calculator tool) or any other built-in export (the code tool). */
export function builtinTools(config: RunConfig, sandboxUrl: string): BuiltinTools {
  const module: [string, string] = [`${BUILTIN_TOOLS_MODULE}.py`, BUILTIN_TOOLS_PY];
  if (config.env === 'calculator') return { files: [[BUILTIN_TOOL_CONFIG, stringify({ tools: [calculatorEntry] })], module] };
  // the code and workspace environments' options carry the sandbox limits their observations are made
  // with; a task set another provider registered (registerVerlTaskProvider) gets the sandbox's defaults
  const { timeoutMs, tailBytes } = config.env === 'code' || config.env === 'workspace' ? config.envOptions : DEFAULT_LIMITS;
  const code: CodeToolConfig = {
    type: 'native',
    sandbox_url: sandboxUrl,
    timeout_ms: timeoutMs,
    memory_limit_mb: Math.round(DEFAULT_LIMITS.memoryBytes / 2 ** 20),
    tail_bytes: tailBytes,
    num_workers: TOOL_WORKERS,
  };
  return {
    files: [[BUILTIN_TOOL_CONFIG, stringify({ tools: [codeEntry(code)] })], module],
    toolResponseChars: 2 * tailBytes + 200,
    sandboxSeconds: timeoutMs / 1000,
  };
}
