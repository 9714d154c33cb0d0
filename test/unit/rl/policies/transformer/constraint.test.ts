// Constrained decoding end to end on a random small GPT: the calculator's grammar over the character
// tokenizer, in the sampler (main thread and a helper replica), and the learner renormalising over the
// same tokens (its log-probs equal the behaviour log-probs; without the allowed sets they would not).
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADAM_DEFAULTS } from '../../../../../src/rl/algo/adamw';
import type { TrainSequence } from '../../../../../src/rl/algo/batch';
import { compileActionGrammar } from '../../../../../src/rl/envs/actionGrammar';
import { initBackend } from '../../../../../src/rl/policies/transformer/backend';
import { TokenConstraint } from '../../../../../src/rl/policies/transformer/constraint';
import { Gpt, type GptConfig } from '../../../../../src/rl/policies/transformer/model';
import { ReplicaPool } from '../../../../../src/rl/policies/transformer/replicas';
import { CharTokenizer } from '../../../../../src/rl/policies/transformer/tokenizer';
import { TransformerPolicy } from '../../../../../src/rl/policies/transformer/transformerPolicy';
import { Rng } from '../../../../../src/rl/random';
import { runEpisodes } from '../../../../../src/rl/rollout/agentLoop';
import { Learner } from '../../../../../src/rl/train/learner';
import { algorithmDefaults } from '../../../../../src/shared/algorithm';
import type { Trajectory } from '../../../../../src/shared/types';
import { calculatorEnv, disposeOpened } from '../../../../helpers/environments';

before(async () => {
  await initBackend('auto');
});
after(disposeOpened);

const chars = new CharTokenizer();
const config: GptConfig = { vocabSize: chars.vocabSize, contextLength: 192, dModel: 16, nLayers: 1, nHeads: 2, mlpRatio: 2, tiedHead: true };

function policy(constrained: boolean, sampling: { temperature: number; topK: number; topP: number } = { temperature: 1, topK: 0, topP: 1 }): TransformerPolicy {
  return new TransformerPolicy(
    new Gpt(config, 5),
    chars,
    {
      ...sampling,
      maxNewTokens: 64,
      stop: ['</call>', '</answer>'],
      ...(constrained ? { constraint: TokenConstraint.named('calculator', chars) } : {}),
    },
    ADAM_DEFAULTS,
    'test',
    3,
  );
}

async function episodes(p: TransformerPolicy, n: number, seed: number): Promise<Trajectory[]> {
  const env = calculatorEnv({ maxCalls: 3 });
  const tasks = env.tasks().train;
  return runEpisodes(
    Array.from({ length: n }, (_, i) => ({ task: tasks[i % tasks.length]!, group: Math.floor(i / 4), indexInGroup: i % 4 })),
    () => env.create(),
    p,
    { maxTurns: 4, sampleRng: new Rng(seed), verifierRng: new Rng(0) },
  );
}

const trained = (s: TrainSequence, xs: ArrayLike<number>): number[] =>
  Array.from(s.mask.keys())
    .filter((t) => s.mask[t] === 1)
    .map((t) => xs[t]!);

describe('constrained decoding', () => {
  it('a token constraint allows, at each step, exactly the tokens that keep the text a prefix of an action', () => {
    const c = new TokenConstraint(compileActionGrammar('<(ab|ac)>'), chars);
    const ids = (s: string): number[] => chars.encode(s);
    const text = (a: Int32Array): string => chars.decode([...a]);
    const sets = c.allowedSets(ids('<ac>'));
    assert.deepEqual(sets.map(text), ['<', 'a', 'bc', '>']);
    const row = new Float32Array(chars.vocabSize).fill(1);
    c.maskRow(row, c.advance(c.advance(c.start(), ids('<')[0]!)!, ids('a')[0]!)!);
    assert.deepEqual(
      [...row.keys()].filter((i) => row[i]! > -Infinity),
      ids('bc'),
    );
    let state = c.start();
    for (const id of ids('<ac>')) state = c.advance(state, id)!;
    assert.ok(c.finished(state), 'a whole action stops the row');
    assert.equal(c.finished(c.start()), false);
    assert.throws(() => c.allowedSets(ids('<ad>')), /token 3 of an action flagged as sampled under the grammar \("d"\) is outside it/);
    assert.throws(() => new TokenConstraint(compileActionGrammar('é'), chars), /no token of the tokenizer can begin an action/);
  });

  it('with a budget, only tokens after which an action can still be completed are allowed (the grammar alone when none can)', () => {
    const c = new TokenConstraint(compileActionGrammar('<(a|bbbb)>'), chars);
    const ids = (s: string): number[] => chars.encode(s);
    const text = (a: Int32Array): string => chars.decode([...a]);
    const open = c.advance(c.start(), ids('<')[0]!)!;
    assert.equal(text(c.allowed(open)), 'ab');
    assert.equal(text(c.allowed(open, 5)), 'ab'); // b, b, b, b, > fits
    assert.equal(text(c.allowed(open, 4)), 'a');
    assert.equal(text(c.allowed(open, 1)), 'ab', 'nothing fits: the grammar alone');
    assert.deepEqual(c.allowedSets(ids('<a>'), 3).map(text), ['<', 'a', '>']);
    assert.deepEqual(c.allowedSets(ids('<a>'), 4).map(text), ['<', 'a', '>']);
    assert.deepEqual(c.allowedSets(ids('<a>'), 6).map(text), ['<', 'ab', '>']);
    // an action the budget did not allow was not sampled under it
    assert.throws(() => c.allowedSets(ids('<bbbb>'), 5), /token 2 of an action flagged as sampled under the grammar \("b"\) is outside it/);
  });

  it('a random model writes only well-formed calculator actions, and the learner scores them as the sampler did', async () => {
    const free = await episodes(policy(false), 16, 11);
    const p = policy(true);
    const trajs = await episodes(p, 16, 11);
    const turns = trajs.flatMap((t) => t.turns);
    // without the grammar a random model writes no action at all; with it, every turn is one
    assert.ok(
      free.flatMap((t) => t.turns).every((u) => u.action.kind === 'format_error'),
      'an unconstrained random model should write no well-formed action',
    );
    assert.ok(turns.length >= 16);
    for (const u of turns) {
      assert.notEqual(u.action.kind, 'format_error', u.actionText);
      assert.equal(u.policy.tokens?.constrained, true);
    }
    const seqs = trajs.map((t) => p.sequence(t)!);
    assert.ok(seqs.every((s) => s.allowed?.length === s.targets.length));
    const mine = await p.logprobs(0, seqs, { model: 'current', temperature: 1, rows: false });
    let worst = 0;
    seqs.forEach((s, b) => trained(s, mine.logp[b]!).forEach((lp, k) => (worst = Math.max(worst, Math.abs(lp - trained(s, s.behaviour)[k]!)))));
    assert.ok(worst < 1e-4, `learner and sampler log-probs differ by ${worst}`);
    // the same sequences scored over the whole vocabulary are far less likely: the renormalisation is real
    const whole = await p.logprobs(
      0,
      seqs.map(({ allowed: _, ...s }) => s),
      { model: 'current', temperature: 1, rows: false },
    );
    const sum = (xs: Float32Array[]): number => seqs.reduce((acc, s, b) => acc + trained(s, xs[b]!).reduce((a, x) => a + x, 0), 0);
    assert.ok(sum(whole.logp) < sum(mine.logp) - 10, `${sum(whole.logp)} vs ${sum(mine.logp)}`);
    await p.dispose();
  });

  it('an action always fits its budget: with room for a call but not an answer, a random model only calls, and never is cut', async () => {
    // the shortest call, <call>add(0,0)</call>, is 21 characters; the shortest answer 26
    const p = new TransformerPolicy(
      new Gpt(config, 5),
      chars,
      { temperature: 1, topK: 0, topP: 1, maxNewTokens: 24, stop: ['</call>', '</answer>'], constraint: TokenConstraint.named('calculator', chars) },
      ADAM_DEFAULTS,
      'test',
      3,
    );
    const trajs = await episodes(p, 16, 15);
    const turns = trajs.flatMap((t) => t.turns);
    assert.ok(turns.length >= 16);
    for (const u of turns) assert.match(u.actionText, /^<call>(add|sub|mul|div)\(-?\d{1,4},-?\d{1,4}\)<\/call>$/);
    const seqs = trajs.map((t) => p.sequence(t)!);
    const mine = await p.logprobs(0, seqs, { model: 'current', temperature: 1, rows: false });
    seqs.forEach((s, b) => trained(s, mine.logp[b]!).forEach((lp, k) => assert.ok(Math.abs(lp - trained(s, s.behaviour)[k]!) < 1e-4, `${lp}`)));
    await p.dispose();
  });

  it('with temperature, top-k and top-p the learner still scores each token as the sampler recorded it (over the allowed tokens)', async () => {
    for (const sampling of [
      { temperature: 0.7, topK: 5, topP: 1 },
      { temperature: 1.3, topK: 0, topP: 0.8 },
    ]) {
      const p = policy(true, sampling);
      const trajs = await episodes(p, 8, 14);
      assert.ok(trajs.flatMap((t) => t.turns).every((u) => u.action.kind !== 'format_error'));
      const seqs = trajs.map((t) => p.sequence(t)!);
      const mine = await p.logprobs(0, seqs, { model: 'current', temperature: sampling.temperature, rows: false });
      seqs.forEach((s, b) =>
        trained(s, mine.logp[b]!).forEach((lp, k) => assert.ok(Math.abs(lp - trained(s, s.behaviour)[k]!) < 1e-4, `${JSON.stringify(sampling)}: ${lp}`)),
      );
      await p.dispose();
    }
  });

  it('a helper replica samples under the grammar it is named, and scores as the main thread does', async () => {
    const p = policy(true);
    try {
      p.attachReplicas(await ReplicaPool.start(1, tf.getBackend(), p.model, p.reference, chars), undefined);
      const prompts = Array.from({ length: 8 }, (_, i) => chars.encode(`Q:${i}*${i + 2}\n`));
      const rows = await p.sampleTokens(prompts, new Rng(4));
      for (const r of rows) {
        assert.equal(r.constrained, true);
        assert.match(r.text, /^<call>(add|sub|mul|div)\(-?\d+,-?\d+\)<\/call>$|^<answer>\\boxed\{-?\d+\}<\/answer>$|^<[^]*$/);
        if (r.stopReason === 'stop') assert.ok(/<\/(call|answer)>$/.test(r.text), r.text);
      }
      const trajs = await episodes(p, 8, 12);
      const seqs = trajs.map((t) => p.sequence(t)!);
      const a = await p.logprobs(0, seqs, { model: 'current', temperature: 1, rows: false });
      const b = await p.logprobs(1, seqs, { model: 'current', temperature: 1, rows: false });
      seqs.forEach((s, k) => trained(s, a.logp[k]!).forEach((x, i) => assert.ok(Math.abs(x - trained(s, b.logp[k]!)[i]!) < 1e-5)));
    } finally {
      await p.dispose();
    }
  });

  it('a GRPO update on constrained episodes starts on-policy and stays finite with the exact KL and the entropy', async () => {
    const p = policy(true);
    const trajs = await episodes(p, 16, 13);
    const settings = {
      ...algorithmDefaults('calculator', 'transformer', 'grpo'),
      warmupSteps: 0,
      minibatchSize: 0,
      skipZeroAdvantage: false,
      klEstimator: 'exact' as const,
    };
    const learner = new Learner(p, { method: 'grpo', settings, imitate: 'all', totalSteps: 10, seed: 3 });
    // rewards from a random model are mostly equal: give the group spread so there is a gradient
    const spread = trajs.map((t, i) => ({ ...t, outcome: { ...t.outcome, reward: i % 2 } }));
    learner.assignAdvantages(spread);
    const r = await learner.update(spread);
    assert.ok(r.logprobMismatch !== undefined && r.logprobMismatch < 1e-4, `mismatch ${r.logprobMismatch}`);
    for (const k of ['loss', 'kl', 'entropy', 'gradNorm'] as const) assert.ok(Number.isFinite(r[k]), `${k} = ${r[k]}`);
    assert.ok(r.entropy > 0);
    await p.dispose();
  });
});
