// What the verifiers integration tests (0.3.1's load_environment modules and 0.4.0's verifiers.v1
// tasksets) share: the cached venv of a pinned verifiers (scripts/pythonVenv.mjs makes it; the stamp is
// written after pip install succeeds, so a venv a killed install left is treated as absent), a run config
// over the fixtures, environments opened and disposed, and G episodes of one task through the agent loop.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { validateRunConfig, type RunConfig } from '../../src/shared/runConfig';
import type { Trajectory } from '../../src/shared/types';
import { openEnvironment } from '../../src/rl/envs/registry';
import type { RunEnvironment, Task } from '../../src/rl/envs/environment';
import type { TransformerPolicy } from '../../src/rl/policies/lm/transformerPolicy';
import { Rng } from '../../src/rl/random';
import { runEpisodes } from '../../src/rl/rollout/agentLoop';
import { ROOT } from './cli';

export const VERIFIERS_FIXTURES = path.join(ROOT, 'test', 'fixtures', 'verifiers');
const VENVS = process.env.AGENT_RL_VENVS || path.join(os.homedir(), '.cache', 'agent-rl-workbench', 'venvs');

/** The python of the venv set `name` ("verifiers-0.3.1", …) where it was made whole, else undefined. */
export function verifiersVenv(name: string): string | undefined {
  const python = path.join(VENVS, name, 'bin', 'python');
  return fs.existsSync(python) && fs.existsSync(path.join(VENVS, name, 'agent-rl-requirements.txt')) ? python : undefined;
}

/** Why the tests of the venv set `name` are skipped, where they are. */
export function verifiersSkip(name: string): string | false {
  return (
    verifiersVenv(name) === undefined &&
    `the ${name} venv is absent or unfinished (${path.join(VENVS, name)}): node scripts/pythonVenv.mjs ${name} makes it, as .ci/run does`
  );
}

/** A test file's runs on one interpreter (arrow functions: the tests destructure them). */
export interface VerifiersRuns {
  readonly configFor: (model: string, module: string, extra?: Record<string, unknown>) => RunConfig;
  readonly open: (config: RunConfig) => Promise<RunEnvironment>;
  /** G episodes of `task` through the agent loop. */
  readonly play: (run: RunEnvironment, policy: TransformerPolicy, task: Task, g?: number) => Promise<Trajectory[]>;
  /** Disposes every environment `open` opened (call it in after()). */
  readonly disposeAll: () => Promise<void>;
}

/** Runs of verifiers environments on `python`, with `envDefaults` under every config's envOptions. */
export function verifiersRuns(python: string, envDefaults: Record<string, unknown> = {}): VerifiersRuns {
  const opened: RunEnvironment[] = [];
  return {
    configFor: (model, module, extra = {}) =>
      validateRunConfig({
        env: 'verifiers',
        policy: 'transformer',
        method: 'grpo',
        seed: 3,
        groupSize: 2,
        groupsPerIteration: 1,
        algorithm: { warmupSteps: 0, minibatchSize: 0, skipZeroAdvantage: false, learningRate: 1e-2 },
        envOptions: { root: VERIFIERS_FIXTURES, module, python, ...envDefaults, ...extra },
        policyOptions: { model, loraRank: 4, loraAlpha: 8, maxNewTokens: 32, contextLength: 2048 },
      }),
    open: async (config) => {
      const run = await openEnvironment(config);
      opened.push(run);
      return run;
    },
    play: (run, policy, task, g = 2) =>
      runEpisodes(
        Array.from({ length: g }, (_, i) => ({ task, group: 0, indexInGroup: i })),
        () => run.create(),
        policy,
        { maxTurns: 6, sampleRng: new Rng(3), verifierRng: new Rng(4) },
      ),
    disposeAll: async () => {
      await Promise.all(opened.splice(0).map((e) => e.dispose()));
    },
  };
}

/** An episode's reward extras (the rubric's components / the taskset's rewards and metrics). */
export const extrasOf = (t: Trajectory): Record<string, unknown> => (t.outcome.details as { extras?: Record<string, unknown> } | undefined)?.extras ?? {};
