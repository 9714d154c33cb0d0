// A chat model's answer as an OpenAI client reads it: Hermes / Qwen calls (one or several, text around
// them), Llama 3's bare JSON call, calls to undeclared tools and malformed calls kept as text; and the
// check that a program sent the answer back as given (text and calls by meaning, ids aside).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAnswer, sameAnswer, sameMessage } from '../../../../../src/rl/envs/agent/toolCallText';

const names = new Set(['calculate', 'lookup']);
let n = 0;
const id = (): string => `call_${++n}`;

describe('parseAnswer', () => {
  it('reads Hermes / Qwen calls with the text around them, arguments as JSON text', () => {
    const a = parseAnswer('Let me compute.\n<tool_call>\n{"name": "calculate", "arguments": {"expression": "6*7"}}\n</tool_call>', names, id);
    assert.equal(a.content, 'Let me compute.');
    assert.equal(a.toolCalls.length, 1);
    assert.equal(a.toolCalls[0]!.name, 'calculate');
    assert.deepEqual(JSON.parse(a.toolCalls[0]!.arguments), { expression: '6*7' });
    const two = parseAnswer(
      '<tool_call>{"name": "lookup", "arguments": {"word": "a"}}</tool_call><tool_call>{"name": "lookup", "arguments": {"word": "b"}}</tool_call>',
      names,
      id,
    );
    assert.equal(two.content, null, 'only calls: no content, as OpenAI sends it');
    assert.deepEqual(
      two.toolCalls.map((c) => JSON.parse(c.arguments) as unknown),
      [{ word: 'a' }, { word: 'b' }],
    );
    assert.notEqual(two.toolCalls[0]!.id, two.toolCalls[1]!.id);
  });

  it("reads Llama 3's bare JSON call, with or without <|python_tag|>", () => {
    for (const text of [
      '{"name": "calculate", "parameters": {"expression": "1+2"}}',
      '<|python_tag|>{"name": "calculate", "parameters": {"expression": "1+2"}}',
    ]) {
      const a = parseAnswer(text, names, id);
      assert.equal(a.content, null);
      assert.equal(a.toolCalls[0]!.name, 'calculate');
      assert.deepEqual(JSON.parse(a.toolCalls[0]!.arguments), { expression: '1+2' });
    }
  });

  it('keeps as text what is not a call of a declared tool: malformed JSON, an undeclared name, no tools at all, hostile text', () => {
    for (const text of [
      '<tool_call>{"name": "calculate", "arguments": {</tool_call>',
      '<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>',
      '<tool_call>{"name": "calculate", "arguments": [1]}</tool_call>',
      '{"name": "calculate", "parameters": 3}',
      '<tool_call>'.repeat(5000),
      '\u202e{"name": "calculate"}',
    ]) {
      const a = parseAnswer(text, names, id);
      assert.equal(a.content, text);
      assert.deepEqual(a.toolCalls, []);
    }
    assert.deepEqual(parseAnswer('<tool_call>{"name": "calculate", "arguments": {}}</tool_call>', new Set(), id).toolCalls, []);
  });
});

describe('sameAnswer / sameMessage', () => {
  const given = parseAnswer('Sure.\n<tool_call>{"name": "calculate", "arguments": {"expression": "2+2", "precise": true}}</tool_call>', names, id);
  it('the answer as given: the same text (outer whitespace aside) and calls by meaning, ids and key order aside', () => {
    assert.ok(
      sameAnswer(
        { role: 'assistant', content: ' Sure. ', toolCalls: [{ id: 'other', name: 'calculate', arguments: '{"precise":true,"expression":"2+2"}' }] },
        given,
      ),
    );
  });
  it('a changed text, a changed argument, a dropped call or another role is not', () => {
    const call = { id: 'x', name: 'calculate', arguments: '{"expression": "2+2", "precise": true}' };
    assert.ok(!sameAnswer({ role: 'assistant', content: 'Sure!', toolCalls: [call] }, given));
    assert.ok(!sameAnswer({ role: 'assistant', content: 'Sure.', toolCalls: [{ ...call, arguments: '{"expression": "2+3", "precise": true}' }] }, given));
    assert.ok(!sameAnswer({ role: 'assistant', content: 'Sure.' }, given));
    assert.ok(!sameAnswer({ role: 'user', content: 'Sure.', toolCalls: [call] }, given));
  });
  it('messages compare by role, text, tool_call_id and calls', () => {
    assert.ok(sameMessage({ role: 'tool', content: '4', toolCallId: 'a' }, { role: 'tool', content: '4', toolCallId: 'a' }));
    assert.ok(!sameMessage({ role: 'tool', content: '4', toolCallId: 'a' }, { role: 'tool', content: '4', toolCallId: 'b' }));
    assert.ok(!sameMessage({ role: 'user', content: 'hi' }, { role: 'user', content: 'hi ' }));
  });
});
