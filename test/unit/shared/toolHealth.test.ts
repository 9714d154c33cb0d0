// Tool-use health from stored turns: per tool calls per episode, error and timeout shares, latency
// percentiles; and the collapse warning (below a fraction of the first iterations' level, still at the end).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { collapseText, toolCollapses, toolHealthOf } from '../../../src/shared/toolHealth';

const call = (name: string, data: Record<string, unknown> = {}) => ({ action: { kind: 'tool', name, args: {} }, observation: data });

describe('toolHealthOf', () => {
  it("an OpenEnv server's steps are no tool: no tool-health row for its action field", () => {
    const step = (done: boolean) => ({
      action: { kind: 'tool', name: 'message', args: { message: 'x' } },
      observation: { observation: { text: 'No.' }, reward: 0, done },
    });
    assert.deepEqual(toolHealthOf([[step(false), step(true)], [step(true)]]), {});
  });

  it('counts each tool over every episode, with its failures, timeouts and latency percentiles', () => {
    const episodes = [
      [call('search', { tool: 'search', durationMs: 10 }), call('search', { tool: 'search', durationMs: 30, error: 'bad_args' }), call('answer')],
      [
        call('search', { tool: 'search', durationMs: 20, timedOut: true }),
        { action: { kind: 'format_error', message: 'x' }, observation: { formatError: true, error: 'format' } },
      ],
      [call('add'), call('add', { error: 'format' })],
      [],
    ];
    const h = toolHealthOf(episodes);
    assert.deepEqual(Object.keys(h), ['add', 'search'], 'the final answer and the format error are no tool calls');
    assert.deepEqual(h.search, { calls: 3, callsPerEpisode: 0.75, errorRate: 1 / 3, timeoutRate: 1 / 3, latencyP50Ms: 20, latencyP95Ms: 30, latencyMaxMs: 30 });
    assert.equal(h.add!.callsPerEpisode, 0.5);
    assert.equal(h.add!.errorRate, 0, "a format error in the observation is not the tool's failure");
    assert.equal(h.add!.latencyP50Ms, undefined, 'no durations reported: no percentiles');
    // untrusted stored observations: odd types count as nothing
    assert.deepEqual(toolHealthOf([[{ action: 'x', observation: {} }, call('t', { durationMs: 'slow', timedOut: 'yes' })]]).t, {
      calls: 1,
      callsPerEpisode: 1,
      errorRate: 0,
      timeoutRate: 0,
    });
  });
});

describe('toolCollapses', () => {
  const it_ = (iteration: number, tools: Record<string, number>) => ({
    iteration,
    toolHealth: Object.fromEntries(Object.entries(tools).map(([k, v]) => [k, { calls: v, callsPerEpisode: v, errorRate: 0, timeoutRate: 0 }])),
  });
  it('warns when a tool stays below half its first three iterations’ level, from where it fell for good', () => {
    const series = [
      it_(1, { a: 2, b: 1 }),
      it_(2, { a: 2, b: 1 }),
      it_(3, { a: 2, b: 1 }),
      it_(4, { a: 0.5, b: 1 }),
      it_(5, { a: 1.5, b: 0.4 }),
      it_(6, { a: 0.9 }),
      it_(7, { a: 0.2 }),
    ];
    const c = toolCollapses(series);
    assert.deepEqual(
      c.map((x) => [x.tool, x.iteration, x.last, x.baseline]),
      [
        ['a', 6, 0.2, 2],
        ['b', 5, 0, 1],
      ],
      'a recovered at 5, then fell from 6; b fell at 5 (0.4) and is never called after',
    );
    assert.match(collapseText(c[0]!), /^tool use collapsed: a 0\.20 calls per episode at the end \(below 50% of 2\.00, .*since iteration 6\)$/);
    assert.deepEqual(toolCollapses([...series.slice(0, 6), it_(7, { a: 1.2, b: 0.6 })]), [], 'back above the threshold at the end: no warning');
    assert.deepEqual(toolCollapses(series.slice(0, 3)), [], 'no iteration after the baseline');
    assert.deepEqual(toolCollapses([...series.slice(0, 5), it_(6, { a: 1.5, b: 1 }), it_(7, { a: 0.2, b: 1 })]), [], 'the last iteration alone below is noise');
    // a name sampled now and then (a misspelt tool) was never in use: it cannot collapse
    const rare = [1, 2, 3, 4, 5].map((i) => it_(i, i === 2 ? { a: 2, cinvert: 0.01 } : { a: 2 }));
    assert.deepEqual(toolCollapses(rare), [], 'cinvert: 0.003 calls per episode over the baseline');
    const used = [1, 2, 3, 4, 5].map((i) => it_(i, i <= 3 ? { a: 2, b: 0.06 } : { a: 2 }));
    assert.deepEqual(
      toolCollapses(used).map((c) => c.tool),
      ['b'],
      'b at 0.06 a call per episode was in use',
    );
    // stored metrics are data: a value that is not a number counts as no calls, and nothing throws
    const odd = [1, 2, 3, 4, 5].map((i) => ({
      iteration: i,
      toolHealth: { a: { callsPerEpisode: i < 4 ? 2 : ('x' as unknown as number), calls: 1, errorRate: 0, timeoutRate: 0 } },
    }));
    assert.deepEqual(
      toolCollapses(odd).map((c) => [c.tool, c.iteration, c.last]),
      [['a', 4, 0]],
    );
  });
});
