import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_ACTION_CHARS, parseCalculatorAction, parseCodeAction } from '../../../../src/rl/envs/parsers';

describe('parseCalculatorAction', () => {
  it('reads a call and an answer', () => {
    assert.deepEqual(parseCalculatorAction('<call>add(3, 4)</call>'), { kind: 'tool', name: 'call', args: { op: 'add', rawArgs: '3, 4', args: ['3', '4'] } });
    const a = parseCalculatorAction('<answer>\\boxed{-35}</answer>');
    assert.equal(a.kind === 'tool' && a.args.value, -35);
  });

  it('an answer wins over calls; text after the answer is flagged, not fatal', () => {
    const a = parseCalculatorAction('<call>mul(2,3)</call><answer>\\boxed{6}</answer> and more');
    assert.ok(a.kind === 'tool' && a.name === 'answer' && a.args.value === 6 && a.args.trailing === true);
  });

  it('of several calls the first is taken', () => {
    const a = parseCalculatorAction('<call>add(1,2)</call><call>mul(3,4)</call>');
    assert.ok(a.kind === 'tool' && a.args.op === 'add');
  });

  it('empty, unclosed, malformed and garbage outputs are format errors', () => {
    for (const text of [
      '',
      '   ',
      '<call>add(1,2)',
      '<call>add(1,2</call>',
      '<answer>35</answer>',
      '<answer>\\boxed{x}</answer>',
      'hello',
      '\uFFFD\uFFFD<call>',
      '<ca',
      'll>add(1,2)</call>',
    ]) {
      const a = parseCalculatorAction(text);
      assert.equal(a.kind, 'format_error', JSON.stringify(text));
    }
  });

  it('a tag split across two generation chunks parses once the turn text is joined', () => {
    const chunks = ['<call>mu', 'l(6,7)</c', 'all>'];
    assert.equal(parseCalculatorAction(chunks[0]!).kind, 'format_error');
    const a = parseCalculatorAction(chunks.join(''));
    assert.ok(a.kind === 'tool' && a.args.op === 'mul');
  });

  it('huge output is cut before parsing and stays fast', () => {
    const t0 = performance.now();
    const a = parseCalculatorAction(`${'<call>'.repeat(200_000)}x`);
    assert.equal(a.kind, 'format_error');
    const b = parseCalculatorAction(`<call>add(1,1)</call>${'z'.repeat(5 * MAX_ACTION_CHARS)}`);
    assert.equal(b.kind, 'tool');
    assert.ok(performance.now() - t0 < 2000);
  });
});

describe('parseCodeAction', () => {
  it('a fenced python block → execute_code; several blocks → the last', () => {
    const a = parseCodeAction('Let me try.\n```python\nprint(1)\n```\nthen\n```python\nprint(2)\n```\n');
    assert.ok(a.kind === 'tool' && a.name === 'execute_code' && a.args.code === 'print(2)\n' && a.args.blocks === 2);
  });

  it('an unclosed fence runs what follows it', () => {
    const a = parseCodeAction('```python\ndef f():\n    return 1\n');
    assert.ok(a.kind === 'tool' && a.args.unclosed === true && String(a.args.code).includes('def f'));
  });

  it('FINAL ANSWER: finishes with the answer text', () => {
    const a = parseCodeAction('done. FINAL ANSWER: 55');
    assert.deepEqual(a, { kind: 'tool', name: 'finish', args: { answer: '55' } });
  });

  it('empty and prose-only outputs are format errors; invalid UTF-8 replacement characters are harmless', () => {
    for (const text of ['', 'I think the answer is 55', '```', '```python\n', '\uFFFD\uFFFD\uFFFD']) {
      assert.equal(parseCodeAction(text).kind, 'format_error', JSON.stringify(text));
    }
    const a = parseCodeAction('```python\nprint("\uFFFD")\n```');
    assert.equal(a.kind, 'tool');
  });

  it('huge output is truncated and marked', () => {
    const a = parseCodeAction(`\`\`\`python\n${'x = 1\n'.repeat(30_000)}`);
    assert.ok(a.kind === 'tool' && a.args.truncated === true && String(a.args.code).length <= MAX_ACTION_CHARS);
  });
});
