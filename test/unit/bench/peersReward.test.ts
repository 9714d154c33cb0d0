// bench/peers_reward.py, the calculator reward TRL trains on in `npm run bench peers`, against the
// workbench's own calculator environment on a sample of completions (every branch of the parser and the
// reward, two reward settings) for held-out tasks; skipped where no python3 runs (standard library only).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { cutAtStop, disagreements, portScores, rewardCases, rewardSettings, workbenchScores } from '../../../bench/peersReward';
import { openCalculator } from '../../../src/rl/envs/calculator/calculatorEnv';
import { validateRunConfig } from '../../../src/shared/runConfig';

const python = process.env.AGENT_RL_PYTHON || 'python3';
const noPython = spawnSync(python, ['--version']).status !== 0 ? `no ${python} here` : false;

describe('bench/peers_reward.py', () => {
  it('cuts a completion after its first stop string, as the sampler ends a turn', () => {
    assert.equal(cutAtStop('<call>add(1,2)</call><answer>\\boxed{3}</answer>'), '<call>add(1,2)</call>');
    assert.equal(cutAtStop('x<answer>\\boxed{3}</answer></call>'), 'x<answer>\\boxed{3}</answer>');
    assert.equal(cutAtStop('no stop'), 'no stop');
  });

  it('scores as the calculator environment does', { skip: noPython }, async () => {
    const config = validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'grpo' });
    if (config.env !== 'calculator') throw new Error('a calculator config');
    const tasks = openCalculator(config.envOptions).tasks().heldOut.slice(0, 12);
    const settings = rewardSettings(config.envOptions);
    const cases = rewardCases(tasks, settings);
    const ours = await workbenchScores(cases);
    // the sample reaches every outcome: a success, a formatted failure, a charged call and a malformed turn
    const charged = settings[1]!;
    const at = (s: typeof charged) => ours.filter((_, i) => cases[i]!.options === s);
    assert.ok(at(charged).some((s) => s.success && Math.abs(s.reward - 1.1) < 1e-9));
    assert.ok(at(charged).some((s) => !s.success && Math.abs(s.reward - 0.1) < 1e-9));
    assert.ok(at(charged).some((s) => Math.abs(s.reward + 0.05) < 1e-9));
    assert.ok(at(charged).some((s) => Math.abs(s.reward + 0.15) < 1e-9));
    assert.deepEqual(disagreements(cases, ours, portScores(python, cases)), []);
  });
});
