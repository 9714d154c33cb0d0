// `agent-rl export verl`'s command line as verl 0.9.1 reads it: the micro-batch sizes its validate_config
// demands (dividing each GPU's share, as its engine needs), and the reward under reward.custom_reward_function,
// the only place 0.9.1's main_ppo looks (verl ≤ 0.8's top-level key would leave the reward unused).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { largestDivisorAtMost, VERL_VERSION, verlOverrides, type VerlLaunch, type VerlPaths } from '../../../../src/exporters/verl/verlCommandLine';
import { validateRunConfig } from '../../../../src/shared/runConfig';

const PATHS: VerlPaths = {
  trainFile: 'train.parquet',
  valFile: 'test.parquet',
  toolConfig: 'sandbox_tool.yaml',
  rewardFile: 'agent_rl_reward.py',
  rolloutDir: 'dumps/rollout',
  validationDir: 'dumps/validation',
};

function keys(groupSize: number, groups: number, minibatchSize: number, gpusPerNode: number, nodes = 1): Map<string, string | number | boolean> {
  const config = validateRunConfig({
    env: 'calculator',
    policy: 'transformer',
    method: 'grpo',
    groupSize,
    groupsPerIteration: groups,
    algorithm: { minibatchSize },
  });
  const launch: VerlLaunch = { model: 'Qwen/Qwen2.5-3B-Instruct', rollout: 'sglang', gpusPerNode, nodes, trainRows: 1000, toolCalls: 4 };
  return new Map(verlOverrides(config, PATHS, launch));
}

const micro = (k: Map<string, string | number | boolean>) => [
  k.get('actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu'),
  k.get('actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu'),
  k.get('actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu'),
];

describe('verl command line (verl 0.9.1 keys)', () => {
  it('targets verl 0.9.1', () => assert.equal(VERL_VERSION, '0.9.1'));

  it('writes the reward under reward.custom_reward_function, never the top-level key of verl ≤ 0.8', () => {
    const k = keys(8, 16, 64, 1);
    assert.equal(k.get('reward.custom_reward_function.path'), 'agent_rl_reward.py');
    assert.equal(k.get('reward.custom_reward_function.name'), 'compute_score');
    assert.deepEqual(
      [...k.keys()].filter((key) => key.startsWith('custom_reward_function')),
      [],
    );
  });

  it("sets the actor's, the rollout's and the reference's micro-batch per GPU, dividing each GPU's share", () => {
    // 16 groups × 8 on one GPU: mini-batches of 64 / 8 = 8 prompts, 64 sequences; 128 for log-probs
    assert.deepEqual(micro(keys(8, 16, 64, 1)), [4, 8, 8]);
    // 8 GPUs: 8 training and 16 log-prob sequences a GPU
    assert.deepEqual(micro(keys(8, 16, 64, 8)), [4, 8, 8]);
    // 2 nodes of 8: 4 and 8 a GPU
    assert.deepEqual(micro(keys(8, 16, 64, 8, 2)), [4, 8, 8]);
    // 3 groups of 6 on 6 GPUs, mini-batch of 12 (2 prompts): 2 training and 3 log-prob sequences a GPU
    assert.deepEqual(micro(keys(6, 3, 12, 6)), [2, 3, 3]);
    // 5 groups of 5, minibatch of the whole batch, 1 GPU: 25 sequences, no divisor in 2..4 for training; 5 for log-probs
    assert.deepEqual(micro(keys(5, 5, 0, 1)), [1, 5, 5]);
  });

  it('largestDivisorAtMost', () => {
    assert.deepEqual(
      [12, 7, 9, 1, 0, 2.5].map((n) => largestDivisorAtMost(n, 4)),
      [4, 1, 3, 1, 1, 1],
    );
    assert.equal(largestDivisorAtMost(3, 8), 3);
  });
});
