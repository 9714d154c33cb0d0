// Start Run's reward step (src/host/commands/judgeSteps.ts): each judge field as typed, a rubric from a
// workspace file, the weight, the reward section the answers make (validated here by the run config's
// own validator, with no key in it), and whether a run worker would find a key.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  JUDGE_KEY_VARIABLE,
  judgeKeyAvailable,
  judgeModelProblem,
  judgeRewardSection,
  judgeUrlProblem,
  noKeyQuestion,
  parseWeight,
  REWARD_CHOICES,
  RUBRIC_FILE_MAX_BYTES,
  rubricFromFile,
  rubricProblem,
} from '../../../src/host/commands/judgeSteps';
import { ENVIRONMENT_CHOICES, modelRunConfig } from '../../../src/host/commands/startRunSteps';
import { validateRunConfig } from '../../../src/shared/runConfig';

const JUDGE = { baseUrl: ' http://127.0.0.1:8080/v1 ', model: ' judge-model ', rubric: '  Short answers that are right.  ', weight: 0.25 };
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

describe("Start Run: a judge's reward", () => {
  it('offers the environment’s reward alone first, then a judge', () => {
    assert.deepEqual(
      REWARD_CHOICES.map((c) => c.value),
      ['environment', 'judge'],
    );
  });

  it('takes an http(s) endpoint up to /v1 and refuses nothing, another scheme, spaces or /chat/completions, saying what to type', () => {
    for (const ok of ['http://127.0.0.1:8080/v1', ' https://api.openai.com/v1 ', 'http://localhost:41233/episodes/serve/v1'])
      assert.equal(judgeUrlProblem(ok), undefined, ok);
    assert.match(judgeUrlProblem('  ') ?? '', /^Type the judge's OpenAI-compatible endpoint up to \/v1/);
    assert.match(judgeUrlProblem('127.0.0.1:8080/v1') ?? '', /is not http: or https:|^Not a URL/);
    assert.match(judgeUrlProblem('api.openai.com/v1') ?? '', /^Not a URL: the endpoint with its scheme/);
    assert.match(judgeUrlProblem('ftp://host/v1') ?? '', /^ftp: is not http: or https:/);
    assert.match(judgeUrlProblem('http://host/my v1') ?? '', /^No spaces in the address/);
    assert.equal(judgeUrlProblem('http://host/v1/chat/completions'), 'Leave out /chat/completions: the judge adds it (type http://host/v1)');
    assert.match(judgeUrlProblem(`http://h/${'a'.repeat(2000)}`) ?? '', /^At most 2000 characters/);
  });

  it('refuses a credential in the address (user name, password, query, fragment), naming the key command and never echoing it', () => {
    const secret = 'sk-canary-91b2';
    for (const [url, part] of [
      [`https://user:${secret}@api.example.com/v1`, /user name or password/],
      [`https://${secret}@api.example.com/v1`, /user name/],
      [`https://api.example.com/v1?api_key=${secret}`, /query/],
      [`https://api.example.com/v1#${secret}`, /fragment/],
      ['https://api.example.com/v1?', /query/],
    ] as const) {
      const p = judgeUrlProblem(url) ?? '';
      assert.match(p, part, url);
      assert.match(p, /Set Judge API Key/, url);
      assert.ok(!p.includes(secret), p);
    }
  });

  it('takes a model name and a rubric, refusing empty and too long ones', () => {
    assert.equal(judgeModelProblem('gpt-4o-mini'), undefined);
    assert.match(judgeModelProblem(' ') ?? '', /^Type the model's name as the endpoint knows it/);
    assert.match(judgeModelProblem('m'.repeat(201)) ?? '', /^At most 200 characters/);
    assert.equal(rubricProblem('A good trajectory finds the number in few guesses.'), undefined);
    assert.match(rubricProblem('\n ') ?? '', /^Write what a good trajectory does/);
    assert.match(rubricProblem('r'.repeat(20_001)) ?? '', /^A rubric of at most 20,000 characters \(this one has 20,001\)/);
  });

  it("reads a rubric file's UTF-8 text, trimmed, and refuses a binary, non-UTF-8, empty or too long file, naming it", () => {
    assert.deepEqual(rubricFromFile('rubric.md', utf8('\n# Rubric\nRight and short — ünïcode kept.\n')), {
      rubric: '# Rubric\nRight and short — ünïcode kept.',
    });
    const problem = (bytes: Uint8Array): string => {
      const r = rubricFromFile('docs/rubric.md', bytes);
      return 'problem' in r ? r.problem : '';
    };
    assert.match(problem(new Uint8Array([0xff, 0xfe, 0x41])), /^Agent RL: docs\/rubric\.md is not UTF-8 text\. Fix: choose a text or Markdown file/);
    assert.match(problem(utf8('a\u0000b')), /docs\/rubric\.md holds NUL bytes/);
    assert.match(problem(utf8('  \n')), /docs\/rubric\.md cannot be the rubric: Write what a good trajectory does/);
    assert.match(problem(utf8('x'.repeat(20_001))), /cannot be the rubric: A rubric of at most 20,000 characters/);
    // the file-size limit (checked before the file is read) admits the longest rubric in the most UTF-8 bytes a
    // character the limit counts (a UTF-16 unit) takes: 3 (an astral character is 4 bytes for 2 units)
    const longest = utf8('€'.repeat(20_000));
    assert.ok(longest.length <= RUBRIC_FILE_MAX_BYTES, `${longest.length} bytes`);
    assert.ok('rubric' in rubricFromFile('r.md', longest));
    // a workspace's file name is untrusted text: no link or icon syntax reaches the notification
    const hostile = rubricFromFile('[open](command:workbench.action.terminal.new) $(zap).md', utf8(''));
    assert.ok('problem' in hostile);
    assert.doesNotMatch(hostile.problem, /\]\(command:|(?<!\\)\$\(zap\)/);
  });

  it('takes a weight from 0 to 1 and nothing else', () => {
    for (const [t, w] of [
      ['0', 0],
      ['1', 1],
      [' 0.25 ', 0.25],
      ['.5', 0.5],
    ] as const)
      assert.deepEqual(parseWeight(t), { weight: w }, t);
    for (const bad of ['', ' ', '-0.1', '1.01', 'half', 'NaN', 'Infinity', '0x1', '1e0', '0.5.1']) assert.ok('problem' in parseWeight(bad), bad);
    const r = parseWeight('2');
    assert.ok('problem' in r && /^A number from 0 to 1/.test(r.problem));
  });

  it('makes a reward section the validator accepts on GRPO, on every environment, with the fields typed and no key', () => {
    for (const { value: env } of ENVIRONMENT_CHOICES) {
      const raw = modelRunConfig({
        env,
        model: '/models/student',
        method: 'grpo',
        judge: JUDGE,
        ...(env === 'verifiers' ? { verifiers: { module: 'vf_echo', args: {}, root: '/w' } } : {}),
        ...(env === 'openenv' ? { openenv: { url: 'http://127.0.0.1:8000' } } : {}),
        ...(env === 'reasoning-gym' ? { reasoningGym: { dataset: 'word_sorting', heldOut: 'harder' as const, root: '' } } : {}),
      });
      assert.deepEqual(
        raw.reward,
        { judge: { baseUrl: 'http://127.0.0.1:8080/v1', model: 'judge-model', rubric: 'Short answers that are right.', weight: 0.25 } },
        env,
      );
      const judge = validateRunConfig(raw).reward.judge;
      assert.ok(judge, env);
      assert.deepEqual(
        [judge.baseUrl, judge.model, judge.rubric, judge.weight],
        ['http://127.0.0.1:8080/v1', 'judge-model', 'Short answers that are right.', 0.25],
      );
      assert.equal(judge.apiKeyEnv, JUDGE_KEY_VARIABLE, 'the key is read from the variable the stored key is handed in');
      assert.equal(judge.groupRelative, false);
    }
  });

  it('copies only the four typed fields into the config: a key riding along on the choices never reaches it', () => {
    // the choices object the wizard hands over could carry more than its type says (a spread of the
    // answers, a future field): the section must name its fields, not spread them
    const canary = 'sk-canary-7f3a9c1e55';
    const carrying = { ...JUDGE, apiKey: canary, apiKeyEnv: canary, key: canary } as typeof JUDGE;
    const raw = modelRunConfig({ env: 'calculator', model: '/m', method: 'grpo', judge: carrying });
    assert.ok(!JSON.stringify(raw).includes(canary), JSON.stringify(raw.reward));
    assert.deepEqual(Object.keys(judgeRewardSection(carrying).judge).sort(), ['baseUrl', 'model', 'rubric', 'weight']);
    assert.equal(validateRunConfig(raw).reward.judge?.apiKeyEnv, JUDGE_KEY_VARIABLE);
  });

  it('adds no judge on a method that does not train on the reward (the config rules refuse one there)', () => {
    for (const method of ['rs-sft', 'distill'] as const) {
      const raw = modelRunConfig({ env: 'calculator', model: '/m', method, judge: JUDGE, ...(method === 'distill' ? { teacher: '/t' } : {}) });
      assert.equal(raw.reward, undefined, method);
      assert.equal(validateRunConfig(raw).reward.judge, undefined, method);
    }
  });

  it('finds a key stored in VS Code or in the variable, and none when both are empty', () => {
    assert.equal(judgeKeyAvailable(false, {}), false);
    assert.equal(judgeKeyAvailable(false, { [JUDGE_KEY_VARIABLE]: '' }), false);
    assert.equal(judgeKeyAvailable(true, {}), true);
    assert.equal(judgeKeyAvailable(false, { [JUDGE_KEY_VARIABLE]: 'k' }), true);
    assert.equal(judgeKeyAvailable(false, { OTHER_VARIABLE: 'k' }), false);
    const q = noKeyQuestion(' http://127.0.0.1:8080/v1 ');
    assert.match(
      q,
      /^No judge API key is set: neither stored by "Agent RL: Set Judge API Key" nor in \$AGENT_RL_JUDGE_API_KEY\. A hosted judge at http:\/\/127\.0\.0\.1:8080\/v1 needs one/,
    );
  });
});
