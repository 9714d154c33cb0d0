// An OpenEnv environment (env "openenv"): an environment served by Meta / Hugging Face's openenv-core
// (tested: 0.3.0), trained as it is. The run reaches the server at envOptions.url, or starts it with
// envOptions.command on a loopback port (openenvServer.ts); it reads /schema once to choose the
// observation field the model reads and the action field its text goes to (openenvFields.ts). Each
// episode is a WebSocket session of its own (openenvSession.ts): reset(seed, episode_id, resetArgs) →
// the observation's text is the model's prompt; each turn the model's text is the action, step() →
// the next observation's text, the server's reward and done. The episode's reward is its step rewards'
// sum (or the last, rewardOf), kept with them and the session's final state. Tasks are reset seeds: the
// training ones 0…trainTasks−1, the held-out ones from OPENENV_HELD_OUT_SEED_BASE, with heldOutResetArgs.
// A server that cannot be reached, dies or answers out of protocol ends that episode as the
// environment's failure (env_error), its error naming the URL and the field.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { EnvStepData } from '../../../shared/episodeStats';
import { OPENENV_HELD_OUT_SEED_BASE, type OpenEnvOptions } from '../../../shared/optionSpecs';
import type { EpisodeOutcome, Observation, ParsedAction } from '../../../shared/types';
import type { Environment, EnvironmentDefinition, RunEnvironment, StepResult, Task, TaskSource } from '../environment';
import { chooseFields, observationText, type OpenEnvFields } from './openenvFields';
import { getJson, OpenEnvServer } from './openenvServer';
import { OpenEnvError, OpenEnvSession, type OpenEnvAnswer } from './openenvSession';

export { OpenEnvError } from './openenvSession';

const DESCRIPTION = 'An OpenEnv environment server (reset, step, state over its WebSocket session): its observations to the model, its rewards.';
/** The most characters of an observation kept as a turn's data (an image as a list of numbers would fill the database). */
const MAX_DATA_CHARS = 65_536;
/**
 * Waits (ms) before each new try of a reset the server refused at capacity: the previous episode's
 * session, closed a moment ago, may not be released yet (a server of one session, the template's).
 */
const CAPACITY_RETRY_MS = [100, 200, 300, 400, 500, 750, 1000, 1500];

/** What the run's episodes share: where the server is, the fields, the options. */
interface Served {
  readonly url: string;
  readonly fields: OpenEnvFields;
  readonly o: OpenEnvOptions;
  /** Words about a started server that has exited, for an episode's error. */
  readonly note: () => string;
  /** Numbers the run's episodes, for their episode_id. */
  next: number;
}

function observationOf(answer: OpenEnvAnswer, s: Served, where: string): Observation {
  const text = observationText(answer.observation, s.fields.observation, where);
  const json = JSON.stringify(answer.observation);
  const observation = json.length <= MAX_DATA_CHARS ? answer.observation : { clipped: `${json.length} characters, more than ${MAX_DATA_CHARS} kept` };
  // the shape the inspector and the metrics recognise as an environment step, not a tool call (EnvStepData)
  const data: EnvStepData = { step: 'env', observation, reward: answer.reward, done: answer.done };
  return { text, data: { ...data } };
}

class OpenEnvEpisode implements Environment {
  private session: OpenEnvSession | undefined;
  private task: Task | undefined;
  private readonly rewards: number[] = [];
  private done = false;
  /** The session's final state, asked when the episode's last turn was taken (end), then the session closed. */
  private ending: Promise<unknown> | undefined;

  constructor(private readonly s: Served) {}

  async reset(task: Task): Promise<Observation> {
    this.task = task;
    const seed = Number(task.data.seed);
    const args = { ...(task.data.resetArgs as Record<string, unknown> | undefined), seed, episode_id: `${task.id}#${this.s.next++}`.slice(-255) };
    let answer: OpenEnvAnswer;
    for (let attempt = 0; ; attempt++) {
      this.session?.close();
      this.session = await OpenEnvSession.open(this.s.url, this.s.o.timeoutMs, this.s.note);
      try {
        answer = await this.session.reset(args);
        break;
      } catch (e) {
        const wait = CAPACITY_RETRY_MS[attempt];
        if (!(e instanceof OpenEnvError) || e.code !== 'CAPACITY_REACHED' || wait === undefined) {
          this.session.close(); // the server's session freed at once, not when the batch ends
          throw e;
        }
        await new Promise((r) => setTimeout(r, wait));
      }
    }
    if (answer.done) throw new OpenEnvError(`OpenEnv session at ${this.session.url}: reset of ${task.id} answered done: true, an episode with nothing to play`);
    return observationOf(answer, this.s, `OpenEnv session at ${this.session.url}: reset`);
  }

  parseAction(text: string): ParsedAction {
    // any text is an action: the server's action schema judges it (a refusal ends the episode, saying why)
    return { kind: 'tool', name: this.s.fields.action, args: { [this.s.fields.action]: text } };
  }

  async step(action: ParsedAction): Promise<StepResult> {
    if (!this.session || this.done) throw new Error('openenv: step() outside an episode; call reset() first');
    const given = action.kind === 'tool' ? action.args[this.s.fields.action] : undefined;
    const text = typeof given === 'string' ? given : '';
    const answer = await this.session.step({ [this.s.fields.action]: text });
    this.rewards.push(answer.reward ?? 0);
    this.done = answer.done;
    const observation = observationOf(answer, this.s, `OpenEnv session at ${this.session.url}: step`);
    return answer.done ? { observation, done: true, termination: 'finished' } : { observation, done: false };
  }

  /** The session's final state (episode_id, step_count, the environment's own), kept for the inspector; never throws. */
  private async finalState(): Promise<unknown> {
    try {
      return this.session ? await this.session.state() : null;
    } catch (e) {
      return { error: (e as Error).message.slice(0, 500) };
    }
  }

  end(): void {
    // the last turn is taken: the state asked now and the session closed, so the server's session is free
    // for the next episode (the loop verifies, and closes, episodes only when all of a batch are done)
    this.ending ??= this.finalState().then((state) => {
      this.session?.close();
      return state;
    });
  }

  async verify(): Promise<EpisodeOutcome> {
    const o = this.s.o;
    const reward = o.rewardOf === 'last' ? (this.rewards[this.rewards.length - 1] ?? 0) : this.rewards.reduce((a, b) => a + b, 0);
    const state = await (this.ending ?? this.finalState());
    const success = reward >= o.successThreshold;
    return {
      reward,
      success,
      publicPass: success,
      privatePass: success,
      details: { seed: this.task?.data.seed ?? null, rewards: this.rewards, done: this.done, state },
    };
  }

  close(): Promise<void> {
    this.session?.close();
    this.session = undefined;
    return Promise.resolve();
  }
}

/** Task ids: openenv:train:<seed> and openenv:heldout:<seed>. */
function taskOf(split: 'train' | 'heldout', seed: number, o: OpenEnvOptions): Task {
  const resetArgs = split === 'heldout' ? { ...o.resetArgs, ...o.heldOutResetArgs } : o.resetArgs;
  return {
    id: `openenv:${split}:${seed}`,
    prompt: `reset(seed=${seed}${Object.keys(resetArgs).length ? `, ${JSON.stringify(resetArgs)}` : ''})`,
    data: { split, seed, resetArgs },
  };
}

function taskSource(o: OpenEnvOptions): TaskSource {
  return {
    train: Array.from({ length: o.trainTasks }, (_, i) => taskOf('train', i, o)),
    heldOut: Array.from({ length: o.heldOutTasks }, (_, i) => taskOf('heldout', OPENENV_HELD_OUT_SEED_BASE + i, o)),
  };
}

/** The server URL a config names, checked: http(s) with a host. */
function checkedUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new OpenEnvError(`envOptions.url ${JSON.stringify(url)} is not a URL. Fix: the server's address, e.g. "http://127.0.0.1:8000"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new OpenEnvError(
      `envOptions.url ${JSON.stringify(url)}: ${u.protocol} is not http: or https:. Fix: the server's http address (the session's ws:// address follows from it)`,
    );
  return url.replace(/\/+$/, '');
}

export const openenvEnvironment: EnvironmentDefinition<OpenEnvOptions> = {
  name: 'openenv',
  description: DESCRIPTION,
  async open(o) {
    const root = path.resolve(o.root === '' ? '.' : o.root);
    if (o.command.length > 0 && !fs.existsSync(root)) throw new OpenEnvError(`envOptions.root ${root} does not exist. Fix: the folder of the config file`);
    const server = o.command.length > 0 ? await OpenEnvServer.start(o.command, root, o.startTimeoutMs) : undefined;
    try {
      const url = server ? server.url : checkedUrl(o.url);
      if (!server) await getJson(url, '/health', o.timeoutMs);
      const fields = chooseFields(await getJson(url, '/schema', o.timeoutMs), o, url);
      const served: Served = { url, fields, o, note: () => server?.note() ?? '', next: 0 };
      const tasks = taskSource(o);
      const describe = `OpenEnv server at ${url}${server ? ` (started by ${server.label} in ${root}, as you, not sandboxed)` : ''}; the model reads observation.${fields.observation || '(all of it, as JSON)'} and writes action.${fields.action}; ${tasks.train.length} training seeds and ${tasks.heldOut.length} held out; reward the ${o.rewardOf === 'sum' ? 'sum of its step rewards' : 'last step reward'}; ${o.concurrency} session${o.concurrency === 1 ? '' : 's'} at once`;
      const run: RunEnvironment = {
        name: 'openenv',
        description: DESCRIPTION,
        create: () => new OpenEnvEpisode(served),
        tasks: () => tasks,
        taskFromId: (id) => {
          const m = /^openenv:(train|heldout):(\d{1,15})$/.exec(id);
          return m ? taskOf(m[1] as 'train' | 'heldout', Number(m[2]), o) : undefined;
        },
        preflight: () => describe,
        maxOpen: o.concurrency,
        dispose: async () => {
          await server?.stop();
        },
      };
      return run;
    } catch (e) {
      await server?.stop();
      throw e;
    }
  },
};
