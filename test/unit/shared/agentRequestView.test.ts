// The inspector's view of an agent program's request, from what the store keeps: the first request on
// the first turn's action, each later one in the previous turn's observation data, each holding the
// messages it added to the context; a new segment shows the whole conversation and where the history
// changed; the tools by name; stored data that is not a request (hostile or old runs) gives no view,
// and texts come back as stored for the escaping rule.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentRequestView, storedRequest } from '../../../src/shared/agentRequestView';
import { COMBINED } from '../../helpers/hostileText';

const HOSTILE = COMBINED.text;
const tools = [{ type: 'function', function: { name: 'calculate', parameters: {} } }];
const conversation = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'What is 6*7?' },
  { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'calculate', arguments: '{"expression":"6*7"}' }] },
  { role: 'tool', content: '42', toolCallId: 'c1' },
];
/** A request as a turn stores it: the messages after `continuesFrom`. */
const stored = (index: number, messages: unknown[], continuesFrom: number, rewrite?: string) => ({
  index,
  continuesFrom,
  ...(rewrite ? { rewrite } : {}),
  messages: messages.slice(continuesFrom),
  tools,
});
const turns = [
  {
    action: { kind: 'tool', name: 'calculate', args: { request: stored(1, conversation.slice(0, 2), 0) } },
    observation: { request: stored(2, conversation, 3) },
  },
  { action: { kind: 'tool', name: 'answer', args: { text: '42' } }, observation: {} },
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
    const rewritten = stored(2, conversation, 0, 'message 1 (user) differs from the one sent before');
    const v = agentRequestView([{ ...turns[0]!, observation: { request: rewritten } }, turns[1]!], 1)!;
    assert.equal(v.heading, 'request 2 · new segment: message 1 (user) differs from the one sent before');
    assert.equal(v.messages.length, 4);
    assert.equal(v.messages[2]!.text, 'calculate({"expression":"6*7"})', 'a call shows as name(arguments)');
  });

  it('anything not shaped as a request is no view; hostile texts come back as stored', () => {
    for (const bad of [null, 3, 'x', { messages: 'no', tools: [] }, { messages: [], tools: {} }, []])
      assert.equal(agentRequestView([{ action: { args: { request: bad } }, observation: {} }], 0), undefined);
    assert.equal(agentRequestView([{ action: { kind: 'tool', args: { text: 'a' } }, observation: {} }], 0), undefined, 'another environment');
    const v = agentRequestView(
      [{ action: { args: { request: { messages: [7, 'x'], tools: [7, { function: { name: 5 } }], continuesFrom: -3 } } }, observation: {} }],
      0,
    )!;
    assert.deepEqual(v.messages, [], 'entries that are not messages are left out');
    assert.equal(v.heading, 'request 1 · the conversation');
    assert.deepEqual(v.tools, ['?']);
    const w = agentRequestView([{ action: { args: { request: { messages: [{ role: HOSTILE, content: HOSTILE }], tools: [] } } }, observation: {} }], 0)!;
    assert.deepEqual(w.messages, [{ role: HOSTILE, text: HOSTILE }]);
  });

  describe('storedRequest (replay of a request)', () => {
    const why = (r: ReturnType<typeof storedRequest>): string => (typeof r === 'string' ? r : 'rebuilt');
    const calls = [{ id: 'c1', name: 'calculate', arguments: '{"expression":"6*7"}' }];
    const answered = [
      {
        action: {
          kind: 'tool',
          name: 'calculate',
          args: { content: '', calls, generated: calls, request: { ...stored(1, conversation.slice(0, 2), 0), maxTokens: 9 } },
        },
        observation: { request: { ...stored(2, conversation, 3), stop: ['END', 7] } },
      },
      { action: { kind: 'tool', name: 'answer', args: { text: '42' } }, observation: {} },
    ];

    it('rebuilds the whole conversation a turn answered from what each request added, with its limits', () => {
      assert.deepEqual(storedRequest(answered, 0), { messages: conversation.slice(0, 2), tools, maxTokens: 9 });
      assert.deepEqual(storedRequest(answered, 1), { messages: conversation, tools, stop: ['END'] });
    });

    it('a program tool called "answer" is a call, not a final answer', () => {
      const asAnswer = [{ id: 'c1', name: 'answer', arguments: '{"text":"42"}' }];
      const turns2 = [
        {
          ...answered[0]!,
          action: {
            kind: 'tool',
            name: 'answer',
            args: { content: '', calls: asAnswer, generated: asAnswer, request: stored(1, conversation.slice(0, 2), 0) },
          },
        },
        answered[1]!,
      ];
      const rebuilt = storedRequest(turns2, 1);
      assert.ok(typeof rebuilt !== 'string', why(rebuilt));
      assert.deepEqual(rebuilt.messages[2], { role: 'assistant', content: '', toolCalls: asAnswer });
    });

    it('a new segment starts the conversation again', () => {
      const rewritten = [
        { ...answered[0]!, observation: { request: stored(2, [conversation[0], { role: 'user', content: 'Again?' }], 0, 'cut') } },
        answered[1]!,
      ];
      assert.deepEqual(storedRequest(rewritten, 1), { messages: [conversation[0], { role: 'user', content: 'Again?' }], tools });
    });

    it('says why when the stored turns do not fit together or are not an agent run’s; hostile text is kept as text', () => {
      assert.match(why(storedRequest(answered, 2)), /turn 2 is not one of the trajectory's 2 turns/);
      assert.match(
        why(storedRequest([{ action: { kind: 'tool', name: 'answer', args: { text: 'a' } }, observation: {} }], 0)),
        /holds no agent program's request/,
      );
      const skipped = [answered[0]!, answered[1]!].map((t, i) => (i === 0 ? { ...t, observation: { request: stored(2, conversation, 2) } } : t));
      assert.match(why(storedRequest(skipped, 1)), /continues 2 messages, and the turns before it hold 3/);
      const notMessage = [
        { action: { kind: 'tool', name: 'answer', args: { text: 'x', request: { messages: [{ role: 'root', content: 'x' }], tools: [] } } }, observation: {} },
      ];
      assert.match(why(storedRequest(notMessage, 0)), /a message that is not a chat message/);
      const hostile = [
        {
          action: { kind: 'tool', name: 'answer', args: { text: 'x', request: { messages: [{ role: 'user', content: HOSTILE }], tools: [] } } },
          observation: {},
        },
      ];
      assert.deepEqual(storedRequest(hostile, 0), { messages: [{ role: 'user', content: HOSTILE }], tools: [] });
    });
  });
});
