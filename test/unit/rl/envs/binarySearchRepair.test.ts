import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { privateVerifier, publicSmokeTest, renderCode, runVariant, type CodeVariant } from '../../../../src/rl/envs/binarySearchRepair';
import { binarySearchEnv } from '../../../helpers/environments';
import { Rng } from '../../../../src/rl/random';
import type { EpisodeOutcome } from '../../../../src/shared/types';

async function play(actions: string[], budget = 6): Promise<{ outcome: EpisodeOutcome; terminations: (string | undefined)[]; texts: string[] }> {
  const env = binarySearchEnv({ stepBudget: budget }).create();
  await env.reset(binarySearchEnv({}).tasks().train[0]!);
  const terminations: (string | undefined)[] = [];
  const texts: string[] = [];
  for (const a of actions) {
    const r = await env.step(env.parseAction(a));
    terminations.push(r.termination);
    texts.push(r.observation.text);
    if (r.done) break;
  }
  const outcome = await env.verify(new Rng(1));
  await env.close();
  return { outcome, terminations, texts };
}

const variants: CodeVariant[] = [
  { lowFixed: false, highFixed: false },
  { lowFixed: true, highFixed: false },
  { lowFixed: false, highFixed: true },
  { lowFixed: true, highFixed: true },
];

describe('binary-search repair: code variants', () => {
  it('the public smoke test (find 3 in [1, 3, 5]) passes for every variant, wrong ones included', () => {
    for (const v of variants) assert.equal(publicSmokeTest(v), true);
  });

  it('the private verifier accepts only the fully repaired code', () => {
    for (const v of variants) assert.equal(privateVerifier(v, new Rng(3)).pass, v.lowFixed && v.highFixed, JSON.stringify(v));
  });

  it('a wrong loop is stopped by the iteration cap instead of hanging', () => {
    assert.equal(runVariant({ lowFixed: false, highFixed: false }, [1, 3, 5, 7, 9], 9), 'hang');
    assert.equal(runVariant({ lowFixed: true, highFixed: false }, [1, 3, 5], 0), 'hang');
    assert.equal(runVariant({ lowFixed: true, highFixed: true }, [], 1), -1);
  });

  it('renders the two lines under repair', () => {
    assert.match(renderCode({ lowFixed: true, highFixed: false }), /low = mid \+ 1\n\s+else:\n\s+high = mid\n/);
  });
});

describe('binary-search repair: episode contract', () => {
  it('fix_low, fix_high, finish → reward 1, public and private pass', async () => {
    const { outcome, terminations } = await play(['fix_low', 'fix_high', 'finish']);
    assert.deepEqual(terminations, [undefined, undefined, 'finished']);
    assert.deepEqual([outcome.reward, outcome.success, outcome.publicPass, outcome.privatePass], [1, true, true, true]);
  });

  it('a wrong fix passes the public test and fails the private verifier: reward 0', async () => {
    const { outcome, texts } = await play(['fix_low', 'test', 'finish']);
    assert.match(texts[1]!, /public test .* passed/);
    assert.deepEqual([outcome.reward, outcome.success, outcome.publicPass, outcome.privatePass], [0, false, true, false]);
  });

  it('undo_low reverts the low fix', async () => {
    const { outcome } = await play(['fix_low', 'fix_high', 'undo_low', 'finish']);
    assert.equal(outcome.privatePass, false);
    assert.equal(outcome.reward, 0);
  });

  it('finish as the sixth action is within budget; six other actions exhaust it with reward 0', async () => {
    const ok = await play(['read', 'test', 'read', 'fix_low', 'fix_high', 'finish']);
    assert.equal(ok.terminations[5], 'finished');
    assert.equal(ok.outcome.reward, 1);
    const out = await play(['fix_low', 'fix_high', 'read', 'test', 'read', 'test', 'finish']);
    assert.equal(out.terminations.length, 6);
    assert.equal(out.terminations[5], 'budget_exhausted');
    assert.deepEqual([out.outcome.reward, out.outcome.success, out.outcome.privatePass], [0, false, true]);
  });

  it('every observation shows the two current lines; read shows the whole function', async () => {
    const { texts } = await play(['fix_high', 'read']);
    assert.match(texts[0]!, /low = mid\nhigh = mid - 1$/);
    assert.match(texts[1]!, /def binary_search/);
  });

  it('unknown action text becomes a format error that costs a step, never an exception', async () => {
    const env = binarySearchEnv({}).create();
    await env.reset(binarySearchEnv({}).tasks().train[0]!);
    const a = env.parseAction('rm -rf /');
    assert.equal(a.kind, 'format_error');
    const r = await env.step(a);
    assert.match(r.observation.text, /format error/);
    assert.equal(r.observation.data.steps, 1);
  });

  it('stepping a finished episode is a programming error', async () => {
    const env = binarySearchEnv({}).create();
    await env.reset(binarySearchEnv({}).tasks().train[0]!);
    await env.step(env.parseAction('finish'));
    await assert.rejects(async () => env.step(env.parseAction('read')), /after the episode ended/);
  });

  it('tabular view: 24 visible states = 6 step counts × 4 code variants', async () => {
    const spec = binarySearchEnv({ stepBudget: 6 }).tabular!();
    assert.equal(spec.stateCount, 24);
    assert.deepEqual(spec.actions, ['read', 'fix_low', 'fix_high', 'undo_low', 'test', 'finish']);
    const env = binarySearchEnv({}).create();
    const first = await env.reset(binarySearchEnv({}).tasks().train[0]!);
    assert.equal(spec.stateOf(first), 0);
    const r = await env.step(env.parseAction('fix_high'));
    assert.equal(spec.stateOf(r.observation), 1 * 4 + 2);
  });
});
