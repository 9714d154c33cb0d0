// The agent loop: many episodes advanced together as explicit state machines, so a batched policy
// samples one action for every episode that awaits one and the environments step concurrently.
//
//   resetting ──reset()──▶ awaiting_action ──policy.sample()──▶ stepping ──env.step()──▶ awaiting_action
//                                   │                                  └── done / budget / turn cap ──▶ verifying ──▶ done
// An environment that throws ends its own episode with termination 'env_error'; the batch goes on.
//
// Two schedules. Lockstep (the default): every live episode is sampled in one batch, then every
// environment steps, and the next batch waits for the slowest step. Concurrent (`maxInFlight` > 0): at
// most that many episodes are in flight; an episode whose step is done joins the next sampling batch
// at once, while others still wait on their sandbox or tool (the batch is held open a moment, a share of
// the last sampling call's time, for answers about to arrive), and a finished episode makes room for
// the next one. Each episode then draws from its own random stream (derived from `sampleRng` in spec
// order), so what it samples does not depend on which batch it happened to share.
import type { EpisodeOutcome, Observation, ParsedAction, TerminationReason, Trajectory, Turn } from '../../shared/types';
import type { Environment, Task } from '../envs/environment';
import type { Policy, PolicyContext, PolicySample } from '../policies/policy';
import { Rng } from '../random';

export type EpisodeState = 'resetting' | 'awaiting_action' | 'stepping' | 'verifying' | 'done';

export interface EpisodeSpec {
  readonly task: Task;
  readonly group: number;
  readonly indexInGroup: number;
}

export interface LoopOptions {
  /** Hard cap on turns per episode, above any environment budget. */
  readonly maxTurns: number;
  /** Draws the policy's actions. */
  readonly sampleRng: Rng;
  /** Drives the private verifier's random inputs. */
  readonly verifierRng: Rng;
  /** Accumulates where the time went: the policy's sampling, and environment steps with verification. */
  readonly timing?: PhaseTiming;
  /** Concurrent schedule with at most this many episodes in flight; 0 or absent = lockstep. */
  readonly maxInFlight?: number;
  /**
   * The most episodes the environment holds open at once (RunEnvironment.maxOpen: an agent program is
   * a process per episode); more specs than that run on the concurrent schedule under this limit.
   */
  readonly maxOpen?: number;
}

/** The in-flight limit of a rollout: the schedule's own, under the environment's cap (0 = lockstep, no cap). */
function inFlightLimit(o: Pick<LoopOptions, 'maxInFlight' | 'maxOpen'>, episodes: number): number {
  const own = o.maxInFlight ?? 0;
  const cap = o.maxOpen ?? 0;
  if (cap <= 0 || (own <= 0 && episodes <= cap)) return own;
  return own > 0 ? Math.min(own, cap) : cap;
}

export interface PhaseTiming {
  generateMs: number;
  /** Lockstep: time in environment steps. Concurrent: time the loop waited on environments with nothing to sample. */
  envMs: number;
}

class Episode {
  state: EpisodeState = 'resetting';
  observation: Observation = { text: '', data: {} };
  readonly turns: Turn[] = [];
  termination: TerminationReason = 'turn_cap';
  outcome: EpisodeOutcome | undefined;
  constructor(
    readonly spec: EpisodeSpec,
    readonly env: Environment,
    readonly policyVersion: number,
    readonly rng?: Rng,
  ) {}

  finish(termination: TerminationReason): void {
    this.termination = termination;
    this.state = 'verifying';
  }

  context(): PolicyContext {
    return { task: this.spec.task, observation: this.observation, turns: this.turns, ...(this.rng ? { rng: this.rng } : {}) };
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

const ENV_FAILED: EpisodeOutcome = { reward: 0, success: false, publicPass: false, privatePass: false };

async function reset(ep: Episode): Promise<void> {
  try {
    ep.observation = await ep.env.reset(ep.spec.task);
    ep.state = 'awaiting_action';
  } catch (e) {
    ep.observation = { text: `environment failed to start: ${errorText(e)}`, data: { envError: true } };
    ep.finish('env_error');
  }
}

/** Applies one sampled action: the environment's step, the turn recorded, the episode's next state. */
async function act(ep: Episode, sample: PolicySample | undefined, maxTurns: number): Promise<void> {
  if (!sample) throw new Error('the policy returned fewer samples than contexts');
  if (sample.exhausted) {
    ep.finish('context_exhausted');
    return;
  }
  if (sample.refused !== undefined) {
    // what the environment asked could not be put to the policy: the environment's failure, this episode's alone
    ep.observation = { text: sample.refused, data: { envError: true } };
    ep.finish('env_error');
    return;
  }
  ep.state = 'stepping';
  let action: ParsedAction = { kind: 'format_error', message: 'the environment could not read this output' };
  let done: boolean;
  let termination: TerminationReason | undefined;
  try {
    // a parser that throws on some output is the environment's failure too: never the whole batch's
    action = ep.env.parseAction(sample.text);
    const result = await ep.env.step(action, sample);
    ep.observation = result.observation;
    done = result.done;
    termination = result.termination;
  } catch (e) {
    ep.observation = { text: `environment error: ${errorText(e)}`, data: { envError: true } };
    done = true;
    termination = 'env_error';
  }
  ep.turns.push({ index: ep.turns.length, actionText: sample.text, action, observation: ep.observation, policy: sample.step });
  if (done) ep.finish(termination ?? 'finished');
  else if (ep.turns.length >= maxTurns) ep.finish('turn_cap');
  else ep.state = 'awaiting_action';
}

/** Verification in spec order keeps the verifier's random stream deterministic whatever the schedule. */
async function verifyAll(episodes: readonly Episode[], verifierRng: Rng, timing?: PhaseTiming): Promise<void> {
  const t = Date.now();
  for (const ep of episodes) {
    if (ep.termination === 'env_error') {
      // what failed, kept with the episode (an environment that failed to start has no turn to show it)
      ep.outcome = { ...ENV_FAILED, details: { envError: ep.observation.text.slice(0, 4000) } };
    } else {
      try {
        ep.outcome = await ep.env.verify(verifierRng);
      } catch (e) {
        // a verifier that fails is the environment's failure, not the agent's
        ep.outcome = { ...ENV_FAILED, details: { verifierError: errorText(e) } };
        ep.termination = 'env_error';
      }
    }
    ep.state = 'done';
  }
  if (timing) timing.envMs += Date.now() - t;
}

function trajectoryOf(ep: Episode): Trajectory {
  return {
    taskId: ep.spec.task.id,
    group: ep.spec.group,
    indexInGroup: ep.spec.indexInGroup,
    turns: ep.turns,
    termination: ep.termination,
    outcome: ep.outcome ?? ENV_FAILED,
    advantage: 0,
    policyVersion: ep.policyVersion,
  };
}

/** Runs every episode to the end; returns trajectories in spec order with advantage 0. */
export async function runEpisodes(specs: readonly EpisodeSpec[], makeEnv: () => Environment, policy: Policy, options: LoopOptions): Promise<Trajectory[]> {
  const limit = inFlightLimit(options, specs.length);
  if (limit > 0) return runConcurrent(specs, makeEnv, policy, { ...options, maxInFlight: limit });
  const episodes = specs.map((spec) => new Episode(spec, makeEnv(), policy.version));
  try {
    await Promise.all(episodes.map(reset));
    for (;;) {
      const live = episodes.filter((ep) => ep.state === 'awaiting_action');
      if (live.length === 0) break;
      const tSample = Date.now();
      const samples = await policy.sample(
        live.map((ep) => ep.context()),
        options.sampleRng,
      );
      const tStep = Date.now();
      if (options.timing) options.timing.generateMs += tStep - tSample;
      await Promise.all(live.map((ep, i) => act(ep, samples[i], options.maxTurns)));
      if (options.timing) options.timing.envMs += Date.now() - tStep;
    }
    await verifyAll(episodes, options.verifierRng, options.timing);
  } finally {
    await Promise.allSettled(episodes.map((ep) => ep.env.close()));
  }
  return episodes.map(trajectoryOf);
}

/** What the concurrent engine asks before each episode it could start: one to start, none now, or no more. */
type Admission = Episode | 'wait' | 'end';

interface Drive {
  readonly limit: number;
  readonly admit: () => Admission;
  /** An episode's last turn is done (it is to be verified). */
  readonly finished: (ep: Episode) => void;
  readonly policy: Policy;
  readonly maxTurns: number;
  readonly sampleRng: Rng;
  readonly timing?: PhaseTiming | undefined;
  /** Lets events outside the loop (room in a queue, a stop) wake it while it waits. */
  readonly onWait?: (wake: () => void) => void;
}

/** The concurrent schedule's batching wait: at most this share of the last sampling call's time, and at most GATHER_MAX_MS. */
const GATHER_SHARE = 0.25;
const GATHER_MAX_MS = 250;

/**
 * The concurrent engine: starts episodes while fewer than `limit` are in flight and `admit` gives one,
 * samples every episode that awaits an action in one batch as soon as there is any, and lets
 * environments step meanwhile. Ends when `admit` said 'end' and nothing is in flight.
 */
async function drive(o: Drive): Promise<void> {
  const ready: Episode[] = [];
  let inFlight = 0;
  let lastSampleMs = 0;
  let ended = false;
  const failure: { error?: unknown; happened: boolean } = { happened: false };
  let wake: (() => void) | undefined;
  const signal = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  /** An episode's environment work (reset or step) is done: it is ready to act again, or it finished. */
  const settle = (ep: Episode): void => {
    if (ep.state === 'awaiting_action') ready.push(ep);
    else {
      inFlight -= 1;
      o.finished(ep);
    }
    signal();
  };
  const fail = (e: unknown): void => {
    if (!failure.happened) Object.assign(failure, { error: e, happened: true });
    signal();
  };
  /** Until an episode settles or fails, or events outside the loop wake it; after `ms` too, when given. */
  const woken = (ms?: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const timer =
        ms === undefined
          ? undefined
          : setTimeout(() => {
              wake = undefined;
              resolve();
            }, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
      o.onWait?.(signal);
    });
  for (;;) {
    while (!ended && inFlight < o.limit) {
      const next = o.admit();
      if (next === 'wait') break;
      if (next === 'end') {
        ended = true;
        break;
      }
      inFlight += 1;
      void reset(next)
        .then(() => settle(next))
        .catch(fail);
    }
    if (failure.happened) throw failure.error;
    if (ready.length > 0) {
      // Let every tool answer that is already due arrive first: timers and I/O callbacks each run their
      // microtasks (this loop included) before the next one, so without this turn of the event loop
      // each answer would be sampled alone, in batches of one.
      await new Promise<void>((resolve) => setImmediate(resolve));
      // Dynamic batching: while other episodes in flight are still in their environment step, wait a
      // little for their requests to join this batch. A decoding step costs nearly the same for a few
      // rows as for one, so a request that joins now is almost free, and one that just misses waits a
      // whole sampling call (16 agent programs made 4.0 requests per call without the wait, 10.7 with
      // it). The wait ends when every episode in flight is ready, or after a share of the last call's time.
      const tGather = Date.now();
      const deadline = tGather + Math.min(GATHER_MAX_MS, GATHER_SHARE * lastSampleMs);
      while (ready.length < inFlight && !failure.happened && Date.now() < deadline) await woken(deadline - Date.now());
      if (o.timing) o.timing.envMs += Date.now() - tGather;
      if (failure.happened) throw failure.error;
      const batch = ready.splice(0);
      const tSample = Date.now();
      const samples = await o.policy.sample(
        batch.map((ep) => ep.context()),
        o.sampleRng,
      );
      lastSampleMs = Date.now() - tSample;
      if (o.timing) o.timing.generateMs += lastSampleMs;
      // (act handles the environment's failures itself; what it throws is the policy's bug)
      batch.forEach((ep, i) => void act(ep, samples[i], o.maxTurns).then(() => settle(ep), fail));
      continue;
    }
    if (inFlight === 0 && ended) return;
    const tWait = Date.now();
    await woken();
    if (o.timing) o.timing.envMs += Date.now() - tWait;
  }
}

/** The concurrent schedule (see the top of this file). */
async function runConcurrent(specs: readonly EpisodeSpec[], makeEnv: () => Environment, policy: Policy, options: LoopOptions): Promise<Trajectory[]> {
  // every episode's stream, drawn in spec order before anything runs: independent of the schedule
  const streams = specs.map(() => new Rng(options.sampleRng.uint32()));
  const episodes: Episode[] = [];
  let nextSpec = 0;
  try {
    await drive({
      limit: Math.max(1, options.maxInFlight ?? 1),
      policy,
      maxTurns: options.maxTurns,
      sampleRng: options.sampleRng,
      timing: options.timing,
      admit: () => {
        if (nextSpec >= specs.length) return 'end';
        const i = nextSpec++;
        return (episodes[i] = new Episode(specs[i]!, makeEnv(), policy.version, streams[i]));
      },
      finished: (ep) => ep.env.end?.(),
    });
    await verifyAll(episodes, options.verifierRng, options.timing);
  } finally {
    await Promise.allSettled(episodes.map((ep) => ep.env.close()));
  }
  return episodes.map(trajectoryOf);
}

export interface StreamOptions extends LoopOptions {
  /** The next group's episodes; 'wait' while none may start (it is asked again after `poke`); 'end' to finish what is in flight and stop. */
  readonly nextGroup: () => readonly EpisodeSpec[] | 'wait' | 'end';
  readonly makeEnv: () => Environment;
  /** A group whose every episode is finished and verified, in index order. */
  readonly onGroup: (trajectories: Trajectory[]) => void;
}

/**
 * An open-ended rollout for the asynchronous mode: groups start as `nextGroup` allows, their episodes
 * share sampling batches with every other group in flight (at most `maxInFlight` episodes, 0 = no
 * bound), and each group is handed over once all its episodes are verified. Episodes draw from their
 * own random streams, taken from `sampleRng` as they start.
 */
export class EpisodeStream {
  private wake: (() => void) | undefined;

  constructor(
    private readonly policy: Policy,
    private readonly o: StreamOptions,
  ) {}

  /** Something changed that may let a group start, or the stream end: the waiting loop looks again. */
  poke(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async run(): Promise<void> {
    const o = this.o;
    const pending: EpisodeSpec[] = [];
    const groups = new Map<number, { episodes: Episode[]; left: number }>();
    /** Episodes whose environment is still open. */
    const open = new Set<Episode>();
    const close = (eps: readonly Episode[]): Promise<unknown> => Promise.allSettled(eps.filter((ep) => open.delete(ep)).map((ep) => ep.env.close()));
    const verifying: Promise<void>[] = [];
    let verifyFailure: { error: unknown } | undefined;
    const verifyGroup = async (members: readonly Episode[]): Promise<void> => {
      const sorted = [...members].sort((a, b) => a.spec.indexInGroup - b.spec.indexInGroup);
      try {
        // (no timing: the loop counts its own waits on environments, verification among them)
        await verifyAll(sorted, o.verifierRng);
      } finally {
        await close(sorted);
      }
      o.onGroup(sorted.map(trajectoryOf));
    };
    try {
      await drive({
        limit: inFlightLimit(o, Infinity) || Infinity,
        policy: this.policy,
        maxTurns: o.maxTurns,
        sampleRng: o.sampleRng,
        timing: o.timing,
        onWait: (wake) => (this.wake = wake),
        admit: () => {
          if (verifyFailure) return 'end';
          if (pending.length === 0) {
            const next = o.nextGroup();
            if (next === 'wait' || next === 'end') return next;
            if (next.length === 0) throw new Error('EpisodeStream: nextGroup gave a group without episodes');
            groups.set(next[0]!.group, { episodes: [], left: next.length });
            pending.push(...next);
          }
          const spec = pending.shift()!;
          const ep = new Episode(spec, o.makeEnv(), this.policy.version, new Rng(o.sampleRng.uint32()));
          open.add(ep);
          groups.get(spec.group)!.episodes.push(ep);
          return ep;
        },
        finished: (ep) => {
          ep.env.end?.();
          const g = groups.get(ep.spec.group)!;
          if (--g.left > 0) return;
          groups.delete(ep.spec.group);
          verifying.push(
            verifyGroup(g.episodes).catch((e: unknown) => {
              verifyFailure ??= { error: e };
              this.poke();
            }),
          );
        },
      });
      await Promise.all(verifying);
      if (verifyFailure) throw verifyFailure.error;
    } finally {
      await close([...open]);
    }
  }
}
