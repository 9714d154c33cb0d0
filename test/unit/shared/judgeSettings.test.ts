// reward.judge in the run config (issue 51): its defaults, and each rule's refusal naming the field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, validateRunConfig } from '../../../src/shared/runConfig';

const judge = { baseUrl: 'http://127.0.0.1:8080/v1', model: 'm', rubric: 'r' };

/** The fields a config's ConfigError names. */
function refused(input: Record<string, unknown>): string[] {
  try {
    validateRunConfig(input);
  } catch (e) {
    assert.ok(e instanceof ConfigError);
    return e.issues.map((i) => i.field);
  }
  assert.fail('the config was accepted');
}

describe('reward.judge', () => {
  it('absent by default; given, its defaults filled', () => {
    assert.deepEqual(validateRunConfig({}).reward, {});
    const j = validateRunConfig({ reward: { judge } }).reward.judge!;
    assert.equal(j.weight, 0.5);
    assert.equal(j.groupRelative, false);
    assert.equal(j.apiKeyEnv, 'AGENT_RL_JUDGE_API_KEY');
    assert.ok(j.timeoutMs > 0 && j.retries >= 0);
  });
  it('a stored config validates again (resume, fork)', () => {
    const c = validateRunConfig({ reward: { judge: { ...judge, weight: 0.2 } } });
    assert.deepEqual(validateRunConfig(JSON.parse(JSON.stringify(c))).reward, c.reward);
  });
  it('refuses a judge without its endpoint, model or rubric, naming each', () => {
    assert.deepEqual(refused({ reward: { judge: {} } }), ['reward.judge.baseUrl', 'reward.judge.model', 'reward.judge.rubric']);
    assert.deepEqual(refused({ reward: { judge: { ...judge, baseUrl: 'ftp://x' } } }), ['reward.judge.baseUrl']);
  });
  it('weight in [0, 1], known keys only, an environment variable name for the key', () => {
    assert.deepEqual(refused({ reward: { judge: { ...judge, weight: 1.5 } } }), ['reward.judge.weight']);
    assert.deepEqual(refused({ reward: { judge: { ...judge, temperature: 1 } } }), ['reward.judge.temperature']);
    assert.deepEqual(refused({ reward: { other: 1 } }), ['reward.other']);
    assert.deepEqual(refused({ reward: { judge: { ...judge, apiKeyEnv: 'sk-live-123 456' } } }), ['reward.judge.apiKeyEnv']);
  });
  it('a key written into the config is refused without being echoed', () => {
    try {
      validateRunConfig({ reward: { judge: { ...judge, apiKey: 'sk-secret-canary' } } });
      assert.fail('accepted');
    } catch (e) {
      assert.ok(e instanceof ConfigError);
      assert.ok(!e.message.includes('sk-secret-canary'));
      assert.match(e.message, /reward\.judge\.apiKey.*apiKeyEnv/);
    }
  });
  it('an endpoint carrying a credential (user name, password, query, fragment) is refused naming baseUrl and the fix, never echoed', () => {
    const secret = 'sk-url-canary-5d1';
    for (const baseUrl of [
      `https://u:${secret}@api.example.com/v1`,
      `https://${secret}@api.example.com/v1`,
      `https://api.example.com/v1?api_key=${secret}`,
      `https://api.example.com/v1#${secret}`,
    ]) {
      try {
        validateRunConfig({ reward: { judge: { ...judge, baseUrl } } });
        assert.fail(`accepted ${baseUrl}`);
      } catch (e) {
        assert.ok(e instanceof ConfigError, String(e));
        assert.deepEqual(
          e.issues.map((i) => i.field),
          ['reward.judge.baseUrl'],
        );
        assert.ok(!e.message.includes(secret), e.message);
        assert.match(e.message, /apiKeyEnv/);
      }
    }
    assert.equal(
      validateRunConfig({ reward: { judge: { ...judge, baseUrl: 'https://api.example.com:8443/v1' } } }).reward.judge?.baseUrl,
      'https://api.example.com:8443/v1',
    );
  });
  it('GRPO only', () => {
    assert.deepEqual(refused({ method: 'rs-sft', reward: { judge } }), ['reward.judge']);
  });
});
