// The code environment's private verifier (python/verifier.py): its inputs travel as one JSON string on
// the program's first line, so code, function names and inputs that look like Python, like the old
// placeholders or like the data line itself reach it as written.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { verifierProgram } from '../../../../src/rl/envs/codeSandbox/codeEnv';
import { resolvePython } from '../../../../src/rl/sandbox/isolation';

const NONCE = '@@verify-0123456789abcdef@@';

function verdict(code: string, fn: string, calls: string[]): unknown {
  const r = spawnSync(resolvePython(), ['-I', '-S', '-c', verifierProgram(code, fn, calls, NONCE)], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const line = r.stdout
    .split('\n')
    .reverse()
    .find((l) => l.startsWith(NONCE));
  assert.ok(line, r.stdout);
  return JSON.parse(line.slice(NONCE.length));
}

describe('the code verifier', () => {
  it('runs the candidate as written and calls its function on each input', () => {
    const code = [
      String.raw`S = '''"@@CODE@@" ["@@CALLS@@"] \n _VERIFY = "x" ''' + "é😀" + '\u2028'`,
      '# a raw U+2028 \u2028 and a backslash \\ in a comment',
      'print("candidate output")',
      'def f(x, y=0):',
      '    return [len(S), x * 2, y]',
      '',
    ].join('\n');
    assert.deepEqual(verdict(code, 'f', ['3', '"a", 5', '[1]', 'undefined_name', '1 / 0 if True else 0']), {
      results: [
        ['ok', '[44, 6, 0]'],
        ['ok', "[44, 'aa', 5]"],
        ['ok', '[44, [1, 1], 0]'],
        ['error', 'NameError'],
        ['error', 'ZeroDivisionError'],
      ],
    });
  });

  it('a function name or code that is not what it should be is a verdict, never code', () => {
    assert.deepEqual(verdict('def f(x):\n    return x\n', "f'); import os #", ['1']), { error: "no function f'); import os #" });
    assert.deepEqual(verdict('def f(x:\n', 'f', ['1']), { error: 'the code failed to run: SyntaxError' });
    assert.deepEqual(verdict('import sys\nsys.exit(3)\n', 'f', ['1']), { error: 'the code failed to run: SystemExit' });
  });
});
