import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { parseHermesAction, splitTurns } from '../../../../src/importers/verl/chatTurns';
import { parseDumpLine, sampleTurns } from '../../../../src/importers/verl/verlSample';
import { observationLinks } from '../../../../src/shared/linking';
import { ROOT } from '../../../helpers/cli';

const lines = (file: string): string[] =>
  fs
    .readFileSync(path.join(ROOT, 'test/fixtures/verl', file), 'utf8')
    .split('\n')
    .filter((l) => l !== '');
const sample = (file: string, i: number, step: number) => {
  const r = parseDumpLine(lines(file)[i]!, step);
  assert.ok(r.ok, 'fixture line parses');
  return r.sample;
};

describe('verl responses split into turns', () => {
  it('a multi-turn response without ChatML markers (verl decodes with skip_special_tokens) gives assistant turns with their tool responses', () => {
    const turns = splitTurns(sample('rollout/2.jsonl', 0, 2).output);
    assert.equal(turns.length, 3);
    assert.deepEqual(
      turns.map((t) => t.action.kind === 'tool' && t.action.name),
      ['code_interpreter', 'code_interpreter', 'answer'],
    );
    assert.equal(
      turns[0]!.actionText,
      'Let me test it first.\n<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "def mean(xs):\\n    return sum(xs) / len(xs)\\nprint(mean([]))\\n"}}\n</tool_call>',
    );
    assert.match(turns[0]!.observationText, /^Traceback \(most recent call last\):\n {2}File "main.py", line 3/);
    assert.ok(!turns[0]!.observationText.includes('tool_response') && !/\nassistant/.test(turns[0]!.observationText));
    assert.equal(turns[1]!.observationText, '0.0\n');
    assert.ok(turns[2]!.actionText.startsWith('The empty list is handled now.'));
    assert.deepEqual(turns[2]!.observation, { final: true });
  });

  it('the same response with its ChatML markers gives the same turns', () => {
    const stripped = splitTurns(sample('rollout/2.jsonl', 0, 2).output);
    const marked = sample('rollout/2.jsonl', 2, 2).output;
    assert.ok(marked.includes('<|im_start|>user\n<tool_response>'));
    assert.deepEqual(splitTurns(marked), stripped);
  });

  it('a traceback in a tool response links to the line of the code the call ran, and names the turn as the cause', () => {
    const turns = splitTurns(sample('rollout/2.jsonl', 0, 2).output);
    const links = observationLinks(turns, 0);
    assert.deepEqual(
      links.filter((l) => l.kind === 'line').map((l) => l.kind === 'line' && [l.line, l.innermost]),
      [
        [3, false],
        [2, true],
      ],
    );
    assert.ok(links.some((l) => l.kind === 'cause' && l.turn === 0));
    assert.deepEqual(
      observationLinks(turns, 1).filter((l) => l.kind === 'line'),
      [],
    );
  });

  it("SandboxFusion's own temporary file names link too", () => {
    const t = splitTurns(
      'x\n<tool_call>\n{"name": "code_interpreter", "arguments": {"code": "a = 1\\nb = a / 0\\n"}}\n</tool_call>user\n<tool_response>\nTraceback (most recent call last):\n  File "/tmp/tmpq1w2e3/tmpz9x8c7.py", line 2, in <module>\nZeroDivisionError: division by zero\n</tool_response>\nassistant\ndone',
    );
    assert.deepEqual(
      observationLinks(t, 0)
        .filter((l) => l.kind === 'line')
        .map((l) => l.kind === 'line' && l.line),
      [2],
    );
  });

  it("single-turn output is one final answer turn; a response cut after a tool call ended at verl's cap", () => {
    const single = sampleTurns(sample('rollout/1.jsonl', 0, 1));
    assert.deepEqual(
      single.turns.map((t) => [t.action, t.observationText]),
      [[{ kind: 'tool', name: 'answer', args: {} }, '']],
    );
    assert.equal(single.termination, 'finished');
    const looping = sampleTurns(sample('rollout/2.jsonl', 3, 2));
    assert.equal(looping.turns.length, 3);
    assert.equal(looping.termination, 'turn_cap');
  });

  it('malformed tool calls are format errors, never exceptions', () => {
    assert.equal(parseHermesAction('<tool_call>\n{"name": "x", "arguments": {oops}}\n</tool_call>').kind, 'format_error');
    assert.equal(parseHermesAction('<tool_call>{"name": "x"').kind, 'format_error');
    assert.equal(parseHermesAction('<tool_call>[1]</tool_call>').kind, 'format_error');
    assert.deepEqual(parseHermesAction('<tool_call>{"name": "f", "arguments": "{\\"code\\": \\"1\\"}"}</tool_call>'), {
      kind: 'tool',
      name: 'f',
      args: { code: '1' },
    });
    for (const junk of ['', '<|im_start|>', '<tool_response>', '</tool_response><tool_response>', 'assistant\n', '\u0000'.repeat(10)])
      assert.ok(Array.isArray(splitTurns(junk)));
  });

  it('a dump line is checked field by field; the step must match the file', () => {
    assert.match((parseDumpLine('{"input": "a", "output": "b", "score": "1"}', 1) as { reason: string }).reason, /"score" must be a finite number/);
    assert.match(
      (parseDumpLine('{"input": "a", "output": "b", "score": 1, "step": 2}', 1) as { reason: string }).reason,
      /"step" is 2 but the file is 1\.jsonl/,
    );
    assert.match((parseDumpLine(lines('rollout/1.jsonl')[4]!, 1) as { reason: string }).reason, /not JSON/);
    const ok = parseDumpLine('{"input": "a", "output": "b", "gts": "3", "score": 0.5, "step": 1, "acc": true, "pred": "3"}', 1);
    assert.deepEqual(ok.ok && ok.sample.extras, { acc: true, pred: '3' });
  });
});
