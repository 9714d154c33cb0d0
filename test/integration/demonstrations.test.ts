// Demonstrations teach a student where an action ends. A sampled action ends where the environment's
// stop rule first holds, so every demonstrated action must end exactly there: not later (the student
// would be cut off mid-action) and not earlier (the student would never learn to stop, and would write
// noise until the token budget runs out). Runs the reference agents in the real environments.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { STOP_TESTS } from '../../src/rl/envs/parsers';
import { referenceAgentFor } from '../../src/rl/policies/scripted/demonstrations';
import { stopsAt } from '../../src/rl/policies/lm/sampler';
import { Rng } from '../../src/rl/random';
import { runEpisodes } from '../../src/rl/rollout/agentLoop';
import { DEMONSTRATION_SPECS, optionDefaults } from '../../src/shared/runConfig';
import { builtInEnv, disposeOpened } from '../helpers/environments';

after(() => disposeOpened());

/** Length of the shortest prefix of `text` at which generation would stop, or undefined. */
function stopLength(text: string, env: 'calculator' | 'code'): number | undefined {
  const stop = builtInEnv(env).stop!;
  const when = stop.test ? STOP_TESTS[stop.test] : undefined;
  for (let n = 1; n <= text.length; n++) if (stopsAt(text.slice(0, n), stop.strings, when)) return n;
  return undefined;
}

const CASES: { env: 'calculator' | 'code'; options: Record<string, unknown> }[] = [
  { env: 'calculator', options: {} },
  { env: 'code', options: { taskSet: 'formulas' } },
  { env: 'code', options: {} },
];

describe('demonstrated actions end where the stop rule ends generation', () => {
  for (const { env, options } of CASES) {
    it(`${env} ${JSON.stringify(options)}`, async () => {
      const opened = builtInEnv(env, options);
      const tasks = opened
        .tasks()
        .train.filter((_, i) => i % 9 === 0)
        .slice(0, 12);
      for (const mistakeRate of [0, 1]) {
        const trajectories = await runEpisodes(
          tasks.map((task, i) => ({ task, group: i, indexInGroup: 0 })),
          () => opened.create(),
          // the demonstrator's other habits off (a perfect agent, but for the mistakes)
          referenceAgentFor(
            env === 'calculator'
              ? { env, demonstrations: { ...optionDefaults(DEMONSTRATION_SPECS.calculator), mistakeRate, skipToolOn: 'none', skipToolRate: 0 } }
              : { env, demonstrations: { ...optionDefaults(DEMONSTRATION_SPECS.code), mistakeRate } },
          )!,
          { maxTurns: 8, sampleRng: new Rng(5), verifierRng: new Rng(6) },
        );
        let actions = 0;
        for (const t of trajectories) {
          assert.equal(t.termination, 'finished', t.taskId);
          for (const turn of t.turns) {
            actions += 1;
            assert.equal(stopLength(turn.actionText, env), turn.actionText.length, `${t.taskId}: ${JSON.stringify(turn.actionText)}`);
          }
        }
        assert.ok(actions >= 2 * tasks.length, `${actions} actions`);
      }
    });
  }
});
