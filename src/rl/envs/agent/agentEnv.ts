// Your own agent program as an environment (env "agent"): a program that talks to a model through an
// OpenAI client, trained unchanged. The run serves its policy on an OpenAI-compatible endpoint on
// loopback (endpoint.ts); each episode starts the program once, in the config's folder, as the user
// (like `npm test`: it is the user's own code, not model output), with OPENAI_BASE_URL set to the
// episode's own base URL, OPENAI_API_KEY to the run's key, and the task as JSON on stdin and in
// AGENT_RL_TASK. The control flow is the program's: each chat-completions request it makes is one turn
// (the loop samples the policy for it, batched with every other episode's pending request), the answer
// goes back as the response, and the episode ends when the program exits. Its reward is the last JSON
// line it printed, {"reward": r, ...extras}, or, when envOptions.reward names one, what a Python reward
// file (run in the sandbox, out of the program's reach) or exact_match makes of the final conversation.
//
// Token for token: a request whose messages are the episode's earlier request and the policy's answer
// as given, followed by new messages (tool results, a user turn), continues the same sequence — only
// the new messages are encoded, through the chat template's own glue; the answer's tokens stand as
// sampled. A request that differs (the program trimmed, summarised or edited its history, or changed
// its tools) starts a new segment: its whole conversation is rendered afresh and trained as its own
// sequence, and the turn says where the history changed.
//
// What a stored run holds never starts a program: resume, fork and rescore refuse agent runs
// (store/resume.ts), so only a config the user gives names the program that runs.
//
// This file is the episode and the run around it. Apart from it: the endpoint (endpoint.ts), the
// program's process (episodeProcess.ts; another environment may play its episodes otherwise, as
// verifiers' one server per run does), the process-wide handlers that stop programs still running when
// this process ends (programGroups.ts),
// the program's path and printed reward line (agentProgram.ts), a reward other than that line
// (agentScorer.ts), and the tasks, loaded as the workspace environment loads its own
// (workspace/taskSource.ts).
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AgentEnvOptions } from '../../../shared/optionSpecs';
import { openAiMessage } from '../../../shared/openAiMessage';
import type { AgentMessage, AgentRequest, EpisodeOutcome, Observation, ParsedAction } from '../../../shared/types';
import type { EnvironmentDefinition, Environment, RunEnvironment, SampledAction, StepResult, Task, TaskSource } from '../environment';
import { workspaceTaskData } from '../workspace/taskRecords';
import { loadTaskSource } from '../workspace/taskSource';
import type { AgentRewardTrajectory } from '../workspace/workspaceReward';
import { AgentEnvError, lastJsonObject, resolveProgram } from './agentProgram';
import { openScorer, scoreWith, type Scorer } from './agentScorer';
import { AgentEndpoint, EndpointError, type ChatRequest, type ChatResult } from './endpoint';
import { spawnEpisodeProcess, type EpisodeExit, type EpisodeProcess, type EpisodeStart, type EpisodeListener } from './episodeProcess';
import { parseAnswer, sameAnswer, sameMessage, type ParsedAnswer } from './toolCallText';

// the program's error and path, where callers have always imported them
export { AgentEnvError, resolveProgram };

/** A request as a turn stores it: what it added to the context (all of it when it began a segment), and its tools. */
interface StoredAgentRequest {
  readonly index: number;
  readonly continuesFrom: number;
  readonly rewrite?: string;
  readonly messages: readonly AgentMessage[];
  readonly tools: readonly Readonly<Record<string, unknown>>[];
  readonly maxTokens?: number;
  readonly stop?: readonly string[];
}

/** What /v1/models lists and responses name (any name a program asks for is served by the policy). */
export const AGENT_MODEL_NAME = 'agent-rl-policy';
const STDOUT_TAIL = 64 * 1024;

/** A request of the program waiting for the policy's answer. */
interface Pending {
  readonly request: ChatRequest;
  readonly resolve: (r: ChatResult) => void;
  readonly reject: (e: Error) => void;
  /** The program gave up on it (closed the connection): not answered, not trained. */
  aborted: boolean;
}

type Event = { readonly kind: 'request'; readonly pending: Pending } | { readonly kind: 'exit' };

/** A request's message as the policy's chat format reads it (a served checkpoint's requests too: train/judge/servedModel.ts). */
export const message = (m: ChatRequest['messages'][number]): AgentMessage => ({
  role: m.role === 'developer' ? 'system' : m.role,
  content: m.content,
  ...(m.toolCalls?.length ? { toolCalls: m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) } : {}),
  ...(m.toolCallId !== undefined ? { toolCallId: m.toolCallId } : {}),
  ...(m.name !== undefined ? { name: m.name } : {}),
});

export const toolSchemas = (r: ChatRequest): Record<string, unknown>[] =>
  r.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), parameters: t.parameters },
  }));

/**
 * What starts once per episode: the program's absolute path (resolved once, when the run opened), its
 * arguments, the name errors give it, and how a task reaches it (JSON on stdin and in AGENT_RL_TASK).
 * The agent environment's is the user's command; another environment that plays its episodes through a
 * program of its own (verifiers: a Python harness around the user's module) gives its own.
 */
export interface EpisodeProgram {
  readonly path: string;
  readonly args: readonly string[];
  /** What errors call it: the command as the user wrote it, or the module it loads. */
  readonly label: string;
  /** The task as the program reads it. */
  readonly taskJson: (task: Task) => string;
  /** The fix an error gives when the program printed no reward line. */
  readonly noRewardFix: string;
  /** How an episode starts: absent = a process of its own, `path args` (spawnEpisodeProcess). */
  readonly start?: (s: EpisodeStart, on: EpisodeListener) => EpisodeProcess;
}

/** The limits of a run's episodes (envOptions of env agent; another program environment's own). */
export type EpisodeLimits = Pick<AgentEnvOptions, 'timeoutMs' | 'stderrBytes' | 'successThreshold'>;

/** What the run's episodes share: the endpoint, the program, the folder it runs in, the reward. */
class AgentRun {
  readonly episodes = new Map<string, AgentEpisode>();
  constructor(
    readonly endpoint: AgentEndpoint,
    readonly o: EpisodeLimits,
    readonly root: string,
    readonly program: EpisodeProgram,
    readonly scorer: Scorer | undefined,
  ) {}
}

/** The task as an agent program reads it: the record's fields (its answer included: the program scores itself). */
function agentTaskJson(task: Task): string {
  const d = workspaceTaskData(task);
  return JSON.stringify({
    id: task.id,
    prompt: task.prompt,
    ...(d.messages ? { messages: d.messages } : {}),
    ...(d.groundTruth !== undefined ? { groundTruth: d.groundTruth } : {}),
    metadata: d.metadata,
  });
}

class AgentEpisode implements Environment {
  private readonly id = crypto.randomBytes(12).toString('base64url');
  private proc: EpisodeProcess | undefined;
  private readonly events: Event[] = [];
  private waiter: ((e: Event) => void) | undefined;
  private exited: EpisodeExit | undefined;
  private stdout = '';
  private stderr = '';
  private pending: Pending | undefined;
  /** The last request answered, and the answer as the program got it (what a next request continues). */
  private last: { readonly messages: readonly AgentMessage[]; readonly tools: string; readonly answer: ParsedAnswer } | undefined;
  private requests = 0;
  private timer: NodeJS.Timeout | undefined;
  private stoppedBy: string | undefined;
  /** Why the next request cannot continue the context (an answer the program never got), if so. */
  private unanswered: string | undefined;
  private calls = 0;

  constructor(private readonly run: AgentRun) {}

  private push(e: Event): void {
    const w = this.waiter;
    this.waiter = undefined;
    if (w) w(e);
    else this.events.push(e);
  }

  private next(): Promise<Event> {
    const e = this.events.shift();
    if (e) return Promise.resolve(e);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  /** The endpoint's handler for this episode: the request waits in the queue until the loop answers it. */
  request(request: ChatRequest, signal: AbortSignal): Promise<ChatResult> {
    if (request.n !== 1)
      throw new EndpointError(
        400,
        `n = ${request.n}: an episode is one conversation, so each request gets one answer`,
        'invalid_request_error',
        'n',
        'unsupported_value',
      );
    return new Promise((resolve, reject) => {
      const pending: Pending = { request, resolve, reject, aborted: false };
      signal.addEventListener(
        'abort',
        () => {
          pending.aborted = true;
          reject(new Error('the program closed the request'));
        },
        { once: true },
      );
      this.push({ kind: 'request', pending });
    });
  }

  private task: Task | undefined;

  async reset(task: Task): Promise<Observation> {
    const { endpoint, o, root } = this.run;
    this.task = task;
    endpoint.open(this.id);
    this.run.episodes.set(this.id, this);
    const program = this.run.program;
    const taskJson = program.taskJson(task);
    const start: EpisodeStart = { root, baseUrl: endpoint.baseUrl(this.id), key: endpoint.key, taskJson };
    const on: EpisodeListener = {
      stdout: (d) => {
        this.stdout = (this.stdout + d).slice(-STDOUT_TAIL);
      },
      stderr: (d) => {
        this.stderr = (this.stderr + d).slice(-Math.max(1, o.stderrBytes));
      },
      exit: (e) => {
        clearTimeout(this.timer);
        if (this.exited) return;
        this.exited = e;
        this.push({ kind: 'exit' });
      },
    };
    this.proc = program.start ? program.start(start, on) : spawnEpisodeProcess(program.path, program.args, start, on);
    this.timer = setTimeout(() => this.stop(`it ran past envOptions.timeoutMs (${o.timeoutMs} ms)`), o.timeoutMs);
    const first = await this.observe();
    if (!first)
      throw new AgentEnvError(
        `${program.label} ended before its first request to the policy (${this.stoppedBy ? `stopped: ${this.stoppedBy}` : this.exitText()})${this.stderrLast()}`,
      );
    return first;
  }

  /** The next request as an observation, or undefined once the program exited. */
  private async observe(): Promise<Observation | undefined> {
    for (;;) {
      const e = await this.next();
      if (e.kind === 'exit') return undefined;
      if (e.pending.aborted) continue;
      this.pending = e.pending;
      this.requests += 1;
      return this.observation(e.pending.request);
    }
  }

  /** The episode's first request as stored (with the first turn's action: a first observation is not stored). */
  private first: StoredAgentRequest | undefined;

  private observation(r: ChatRequest): Observation {
    const messages = r.messages.map(message);
    const tools = toolSchemas(r);
    const { continuesFrom, rewrite } = this.continuation(messages, JSON.stringify(tools));
    const request: AgentRequest = {
      messages,
      tools,
      continuesFrom,
      ...(rewrite ? { rewrite } : {}),
      ...(r.maxTokens !== undefined ? { maxTokens: r.maxTokens } : {}),
      ...(r.stop.length ? { stop: r.stop } : {}),
    };
    // as stored (the observation's data): what the request added to the context, not the whole conversation again
    const stored = {
      index: this.requests,
      continuesFrom,
      ...(rewrite ? { rewrite } : {}),
      messages: messages.slice(continuesFrom),
      tools,
      ...(r.maxTokens !== undefined ? { maxTokens: r.maxTokens } : {}),
      ...(r.stop.length ? { stop: r.stop } : {}),
    };
    if (this.requests === 1) this.first = stored;
    const lastMessage = messages[messages.length - 1]!;
    return { text: lastMessage.content, data: { request: stored }, request };
  }

  /** How much of a request is the episode's context already (see the top of this file), or where it differs. */
  private continuation(messages: readonly AgentMessage[], tools: string): { continuesFrom: number; rewrite?: string } {
    const last = this.last;
    if (!last) return { continuesFrom: 0 };
    if (this.unanswered) {
      const why = this.unanswered;
      this.unanswered = undefined;
      return { continuesFrom: 0, rewrite: why };
    }
    const n = last.messages.length;
    if (tools !== last.tools) return { continuesFrom: 0, rewrite: 'the tools changed' };
    for (let i = 0; i < Math.min(n, messages.length); i++)
      if (!sameMessage(messages[i]!, last.messages[i]!))
        return { continuesFrom: 0, rewrite: `message ${i} (${messages[i]!.role}) differs from the one sent before` };
    if (messages.length <= n) return { continuesFrom: 0, rewrite: `the conversation was cut to ${messages.length} messages` };
    if (!sameAnswer(messages[n]!, last.answer)) return { continuesFrom: 0, rewrite: `message ${n} is not the policy's answer as given` };
    if (messages.length === n + 1) return { continuesFrom: 0, rewrite: 'nothing follows the policy’s answer' };
    return { continuesFrom: n + 1 };
  }

  parseAction(text: string): ParsedAction {
    const r = this.pending?.request;
    const names = new Set(r && r.toolChoice !== 'none' ? r.tools.map((t) => t.name) : []);
    const answer = parseAnswer(text, names, () => `call_${crypto.randomBytes(12).toString('base64url')}`);
    // parallel_tool_calls false: the program gets the first call; the context holds them all, so the
    // next request, which answers one call, is not this answer as given (a new segment)
    const calls = r && !r.parallelToolCalls ? answer.toolCalls.slice(0, 1) : answer.toolCalls;
    // each later request is the observation of the turn before it; the first is kept with the first answer
    const first = this.requests === 1 && this.first ? { request: this.first } : {};
    if (calls.length === 0) return { kind: 'tool', name: 'answer', args: { text: answer.content ?? '', ...first } };
    return { kind: 'tool', name: calls[0]!.name, args: { content: answer.content, calls, generated: answer.toolCalls, ...first } };
  }

  async step(action: ParsedAction, sample?: SampledAction): Promise<StepResult> {
    const p = this.pending;
    if (!p) throw new Error('agent: step() without a request to answer');
    this.pending = undefined;
    const args = action.kind === 'tool' ? action.args : {};
    const calls = (Array.isArray(args.calls) ? args.calls : []) as ParsedAnswer['toolCalls'];
    // an answer with calls holds them in args.calls (a program's tool may itself be called "answer")
    const content = !Array.isArray(args.calls) ? (typeof args.text === 'string' ? args.text : '') : ((args.content as string | null | undefined) ?? null);
    const generated: ParsedAnswer = { content, toolCalls: (Array.isArray(args.generated) ? args.generated : calls) as ParsedAnswer['toolCalls'] };
    this.calls += calls.length;
    const tk = sample?.step.tokens;
    const decode = sample?.decode;
    p.resolve({
      choices: [
        {
          content,
          toolCalls: calls,
          finishReason: calls.length > 0 ? 'tool_calls' : (sample?.finish ?? 'stop'),
          ...(p.request.logprobs && tk && decode ? { logprobs: tk.sampled.map((id, i) => ({ token: decode([id]), logprob: tk.logprobs[i]! })) } : {}),
        },
      ],
      promptTokens: tk?.context.length ?? 0,
      completionTokens: tk?.sampled.length ?? 0,
    });
    this.last = { messages: p.request.messages.map(message), tools: JSON.stringify(toolSchemas(p.request)), answer: generated };
    // the program gave up on this request while it was sampled: its answer is in the context, not in the program's history
    if (p.aborted) this.unanswered = 'the program abandoned its previous request, whose answer the context holds';
    const next = await this.observe();
    if (next) return { observation: next, done: false };
    return { observation: { text: `the program exited (${this.exitText()})`, data: { exit: this.exited?.code ?? null } }, done: true, termination: 'finished' };
  }

  /** The loop is done with this episode: a program still running (the turn cap, a full context) stops now, not with its batch. */
  end(): void {
    if (!this.exited) this.stop('the episode ended before the program did (the turn cap or a full context)');
  }

  verify(): Promise<EpisodeOutcome> {
    this.end();
    const details = {
      requests: this.requests,
      toolCalls: this.calls,
      exit: this.exitText(),
      ...(this.stderr ? { stderr: this.stderr } : {}),
      ...(this.stoppedBy ? { stopped: this.stoppedBy } : {}),
    };
    if (this.stoppedBy) return Promise.resolve({ reward: 0, success: false, publicPass: false, privatePass: false, details });
    const printed = lastJsonObject(this.stdout);
    const scorer = this.run.scorer;
    if (scorer) return this.scored(scorer, printed, details);
    const reward = printed?.reward;
    if (typeof reward !== 'number' || !Number.isFinite(reward))
      throw new AgentEnvError(
        `${this.run.program.label} printed no {"reward": number} line as its last JSON line (${this.exitText()})${this.stderrLast()}. Fix: ${this.run.program.noRewardFix}`,
      );
    const extras = Object.fromEntries(Object.entries(printed!).filter(([k]) => k !== 'reward' && k !== 'success'));
    const s = printed!.success;
    const success = typeof s === 'boolean' ? s : reward > 0;
    return Promise.resolve({
      reward,
      success,
      publicPass: success,
      privatePass: success,
      details: { ...details, ...(Object.keys(extras).length ? { extras } : {}) },
    });
  }

  /** The reward file's (or exact_match's) score of the final conversation. */
  private async scored(scorer: Scorer, printed: Record<string, unknown> | undefined, details: Record<string, unknown>): Promise<EpisodeOutcome> {
    if (!this.task) throw new Error('agent: verify() before an episode');
    const last = this.last;
    const answer = last && openAiMessage({ role: 'assistant', content: last.answer.content ?? '', toolCalls: last.answer.toolCalls });
    const trajectory: AgentRewardTrajectory = {
      messages: last ? [...last.messages.map((m) => openAiMessage(m)), answer!] : [],
      answer: last && last.answer.toolCalls.length === 0 ? last.answer.content : null,
      tool_calls: this.calls,
      requests: this.requests,
      printed: printed ?? null,
      exit_code: this.exited?.code ?? null,
    };
    const base = await scoreWith(scorer, this.task, trajectory);
    const success = base.success ?? base.score >= this.run.o.successThreshold;
    return {
      reward: base.score,
      success,
      publicPass: base.publicPass ?? success,
      privatePass: base.privatePass ?? success,
      details: { ...details, score: base.score, answer: trajectory.answer, ...(Object.keys(base.extras).length ? { extras: base.extras } : {}) },
    };
  }

  private exitText(): string {
    const e = this.exited;
    if (!e) return 'still running';
    if (e.error) return `it could not be started: ${e.error}`;
    return e.signal ? `stopped by ${e.signal}` : `exit code ${e.code}`;
  }

  private stderrLast(): string {
    const last = this.stderr
      .trim()
      .split('\n')
      .filter((l) => l.trim() !== '')
      .pop();
    return last ? `; its stderr ends: ${last.slice(0, 300)}` : '';
  }

  /** Stops the program and whatever it started (its process group on POSIX, its tree on Windows). */
  private stop(why: string): void {
    if (!this.proc) return;
    if (!this.exited) this.stoppedBy ??= why;
    this.proc.stop();
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.pending?.reject(new Error('the episode ended'));
    this.pending = undefined;
    this.run.endpoint.close(this.id);
    this.run.episodes.delete(this.id);
    if (!this.proc) return;
    // whatever the program left running in its group goes too, after a normal exit as well
    this.stop('the episode ended before the program did');
    await this.proc.release();
  }
}

const DESCRIPTION = 'Your own agent program (an OpenAI client) against the policy, served on an OpenAI-compatible endpoint; tasks from task files.';

/**
 * The agent environment as a policy needs it to answer one stored request again (replay): no program,
 * no endpoint, no tasks — nothing of a stored run starts a program.
 */
export function requestsOnlyEnvironment(): RunEnvironment {
  return {
    name: 'agent',
    description: DESCRIPTION,
    create: () => {
      throw new AgentEnvError('a replayed request runs no episode: its program is not started');
    },
    tasks: () => ({ train: [], heldOut: [] }),
    dispose: () => Promise.resolve(),
  };
}

export const agentEnvironment: EnvironmentDefinition<AgentEnvOptions> = {
  name: 'agent',
  description: DESCRIPTION,
  async open(o) {
    const root = path.resolve(o.root === '' ? '.' : o.root);
    if (o.command.length === 0 || o.command[0] === '') throw new AgentEnvError('envOptions.command is empty. Fix: name the program, e.g. ["node", "agent.ts"]');
    if (!fs.existsSync(root)) throw new AgentEnvError(`envOptions.root ${root} does not exist. Fix: the folder of the config file`);
    const program = resolveProgram(o.command[0]!, root);
    const tasks = await loadTaskSource(root, o, (message) => new AgentEnvError(message));
    const reward = await openScorer(o, root, tasks);
    const command = { path: program, args: o.command.slice(1), label: o.command.join(' ') };
    try {
      return await openProgramEnvironment({
        name: 'agent',
        description: DESCRIPTION,
        root,
        program: {
          ...command,
          taskJson: agentTaskJson,
          noRewardFix: `print e.g. {"reward": 1} as the program's last line of JSON, or name a reward file (envOptions.reward)`,
        },
        limits: o,
        concurrency: o.concurrency,
        tasks,
        scorer: reward.scorer,
        describe: (port) =>
          `agent program: ${[program, ...command.args].join(' ')} in ${root}, run as you (not sandboxed), one process per episode; policy served at http://127.0.0.1:${port}/episodes/…/v1 (OpenAI chat completions, a fresh key); ${tasks.train.length} training and ${tasks.heldOut.length} held-out tasks; reward ${reward.describe}`,
        cleanup: () => reward.close(),
      });
    } catch (e) {
      await reward.close();
      throw e;
    }
  },
};

/**
 * An environment whose episodes are a program of the environment's own talking to the policy through
 * the endpoint: the agent environment's (the user's command), or another's (verifiers: a harness around
 * the user's Python module), with the tasks read already; the reward is the program's last JSON line,
 * or the scorer's. `dispose` also runs `cleanup`; a failed start leaves `cleanup` to the caller.
 */
export async function openProgramEnvironment(spec: {
  readonly name: RunEnvironment['name'];
  readonly description: string;
  readonly root: string;
  readonly program: EpisodeProgram;
  readonly limits: EpisodeLimits;
  readonly concurrency: number;
  readonly tasks: TaskSource;
  readonly scorer?: Scorer;
  /** The run record's line about it (preflight), given the endpoint's port. */
  readonly describe: (port: number) => string;
  readonly cleanup?: () => Promise<void> | void;
}): Promise<RunEnvironment> {
  const holder: { run?: AgentRun } = {};
  const endpoint = await AgentEndpoint.start({
    modelName: AGENT_MODEL_NAME,
    complete: (episode, request, signal) => {
      const ep = holder.run?.episodes.get(episode);
      if (!ep) throw new EndpointError(404, `episode ${episode} is not open`, 'invalid_request_error', null, 'episode_not_open');
      return ep.request(request, signal);
    },
  });
  const r = new AgentRun(endpoint, spec.limits, spec.root, spec.program, spec.scorer);
  holder.run = r;
  const { tasks } = spec;
  return {
    name: spec.name,
    description: spec.description,
    create: () => new AgentEpisode(r),
    maxOpen: spec.concurrency,
    tasks: () => tasks,
    taskFromId: (id) => [...tasks.train, ...tasks.heldOut].find((t) => t.id === id),
    preflight: () => spec.describe(endpoint.port),
    dispose: async () => {
      await endpoint.stop();
      await spec.cleanup?.();
    },
  };
}
