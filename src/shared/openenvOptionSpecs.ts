// The option table of an OpenEnv environment (env "openenv", rl/envs/openenv): an environment served
// by Meta / Hugging Face's openenv-core (a FastAPI app with reset, step and state over HTTP and a
// WebSocket /ws session), either already running at a URL or started by a command of the config's.
import type { OptionSpecs } from './fieldSpec';
import { WORKSPACE_OPTION_SPECS } from './workspaceOptionSpecs';

/** Where the held-out seeds start: far from the training seeds 0, 1, 2, … whatever trainTasks is. */
export const OPENENV_HELD_OUT_SEED_BASE = 1_000_000;

const fieldPath = (what: string, auto: string) =>
  ({
    kind: 'string',
    maxLength: 500,
    default: '',
    description: `The ${what} (a dotted path such as board.text); empty = ${auto}.`,
    reason: "the server's /schema names the field most environments have",
  }) as const;

export const OPENENV_OPTION_SPECS = {
  root: {
    ...WORKSPACE_OPTION_SPECS.root,
    description:
      'Folder the command runs in (relative paths in it are this folder’s); empty = the folder of the config file (set by agent-rl and the workbench), else the current folder.',
    reason: 'a server command travels with its config',
  },
  url: {
    kind: 'string',
    maxLength: 2048,
    default: '',
    description:
      'The address of a running OpenEnv server, e.g. "http://127.0.0.1:8000" (its /health, /schema and the WebSocket session at /ws); give either url or command.',
    reason: 'one of url and command is required: the environment is yours',
  },
  command: {
    kind: 'strings',
    maxItems: 64,
    maxLength: 4096,
    default: [],
    description:
      'A command that starts the server, run in root as you when the run opens and stopped when it ends, e.g. ["python", "-m", "uvicorn", "server.app:app", "--host", "127.0.0.1", "--port", "{port}"]: {port} in an argument (and $PORT) is a free loopback port the workbench chose; the run waits for its /health. Never started from a stored run.',
    reason: 'one of url and command is required: the environment is yours',
  },
  observationField: fieldPath(
    'observation field whose text the model reads',
    "the observation schema's one text field (of several: prompt, text, message, observation, content, then the first)",
  ),
  actionField: fieldPath('action field the model’s text goes to', "the action schema's one text field (of several: the first required)"),
  rewardOf: {
    kind: 'enum',
    values: ['sum', 'last'],
    default: 'sum',
    description: "The episode's reward from the server's step rewards: their sum, or the last step's (for an environment that scores at the end).",
    reason: 'the sum is the return; an environment that rewards only its last step gives the same either way',
  },
  trainTasks: {
    kind: 'integer',
    min: 1,
    max: 1_000_000,
    default: 64,
    description: 'Training tasks: the reset seeds 0, 1, …, trainTasks − 1 (an OpenEnv environment draws its episode from the seed).',
    reason: 'enough distinct episodes for a run of a few hundred groups',
  },
  heldOutTasks: {
    kind: 'integer',
    min: 0,
    max: 1_000_000,
    default: 16,
    description: `Held-out tasks: the reset seeds ${OPENENV_HELD_OUT_SEED_BASE}, ${OPENENV_HELD_OUT_SEED_BASE + 1}, … (never a training seed), with heldOutResetArgs.`,
    reason: 'a small evaluation set that runs in seconds',
  },
  resetArgs: {
    kind: 'object',
    default: {},
    description: 'Further keyword arguments of every reset, as JSON (e.g. {"difficulty": 1}): the server passes those its environment\'s reset() accepts.',
    reason: "none: the environment's own defaults",
  },
  heldOutResetArgs: {
    kind: 'object',
    default: {},
    description: 'Keyword arguments of the held-out resets, over resetArgs (e.g. {"difficulty": 3} for a held-out set that differs in substance).',
    reason: 'none: held out by seed only',
  },
  successThreshold: {
    ...WORKSPACE_OPTION_SPECS.successThreshold,
    description: "An episode succeeds when its reward (rewardOf of the server's rewards) reaches this.",
  },
  concurrency: {
    kind: 'integer',
    min: 1,
    max: 1024,
    default: 1,
    description:
      "Sessions open at once (each a WebSocket and its own environment on the server): at most the server's max_concurrent_envs, which create_app sets (its template's is 1; a server at capacity refuses a session).",
    reason: "openenv-core's template serves one session; raise both together",
  },
  timeoutMs: {
    kind: 'integer',
    min: 100,
    max: 3_600_000,
    default: 60_000,
    description:
      "Wall-clock limit of one request to the server (connecting, a reset, a step, the state): past it the episode ends as the environment's failure.",
    reason: 'a minute: a step of a text game answers in milliseconds, one that runs code in seconds',
  },
  startTimeoutMs: {
    kind: 'integer',
    min: 1000,
    max: 3_600_000,
    default: 60_000,
    description: "Wall-clock limit of the command's server starting (its /health answering) when the run opens.",
    reason: 'a minute: a FastAPI app with its imports starts in a few seconds',
  },
} as const satisfies OptionSpecs;
