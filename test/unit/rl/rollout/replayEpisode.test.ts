import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openBinarySearch } from '../../../../src/rl/envs/binarySearchRepair';
import { openCalculator } from '../../../../src/rl/envs/calculator/calculatorEnv';
import { Rng } from '../../../../src/rl/random';
import { replayEpisode, ReplayError } from '../../../../src/rl/rollout/replayEpisode';
import { validateEnvOptions } from '../../../../src/shared/runConfig';

/** A stored turn as the agent loop records it: the action text and the observation it got. */
async function record(env: ReturnType<typeof openCalculator>, taskId: string, actions: readonly string[]) {
  const e = env.create();
  const task = env.taskFromId!(taskId)!;
  await e.reset(task);
  const turns = [];
  for (const a of actions) {
    const r = await e.step(e.parseAction(a));
    turns.push({ actionText: a, observationText: r.observation.text });
    if (r.done) break;
  }
  return { turns, outcome: await e.verify(new Rng(1)) };
}

describe('replaying a stored episode through its environment', () => {
  it("the calculator's own verifier scores the replay exactly as the episode was scored; an edited answer is scored anew", async () => {
    const env = openCalculator(validateEnvOptions('calculator', {}));
    const actions = ['<call>mul(3, 4)</call>', '<call>add(12, 5)</call>', '<answer>\\boxed{17}</answer>'];
    const stored = await record(env, 'calc:3*4+5', actions);
    assert.equal(stored.outcome.success, true);
    const again = await replayEpisode(env, 'calc:3*4+5', stored.turns, new Rng(2));
    assert.deepEqual(again.outcome, stored.outcome);
    assert.equal(again.termination, 'finished');
    assert.equal(again.replayed, 3);
    assert.equal(again.differingObservations, 0);
    const edited = stored.turns.map((t, i) => (i === 2 ? { ...t, actionText: '<answer>\\boxed{18}</answer>' } : t));
    const r = await replayEpisode(env, 'calc:3*4+5', edited, new Rng(2), true);
    assert.equal(r.outcome.success, false);
    assert.equal(r.outcome.reward, stored.outcome.reward - 1, 'the format credit stays, the correctness point goes');
    assert.equal(r.differingObservations, 0, 'the edited turn is not compared');
  });

  it('counts observations that come out differently, stops where the environment ends the episode, and names a lost task', async () => {
    const env = openBinarySearch(validateEnvOptions('binary-search', {}));
    const turns = [
      { actionText: 'fix_low', observationText: 'something else' },
      { actionText: 'fix_high', observationText: 'high update set to mid - 1\nlow = mid + 1\nhigh = mid - 1' },
      { actionText: 'finish', observationText: 'submitted\nlow = mid + 1\nhigh = mid - 1' },
      { actionText: 'read', observationText: 'never reached' },
    ];
    const r = await replayEpisode(env, 'binary-search-repair', turns, new Rng(3));
    assert.equal(r.outcome.success, true);
    assert.equal(r.replayed, 3);
    assert.equal(r.differingObservations, 1);
    await assert.rejects(replayEpisode(env, 'gone', turns, new Rng(3)), (e: unknown) => e instanceof ReplayError && /task "gone" is not among/.test(e.message));
  });
});
