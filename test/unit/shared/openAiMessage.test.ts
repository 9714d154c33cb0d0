// The one message → OpenAI conversion (shared/openAiMessage.ts) that the agent environment's reward
// trajectory and the chat format's template input both use: each kind of message an agent program
// sends, its exact output and its JSON text (a reward file reads the text, so key order counts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openAiMessage } from '../../../src/shared/openAiMessage';
import type { AgentMessage } from '../../../src/shared/types';

const call = { id: 'call_1', name: 'calculate', arguments: '{"expression": "2+3"}' };

describe('openAiMessage', () => {
  it('writes system and user messages as role and content only', () => {
    assert.deepEqual(openAiMessage({ role: 'system', content: 'Be brief.' }), { role: 'system', content: 'Be brief.' });
    assert.equal(
      JSON.stringify(openAiMessage({ role: 'user', content: 'What is 2+3?', name: 'ana' })),
      '{"role":"user","content":"What is 2+3?","name":"ana"}',
    );
  });

  it("writes an assistant's tool calls with type and function, the arguments as the program's JSON text", () => {
    const m: AgentMessage = { role: 'assistant', content: '', toolCalls: [call, { id: 'call_2', name: 'lookup', arguments: 'not json' }] };
    assert.equal(
      JSON.stringify(openAiMessage(m)),
      '{"role":"assistant","content":"","tool_calls":[' +
        '{"id":"call_1","type":"function","function":{"name":"calculate","arguments":"{\\"expression\\": \\"2+3\\"}"}},' +
        '{"id":"call_2","type":"function","function":{"name":"lookup","arguments":"not json"}}]}',
    );
  });

  it('leaves out an empty list of tool calls (an assistant answer without calls)', () => {
    assert.deepEqual(openAiMessage({ role: 'assistant', content: '5', toolCalls: [] }), { role: 'assistant', content: '5' });
  });

  it("writes a tool result's call id as tool_call_id, and its name", () => {
    assert.equal(
      JSON.stringify(openAiMessage({ role: 'tool', content: '5', toolCallId: 'call_1', name: 'calculate' })),
      '{"role":"tool","content":"5","tool_call_id":"call_1","name":"calculate"}',
    );
  });

  it('reads the arguments through the function it is given (the chat format parses them for the template)', () => {
    const parsed = (text: string): unknown => {
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    };
    const m = openAiMessage({ role: 'assistant', content: 'Let me compute.', toolCalls: [call, { id: 'c', name: 'f', arguments: '{oops' }] }, parsed);
    assert.deepEqual(m.tool_calls, [
      { id: 'call_1', type: 'function', function: { name: 'calculate', arguments: { expression: '2+3' } } },
      { id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } },
    ]);
    assert.equal(m.content, 'Let me compute.');
  });
});
