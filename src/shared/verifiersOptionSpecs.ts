// The option table of a verifiers environment (env "verifiers", rl/envs/verifiers): a Python module
// written with Prime Intellect's verifiers library, loaded with load_environment(**args) (0.3.x) or as
// the vf.Taskset it exports with args as its config (0.4.x), and played
// through the policy's OpenAI-compatible endpoint, as your own agent program is.
import type { OptionSpecs } from './fieldSpec';
import { AGENT_OPTION_SPECS, WORKSPACE_OPTION_SPECS } from './workspaceOptionSpecs';

/** A Python module name as envOptions.module takes it: dotted identifiers (my_env, pkg.my_env), no .py and no path. */
export const PYTHON_MODULE_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export const VERIFIERS_OPTION_SPECS = {
  root: {
    ...WORKSPACE_OPTION_SPECS.root,
    description:
      'Folder the Python runs in and imports the module from (first on its path); empty = the folder of the config file (set by agent-rl and the workbench), else the current folder.',
    reason: 'an environment module travels with its config',
  },
  module: {
    kind: 'string',
    maxLength: 500,
    default: '',
    description:
      'The environment: a Python module name (a module or package in root, or one installed in the interpreter, e.g. "vf_gsm8k") whose load_environment(**args) returns a verifiers Environment (SingleTurnEnv, ToolEnv, MultiTurnEnv, …; verifiers 0.3.x), or that exports a vf.Taskset subclass in __all__ (verifiers 0.4.x, verifiers.v1).',
    reason: 'required: the environment is yours',
  },
  args: {
    kind: 'object',
    default: {},
    description:
      'Keyword arguments of load_environment (0.3.x, e.g. {"num_train_examples": 200}), or the fields of the exported taskset\'s config (0.4.x, e.g. {"num_tasks": 200}), as JSON.',
    reason: "none: the environment's own defaults",
  },
  python: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      'The Python interpreter with verifiers installed (0.3.x reads load_environment modules, 0.4.x verifiers.v1 tasksets: `node scripts/pythonVenv.mjs verifiers-0.4.0` makes one); empty = $AGENT_RL_VERIFIERS_PYTHON on this machine, else the venv `node scripts/pythonVenv.mjs verifiers-0.3.1` makes where it exists, else python3 on PATH.',
    reason: 'the interpreter you installed verifiers into',
  },
  maxTasks: {
    kind: 'integer',
    min: 1,
    max: 1_000_000,
    default: 20_000,
    description:
      'Most dataset rows (train and eval together) a run takes: an environment whose dataset holds more is refused before the run starts (load fewer with its own args, e.g. num_train_examples).',
    reason: 'every row is held in memory as a task and sent to each episode; tens of thousands is far more than a run samples',
  },
  heldOutFraction: {
    ...WORKSPACE_OPTION_SPECS.heldOutFraction,
    description:
      "Share of the dataset held out for evaluation when the environment has no eval dataset (chosen by a hash of the row's id and splitSeed); with an eval dataset, that is the held-out set.",
  },
  splitSeed: WORKSPACE_OPTION_SPECS.splitSeed,
  timeoutMs: {
    ...AGENT_OPTION_SPECS.timeoutMs,
    description: "Wall-clock limit of one episode (the environment's rollout and its rubric): stopped with reward 0 when it runs longer.",
  },
  loadTimeoutMs: {
    kind: 'integer',
    min: 1000,
    max: 3_600_000,
    default: 120_000,
    description: 'Wall-clock limit of loading the environment and reading its datasets when the run opens.',
    reason: 'two minutes: a dataset from the Hugging Face cache loads in seconds',
  },
  concurrency: {
    ...AGENT_OPTION_SPECS.concurrency,
    description:
      "Episodes in play at once: each is an asyncio task of the run's one Python process (which loads the environment once), and their pending requests share one sampling batch.",
    reason: '16 requests at once sample 1.9× faster than one at a time on 2 cores (npm run bench agentEndpoint)',
  },
  stderrBytes: {
    ...AGENT_OPTION_SPECS.stderrBytes,
    description: "The end of an episode's stderr kept with it (a failed rollout's or rubric's Python traceback; the inspector shows it).",
  },
  successThreshold: {
    ...WORKSPACE_OPTION_SPECS.successThreshold,
    description: "An episode succeeds when the rubric's reward reaches this.",
  },
} as const satisfies OptionSpecs;
