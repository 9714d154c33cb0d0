// An environment defined in the user's workspace: tasks from files (taskSource.ts, the loader the agent
// environment shares, over taskFiles.ts and taskRecords.ts), tools from a Python file run in a
// per-episode sandboxed process (toolSession.ts), in one of three call formats (toolCalls.ts), and a
// reward from a Python function (rewardPool.ts) or a built-in (workspaceReward.ts).
// Opening it for a run (prepareWorkspace) loads and checks all of it before the run starts (no run row
// exists yet when it fails): the tasks, the tool file's import and schemas, and the reward on a recorded
// trajectory. The opened environment owns its warm pools, tool zygotes and reward sessions.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EpisodeOutcome, Observation, ParsedAction } from '../../../shared/types';
import type { WorkspaceEnvOptions } from '../../../shared/runConfig';
import type { Executor } from '../../sandbox/freshExecutor';
import { levelHolds, type IsolationLevel } from '../../sandbox/isolation';
import { limitsOf, type SandboxLimits } from '../../sandbox/limits';
import { SandboxPools } from '../../sandbox/sandboxPools';
import type { Environment, EnvironmentDefinition, RunEnvironment, StepResult, Task, TaskSource } from '../environment';
import {
  observationText,
  parseToolAction,
  renderPrompt,
  RESERVED_TOOL_NAMES,
  stopFor,
  toolResultBody,
  toolSchemas,
  type ToolFormat,
  type ToolsInPrompt,
} from './toolCalls';
import { AnswerScorer } from '../reasoningGym/answerScorer';
import { gymDescription, gymTaskSource, gymPython, type GeneratedSet, type GymEntry } from '../reasoningGym/reasoningGymTasks';
import { openRewardPool } from './rewardPool';
import { workspaceTaskData, type FieldMap, type TaskPreset } from './taskRecords';
import { loadTaskSource, rewardTask, taskFieldsOf } from './taskSource';
import { ToolSession, ToolZygotes, type SessionPool, type SessionSandbox, type ToolFile, type ToolReply, type ToolSpec } from './toolSession';
import { WorkspaceEnvError } from './workspaceEnvError';
import { exactMatch, pythonReward, RewardError, testsPass, type RewardResult, type RewardTrajectory } from './workspaceReward';

// where the CLI (its exit code 2) and callers have always found it
export { WorkspaceEnvError };

export interface WorkspaceOptions {
  /** Folder the paths are relative to (the config file's folder; '' = the current folder). */
  readonly root: string;
  readonly tasks: string;
  /** A generated task set instead of task files ("reasoning-gym:<dataset>"; '' = the files), with its two splits' configs. */
  readonly taskSet: string;
  readonly taskConfig: Readonly<Record<string, unknown>>;
  readonly heldOutConfig: Readonly<Record<string, unknown>>;
  readonly taskPreset: TaskPreset;
  readonly fields: Partial<FieldMap>;
  readonly heldOutFraction: number;
  readonly splitSeed: number;
  /** The tool file ('' = no tools). */
  readonly tools: string;
  readonly toolFormat: ToolFormat;
  readonly toolsInPrompt: ToolsInPrompt;
  /** A built-in reward name, or a Python file defining reward(task, trajectory). */
  readonly reward: string;
  readonly formatBonus: number;
  readonly callCost: number;
  readonly successThreshold: number;
  readonly maxCalls: number;
  readonly sandbox: IsolationLevel | 'auto';
  readonly python: string;
  readonly limits: SandboxLimits;
  readonly poolSize: number;
}

/** The run's options as the environment uses them: the record fields renamed, the sandbox limits together. */
export function workspaceOptions(o: WorkspaceEnvOptions): WorkspaceOptions {
  return {
    root: o.root,
    tasks: o.tasks,
    taskSet: o.taskSet,
    taskConfig: o.taskConfig,
    heldOutConfig: o.heldOutConfig,
    taskPreset: o.taskPreset,
    fields: taskFieldsOf(o),
    heldOutFraction: o.heldOutFraction,
    splitSeed: o.splitSeed,
    tools: o.tools,
    toolFormat: o.toolFormat,
    toolsInPrompt: o.toolsInPrompt,
    reward: o.reward,
    formatBonus: o.formatBonus,
    callCost: o.callCost,
    successThreshold: o.successThreshold,
    maxCalls: o.maxCalls,
    sandbox: o.sandbox,
    python: o.python,
    limits: limitsOf(o),
    poolSize: o.poolSize,
  };
}

const rootOf = (o: WorkspaceOptions): string => path.resolve(o.root || '.');
const isBuiltin = (reward: string): boolean => reward === 'exact_match' || reward === 'unit_tests' || reward === 'score_answer';

function readSource(o: WorkspaceOptions, file: string, field: string): ToolFile {
  const abs = path.resolve(rootOf(o), file);
  try {
    return { name: path.basename(abs), source: fs.readFileSync(abs, 'utf8') };
  } catch (e) {
    throw new WorkspaceEnvError(
      `envOptions.${field}: cannot read ${abs} (${(e as NodeJS.ErrnoException).code ?? String(e)}). Fix: check the path (relative to the config file's folder: ${rootOf(o)})`,
    );
  }
}

/** What prepareWorkspace() loaded for one set of options, with the sandboxes it opened (close() releases them). */
export interface PreparedWorkspace {
  readonly options: WorkspaceOptions;
  readonly tasks: TaskSource;
  readonly tools: readonly ToolSpec[];
  readonly examples: Readonly<Record<string, unknown>>;
  readonly toolFile: ToolFile | undefined;
  readonly rewardFile: ToolFile | undefined;
  /** Sessions that import the reward file once and score episode after episode. */
  readonly rewardPool: SessionPool | undefined;
  /** A reasoning-gym task set: what made it, and its scorer where the reward is score_answer (run by `python`). */
  readonly gym: { readonly set: GeneratedSet; readonly scorer: AnswerScorer | undefined; readonly python: string } | undefined;
  readonly level: IsolationLevel;
  readonly python: string;
  /** Where the tool sessions run (the level, the interpreter, the limits, the zygotes they fork from). */
  readonly toolSandbox: SessionSandbox;
  /** The warm pool the built-in unit-test reward runs in. */
  readonly executor: Executor;
  /** The reward on a recorded trajectory (the first training task's demonstration, or an empty episode). */
  readonly rewardCheck: { readonly taskId: string; readonly outcome: EpisodeOutcome };
  /** Closes the reward sessions, the tool zygotes and the warm pool. */
  close(): Promise<void>;
}

const taskData = workspaceTaskData;

class WorkspaceEnv implements Environment {
  private task: Task | undefined;
  private session: ToolSession | undefined;
  private calls = 0;
  private invalid = 0;
  private answer: string | null = null;
  private code: string | null = null;
  private turns: { action: string; tool: string | null; observation: string; error: string | null }[] = [];
  private done = false;
  private readonly o: WorkspaceOptions;

  constructor(private readonly p: Omit<PreparedWorkspace, 'rewardCheck'>) {
    this.o = p.options;
  }

  reset(task: Task): Promise<Observation> {
    this.session?.close();
    this.task = task;
    this.calls = 0;
    this.invalid = 0;
    this.answer = null;
    this.code = null;
    this.turns = [];
    this.done = false;
    // forked from the warm zygote on the first call; code blocks run in it even without tools
    this.session = this.p.toolFile || this.o.toolFormat === 'code' ? new ToolSession(this.p.toolSandbox, this.p.toolFile) : undefined;
    const text = renderPrompt(task.prompt, this.p.tools, this.o.toolFormat, this.o.toolsInPrompt);
    // Hermes is the chat templates' own tool convention: a template policy shows the tools its way
    const chat =
      this.o.toolFormat === 'hermes' && this.p.tools.length > 0 && this.o.toolsInPrompt !== 'none'
        ? { chat: { role: 'user' as const, content: renderPrompt(task.prompt, this.p.tools, this.o.toolFormat, 'none'), tools: toolSchemas(this.p.tools) } }
        : {};
    return Promise.resolve({ text, ...chat, data: { taskId: task.id, source: taskData(task).source, level: this.p.level } });
  }

  parseAction(text: string): ParsedAction {
    return parseToolAction(text, this.o.toolFormat);
  }

  private async run(action: ParsedAction & { kind: 'tool' }): Promise<ToolReply> {
    // only the code format's parser makes execute_code actions (the others refuse the name)
    if (action.name === 'execute_code' && this.o.toolFormat === 'code' && this.session)
      return this.session.call({ op: 'exec', code: String(action.args.code) });
    if (!this.session || !this.p.tools.some((t) => t.name === action.name)) {
      const names = this.p.tools.map((t) => t.name);
      return {
        ok: false,
        kind: 'unknown_tool',
        error: `unknown tool ${JSON.stringify(action.name.slice(0, 40))}; ${names.length ? `the tools are: ${names.join(', ')}` : 'this environment has no tools: answer directly'}`,
        durationMs: 0,
      };
    }
    if (this.o.toolFormat === 'hermes') return this.session.call({ op: 'call', name: action.name, kwargs: action.args.arguments as Record<string, unknown> });
    return this.session.call({ op: 'call_text', name: action.name, text: String(action.args.text) });
  }

  async step(action: ParsedAction): Promise<StepResult> {
    if (this.done || !this.task) throw new Error('workspace: step() outside an episode; call reset() first');
    if (action.kind === 'tool' && action.name === 'answer') {
      this.answer = String(action.args.text);
      this.done = true;
      this.turns.push({ action: this.answer, tool: null, observation: 'answered', error: null });
      return { observation: { text: 'answered', data: { answer: this.answer } }, done: true, termination: 'finished' };
    }
    this.calls += 1;
    let observation: Observation;
    if (action.kind === 'format_error') {
      this.invalid += 1;
      const text =
        this.o.toolFormat === 'code'
          ? `format error: ${action.message}`
          : observationText({ ok: false, kind: 'format', error: action.message, durationMs: 0 }, this.o.toolFormat);
      observation = { text, data: { formatError: true, error: 'format' } };
    } else {
      if (action.name === 'execute_code') this.code = String(action.args.code);
      const r = await this.run(action);
      const failed = !r.ok && r.kind !== 'code';
      if (failed) this.invalid += 1;
      observation = {
        text: observationText(r, this.o.toolFormat),
        ...(this.o.toolFormat === 'hermes' ? { chat: { role: 'tool' as const, content: toolResultBody(r) } } : {}),
        data: {
          tool: action.name,
          durationMs: Math.round(r.durationMs),
          level: this.p.level,
          ...(failed ? { error: r.kind ?? 'failed' } : {}),
          ...(r.kind === 'timeout' ? { timedOut: true } : {}),
          ...(r.kind === 'output_cap' ? { outputCapped: true } : {}),
          ...(r.result !== undefined ? { result: r.result } : {}),
          ...(r.printed ? { stdout: r.printed } : {}),
          ...(r.error !== undefined ? { stderr: r.error } : r.kind === 'code' && r.printed ? { stderr: r.printed } : {}),
          ...(r.exit !== undefined ? { exitCode: r.exit } : {}),
        },
      };
    }
    this.turns.push({
      action: action.kind === 'tool' ? JSON.stringify(action.args) : '',
      tool: action.kind === 'tool' ? action.name : null,
      observation: observation.text,
      error: typeof observation.data.error === 'string' ? observation.data.error : null,
    });
    if (this.calls >= this.o.maxCalls) {
      this.done = true;
      return { observation, done: true, termination: 'budget_exhausted' };
    }
    return { observation, done: false };
  }

  /** The episode as the reward reads it. */
  trajectory(): RewardTrajectory {
    return {
      turns: this.turns,
      answer: this.answer,
      code: this.code,
      tool_calls: this.calls - this.turns.filter((t) => t.error === 'format').length,
      invalid_calls: this.invalid,
    };
  }

  async verify(): Promise<EpisodeOutcome> {
    if (!this.task) throw new Error('workspace: verify() before an episode');
    return scoreEpisode(this.p, this.task, this.trajectory());
  }

  close(): Promise<void> {
    this.session?.close();
    this.session = undefined;
    return Promise.resolve();
  }
}

/** The reward of a finished episode: the workspace's function or the built-in, then the bonus and the cost. */
export async function scoreEpisode(
  p: Pick<PreparedWorkspace, 'options' | 'executor' | 'rewardPool' | 'rewardFile' | 'gym'>,
  task: Task,
  traj: RewardTrajectory,
): Promise<EpisodeOutcome> {
  const o = p.options;
  const executor = p.executor;
  const d = taskData(task);
  let base: RewardResult;
  if (o.reward === 'exact_match') {
    base = { score: exactMatch(traj.answer, d.groundTruth) ? 1 : 0, metrics: {}, extras: {} };
  } else if (o.reward === 'unit_tests') {
    const candidate = traj.code ?? traj.answer ?? '';
    const priv = await testsPass(executor, o.limits, candidate, d.privateTests);
    const pub = d.publicTests.length > 0 ? await testsPass(executor, o.limits, candidate, d.publicTests) : priv;
    base = { score: priv.pass ? 1 : 0, publicPass: pub.pass, privatePass: priv.pass, metrics: {}, extras: priv.detail ? { failure: priv.detail } : {} };
  } else if (o.reward === 'score_answer') {
    const meta = d.metadata as { dataset?: string; entry?: GymEntry };
    if (!p.gym?.scorer || !meta.dataset || !meta.entry)
      throw new WorkspaceEnvError(`task ${task.id}: reward score_answer scores a reasoning-gym task set's tasks only`);
    const scored = await p.gym.scorer.score(meta.dataset, meta.entry, traj.answer);
    base = { score: scored.score, metrics: {}, extras: scored.failure ? { failure: scored.failure } : {} };
  } else {
    base = await pythonReward(p.rewardPool!, p.rewardFile!.name, rewardTask(task), traj);
  }
  const success = base.success ?? base.score >= o.successThreshold;
  const reward = base.score + (traj.answer !== null ? o.formatBonus : 0) - o.callCost * traj.tool_calls;
  return {
    reward,
    success,
    publicPass: base.publicPass ?? success,
    privatePass: base.privatePass ?? success,
    details: {
      score: base.score,
      answer: traj.answer,
      groundTruth: d.groundTruth ?? null,
      calls: traj.tool_calls,
      invalidCalls: traj.invalid_calls,
      source: d.source,
      metrics: base.metrics,
      ...(Object.keys(base.extras).length ? { extras: base.extras } : {}),
    },
  };
}

/** Replays a task's demonstration (or no action) through a real episode: the recorded trajectory the reward is checked on. */
async function recordedEpisode(p: Omit<PreparedWorkspace, 'rewardCheck'>, task: Task): Promise<RewardTrajectory> {
  const env = new WorkspaceEnv(p);
  try {
    await env.reset(task);
    for (const a of taskData(task).demonstration ?? []) {
      const r = await env.step(env.parseAction(a));
      if (r.done) break;
    }
    return env.trajectory();
  } finally {
    await env.close();
  }
}

/** Loads and checks a workspace environment: tasks, tools, reward. Throws errors that name the file and the fix. */
export async function prepareWorkspace(options: WorkspaceEnvOptions): Promise<PreparedWorkspace> {
  const o = workspaceOptions(options);
  const generated = o.taskSet !== '' ? await gymTaskSource(o) : undefined;
  const split = generated ? generated.tasks : await loadTaskSource(rootOf(o), options, (message) => new WorkspaceEnvError(message));
  if (o.reward === 'score_answer' && !generated)
    throw new WorkspaceEnvError(
      'envOptions.reward "score_answer" scores a reasoning-gym task set. Fix: name one in envOptions.taskSet, or use exact_match or a reward file',
    );
  if (o.reward === 'unit_tests' && ![...split.train, ...split.heldOut].some((t) => taskData(t).privateTests.length > 0)) {
    throw new WorkspaceEnvError(
      'envOptions.reward "unit_tests": no task has tests. Fix: give the records tests (envOptions.testsField names the field), or use "exact_match" or a reward file',
    );
  }
  if (!isBuiltin(o.reward) && !o.reward.endsWith('.py'))
    throw new WorkspaceEnvError(
      `envOptions.reward "${o.reward}" is neither a built-in (exact_match, unit_tests, score_answer) nor a Python file. Fix: name a .py file defining reward(task, trajectory), or a built-in`,
    );
  const gymPy = generated && o.reward === 'score_answer' ? gymPython(o) : '';
  // the scorer runs the model's answers through score_answer: confined at the run's level (answerScorer.ts)
  let scorer: AnswerScorer | undefined;
  const pools = new SandboxPools();
  const zygotes = new ToolZygotes();
  let rewardPool: SessionPool | undefined;
  const close = async (): Promise<void> => {
    await scorer?.close();
    rewardPool?.close();
    zygotes.close();
    await pools.close();
  };
  try {
    return await load();
  } catch (e) {
    await close();
    throw e;
  }

  async function load(): Promise<PreparedWorkspace> {
    const { level, python, executor } = pools.get(o);
    const toolSandbox: SessionSandbox = { level, python, limits: o.limits, zygotes };
    scorer = gymPy && generated ? new AnswerScorer(gymPy, { level, answerTimeoutMs: o.limits.timeoutMs, datasets: [generated.set.dataset] }) : undefined;
    const gym = generated && { set: generated.set, scorer, python: gymPy };
    const toolFile = o.tools !== '' ? readSource(o, o.tools, 'tools') : undefined;
    const rewardFile = isBuiltin(o.reward) ? undefined : readSource(o, o.reward, 'reward');
    let tools: readonly ToolSpec[] = [];
    let examples: Readonly<Record<string, unknown>> = {};
    if (toolFile) {
      const s = new ToolSession(toolSandbox, toolFile, true);
      try {
        ({ tools, examples } = await s.start());
      } finally {
        s.close();
      }
      const reserved = tools.find((t) => RESERVED_TOOL_NAMES.includes(t.name));
      if (reserved)
        throw new WorkspaceEnvError(
          `${toolFile.name}: a tool may not be called "${reserved.name}" (${RESERVED_TOOL_NAMES.join(', ')} end the episode or run code). Fix: rename it, or leave it out of __all__`,
        );
      if (tools.length === 0)
        throw new WorkspaceEnvError(
          `${toolFile.name} declares no tool (no public function defined in it, and no __all__). Fix: define def name(arg: type) -> type: with a docstring, or leave envOptions.tools empty`,
        );
    }
    if (rewardFile) rewardPool = await openRewardPool(toolSandbox, rewardFile, o.poolSize);
    const partial = { options: o, tasks: split, tools, examples, toolFile, rewardFile, rewardPool, gym, level, python, toolSandbox, executor, close };
    const first = split.train[0]!;
    let outcome: EpisodeOutcome;
    try {
      outcome = await scoreEpisode(partial, first, await recordedEpisode(partial, first));
    } catch (e) {
      if (e instanceof RewardError) throw new WorkspaceEnvError(`${e.message} (checked on a recorded episode of task ${first.id}, ${taskData(first).source})`);
      throw e;
    }
    return { ...partial, rewardCheck: { taskId: first.id, outcome } };
  }
}

const DESCRIPTION =
  'Tasks, tools and a reward from your workspace: task files (JSON Lines, JSON, CSV, Parquet), a Python tool file, a Python reward or a built-in.';

/** The workspace environment of a run, over what prepareWorkspace loaded and opened. */
function runEnvironment(p: PreparedWorkspace): RunEnvironment {
  return {
    name: 'workspace',
    description: DESCRIPTION,
    stop: stopFor(p.options.toolFormat),
    create: () => new WorkspaceEnv(p),
    tasks: () => p.tasks,
    taskFromId: (id) => [...p.tasks.train, ...p.tasks.heldOut].find((t) => t.id === id),
    preflight: () =>
      `workspace environment: ${p.tasks.train.length} training and ${p.tasks.heldOut.length} held-out tasks${p.gym ? ` (${gymDescription(p.gym.set)})` : ''}, ${p.tools.length} tool(s) (${p.options.toolFormat} format), reward ${p.rewardFile?.name ?? (p.gym?.scorer ? `score_answer of reasoning-gym, run by ${p.gym.python} in the sandbox` : p.options.reward)}; sandbox level ${p.level} (${levelHolds(p.level, p.python)}), python ${p.python}`,
    dispose: () => p.close(),
  };
}

export const workspaceEnvironment: EnvironmentDefinition<WorkspaceEnvOptions> = {
  name: 'workspace',
  description: DESCRIPTION,
  open: async (o) => runEnvironment(await prepareWorkspace(o)),
};
