// The option tables of the environments whose tasks come from your files: a workspace environment
// (tasks, tools and reward from files) and your own agent program (the same task files, its own
// process per episode). The agent's table reuses the workspace's task-file options.
import type { OptionSpec, OptionSpecs } from './fieldSpec';
import { PYTHON_OPTION, SANDBOX_RANGES } from './sandboxOptionSpecs';

const fieldOption = (what: string) =>
  ({
    kind: 'string',
    maxLength: 500,
    default: '',
    description: `The record field (a dotted path such as extra_info.index) that holds ${what}; empty = the preset's.`,
    reason: 'the preset names the usual field',
  }) as const satisfies OptionSpec;

/** A workspace environment: tasks, tools and reward from files (rl/envs/workspace). Paths are relative to `root`. */
export const WORKSPACE_OPTION_SPECS = {
  root: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      'Folder the tasks, tools and reward paths are relative to; empty = the folder of the config file (set by agent-rl and the workbench), else the current folder.',
    reason: 'a config travels with its files',
  },
  tasks: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      'Task file or glob: JSON Lines (.jsonl), JSON (.json, an array), CSV (.csv, a header row) or Parquet (.parquet), e.g. "data/train.jsonl" or "data/*.parquet".',
    reason: 'required: the tasks are yours',
  },
  taskSet: {
    kind: 'string',
    maxLength: 200,
    default: '',
    description:
      'Generated tasks instead of task files: "reasoning-gym:<dataset>" (e.g. "reasoning-gym:basic_arithmetic") — a reasoning-gym dataset made once when the run opens, by a Python with reasoning-gym installed ($AGENT_RL_REASONING_GYM_PYTHON, else the venv `node scripts/pythonVenv.mjs reasoning-gym-0.1.25` makes, else envOptions.python, else python3 on PATH), and scored by the dataset\'s own score_answer (reward "score_answer", the default with such a set); empty = the task files (envOptions.tasks). See docs/reasoning-gym.md.',
    reason: 'task files are the common case',
  },
  taskConfig: {
    kind: 'object',
    default: {},
    description:
      'The training split\'s dataset config (a reasoning-gym task set only): the dataset\'s own config fields, e.g. {"size": 500, "seed": 1, "min_terms": 2, "max_terms": 3}; fields left out keep the dataset\'s defaults, size 500 and seed 0 unless given.',
    reason: "the dataset's own defaults: the difficulty its authors chose",
  },
  heldOutConfig: {
    kind: 'object',
    default: {},
    description:
      "The held-out split's config (a reasoning-gym task set only): the training config, size 100 and the next seed, every difficulty attribute of the dataset's curriculum raised one level above the training config's (so held-out tasks differ in substance, not only in their seed), then the fields given here over it; {\"harder\": false} keeps the training settings. A dataset without a curriculum, or trained at its top, needs held-out settings named here.",
    reason: 'a split by setting (harder held out) says whether a skill carries over; a hash split of one generator only says whether it was memorised',
  },
  taskPreset: {
    kind: 'enum',
    values: ['default', 'verl', 'gsm8k', 'mbpp', 'humaneval'],
    default: 'default',
    description:
      'Record layout: default (id, prompt, answer, tests, public_tests, private_tests, split, demonstration, metadata), verl (RL parquet: prompt as chat messages, reward_model.ground_truth, extra_info, data_source), gsm8k (question, answer after ####), mbpp (text, test_list), humaneval (prompt, test, entry_point).',
    reason: 'the fields most hand-written task files use',
  },
  idField: fieldOption('the task id'),
  promptField: fieldOption('the prompt (text or chat messages)'),
  groundTruthField: fieldOption('the ground truth'),
  testsField: fieldOption('the tests (Python text or a list of assert statements)'),
  publicTestsField: fieldOption('the tests the agent may see'),
  privateTestsField: fieldOption('the hidden tests'),
  splitField: fieldOption('the split (train, or test/validation/heldout)'),
  demonstrationField: fieldOption('the reference actions for an SFT warm start (a list of action texts)'),
  metadataField: fieldOption('free metadata'),
  entryPointField: fieldOption('the function a HumanEval-style check(candidate) receives'),
  heldOutFraction: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0.2,
    description: 'Share of tasks held out for evaluation when a record has no split field (chosen by a hash of the task id and splitSeed).',
    reason: 'a fifth, as in common train/test splits',
  },
  splitSeed: {
    kind: 'integer',
    min: 0,
    max: 2 ** 31 - 1,
    default: 0,
    description: 'Seed of the held-out choice above.',
    reason: 'fixed: every run of the same files holds out the same tasks',
  },
  tools: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      'Python file whose public functions are the tools (type hints and docstrings give their JSON schemas; EXAMPLES = {"tool": {args}} lets env check try each); empty = no tools. Each episode gets its own sandboxed process, so a tool can keep state across turns.',
    reason: 'optional: a task may need only an answer',
  },
  toolFormat: {
    kind: 'enum',
    values: ['call', 'hermes', 'code'],
    default: 'call',
    description:
      'call: <call>tool(args)</call> and <answer>...</answer>; hermes: <tool_call>{"name": ..., "arguments": {...}}</tool_call> and <answer>...</answer>; code: a ```python block calling the tools as functions, then FINAL ANSWER: ...',
    reason: 'the shortest format, which a small model learns fastest',
  },
  toolsInPrompt: {
    kind: 'enum',
    values: ['signatures', 'json', 'none'],
    default: 'signatures',
    description: 'How the prompt shows the tools: one line of signatures, the JSON schemas in <tools> (always for hermes), or not at all.',
    reason: 'a signature line costs the fewest tokens',
  },
  reward: {
    kind: 'string',
    maxLength: 4096,
    default: 'exact_match',
    description:
      'A built-in (exact_match: the answer against the ground truth, \\boxed{} read, numbers compared as numbers; unit_tests: the final code, or the answer, run with the task\'s tests in the sandbox; score_answer: a reasoning-gym task set\'s own score_answer, 0–1, the default with envOptions.taskSet) or a Python file defining reward(task, trajectory) -> float | {"score": float, ...extras}, run in the sandbox after each episode.',
    reason: 'exact match is what most question-answer task files need',
  },
  formatBonus: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description: 'Added to the reward when the episode ends with an answer, right or wrong.',
    reason: "off: a bonus for form can make a tidy guess outrank an honest attempt (see the calculator's formatWeight)",
  },
  callCost: {
    kind: 'number',
    min: 0,
    max: 1,
    default: 0,
    description: 'Subtracted from the reward per tool call.',
    reason: 'off; a small cost teaches an agent not to call more than it needs',
  },
  successThreshold: {
    kind: 'number',
    min: -1e9,
    max: 1e9,
    default: 1,
    description: 'A score (before the bonus and the cost) at or above this counts as a success, unless the reward returns "success" itself.',
    reason: 'rewards of 0 or 1 are the common case',
  },
  maxCalls: {
    kind: 'integer',
    min: 1,
    max: 100,
    default: 6,
    description: 'Tool calls (and malformed turns) allowed per episode.',
    reason: 'room for a few calls and a repaired mistake',
  },
  sandbox: {
    ...SANDBOX_RANGES.sandbox,
    description: 'Isolation level of the tools, the code blocks and the reward: auto = strongest available.',
    reason: 'auto runs everywhere and takes bubblewrap when it is installed',
  },
  python: PYTHON_OPTION,
  timeoutMs: {
    ...SANDBOX_RANGES.timeoutMs,
    description: "Wall-clock limit per tool call, code block and reward (ms); a call past it stops the episode's tool process (its state is lost).",
    reason: 'tools answer in milliseconds; 5 s catches a slow one',
  },
  tailBytes: {
    ...SANDBOX_RANGES.tailBytes,
    description: "Characters of a tool's result and printed output kept for the observation.",
    reason: 'a traceback fits; a flood does not reach the model',
  },
  outputCapBytes: {
    ...SANDBOX_RANGES.outputCapBytes,
    description: 'Output after which a call is stopped (an error observation).',
    reason: "1 MB is far above any tool's answer",
  },
  poolSize: {
    ...SANDBOX_RANGES.poolSize,
    description: 'Warm interpreter servers for the reward and the unit tests.',
    reason: 'one per core on the 2-core machines this runs on',
  },
} as const satisfies OptionSpecs;

/**
 * Your own agent program (rl/envs/agent): started once per episode with an OpenAI-compatible endpoint
 * that serves the policy; its tasks from task files, as a workspace environment reads them.
 */
export const AGENT_OPTION_SPECS = {
  root: WORKSPACE_OPTION_SPECS.root,
  command: {
    kind: 'strings',
    maxItems: 64,
    maxLength: 4096,
    default: [],
    description:
      'The program and its arguments, e.g. ["node", "agent.ts"] or ["python3", "agent.py"], run in the root folder once per episode as you (like npm test), with OPENAI_BASE_URL and OPENAI_API_KEY set for the policy\'s endpoint and the task as JSON on stdin and in AGENT_RL_TASK; it prints its reward as its last JSON line, {"reward": r, ...extras}.',
    reason: 'required: the program is yours',
  },
  tasks: WORKSPACE_OPTION_SPECS.tasks,
  taskPreset: WORKSPACE_OPTION_SPECS.taskPreset,
  idField: WORKSPACE_OPTION_SPECS.idField,
  promptField: WORKSPACE_OPTION_SPECS.promptField,
  groundTruthField: WORKSPACE_OPTION_SPECS.groundTruthField,
  splitField: WORKSPACE_OPTION_SPECS.splitField,
  metadataField: WORKSPACE_OPTION_SPECS.metadataField,
  demonstrationField: fieldOption('the reference answers for an SFT warm start (a list of assistant message texts, one per request the program makes)'),
  heldOutFraction: WORKSPACE_OPTION_SPECS.heldOutFraction,
  splitSeed: WORKSPACE_OPTION_SPECS.splitSeed,
  timeoutMs: {
    kind: 'integer',
    min: 1000,
    max: 3_600_000,
    default: 300_000,
    description: 'Wall-clock limit of one episode: the program is stopped (reward 0) when it runs longer.',
    reason: 'five minutes: a CPU model answers a few requests a minute',
  },
  concurrency: {
    kind: 'integer',
    min: 1,
    max: 1024,
    default: 16,
    description:
      'Programs running at once: each episode is a process of its own (a Node or Python program takes tens of MB), and their pending requests share one sampling batch; more episodes than this wait for a place.',
    reason:
      '16 programs at once sample 1.9× faster than one at a time on 2 cores (npm run bench agentEndpoint), and a few hundred would fill a laptop’s memory',
  },
  stderrBytes: {
    kind: 'integer',
    min: 0,
    max: 1_048_576,
    default: 16_384,
    description: "The end of the program's stderr kept with each episode (the inspector shows it).",
    reason: 'enough for a stack trace',
  },
  reward: {
    kind: 'string',
    maxLength: 4096,
    default: '',
    description:
      "Empty = the program's own last JSON line, {\"reward\": r}; else exact_match (the final answer against the task's ground truth) or a Python file defining reward(task, trajectory), run in the sandbox after the program exits, whose trajectory holds the final messages, the answer, the tool calls and the program's printed JSON line.",
    reason: 'the program knows its task best; a reward file keeps the scoring out of the program (and out of its reach)',
  },
  successThreshold: WORKSPACE_OPTION_SPECS.successThreshold,
  sandbox: {
    ...SANDBOX_RANGES.sandbox,
    description: 'Isolation level of the reward file (the program itself runs as you, unsandboxed): auto = strongest available.',
    reason: 'auto runs everywhere and takes bubblewrap when it is installed',
  },
  python: PYTHON_OPTION,
  rewardTimeoutMs: {
    ...SANDBOX_RANGES.timeoutMs,
    description: 'Wall-clock limit of one reward call (ms).',
    reason: 'a reward answers in milliseconds; 5 s catches a slow one',
  },
  poolSize: {
    ...SANDBOX_RANGES.poolSize,
    description: 'Warm interpreter servers for the reward file.',
    reason: 'one per core on the 2-core machines this runs on',
  },
} as const satisfies OptionSpecs;
