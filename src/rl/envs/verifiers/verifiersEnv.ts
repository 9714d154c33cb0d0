// A verifiers environment, trained unchanged (env "verifiers"): a Python module written with Prime
// Intellect's verifiers library (0.3.x: load_environment(**kwargs) → vf.Environment — SingleTurnEnv,
// ToolEnv, MultiTurnEnv, … — built from a dataset and a vf.Rubric; 0.4.x: a vf.Taskset subclass the
// module exports, whose tasks' @vf.reward methods score, played by verifiers' own SingleAgentEnv — the
// harness reads whichever the interpreter's verifiers reads, see docs/verifiers.md). The workbench
// starts the user's Python on a harness of its own (python/verifiersHarness.py, passed as
// `python -c`), one process per run (verifiersServer.ts): it loads the environment once, writes its dataset's rows (the tasks) and
// its eval dataset's (the held-out set; without one, a seeded fraction of the dataset) to a file, then
// plays each episode as an asyncio task — one row with the environment's own rollout, its client an
// OpenAI chat-completions client pointed at the episode's base URL on the policy's endpoint, so that
// every request is a turn of the agent environment's loop (agentEnv.ts: batched sampling, token ids
// recorded as sampled, a rewritten history a new segment) — scored by the rubric as {"reward",
// "success", <each reward function's score>}: the episode's reward and rewardExtras.
// The module is the user's code and runs as the user (not sandboxed), as an agent program does; what a
// stored run holds never starts it (resume, fork and rescore refuse it, runConfig.agentProgramRun).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { VerifiersEnvOptions } from '../../../shared/optionSpecs';
import { PYTHON_MODULE_NAME } from '../../../shared/verifiersOptionSpecs';
import { findOnPath } from '../../sandbox/isolation';
import { openProgramEnvironment, AgentEnvError } from '../agent/agentEnv';
import { VerifiersServer } from './verifiersServer';
import type { EnvironmentDefinition, Task, TaskSource } from '../environment';
import { unitHash } from '../workspace/taskRecords';
import { VERIFIERS_HARNESS_PY } from './verifiersHarnessPy.generated';

const DESCRIPTION =
  'A verifiers environment (load_environment from your Python module), played through the policy’s OpenAI-compatible endpoint; its rubric scores.';

/** A verifiers environment that cannot be loaded or played: bad input, agent-rl exits 2. */
export class VerifiersEnvError extends AgentEnvError {
  override name = 'VerifiersEnvError';
}

/** One dataset row as the harness wrote it: the formatted record (example_id, prompt, answer, info, task, …). */
type Row = Readonly<Record<string, unknown>>;

/** The harness's rows file: the datasets' rows, and (verifiers 0.4) what it loaded, for the preflight line. */
type Rows = { train: Row[]; eval: Row[] | null; source?: string };

const rowOf = new WeakMap<Task, { readonly row: Row }>();

/**
 * The venv `node scripts/pythonVenv.mjs verifiers-0.3.1` makes (~/.cache/agent-rl-workbench/venvs, or
 * $AGENT_RL_VENVS): the tested verifiers, where this machine has it.
 */
export function cachedVerifiersPython(): string {
  const root = process.env.AGENT_RL_VENVS || path.join(os.homedir(), '.cache', 'agent-rl-workbench', 'venvs');
  return process.platform === 'win32' ? path.join(root, 'verifiers-0.3.1', 'Scripts', 'python.exe') : path.join(root, 'verifiers-0.3.1', 'bin', 'python');
}

/**
 * The interpreter, by this machine's settings rather than a stored run's: envOptions.python, else
 * $AGENT_RL_VERIFIERS_PYTHON, else the cached venv (cachedVerifiersPython) where it exists, else python3 on PATH.
 */
export function verifiersPython(o: Pick<VerifiersEnvOptions, 'python'>, root: string): string {
  const named = o.python || process.env.AGENT_RL_VERIFIERS_PYTHON || '';
  if (named !== '') {
    const p = path.isAbsolute(named) || !/[\\/]/.test(named) ? named : path.resolve(root, named);
    const found = path.isAbsolute(p) ? (fs.existsSync(p) ? p : undefined) : findOnPath(p);
    if (!found)
      throw new VerifiersEnvError(
        `the Python ${named} (${o.python ? 'envOptions.python' : 'AGENT_RL_VERIFIERS_PYTHON'}) does not exist. Fix: name the interpreter you installed verifiers into`,
      );
    return found;
  }
  if (fs.existsSync(cachedVerifiersPython())) return cachedVerifiersPython();
  const onPath = findOnPath('python3');
  if (!onPath) throw new VerifiersEnvError('python3 is not on PATH. Fix: name the interpreter you installed verifiers into in envOptions.python');
  return onPath;
}

/** The text a row's prompt shows as (its last message's, or the prompt itself), for lists and the inspector. */
function promptText(row: Row): string {
  const p = row.prompt;
  if (typeof p === 'string') return p;
  if (Array.isArray(p)) {
    const last = p[p.length - 1] as { content?: unknown } | undefined;
    if (last && typeof last.content === 'string') return last.content;
  }
  return JSON.stringify(p ?? row);
}

function tasksOf(module: string, rows: readonly Row[], split: string): Task[] {
  return rows.map((row, i) => {
    const id = `${module}:${split}:${typeof row.example_id === 'number' || typeof row.example_id === 'string' ? row.example_id : i}`;
    const task: Task = { id, prompt: promptText(row), data: { split, row } };
    rowOf.set(task, { row });
    return task;
  });
}

/**
 * Starts the run's harness process and waits until it loaded the environment and wrote its rows; returns
 * it with the rows. Its failure there is an error naming the module (the harness's last stderr line).
 */
async function startHarness(python: string, root: string, o: VerifiersEnvOptions): Promise<{ server: VerifiersServer; rows: Rows }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-verifiers-'));
  const out = path.join(dir, 'rows.json');
  const config = JSON.stringify({ module: o.module, args: o.args, root, out, maxTasks: o.maxTasks, successThreshold: o.successThreshold });
  const failed = (why: string, last: string): Error =>
    new VerifiersEnvError(
      last.startsWith(`verifiers environment ${o.module}:`)
        ? last
        : why.startsWith('it was not ready')
          ? `verifiers environment ${o.module}: loading it and its datasets took longer than envOptions.loadTimeoutMs (${o.loadTimeoutMs} ms). Fix: raise loadTimeoutMs, or load fewer rows`
          : `verifiers environment ${o.module}: ${python} ended before it loaded the environment (${why})${last ? `; its stderr ends: ${last.slice(0, 500)}` : ''}. Fix: name a Python 3 with verifiers in envOptions.python`,
    );
  const server = new VerifiersServer(python, VERIFIERS_HARNESS_PY, config, root, failed);
  try {
    await server.ready(o.loadTimeoutMs);
    let rows: Rows;
    try {
      rows = JSON.parse(fs.readFileSync(out, 'utf8')) as Rows;
    } catch (e) {
      throw new VerifiersEnvError(
        `verifiers environment ${o.module}: its dataset rows could not be read as JSON (${(e as Error).message.slice(0, 200)}). Fix: give the dataset plain values (text, numbers, lists, objects)`,
      );
    }
    return { server, rows };
  } catch (e) {
    await server.stop();
    throw e;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The run's tasks: the dataset's rows, held out the eval dataset's (or a seeded fraction of the rows without one). */
function taskSource(o: VerifiersEnvOptions, rows: Rows): TaskSource {
  if (rows.eval) return { train: tasksOf(o.module, rows.train ?? [], 'train'), heldOut: tasksOf(o.module, rows.eval, 'eval') };
  const all = tasksOf(o.module, rows.train ?? [], 'train');
  const held = (t: Task): boolean => unitHash(`${o.splitSeed}:${t.id}`) < o.heldOutFraction;
  return { train: all.filter((t) => !held(t)), heldOut: all.filter(held) };
}

export const verifiersEnvironment: EnvironmentDefinition<VerifiersEnvOptions> = {
  name: 'verifiers',
  description: DESCRIPTION,
  async open(o) {
    if (!PYTHON_MODULE_NAME.test(o.module))
      throw new VerifiersEnvError(
        o.module === ''
          ? 'envOptions.module is empty. Fix: name the Python module that defines load_environment, e.g. "vf_gsm8k" for vf_gsm8k.py beside the config'
          : `envOptions.module "${o.module}" is not a Python module name. Fix: a dotted name such as my_env or pkg.my_env (no .py, no path: put the file in envOptions.root)`,
      );
    const root = path.resolve(o.root === '' ? '.' : o.root);
    if (!fs.existsSync(root)) throw new VerifiersEnvError(`envOptions.root ${root} does not exist. Fix: the folder of the config file`);
    const python = verifiersPython(o, root);
    const { server, rows } = await startHarness(python, root, o);
    try {
      const tasks = taskSource(o, rows);
      if (tasks.train.length === 0)
        throw new VerifiersEnvError(
          `verifiers environment ${o.module}: no training rows (its dataset is empty, or all of it was held out). Fix: give it a dataset, or lower envOptions.heldOutFraction`,
        );
      return await openProgramEnvironment({
        name: 'verifiers',
        description: DESCRIPTION,
        root,
        program: {
          path: python,
          args: [],
          label: `verifiers environment ${o.module}`,
          start: (s, on) => server.start(s, on),
          taskJson: (task) => {
            const r = rowOf.get(task);
            if (!r) throw new Error(`task ${task.id} is not a row of verifiers environment ${o.module}`);
            return JSON.stringify({ id: task.id, row: r.row });
          },
          noRewardFix: "see the episode's stderr (the environment's rollout or rubric failed before it scored)",
        },
        limits: o,
        concurrency: o.concurrency,
        tasks,
        cleanup: () => server.stop(),
        // 0.4 (rows.source set): each episode is verifiers' run_episode, its chat program and tool servers
        // processes of their own, scored by the task's @vf.reward methods; 0.3: a rollout and its rubric
        // inside the harness's process
        describe: (port) =>
          `verifiers environment: ${typeof rows.source === 'string' ? rows.source : `${o.module}.load_environment(**${JSON.stringify(o.args)})`} from ${root}, run by ${python} as you (not sandboxed), ${
            typeof rows.source === 'string'
              ? "each episode verifiers' run_episode in that process, its chat program and tool servers subprocesses"
              : 'its episodes asyncio tasks of one process'
          }; policy served at http://127.0.0.1:${port}/episodes/…/v1 (OpenAI chat completions, a fresh key); ${tasks.train.length} training and ${tasks.heldOut.length} held-out rows${rows.eval ? ' (its eval dataset)' : ` (a ${o.heldOutFraction} fraction of its ${typeof rows.source === 'string' ? 'tasks' : 'dataset'})`}; reward ${
            typeof rows.source === 'string' ? "the weighted sum of its tasks' @vf.reward methods" : "its rubric's"
          }`,
      });
    } catch (e) {
      await server.stop();
      throw e;
    }
  },
};
