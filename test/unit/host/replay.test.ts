import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { codeTurns, inlineObservation } from '../../../src/host/replay/replayModel';
import type { TurnView } from '../../../src/shared/linking';

const exec = (code: string, observationText: string, exitCode: number): TurnView => ({
  actionText: '',
  action: { kind: 'tool', name: 'execute_code', args: { code } },
  observationText,
  observation: { exitCode },
});

describe('inline replay placement', () => {
  const failing = exec(
    'x = 1\nprint(y)\nprint(3)\n',
    '[stderr]\nTraceback (most recent call last):\n  File "main.py", line 2, in <module>\nNameError: name \'y\' is not defined\n[exit 1]',
    1,
  );
  const ok = exec('print(6 * 7)\n', '[stdout]\n42\n[exit 0]', 0);
  const finish: TurnView = {
    actionText: 'FINAL ANSWER: 42',
    action: { kind: 'tool', name: 'finish', args: {} },
    observationText: 'submitted',
    observation: {},
  };

  it('puts an error at the line of the innermost traceback frame, with the error as the message', () => {
    assert.deepEqual(inlineObservation([failing], 0), { line: 2, message: "NameError: name 'y' is not defined", full: failing.observationText });
  });

  it('puts plain output after the last line; turns without code have nothing to replay', () => {
    assert.deepEqual(inlineObservation([ok], 0), { line: 1, message: '42', full: ok.observationText });
    assert.equal(inlineObservation([finish], 0), undefined);
    assert.deepEqual(codeTurns([failing, ok, finish]), [0, 1]);
  });
});
