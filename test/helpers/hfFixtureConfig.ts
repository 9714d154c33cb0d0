// A GRPO run config on a random-weight Hugging Face fixture (test/fixtures/hf) through the code
// environment: LoRA rank 4, short actions, one group of 4, no warm-up or minibatching, every group kept.
import * as path from 'node:path';
import { validateRunConfig, type RunConfig } from '../../src/shared/runConfig';

export const HF_FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'hf');

/** `policyOptions` adds to (or replaces) the fixture's policy options. */
export function hfFixtureConfig(family: string, policyOptions: Record<string, unknown> = {}, learningRate = 1e-2): RunConfig {
  return validateRunConfig({
    env: 'code',
    policy: 'transformer',
    method: 'grpo',
    seed: 5,
    groupSize: 4,
    groupsPerIteration: 1,
    algorithm: { warmupSteps: 0, minibatchSize: 0, skipZeroAdvantage: false, learningRate },
    policyOptions: { model: path.join(HF_FIXTURES, family), loraRank: 4, loraAlpha: 8, maxNewTokens: 24, contextLength: 400, ...policyOptions },
  });
}
