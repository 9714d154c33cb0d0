// The inspector's view of an agent program's request: the first request from the first turn's action,
// later ones from the previous turn's observation; only the messages a continuing request added, all of
// them for a new segment with where the history changed; the tools by name; stored data that is not a
// request (hostile or old runs) gives no view, and texts come back as stored for the escaping rule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentRequestView } from '../../../src/shared/agentRequestView';
import { COMBINED } from '../../helpers/hostileText';

const HOSTILE = COMBINED.text;

const tools = [{ type: 'function', function: { name: 'calculate', parameters: {} } }];
const first = {
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is 6*7?' },
  ],
  tools,
  continuesFrom: 0,
};
const second = {
  messages: [
    ...first.messages,
    { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'calculate', arguments: '{"expression":"6*7"}' }] },
    { role: 'tool', content: '42', toolCallId: 'c1' },
  ],
  tools,
  continuesFrom: 3,
};
const turns = [
  { action: { kind: 'tool', name: 'calculate', args: { request: first } }, observation: { text: '42', data: {}, request: second } },
  { action: { kind: 'tool', name: 'answer', args: { text: '42' } }, observation: { text: 'the program exited', data: {} } },
];

describe('agentRequestView', () => {
  it('the first request from the first turn, the next from the turn before: what each added, and the tools', () => {
    const a = agentRequestView(turns, 0)!;
    assert.equal(a.heading, 'request 1 · the conversation');
    assert.deepEqual(a.messages, [
      { role: 'system', text: 'Be brief.' },
      { role: 'user', text: 'What is 6*7?' },
    ]);
    assert.deepEqual(a.tools, ['calculate']);
    const b = agentRequestView(turns, 1)!;
    assert.equal(b.heading, 'request 2 · continues the context (3 earlier messages)');
    assert.deepEqual(b.messages, [{ role: 'tool', text: '42' }]);
  });

  it('a new segment shows the whole conversation and where the program changed it', () => {
    const rewritten = { ...second, continuesFrom: 0, rewrite: 'message 1 (user) differs from the one sent before' };
    const v = agentRequestView(
      [turns[0]!, { ...turns[1]! }].map((t, i) => (i === 0 ? { ...t, observation: { ...t.observation, request: rewritten } } : t)),
      1,
    )!;
    assert.equal(v.heading, 'request 2 · new segment: message 1 (user) differs from the one sent before');
    assert.equal(v.messages.length, 4);
    assert.equal(v.messages[2]!.text, 'calculate({"expression":"6*7"})', 'a call shows as name(arguments)');
  });

  it('anything not shaped as a request is no view; hostile texts come back as stored', () => {
    for (const bad of [null, 3, 'x', { messages: 'no', tools: [] }, { messages: [], tools: {} }, []])
      assert.equal(agentRequestView([{ action: { args: { request: bad } }, observation: {} }], 0), undefined);
    assert.equal(agentRequestView([{ action: { kind: 'tool', args: { text: 'a' } }, observation: {} }], 0), undefined, 'another environment');
    const v = agentRequestView(
      [
        {
          action: { args: { request: { messages: [{ role: HOSTILE, content: HOSTILE }, 7], tools: [7, { function: { name: 5 } }], continuesFrom: 99 } } },
          observation: {},
        },
      ],
      0,
    )!;
    assert.deepEqual(v.messages, [], 'continuesFrom past the end shows nothing new');
    assert.deepEqual(v.tools, ['?']);
    const w = agentRequestView([{ action: { args: { request: { messages: [{ role: HOSTILE, content: HOSTILE }], tools: [] } } }, observation: {} }], 0)!;
    assert.deepEqual(w.messages, [{ role: HOSTILE, text: HOSTILE }]);
  });
});
