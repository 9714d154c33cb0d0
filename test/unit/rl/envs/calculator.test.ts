import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calculatorTask } from '../../../../src/rl/envs/calculator/calculatorEnv';
import { calculatorEnv } from '../../../helpers/environments';
import {
  callPlan,
  canonicalPlan,
  DEFAULT_GENERATOR,
  depth,
  evaluate,
  generate,
  isHeldOut,
  parseExpr,
  render,
  type Expr,
} from '../../../../src/rl/envs/calculator/expressions';
import { depthMix, expressionSets, textDepth } from '../../../../src/rl/envs/calculator/expressionSets';
import { CalculatorReferenceAgent, inSkipClass } from '../../../../src/rl/policies/scripted/calculatorReference';
import { DemonstrationPolicy } from '../../../../src/rl/policies/scripted/demonstrations';
import { characterHfTokenizer } from '../../../../src/rl/policies/lm/tokenizer';
import { trajectorySequence } from '../../../../src/rl/policies/lm/transformerPolicy';
import { Rng } from '../../../../src/rl/random';
import { runEpisodes } from '../../../../src/rl/rollout/agentLoop';
import { validateRunConfig } from '../../../../src/shared/runConfig';

async function play(expression: string, texts: string[], options: Record<string, unknown> = {}) {
  const env = calculatorEnv(options).create();
  await env.reset(calculatorTask(expression));
  const obs: string[] = [];
  let termination: string | undefined;
  for (const t of texts) {
    const r = await env.step(env.parseAction(t));
    obs.push(r.observation.text);
    termination = r.termination;
    if (r.done) break;
  }
  return { obs, termination, outcome: await env.verify(new Rng(0)) };
}

describe('expressions', () => {
  it('render / parse round-trip and precedence', () => {
    for (const text of ['(3+4)*5', '3+4*5', '9-(2-1)', '8-2-1', '(1+2)*(3+4)', '7']) assert.equal(render(parseExpr(text)), text);
    assert.equal(evaluate(parseExpr('(3+4)*5')), 35);
    assert.equal(evaluate(parseExpr('9-(2-1)')), 8);
    assert.deepEqual(callPlan(parseExpr('(3+4)*5')), [
      ['add', 3, 4, 7],
      ['mul', 7, 5, 35],
    ]);
  });

  it('generates depths within the configured range', () => {
    const rng = new Rng(4);
    for (let i = 0; i < 300; i++) {
      const d = depth(generate(rng, { ...DEFAULT_GENERATOR, minDepth: 1, maxDepth: 3 }));
      assert.ok(d >= 1 && d <= 3, String(d));
    }
  });

  it('train and held-out splits are fixed and disjoint', () => {
    const { train, heldOut: held } = expressionSets({ train: 500, heldOut: 100 }, DEFAULT_GENERATOR);
    assert.equal(new Set(train).size, 500);
    assert.equal(new Set(held).size, 100);
    assert.ok(held.every(isHeldOut) && !train.some(isHeldOut));
    // determinism: fixed seed streams, so the same sets every time; another seed draws others
    assert.deepEqual(expressionSets({ train: 500, heldOut: 100 }, DEFAULT_GENERATOR), expressionSets({ train: 500, heldOut: 100 }, DEFAULT_GENERATOR));
    assert.notDeepEqual(expressionSets({ train: 500, heldOut: 100 }, DEFAULT_GENERATOR, 7).heldOut, held);
  });
});

describe('calculator task sets: one depth mix in both splits', () => {
  /** Each depth's share in the two splits differs by at most one task of the smaller split or 2 points. */
  const assertSameMix = (train: string[], heldOut: string[]): void => {
    const [a, b] = [depthMix(train), depthMix(heldOut)];
    for (const d of new Set([...a.keys(), ...b.keys()])) {
      const [sa, sb] = [(a.get(d) ?? 0) / train.length, (b.get(d) ?? 0) / heldOut.length];
      const diff = Math.abs(sa - sb);
      assert.ok(
        diff <= 0.02 || diff <= 1 / Math.min(train.length, heldOut.length) + 1e-12,
        `depth ${d}: ${(100 * sa).toFixed(1)}% training, ${(100 * sb).toFixed(1)}% held out`,
      );
    }
  };
  const plan = (x: string): string => canonicalPlan(parseExpr(x));

  it("at the defaults (the environment's own tasks): same mix, depth 1 set by the training split, which has all its depth-1 expressions", () => {
    const { train, heldOut } = calculatorEnv({}).tasks();
    const [t, h] = [train.map((x) => String(x.data.expression)), heldOut.map((x) => String(x.data.expression))];
    assert.deepEqual([t.length, h.length], [2000, 200]);
    assertSameMix(t, h);
    // the training split's depth-1 expressions, all of them: 300 texts "a op b" (digits, + - *), less the held-out plans
    const ops = ['+', '-', '*'].flatMap((op) => Array.from({ length: 100 }, (_, i) => `${Math.floor(i / 10)}${op}${i % 10}`));
    assert.equal(depthMix(t).get(1), ops.filter((x) => !isHeldOut(x)).length);
    assert.equal(depthMix(t).get(1), 243);
    // before the stratification the held-out set had 27 % depth 1 against 12 % in training
    assert.ok(Math.abs(depthMix(h).get(1)! / 200 - 243 / 2000) <= 0.005);
    const trained = new Set(t.map(plan));
    assert.equal(h.filter((x) => trained.has(plan(x))).length, 0);
  });

  it('at another setting (depths 1–3, operands 0–5, 800 / 150): same mix, no shared plan, distinct, deterministic', () => {
    const o = { ...DEFAULT_GENERATOR, maxDepth: 3, maxOperand: 5 };
    const sets = expressionSets({ train: 800, heldOut: 150 }, o);
    assert.deepEqual([sets.train.length, sets.heldOut.length], [800, 150]);
    assert.deepEqual([new Set(sets.train).size, new Set(sets.heldOut).size], [800, 150]);
    assertSameMix(sets.train, sets.heldOut);
    assert.ok(Math.max(...depthMix(sets.train).keys()) >= 4, 'a text can read deeper than the tree that drew it ("1+2+3+4")');
    const trained = new Set(sets.train.map(plan));
    assert.equal(sets.heldOut.filter((x) => trained.has(plan(x))).length, 0);
    assert.deepEqual(expressionSets({ train: 800, heldOut: 150 }, o), sets);
  });

  it('evaluationSet validation and test: heldOutTasks expressions deeper than every training text, operands 0–9, disjoint in call plan from each other and from training', () => {
    const exprs = (s: string): string[] =>
      calculatorEnv({ evaluationSet: s, heldOutTasks: 150 })
        .tasks()
        .heldOut.map((x) => String(x.data.expression));
    const [held, validation, test] = [exprs('held-out'), exprs('validation'), exprs('test')];
    assert.deepEqual([validation.length, test.length], [150, 150]);
    const { train } = calculatorEnv({ heldOutTasks: 150 }).tasks();
    // training is the same whatever is evaluated
    assert.deepEqual(
      calculatorEnv({ evaluationSet: 'test', heldOutTasks: 150 })
        .tasks()
        .train.map((x) => x.id),
      train.map((x) => x.id),
    );
    const t = train.map((x) => String(x.data.expression));
    const deepest = Math.max(...t.map(textDepth));
    assert.ok(
      held.some((x) => textDepth(x) === deepest),
      'the held-out split reaches the training depth',
    );
    for (const x of [...validation, ...test]) assert.ok(textDepth(x) > deepest && (x.match(/\d+/g) ?? []).every((n) => Number(n) <= 9), x);
    const plans = new Set([...validation, ...t].map(plan));
    assert.equal(test.filter((x) => plans.has(plan(x))).length, 0);
    assert.ok(test.every(isHeldOut) && !validation.some(isHeldOut));
    assert.equal(new Set(test).size, 150);
  });

  it('a larger held-out set becomes the scarcer split at depth 1 and sets the share for training', () => {
    const { train, heldOut } = expressionSets({ train: 2000, heldOut: 500 }, DEFAULT_GENERATOR);
    assertSameMix(train, heldOut);
    // 57 held-out depth-1 expressions exist at operands 0–9: all of them, 11.4 %, and training follows
    assert.equal(depthMix(heldOut).get(1), 57);
    assert.equal(depthMix(train).get(1), 228);
  });

  it("with no scarce depth the mix is the generator's", () => {
    const sets = expressionSets({ train: 2000, heldOut: 200 }, { ...DEFAULT_GENERATOR, maxOperand: 1000 });
    assertSameMix(sets.train, sets.heldOut);
    for (const [d, n] of depthMix(sets.train)) assert.ok(Math.abs(n / 2000 - sets.drawn.get(d)!) < 0.001, `depth ${d}`);
  });

  it('too few distinct expressions: shorter splits, still one mix, no error', () => {
    // operands 0–1 at depth 1: 12 texts in all, 10 of them training
    const sets = expressionSets({ train: 2000, heldOut: 200 }, { ...DEFAULT_GENERATOR, maxDepth: 1, maxOperand: 1 });
    assert.deepEqual([sets.train.length, sets.heldOut.length], [10, 2]);
    assert.ok(sets.heldOut.every(isHeldOut) && !sets.train.some(isHeldOut));
    assert.equal(textDepth('1+2+3+4'), 3);
  });
});

describe('calculator environment (seed 003 protocol)', () => {
  it("calls, observations and a right answer: reward 1 (correctness only, the default), 1.1 with seed 003's format bonus", async () => {
    const actions = ['<call>add(3,4)</call>', '<call>mul(7,5)</call>', '<answer>\\boxed{35}</answer>'];
    const r = await play('(3+4)*5', actions);
    assert.deepEqual(r.obs, ['<obs>7</obs>', '<obs>35</obs>', '<obs>answered</obs>']);
    assert.equal(r.termination, 'finished');
    assert.equal(r.outcome.reward, 1);
    assert.ok(Math.abs((await play('(3+4)*5', actions, { formatWeight: 0.1 })).outcome.reward - 1.1) < 1e-12);
    assert.deepEqual([r.outcome.success, r.outcome.publicPass, r.outcome.privatePass], [true, true, true]);
  });

  it('formatErrorCost charges each malformed turn, on top of callCost, and nothing else', async () => {
    // one stutter, one good call, the right answer
    const actions = ['<call>mul(7,5)</calll>', '<call>mul(7,5)</call>', '<answer>\\boxed{35}</answer>'];
    const clean = await play('7*5', actions.slice(1), { formatErrorCost: 0.1 });
    assert.equal(clean.outcome.reward, 1, 'no malformed turn: nothing charged');
    const stutter = await play('7*5', actions, { formatErrorCost: 0.1 });
    assert.equal(stutter.outcome.success, true);
    assert.ok(Math.abs(stutter.outcome.reward - 0.9) < 1e-12, `one malformed turn costs 0.1 (${stutter.outcome.reward})`);
    assert.equal(stutter.outcome.details?.formatErrors, 1);
    const both = await play('7*5', actions, { formatErrorCost: 0.1, callCost: 0.05 });
    // two turns spend the call budget (the stutter and the call), one of them malformed
    assert.ok(Math.abs(both.outcome.reward - (1 - 2 * 0.05 - 0.1)) < 1e-12, `${both.outcome.reward}`);
    assert.equal((await play('7*5', actions)).outcome.reward, 1, 'off by default');
    // a well-formed call that fails (unknown op, bad arguments) is not malformed: not charged
    const failed = await play('7*5', ['<call>pow(7,5)</call>', '<call>add(1)</call>', ...actions.slice(1)], { formatErrorCost: 0.1 });
    assert.deepEqual([failed.outcome.reward, failed.outcome.details?.formatErrors], [1, 0]);
    // the count starts again with each episode
    const env = calculatorEnv({ formatErrorCost: 0.1 }).create();
    for (const [texts, reward] of [
      [actions, 0.9],
      [actions.slice(1), 1],
    ] as const) {
      await env.reset(calculatorTask('7*5'));
      for (const t of texts) if ((await env.step(env.parseAction(t))).done) break;
      assert.ok(Math.abs((await env.verify(new Rng(0))).reward - reward) < 1e-12);
    }
  });

  it('a wrong answer in format earns the format weight only', async () => {
    assert.equal((await play('3+4', ['<answer>\\boxed{8}</answer>'])).outcome.reward, 0);
    const r = await play('3+4', ['<answer>\\boxed{8}</answer>'], { formatWeight: 0.1 });
    assert.ok(Math.abs(r.outcome.reward - 0.1) < 1e-12);
    assert.equal(r.outcome.success, false);
  });

  it('division by zero, unknown ops, bad arguments and malformed text are error observations', async () => {
    const r = await play('3+4', ['<call>div(3,0)</call>', '<call>pow(2,3)</call>', '<call>add(a,4)</call>', '<call>add(1,2,3)</call>', 'hmm']);
    assert.match(r.obs[0]!, /error: division by zero/);
    assert.match(r.obs[1]!, /error: unknown op pow/);
    assert.match(r.obs[2]!, /error: invalid args/);
    assert.match(r.obs[3]!, /error: invalid args/);
    assert.match(r.obs[4]!, /error: no <call> or <answer>/);
    assert.equal(r.outcome.reward, 0);
  });

  it('integer division floors; the tool-call budget ends the episode', async () => {
    assert.equal((await play('7', ['<call>div(7,2)</call>'])).obs[0], '<obs>3</obs>');
    const r = await play('3+4', ['<call>add(1,1)</call>', '<call>add(1,1)</call>', '<call>add(1,1)</call>'], { maxCalls: 2 });
    assert.equal(r.termination, 'budget_exhausted');
    assert.equal(r.obs.length, 2);
    assert.equal(r.outcome.reward, 0);
  });

  it('the table policy cannot drive it: rejected by validation', () => {
    assert.throws(() => validateRunConfig({ env: 'calculator', policy: 'table' }), /table policy needs a finite visible state/);
    assert.throws(
      () => validateRunConfig({ env: 'calculator', envOptions: { minDepth: 3, maxDepth: 2 } }),
      /envOptions\.minDepth = 3: is greater than envOptions\.maxDepth/,
    );
  });
});

describe('calculator reference agent', () => {
  for (const mistakeRate of [0, 1]) {
    it(`solves every held-out task (depth 1–3, mistake rate ${mistakeRate})`, async () => {
      const options = { maxDepth: 3 };
      const tasks = calculatorEnv(options).tasks().heldOut;
      assert.equal(tasks.length, 200);
      const trajectories = await runEpisodes(
        tasks.map((task, i) => ({ task, group: i, indexInGroup: 0 })),
        () => calculatorEnv(options).create(),
        new CalculatorReferenceAgent({ mistakeRate }),
        { maxTurns: 16, sampleRng: new Rng(1), verifierRng: new Rng(2) },
      );
      for (const t of trajectories)
        assert.equal(t.outcome.success, true, `${t.taskId}: ${JSON.stringify(t.turns.map((x) => [x.actionText, x.observation.text]))}`);
      if (mistakeRate === 1) assert.ok(trajectories.every((t) => t.turns[0]!.observation.text.startsWith('<obs>error: unknown op')));
    });
  }

  it('demonstrations show the mistake in context but do not train on it (loss mask 0), and train on the repair', async () => {
    const tokenizer = characterHfTokenizer();
    const [t] = await runEpisodes(
      [{ task: calculatorTask('(3+4)*5'), group: 0, indexInGroup: 0 }],
      () => calculatorEnv({}).create(),
      new DemonstrationPolicy(new CalculatorReferenceAgent({ mistakeRate: 1 }), tokenizer),
      { maxTurns: 16, sampleRng: new Rng(1), verifierRng: new Rng(2) },
    );
    const s = trajectorySequence(t!)!;
    // position p predicts token p + 1: the mask of token i is mask[i − 1]
    const ids = [s.inputs[0]!, ...s.targets];
    const tokenMask = [0, ...s.mask];
    const trained = (from: number, text: string): number[] => tokenMask.slice(from, from + text.length);
    const text = tokenizer.decode(ids);
    assert.equal(text.slice(0, 40), 'Q:(3+4)*5\n<call>plus(3,4)</call><obs>err');
    const mistake = text.indexOf('<call>plus(3,4)</call>');
    const repair = text.indexOf('<call>add(3,4)</call>');
    assert.ok(mistake > 0 && repair > mistake);
    assert.ok(
      trained(mistake, '<call>plus(3,4)</call>').every((m) => m === 0),
      'the mistake is not imitated',
    );
    assert.ok(
      trained(repair, '<call>add(3,4)</call>').every((m) => m === 1),
      'the repair is',
    );
    assert.ok(
      trained(text.indexOf('<obs>error'), '<obs>error').every((m) => m === 0),
      'observations never are',
    );
  });
});

describe('calculator rewards and held-out split', () => {
  it('a per-call cost is subtracted for every call and malformed turn', async () => {
    const r = await play('(3+4)*5', ['<call>add(3,4)</call>', 'oops', '<call>mul(7,5)</call>', '<answer>\\boxed{35}</answer>'], { callCost: 0.05 });
    assert.ok(Math.abs(r.outcome.reward - (1 - 3 * 0.05)) < 1e-12);
  });

  it('no held-out task shares its call plan, up to operand order, with a training task', () => {
    const plan = (t: { data: Record<string, unknown> }): string => canonicalPlan(parseExpr(String(t.data.expression)));
    const { train, heldOut } = calculatorEnv({ heldOutTasks: 500 }).tasks();
    const trained = new Set(train.map(plan));
    assert.equal(heldOut.length, 500);
    assert.equal(heldOut.filter((t) => trained.has(plan(t))).length, 0);
    // the same task in substance lands in the same split: "(3+4)*5", "5*(4+3)" and "(4+3)*5" together
    assert.equal(canonicalPlan(parseExpr('(3+4)*5')), canonicalPlan(parseExpr('5*(4+3)')));
    assert.equal(canonicalPlan(parseExpr('(1+2)*(3+4)')), canonicalPlan(parseExpr('(4+3)*(2+1)')));
    assert.notEqual(canonicalPlan(parseExpr('(3-4)*5')), canonicalPlan(parseExpr('(4-3)*5')));
    // and with a structural key independent of the plan text, no held-out task has a twin in training either
    const structure = (e: Expr): string =>
      e.kind === 'num'
        ? String(e.value)
        : ((l, r) => `${e.op}(${(e.op === 'add' || e.op === 'mul') && r < l ? `${r},${l}` : `${l},${r}`})`)(structure(e.left), structure(e.right));
    const trainedShapes = new Set(train.map((t) => structure(parseExpr(String(t.data.expression)))));
    assert.equal(heldOut.filter((t) => trainedShapes.has(structure(parseExpr(String(t.data.expression))))).length, 0);
    assert.equal(isHeldOut('(3+4)*5'), isHeldOut('5*(4+3)'));
  });
});

describe('calculator reference agent habits (imperfect demonstrations)', () => {
  const demo = async (expressions: string[], habits: ConstructorParameters<typeof CalculatorReferenceAgent>[0], seed = 1) =>
    runEpisodes(
      expressions.map((e, i) => ({ task: calculatorTask(e), group: i, indexInGroup: 0 })),
      () => calculatorEnv({}).create(),
      new CalculatorReferenceAgent(habits),
      { maxTurns: 16, sampleRng: new Rng(seed), verifierRng: new Rng(2) },
    );

  it('skips the tool on its class and guesses (the first number), keeps using it elsewhere', async () => {
    const ts = await demo(['(3+4)*5', '7*8', '3+4', '9-(2+1)'], { skipToolOn: 'mul', skipToolRate: 1 });
    assert.deepEqual(
      ts.map((t) => t.turns.map((x) => x.actionText)),
      [
        ['<answer>\\boxed{3}</answer>'],
        ['<answer>\\boxed{7}</answer>'],
        ['<call>add(3,4)</call>', '<answer>\\boxed{7}</answer>'],
        ['<call>add(2,1)</call>', '<call>sub(9,3)</call>', '<answer>\\boxed{6}</answer>'],
      ],
    );
    assert.deepEqual(
      ts.map((t) => t.outcome.success),
      [false, false, true, true],
    );
  });

  it('at a rate below 1 it skips on that share of the class only (a habit greedy decoding copies above 0.5)', async () => {
    const muls = Array.from({ length: 400 }, (_, i) => `${i % 10}*${Math.floor(i / 10) % 10}+1`);
    const ts = await demo(muls, { skipToolOn: 'mul', skipToolRate: 0.8 });
    const skipped = ts.filter((t) => t.turns.length === 1).length / ts.length;
    assert.ok(Math.abs(skipped - 0.8) < 0.05, `skipped ${skipped}`);
  });

  it('a near-miss guess is the result off by a fixed amount, never the result', async () => {
    const ts = await demo(['7*8', '(3+4)*5', '2*2'], { skipToolOn: 'all', skipToolRate: 1, guess: 'near-miss' });
    ts.forEach((t) => assert.equal(t.outcome.success, false, t.taskId));
  });

  it('redundant calls repeat the call just made once, and the plan still completes', async () => {
    const [t] = await demo(['(3+4)*5'], { redundantCallRate: 1 });
    assert.deepEqual(
      t!.turns.map((x) => x.actionText),
      ['<call>add(3,4)</call>', '<call>add(3,4)</call>', '<call>mul(7,5)</call>', '<call>mul(7,5)</call>', '<answer>\\boxed{35}</answer>'],
    );
    assert.equal(t!.outcome.success, true);
    // a plan that needs the same call twice is not mistaken for a repeat
    const [u] = await demo(['(3+4)+(3+4)'], {});
    assert.deepEqual(
      u!.turns.map((x) => x.actionText),
      ['<call>add(3,4)</call>', '<call>add(3,4)</call>', '<call>add(7,7)</call>', '<answer>\\boxed{14}</answer>'],
    );
  });

  it('the skip classes', () => {
    assert.deepEqual(
      ['7*8', '3+4', '(3+4)*5'].map((e) => inSkipClass(e, 'depth-1')),
      [true, true, false],
    );
    assert.deepEqual(
      ['7*8', '3+4', '(3+4)*5'].map((e) => inSkipClass(e, 'mul')),
      [true, false, true],
    );
  });
});
