// The asynchronous mode's rollout stream and its bounded queue. The stream starts groups of episodes
// while the groups queued and in flight are fewer than the capacity (back-pressure), runs them
// concurrently, and queues each group once every episode of it is finished and verified: the learner
// never reads a half-written group. The learner takes whole groups at its own pace; a group older than
// `maxStaleness` policy versions when it is taken is dropped and counted. So that few are, a group
// starts only while it can still be taken within maxStaleness versions of the learner's now: the
// learner changes version at most once per take (after it, while it updates), so a group with P groups
// ahead of it (queued, in flight, or already in the learner's current take) is taken ⌈(P + 1) / G⌉
// takes from now, and starts only if that is at most maxStaleness + 1 (maxStaleness while an update is
// under way). A group that finishes after later ones can still come out older: that is what the drop
// is for. Busy, blocked and idle times of both sides are measured.
import type { Trajectory } from '../../shared/types';
import type { PhaseTiming } from '../rollout/agentLoop';

/** What the queue tells the stream, and what the stream hands it. */
export interface RolloutSide {
  /** Asked before each new group: 'start' (counted in flight from now), 'wait' (full: ask again after a poke), 'end' (stopping). */
  admit(): 'start' | 'wait' | 'end';
  /** A finished group (every episode verified). */
  push(group: Trajectory[]): void;
  /** Where the stream adds its sampling and environment times. */
  readonly timing: PhaseTiming;
}

/** The rollout stream as the queue drives it (EpisodeStream). */
export interface GroupProducer {
  /** Runs until `admit` answers 'end' and the groups in flight are finished. */
  run(): Promise<void>;
  /** Something changed that may let a group start, or the stream end. */
  poke(): void;
}

export interface AsyncRolloutOptions {
  readonly producer: (side: RolloutSide) => GroupProducer;
  /** Groups queued and in flight at most. */
  readonly capacity: number;
  /** Groups the learner takes each time. */
  readonly groupsPerTake: number;
  /** The most policy versions a group taken may be behind the learner. */
  readonly maxStaleness: number;
}

export interface TakenGroups {
  readonly groups: Trajectory[][];
  /** Groups dropped for being older than maxStaleness. */
  readonly dropped: number;
  /** Per group taken: how many versions behind the learner its oldest sample was. */
  readonly staleness: number[];
  /** Groups waiting in the queue when the learner came for them. */
  readonly queueDepth: number;
  /** Time the learner waited for groups. */
  readonly waitedMs: number;
}

export interface RolloutStats {
  /** Since the last call: time with at least one group in flight, and time with none because the queue was full or the staleness bound held the stream back. */
  readonly busyMs: number;
  readonly blockedMs: number;
  readonly timing: PhaseTiming;
}

/** The oldest policy version any turn of the group was sampled with (an episode without turns: the version it started at). */
export function oldestVersion(group: readonly Trajectory[]): number {
  let v = Infinity;
  for (const t of group) {
    if (t.turns.length === 0) v = Math.min(v, t.policyVersion);
    for (const turn of t.turns) v = Math.min(v, turn.policy.policyVersion);
  }
  return Number.isFinite(v) ? v : 0;
}

/** Accumulated length of the intervals during which a condition held. */
class Stopwatch {
  private since: number | undefined;
  private total = 0;
  set(on: boolean): void {
    if (on && this.since === undefined) this.since = Date.now();
    if (!on && this.since !== undefined) {
      this.total += Date.now() - this.since;
      this.since = undefined;
    }
  }
  /** The time so far (an open interval counted up to now), then zero. */
  read(): number {
    const now = Date.now();
    const t = this.total + (this.since !== undefined ? now - this.since : 0);
    this.total = 0;
    if (this.since !== undefined) this.since = now;
    return t;
  }
}

export class AsyncRollout {
  private readonly queue: Trajectory[][] = [];
  private inFlight = 0;
  private takes = 0;
  /** The learner is inside take(), with this many groups collected so far. */
  private inTake = false;
  private collected = 0;
  private running = false;
  private producer: GroupProducer | undefined;
  private done: Promise<void> | undefined;
  private failure: { error?: unknown; happened: boolean } = { happened: false };
  private wakeLearner: (() => void) | undefined;
  private readonly busy = new Stopwatch();
  private readonly blocked = new Stopwatch();
  private readonly timing: PhaseTiming = { generateMs: 0, envMs: 0 };

  constructor(private readonly o: AsyncRolloutOptions) {}

  get depth(): number {
    return this.queue.length;
  }

  start(): void {
    this.running = true;
    const side: RolloutSide = {
      timing: this.timing,
      admit: () => {
        if (!this.running) return 'end';
        const updating = this.takes > 0 && !this.inTake ? 1 : 0;
        const ahead = this.queue.length + this.inFlight + this.collected >= (this.o.maxStaleness + 1 - updating) * this.o.groupsPerTake;
        if (ahead || this.queue.length + this.inFlight >= this.o.capacity) {
          this.blocked.set(this.inFlight === 0);
          return 'wait';
        }
        this.inFlight += 1;
        this.blocked.set(false);
        this.busy.set(true);
        return 'start';
      },
      push: (group) => {
        this.inFlight -= 1;
        this.queue.push(group);
        if (this.inFlight === 0) {
          this.busy.set(false);
          this.blocked.set(true);
        }
        this.signalLearner();
      },
    };
    const producer = this.o.producer(side);
    this.producer = producer;
    this.done = producer
      .run()
      .catch((e: unknown) => {
        this.failure = { error: e, happened: true };
        this.signalLearner();
      })
      .finally(() => {
        this.busy.set(false);
        this.blocked.set(false);
      });
  }

  private signalLearner(): void {
    const w = this.wakeLearner;
    this.wakeLearner = undefined;
    w?.();
  }

  /** groupsPerTake groups no more than maxStaleness versions behind `version`, waiting for the stream as needed. */
  async take(version: number): Promise<TakenGroups> {
    const count = this.o.groupsPerTake;
    const maxStaleness = this.o.maxStaleness;
    const queueDepth = this.queue.length;
    const groups: Trajectory[][] = [];
    const staleness: number[] = [];
    let dropped = 0;
    let waitedMs = 0;
    // the update before this take is done: the stream may run further ahead
    this.inTake = true;
    this.collected = 0;
    this.producer?.poke();
    try {
      while (groups.length < count) {
        if (this.failure.happened) throw this.failure.error;
        const group = this.queue.shift();
        if (!group) {
          if (!this.running) throw new Error('the rollout stream has stopped');
          const t = Date.now();
          await new Promise<void>((resolve) => (this.wakeLearner = resolve));
          waitedMs += Date.now() - t;
          continue;
        }
        const behind = version - oldestVersion(group);
        if (behind > maxStaleness) {
          // dropped: room for another group
          dropped += 1;
          this.producer?.poke();
          continue;
        }
        groups.push(group);
        staleness.push(behind);
        this.collected += 1;
        // out of the queue: room there, if the queue's capacity was what held the stream
        this.producer?.poke();
      }
    } finally {
      this.inTake = false;
      this.collected = 0;
    }
    this.takes += 1;
    return { groups, dropped, staleness, queueDepth, waitedMs };
  }

  /** The stream's times since the last call. */
  stats(): RolloutStats {
    const timing = { ...this.timing };
    this.timing.generateMs = 0;
    this.timing.envMs = 0;
    return { busyMs: this.busy.read(), blockedMs: this.blocked.read(), timing };
  }

  /**
   * Stops the stream: no new group starts; the groups in flight finish (their environments close). A
   * failure of the stream after the learner's last take is not rethrown: nothing it would have made is used.
   */
  async stop(): Promise<void> {
    this.running = false;
    this.producer?.poke();
    this.signalLearner();
    await this.done;
  }
}
