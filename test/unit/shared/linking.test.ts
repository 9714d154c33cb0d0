import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { codeOf, observationLinks, type TurnView } from '../../../src/shared/linking';

const code = 'def fib(n):\n    return fibb(n - 1)\nprint(fib(3))\n';
const traceback =
  'Traceback (most recent call last):\n  File "main.py", line 3, in <module>\n  File "main.py", line 2, in fib\nNameError: name \'fibb\' is not defined';
const codeTurn: TurnView = {
  actionText: '```python\n...```',
  action: { kind: 'tool', name: 'execute_code', args: { code } },
  observationText: `[stderr]\n${traceback}\n[exit 1]`,
  observation: { exitCode: 1 },
};

describe('observation → code links', () => {
  it('a traceback links every main.py frame to its line; the last frame is where it failed', () => {
    const links = observationLinks([codeTurn], 0);
    const lines = links.filter((l) => l.kind === 'line');
    assert.deepEqual(
      lines.map((l) => l.kind === 'line' && [l.line, l.innermost]),
      [
        [3, false],
        [2, true],
      ],
    );
    const first = lines[0]!;
    assert.equal(first.kind === 'line' && codeTurn.observationText.slice(first.start, first.end), 'File "main.py", line 3');
    assert.ok(links.some((l) => l.kind === 'cause' && /exited with code 1/.test(l.reason)));
  });

  it('ignores frames outside the code (e.g. another file or a line past the end)', () => {
    const t: TurnView = { ...codeTurn, observationText: 'File "main.py", line 99\nFile "/usr/lib/x.py", line 2' };
    assert.deepEqual(
      observationLinks([t], 0).filter((l) => l.kind === 'line'),
      [],
    );
  });

  it('a calculator result points to its call; a tool error names the turn that caused it', () => {
    const ok: TurnView = {
      actionText: '<call>add(3,4)</call>',
      action: { kind: 'tool', name: 'call', args: {} },
      observationText: '<obs>7</obs>',
      observation: { result: 7 },
    };
    const bad: TurnView = {
      actionText: '<call>div(1,0)</call>',
      action: { kind: 'tool', name: 'call', args: {} },
      observationText: '<obs>error: division by zero</obs>',
      observation: { error: 'math' },
    };
    assert.deepEqual(observationLinks([ok, bad], 0), [{ kind: 'call', turn: 0 }]);
    assert.deepEqual(observationLinks([ok, bad], 1), [{ kind: 'cause', turn: 1, reason: 'this turn’s tool call failed (math)' }]);
  });

  it("a workspace tool's result (<obs> or Hermes <tool_response>) points to its call; an answer answers none", () => {
    const call: TurnView = {
      actionText: '<call>convert(1, "km", "m")</call>',
      action: { kind: 'tool', name: 'convert', args: { text: '1, "km", "m"' } },
      observationText: '<obs>1000</obs>',
      observation: { tool: 'convert', result: '1000' },
    };
    const hermes: TurnView = {
      actionText: '<tool_call>{"name": "f"}</tool_call>',
      action: { kind: 'tool', name: 'f', args: { arguments: {} } },
      observationText: '<tool_response>4</tool_response>',
      observation: { tool: 'f' },
    };
    const failed: TurnView = { ...hermes, observationText: '<tool_response>error: boom</tool_response>', observation: { tool: 'f', error: 'raised' } };
    const answer: TurnView = {
      actionText: '<answer>1000</answer>',
      action: { kind: 'tool', name: 'answer', args: { text: '1000' } },
      observationText: '<obs>answered</obs>',
      observation: {},
    };
    assert.deepEqual(observationLinks([call, hermes, failed, answer], 0), [{ kind: 'call', turn: 0 }]);
    assert.deepEqual(observationLinks([call, hermes, failed, answer], 1), [{ kind: 'call', turn: 1 }]);
    assert.deepEqual(observationLinks([call, hermes, failed, answer], 2), [{ kind: 'cause', turn: 2, reason: 'this turn’s tool call failed (raised)' }]);
    assert.deepEqual(observationLinks([call, hermes, failed, answer], 3), []);
  });

  it('format errors and timeouts are attributed to their turn; code is only read from execute_code', () => {
    const fmt: TurnView = {
      actionText: 'hmm',
      action: { kind: 'format_error', message: 'x' },
      observationText: 'format error: x',
      observation: { formatError: true },
    };
    assert.match((observationLinks([fmt], 0)[0] as { reason: string }).reason, /format error/);
    const slow: TurnView = { ...codeTurn, observationText: '[timeout] killed', observation: { timedOut: true, exitCode: null } };
    assert.match((observationLinks([slow], 0).find((l) => l.kind === 'cause') as { reason: string }).reason, /timed out/);
    assert.equal(codeOf(fmt), undefined);
    assert.equal(codeOf(codeTurn), code);
  });
});
