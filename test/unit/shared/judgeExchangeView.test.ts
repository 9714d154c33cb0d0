// The inspector's view of a group's exchange with the judge: the trajectory's own score, the error, and
// the stored request and answer as text (never parsed into markup).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judgeExchangeView } from '../../../src/shared/judgeExchangeView';

const request = JSON.stringify({
  model: 'm',
  temperature: 0,
  messages: [
    { role: 'system', content: 'rubric <b>x</b>' },
    { role: 'user', content: 'data' },
  ],
});
const answer = JSON.stringify({ choices: [{ message: { role: 'assistant', content: '{"scores": {"t0": 0.25, "t1": 1}}' } }] });

describe('judgeExchangeView', () => {
  it("a scored group: this trajectory's score, the messages and the answer's content", () => {
    const v = judgeExchangeView({ request, answer, scores: '{"t0":0.25,"t1":1}', latencyMs: 120.4, tokens: 33, tries: 1, cached: false }, 0);
    assert.equal(v.heading, 'judge: t0 scored 0.25 (120 ms, 1 try, 33 tokens)');
    assert.deepEqual(
      v.rows.map((r) => r.label),
      ['scores', 'request system', 'request user', 'answer'],
    );
    assert.equal(v.rows[1]!.text, 'rubric <b>x</b>', 'text as stored, for textContent');
    assert.equal(v.rows[3]!.text, '{"scores": {"t0": 0.25, "t1": 1}}');
  });
  it('a failed group: the error first, the raw body when it is not a chat answer', () => {
    const v = judgeExchangeView(
      { request: 'not json', answer: '<html>oops', error: 'the endpoint answered HTTP 502', latencyMs: 5, tokens: 0, tries: 3, cached: false },
      1,
    );
    assert.equal(v.heading, 'judge: failed for this group (5 ms, 3 tries, 0 tokens)');
    assert.deepEqual(
      v.rows.map((r) => [r.label, r.text]),
      [
        ['error', 'the endpoint answered HTTP 502'],
        ['request', 'not json'],
        ['answer', '<html>oops'],
      ],
    );
  });
  it('from the cache', () => {
    assert.match(
      judgeExchangeView({ request, answer, scores: '{"t0":0.25,"t1":1}', latencyMs: 0, tokens: 0, tries: 0, cached: true }, 1).heading,
      /t1 scored 1 \(from the cache\)/,
    );
  });
});
