// The judge's key moved from process.env into memory (src/rl/train/judge/judgeKeyStore.ts): after the
// take, programs started by this process no longer inherit it, and the key is still there for the judge.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { takeJudgeKey } from '../../../../src/rl/train/judge/judgeKeyStore';

const NAME = 'AGENT_RL_TEST_JUDGE_KEY_STORE';
const child = (): string => spawnSync(process.execPath, ['-e', `process.stdout.write(process.env.${NAME} ?? 'unset')`], { encoding: 'utf8' }).stdout;

describe('the judge key store', () => {
  it('takes the key out of the environment (a child no longer sees it) and keeps it for later takes', () => {
    process.env[NAME] = 'sk-store-canary-1';
    assert.equal(child(), 'sk-store-canary-1', 'a child inherits the variable before the take');
    assert.equal(takeJudgeKey(NAME), 'sk-store-canary-1');
    assert.equal(process.env[NAME], undefined);
    assert.equal(child(), 'unset');
    assert.equal(takeJudgeKey(NAME), 'sk-store-canary-1', 'a second run in the same process still finds it');
    process.env[NAME] = 'sk-store-canary-2';
    assert.equal(takeJudgeKey(NAME), 'sk-store-canary-2', 'a value set since is newer');
    assert.equal(process.env[NAME], undefined);
    assert.equal(takeJudgeKey('AGENT_RL_TEST_NEVER_SET'), '');
  });
});
