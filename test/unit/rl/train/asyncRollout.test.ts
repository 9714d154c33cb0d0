// The asynchronous mode's queue of finished groups: whole groups only, bounded staleness, back-pressure.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AsyncRollout, type GroupProducer, type RolloutSide } from '../../../../src/rl/train/asyncRollout';
import type { Trajectory } from '../../../../src/shared/types';

const N = 3;

function trajectory(group: number, indexInGroup: number, version: number): Trajectory {
  return {
    taskId: `t${group}`,
    group,
    indexInGroup,
    termination: 'finished',
    policyVersion: version,
    advantage: 0,
    outcome: { reward: 1, success: true, publicPass: true, privatePass: true },
    turns: [
      {
        index: 0,
        actionText: 'a',
        action: { kind: 'tool', name: 'a', args: {} },
        observation: { text: '', data: {} },
        policy: { behaviourLogprob: -1, policyVersion: version },
      },
    ],
  };
}

/** A stream whose groups finish when the test says so, sampled at the version the test sets. */
class ControlledStream implements GroupProducer {
  version = 0;
  readonly started: { group: number; finish: (members?: Trajectory[]) => void }[] = [];
  private open = 0;
  private wake: (() => void) | undefined;
  constructor(private readonly side: RolloutSide) {}

  poke(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  async run(): Promise<void> {
    for (let next = 0; ;) {
      const a = this.side.admit();
      if (a === 'end') break;
      if (a === 'wait') {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      const group = next++;
      const version = this.version;
      this.open += 1;
      this.started.push({
        group,
        finish: (members) => {
          this.open -= 1;
          this.side.push(members ?? Array.from({ length: N }, (_, i) => trajectory(group, i, version)));
          this.poke();
        },
      });
    }
    while (this.open > 0) await new Promise<void>((resolve) => (this.wake = resolve));
  }
}

function controlled(capacity: number, groupsPerTake = 2, maxStaleness = 1): { rollout: AsyncRollout; stream: () => ControlledStream } {
  let s: ControlledStream | undefined;
  const rollout = new AsyncRollout({ capacity, groupsPerTake, maxStaleness, producer: (side) => (s = new ControlledStream(side)) });
  return { rollout, stream: () => s! };
}

const ticks = (n = 5): Promise<void> =>
  new Promise((resolve) => {
    let left = n;
    const step = (): void => (--left <= 0 ? resolve() : void setImmediate(step));
    setImmediate(step);
  });

/** Finishes every started group not finished yet, then stops the rollout. */
async function finishAndStop(rollout: AsyncRollout, s: ControlledStream, done: Set<number>): Promise<void> {
  const stopping = rollout.stop();
  for (const g of s.started) if (!done.has(g.group)) g.finish();
  await stopping;
}

describe('AsyncRollout', () => {
  it('the learner waits until a group is handed over whole and takes the groups in order', async () => {
    const { rollout, stream } = controlled(4);
    rollout.start();
    await ticks();
    const s = stream();
    assert.equal(s.started.length, 4, 'the stream starts groups up to the capacity');
    let taken: Awaited<ReturnType<AsyncRollout['take']>> | undefined;
    const taking = rollout.take(0).then((t) => (taken = t));
    s.started[1]!.finish();
    await ticks();
    assert.equal(taken, undefined, 'one group is not two');
    s.started[0]!.finish();
    await taking;
    assert.deepEqual(
      taken!.groups.map((g) => g[0]!.group),
      [1, 0],
    );
    for (const g of taken!.groups) assert.equal(g.length, N);
    await finishAndStop(rollout, s, new Set([0, 1]));
  });

  it('a group older than maxStaleness versions is dropped and counted, never handed over', async () => {
    const { rollout, stream } = controlled(8, 4, 1);
    rollout.start();
    await ticks();
    const s = stream();
    assert.equal(s.started.length, 8);
    // groups 0–7 sampled at version 0; the learner comes for them at version 3
    for (const g of s.started.slice(0, 6)) g.finish();
    await ticks();
    s.version = 3; // the groups started from now on are fresh
    const taking = rollout.take(3);
    await ticks();
    assert.equal(s.started.length, 14, 'each dropped group makes room for a new one');
    for (const g of s.started.slice(8, 12)) g.finish();
    const taken = await taking;
    assert.equal(taken.dropped, 6, 'the six version-0 groups are 3 versions behind');
    assert.deepEqual(taken.staleness, [0, 0, 0, 0]);
    for (const g of taken.groups) for (const t of g) assert.equal(t.policyVersion, 3);
    await finishAndStop(rollout, s, new Set([0, 1, 2, 3, 4, 5, 8, 9, 10, 11]));
  });

  it('a group is as old as its oldest turn: one sampled partly before an update counts by that turn', async () => {
    const { rollout, stream } = controlled(2, 1, 1);
    rollout.start();
    await ticks();
    const s = stream();
    const mixed = [0, 1, 2].map((i) => {
      const t = trajectory(0, i, 2);
      return { ...t, turns: [{ ...t.turns[0]!, policy: { ...t.turns[0]!.policy, policyVersion: i === 1 ? 0 : 2 } }] };
    });
    s.started[0]!.finish(mixed);
    s.started[1]!.finish(Array.from({ length: N }, (_, i) => trajectory(1, i, 2)));
    const taken = await rollout.take(2);
    assert.equal(taken.dropped, 1);
    assert.equal(taken.groups[0]![0]!.group, 1);
    await finishAndStop(rollout, s, new Set([0, 1]));
  });

  it('a full queue holds the stream back until the learner takes groups (back-pressure), and the idle time is measured', async () => {
    const { rollout, stream } = controlled(2, 1, 5);
    rollout.start();
    await ticks();
    const s = stream();
    s.started[0]!.finish();
    s.started[1]!.finish();
    await ticks(10);
    assert.equal(s.started.length, 2, 'no new group while queued and in flight reach the capacity');
    assert.equal(rollout.depth, 2);
    await new Promise((r) => setTimeout(r, 30));
    await rollout.take(0);
    await ticks();
    assert.equal(s.started.length, 3, 'room for one more');
    const st = rollout.stats();
    assert.ok(st.blockedMs >= 25, `blocked ${st.blockedMs} ms`);
    await finishAndStop(rollout, s, new Set([0, 1]));
  });

  it('a group starts only while it can be taken within maxStaleness versions: (maxStaleness + 1) takes ahead, one fewer while the learner updates', async () => {
    const { rollout, stream } = controlled(1000, 2, 1);
    rollout.start();
    await ticks();
    const s = stream();
    assert.equal(s.started.length, 4, 'two takes ahead at most');
    for (const g of s.started.slice(0, 2)) g.finish();
    const taken = await rollout.take(0);
    await ticks();
    assert.equal(taken.groups.length, 2);
    // the learner now updates (its version will move on): the two groups in flight are one take ahead, enough
    assert.equal(s.started.length, 4, 'no new group during the update');
    s.started[2]!.finish();
    s.started[3]!.finish();
    const next = rollout.take(1);
    await ticks();
    assert.equal(s.started.length, 6, 'once the update is done, two takes ahead again');
    assert.equal((await next).groups.length, 2);
    await finishAndStop(rollout, s, new Set([0, 1, 2, 3]));
  });

  it('maxStaleness 0: groups start only once the learner waits for them, so none is ever stale', async () => {
    const { rollout, stream } = controlled(1000, 2, 0);
    rollout.start();
    await ticks();
    const s = stream();
    assert.equal(s.started.length, 2);
    for (const g of s.started) g.finish();
    await rollout.take(0);
    await ticks();
    assert.equal(s.started.length, 2, 'nothing starts while the learner updates');
    s.version = 1; // the update is done
    const next = rollout.take(1);
    await ticks();
    assert.equal(s.started.length, 4);
    for (const g of s.started.slice(2)) g.finish();
    assert.equal((await next).dropped, 0);
    await finishAndStop(rollout, s, new Set([0, 1, 2, 3]));
  });

  it("the stream's failure reaches the learner instead of a wait forever", async () => {
    const rollout = new AsyncRollout({
      capacity: 2,
      groupsPerTake: 1,
      maxStaleness: 1,
      producer: () => ({ run: () => Promise.reject(new Error('sandbox pool gone')), poke: () => undefined }),
    });
    rollout.start();
    await assert.rejects(rollout.take(0), /sandbox pool gone/);
    await rollout.stop();
  });
});
