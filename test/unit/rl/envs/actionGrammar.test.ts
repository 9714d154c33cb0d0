import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACTION_GRAMMARS, compileActionGrammar, namedGrammar, type ActionGrammar } from '../../../../src/rl/envs/actionGrammar';
import { parseCalculatorAction } from '../../../../src/rl/envs/parsers';
import { parseScores } from '../../../../src/rl/train/judge/judgeAnswer';

const whole = (g: ActionGrammar, text: string): boolean => {
  const s = g.advance(g.start(), text);
  return s !== undefined && g.accepts(s);
};
const prefix = (g: ActionGrammar, text: string): boolean => g.advance(g.start(), text) !== undefined;

describe('action grammar (regular-expression subset → NFA)', () => {
  it('matches whole actions and their prefixes, and nothing else', () => {
    const g = compileActionGrammar('a(b|cd)*e?[0-9]{2,3}');
    for (const t of ['a12', 'ab12', 'acdb123', 'ae99', 'abcdcde000']) assert.ok(whole(g, t), t);
    for (const t of ['a1', 'a1234', 'ac12', 'b12', 'aee12', '']) assert.equal(whole(g, t), false, t);
    for (const t of ['', 'a', 'ac', 'acd', 'ae1']) assert.ok(prefix(g, t), t);
    for (const t of ['x', 'ax', 'acx', 'a1234']) assert.equal(prefix(g, t), false, t);
    assert.equal(g.canContinue(g.advance(g.start(), 'a123')!), false);
    assert.equal(g.canContinue(g.advance(g.start(), 'a12')!), true);
  });

  it('reads escapes, classes, negated classes, ranges, {m,} and non-capturing groups', () => {
    const g = compileActionGrammar(String.raw`\\x\{[^a-c]\d+\}(?:z){2,}`);
    assert.ok(whole(g, String.raw`\x{d12}zz`));
    assert.ok(whole(g, String.raw`\x{-0}zzzz`));
    assert.equal(whole(g, String.raw`\x{a1}zz`), false);
    assert.equal(whole(g, String.raw`\x{d1}z`), false);
  });

  it('refuses what it does not support, naming the pattern and the character', () => {
    for (const [p, re] of [
      ['a(b', /unclosed \( at character 4/],
      ['ab)', /unmatched \) at character 3/],
      ['[ab', /unclosed \[/],
      ['*a', /nothing to repeat at character 1/],
      ['^ab$', /anchors are implied/],
      [String.raw`\b`, /unsupported escape \\b/],
      ['a{3,1}', /out of order/],
      ['a{1000}', /repeat count over 64/],
      ['[z-a]', /range z-a out of order/],
    ] as const) {
      assert.throws(
        () => compileActionGrammar(p),
        (e: Error) => re.test(e.message) && e.message.includes(JSON.stringify(p)),
        p,
      );
    }
  });

  it("the calculator's grammar admits exactly well-formed actions its parser reads as a call or an answer", () => {
    const g = namedGrammar('calculator');
    assert.equal(g.pattern, ACTION_GRAMMARS.calculator);
    const good = ['<call>mul(9,9)</call>', '<call>sub(-3,12)</call>', '<call>div(100,7)</call>', String.raw`<answer>\boxed{-42}</answer>`];
    for (const t of good) {
      assert.ok(whole(g, t), t);
      assert.equal(parseCalculatorAction(t).kind, 'tool', t);
    }
    const bad = [
      '<ccalll>mul(9,9)</call>',
      '<call>pow(2,3)</call>',
      '<call>mul(9)</call>',
      '<call>mul(9,9)',
      String.raw`<answer>\boxed{4.5}</answer>`,
      'the answer is 4',
    ];
    for (const t of bad) assert.equal(whole(g, t), false, t);
    // a whole action cannot be extended: generation stops there
    assert.equal(g.canContinue(g.advance(g.start(), good[0]!)!), false);
    // the fewest characters to a whole action: <call>add(0,0)</call> is 21, <answer>\boxed{0}</answer> 26
    assert.equal(g.shortestCompletion(g.start()), 21);
    assert.equal(g.shortestCompletion(g.advance(g.start(), '<a')!), 24);
    assert.equal(g.shortestCompletion(g.advance(g.start(), '<call>mul(12')!), 10);
    assert.equal(g.shortestCompletion(g.advance(g.start(), good[0]!)!), 0);
  });
  it("judge-scores-N admits exactly the judge's answer for a group of N, which the judge's strict reading accepts", () => {
    const g = namedGrammar('judge-scores-2');
    const good = ['{"scores": {"t0": 0, "t1": 1}}', '{"scores": {"t0": 0.25, "t1": 0.5}}', '{"scores": {"t0": 1, "t1": 0.999}}'];
    for (const t of good) {
      assert.ok(whole(g, t), t);
      assert.deepEqual([...parseScores(t, ['t0', 't1']).keys()].sort(), ['t0', 't1'], t);
    }
    const bad = [
      '{"scores": {"t0": 0}}',
      '{"scores": {"t1": 0, "t0": 1}}',
      '{"scores": {"t0": 2, "t1": 0}}',
      '{"scores": {"t0": 0.1234, "t1": 0}}',
      '{"scores": {"t0": 0, "t1": 0, "t2": 0}}',
    ];
    for (const t of bad) assert.equal(whole(g, t), false, t);
    assert.ok(whole(namedGrammar('judge-scores-4'), '{"scores": {"t0": 0, "t1": 1, "t2": 0.5, "t3": 0.1}}'));
  });
});
