// The agent loop's two schedules: lockstep, and concurrent with a bound on episodes in flight.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ADAM_DEFAULTS } from '../../../../src/rl/algo/adamw';
import type { RunEnvironment, Environment } from '../../../../src/rl/envs/environment';
import type { Policy, PolicyContext, PolicySample } from '../../../../src/rl/policies/policy';
import { TablePolicy } from '../../../../src/rl/policies/table/tablePolicy';
import { Rng } from '../../../../src/rl/random';
import { EpisodeStream, runEpisodes, type EpisodeSpec } from '../../../../src/rl/rollout/agentLoop';
import type { Trajectory } from '../../../../src/shared/types';

before(async () => {
  await tf.setBackend('cpu');
});

/** A world of 3 turns per episode whose tool answers after `latency(task, turn)` ms. */
function slowWorld(latency: (task: string, turn: number) => number): RunEnvironment {
  return {
    name: 'slow',
    description: 'test',
    tasks: () => ({ train: [], heldOut: [] }),
    tabular: () => ({ stateCount: 3, actions: ['a', 'b'], stateOf: (o) => Number(o.data.turn ?? 0) }),
    create: (): Environment => {
      let task = '';
      let turn = 0;
      return {
        reset: (t) => {
          task = t.id;
          turn = 0;
          return Promise.resolve({ text: '', data: { turn } });
        },
        parseAction: (text) => ({ kind: 'tool', name: text, args: {} }),
        step: () =>
          new Promise((resolve) =>
            setTimeout(
              () => {
                turn += 1;
                resolve({ observation: { text: `turn ${turn}`, data: { turn } }, done: turn >= 3, ...(turn >= 3 ? { termination: 'finished' as const } : {}) });
              },
              latency(task, turn),
            ),
          ),
        verify: () => Promise.resolve({ reward: 1, success: true, publicPass: true, privatePass: true }),
        close: () => Promise.resolve(),
      };
    },
    dispose: () => Promise.resolve(),
  };
}

/** Records the batches the loop asks it to sample. */
class Spy implements Policy {
  readonly version = 0;
  readonly compute = 'spy';
  readonly batches: string[][] = [];
  constructor(private readonly inner: Policy) {}
  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    this.batches.push(contexts.map((c) => `${c.task.id}@${c.turns.length}`));
    return this.inner.sample(contexts, rng);
  }
}

const specs = (n: number): EpisodeSpec[] =>
  Array.from({ length: n }, (_, i) => ({ task: { id: `t${i}`, prompt: '', data: {} }, group: Math.floor(i / 4), indexInGroup: i % 4 }));
const actions = (ts: { turns: readonly { actionText: string }[] }[]): string[] => ts.map((t) => t.turns.map((u) => u.actionText).join(''));

describe('agent loop schedules', () => {
  const world = slowWorld((task, turn) => (Number(task.slice(1)) % 2 === 1 ? 60 : 1) + turn);
  const run = async (maxInFlight: number, spy?: Spy) => {
    const table = new TablePolicy(world.tabular!(), ADAM_DEFAULTS, 'cpu');
    return runEpisodes(specs(8), () => world.create(), spy ? new Spy(table) : table, {
      maxTurns: 8,
      sampleRng: new Rng(7),
      verifierRng: new Rng(8),
      maxInFlight,
    });
  };

  it("concurrent: what an episode samples does not depend on how many share the machine or on the tools' timing", async () => {
    const one = await run(1);
    const four = await run(4);
    const all = await run(64);
    assert.deepEqual(actions(four), actions(one));
    assert.deepEqual(actions(all), actions(one));
    assert.deepEqual(
      one.map((t) => [t.taskId, t.group, t.indexInGroup, t.turns.length]),
      specs(8).map((s) => [s.task.id, s.group, s.indexInGroup, 3]),
    );
  });

  it('concurrent: an episode whose tool answered joins the next batch while slow ones still wait, and no more than maxInFlight run at once', async () => {
    const spy = new Spy(new TablePolicy(world.tabular!(), ADAM_DEFAULTS, 'cpu'));
    const ts = await runEpisodes(specs(8), () => world.create(), spy, { maxTurns: 8, sampleRng: new Rng(7), verifierRng: new Rng(8), maxInFlight: 4 });
    assert.equal(ts.length, 8);
    // the fast episodes (even ids) reach their third action before the slow ones (odd ids) their second
    const firstThird = spy.batches.findIndex((b) => b.some((x) => x.endsWith('@2')));
    const slowSecond = spy.batches.findIndex((b) => b.some((x) => /^t[1357]@1$/.test(x)));
    assert.ok(firstThird >= 0 && firstThird < slowSecond, JSON.stringify(spy.batches));
    for (const b of spy.batches) assert.ok(b.length <= 4);
    // the fifth episode starts only when one of the first four has finished
    const firstOfT4 = spy.batches.findIndex((b) => b.includes('t4@0'));
    const firstFinished = spy.batches.findIndex((b) => b.some((x) => x.endsWith('@2')));
    assert.ok(firstOfT4 > firstFinished, JSON.stringify(spy.batches));
    // lockstep samples every live episode together: each batch holds all eight until they end
    const lock = new Spy(new TablePolicy(world.tabular!(), ADAM_DEFAULTS, 'cpu'));
    await runEpisodes(specs(8), () => world.create(), lock, { maxTurns: 8, sampleRng: new Rng(7), verifierRng: new Rng(8) });
    assert.deepEqual(
      lock.batches.map((b) => b.length),
      [8, 8, 8],
    );
  });

  it('concurrent: requests that arrive while the batch is gathered join it (a share of the last sampling call, waited only while episodes are in their step)', async () => {
    // sampling takes 200 ms, tools answer 1–13 ms apart: every answer lands within the 50 ms gather
    const staggered = slowWorld((task) => 1 + 4 * Number(task.slice(1)));
    class Slow extends Spy {
      override async sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
        const out = await super.sample(contexts, rng);
        await new Promise((r) => setTimeout(r, 200));
        return out;
      }
    }
    const slow = new Slow(new TablePolicy(staggered.tabular!(), ADAM_DEFAULTS, 'cpu'));
    await runEpisodes(specs(4), () => staggered.create(), slow, { maxTurns: 8, sampleRng: new Rng(7), verifierRng: new Rng(8), maxInFlight: 4 });
    assert.deepEqual(
      slow.batches.map((b) => b.length),
      [4, 4, 4],
      JSON.stringify(slow.batches),
    );
  });

  it('concurrent: a failing environment ends only its own episode', async () => {
    const broken: RunEnvironment = { ...world, create: () => ({ ...world.create(), step: () => Promise.reject(new Error('sandbox died')) }) };
    const ts = await runEpisodes(specs(3), () => broken.create(), new TablePolicy(world.tabular!(), ADAM_DEFAULTS, 'cpu'), {
      maxTurns: 8,
      sampleRng: new Rng(1),
      verifierRng: new Rng(2),
      maxInFlight: 2,
    });
    assert.deepEqual(
      ts.map((t) => t.termination),
      ['env_error', 'env_error', 'env_error'],
    );
    assert.match(ts[0]!.turns[0]!.observation.text, /sandbox died/);
  });
});

describe('episode stream (the asynchronous rollout)', () => {
  const world = slowWorld((task) => (task === 'slow' ? 80 : 2));
  const group = (g: number, task: string): EpisodeSpec[] => [0, 1, 2, 3].map((i) => ({ task: { id: task, prompt: '', data: {} }, group: g, indexInGroup: i }));

  it('hands each group over once all its episodes are verified, in index order; a fast group overtakes a slow one; waits for a poke when told to', async () => {
    const handed: Trajectory[][] = [];
    const plan: (EpisodeSpec[] | 'wait')[] = [group(0, 'slow'), group(1, 'fast'), 'wait', group(2, 'fast')];
    let asked = 0;
    const spy = new Spy(new TablePolicy(world.tabular!(), ADAM_DEFAULTS, 'cpu'));
    const stream: EpisodeStream = new EpisodeStream(spy, {
      maxTurns: 8,
      sampleRng: new Rng(3),
      verifierRng: new Rng(4),
      maxInFlight: 0,
      makeEnv: () => world.create(),
      nextGroup: () => {
        // the queue is full until the first group is handed over (which pokes the stream)
        if (plan[asked] === 'wait') {
          if (handed.length === 0) return 'wait';
          asked += 1;
        }
        const next = plan[asked++];
        return next === undefined ? 'end' : next;
      },
      onGroup: (ts) => {
        handed.push(ts);
        stream.poke();
      },
    });
    await stream.run();
    // group 2 starts once group 1 is handed over, and still overtakes the slow group 0
    assert.deepEqual(
      handed.map((g) => g[0]!.group),
      [1, 2, 0],
    );
    for (const g of handed) {
      assert.deepEqual(
        g.map((t) => t.indexInGroup),
        [0, 1, 2, 3],
      );
      for (const t of g) {
        assert.equal(t.turns.length, 3, 'finished');
        assert.equal(t.outcome.reward, 1, 'verified');
      }
    }
    // the first two groups shared sampling batches
    assert.ok(
      spy.batches.some((b) => b.includes('slow@0') && b.includes('fast@0')),
      JSON.stringify(spy.batches.slice(0, 3)),
    );
  });

  it('at most maxInFlight episodes at once, across groups', async () => {
    const handed: number[] = [];
    let g = 0;
    const spy = new Spy(new TablePolicy(world.tabular!(), ADAM_DEFAULTS, 'cpu'));
    await new EpisodeStream(spy, {
      maxTurns: 8,
      sampleRng: new Rng(3),
      verifierRng: new Rng(4),
      maxInFlight: 3,
      makeEnv: () => world.create(),
      nextGroup: () => (g < 3 ? group(g++, 'fast') : 'end'),
      onGroup: (ts) => handed.push(ts.length),
    }).run();
    assert.deepEqual(handed, [4, 4, 4]);
    for (const b of spy.batches) assert.ok(b.length <= 3, JSON.stringify(b));
  });
});
