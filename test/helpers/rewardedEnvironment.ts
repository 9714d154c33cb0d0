// A built-in environment whose reward is replaced, for the planted pathologies of run health (issue 52):
// the episodes, the tools, the public and private verdicts and the tabular spec stay the environment's
// own; only the number the learner maximises changes (a reward that pays for length, a reward that
// follows the public test alone). The trainer takes it through its `environment` option, the way tests
// inject an environment; the run is stored by the real store writer, so `agent-rl health` reads it as
// any stored run.
import type { Environment, RunEnvironment } from '../../src/rl/envs/environment';
import type { EpisodeOutcome } from '../../src/shared/types';

/** `env` with each episode's reward set to `reward(outcome)` (the outcome as the environment verified it). */
export function withReward(env: RunEnvironment, name: string, reward: (outcome: EpisodeOutcome) => number): RunEnvironment {
  const create = (): Environment => {
    const inner = env.create();
    return {
      reset: (task) => inner.reset(task),
      parseAction: (text) => inner.parseAction(text),
      step: (action, sample) => inner.step(action, sample),
      verify: async (rng) => {
        const outcome = await inner.verify(rng);
        const r = reward(outcome);
        // success stays the private verifier's verdict: what the run really achieved
        return { ...outcome, reward: r, details: { ...outcome.details, environmentReward: outcome.reward } };
      },
      ...(inner.end ? { end: () => inner.end?.() } : {}),
      close: () => inner.close(),
    };
  };
  return {
    name,
    description: `${env.description} (test: reward replaced)`,
    create,
    tasks: () => env.tasks(),
    ...(env.tabular ? { tabular: env.tabular.bind(env) } : {}),
    dispose: () => env.dispose(),
  };
}
