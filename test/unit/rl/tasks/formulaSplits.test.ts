// The formula splits verify:seed000 uses: the test and validation families share no function with
// training (nor with each other), each task's reference computes its public example, and the test split
// is the one written down in the README before its first run (158 tasks of four families; that text is
// now in docs/reproductions.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openCodeEnvironment } from '../../../../src/rl/envs/codeSandbox/codeEnv';
import { ConfigError, validateEnvOptions } from '../../../../src/shared/runConfig';
import { formulaShapeTasks, formulaTasks, formulaTestTasks, formulaValidationTasks, type CodeTask } from '../../../../src/rl/tasks/codeTasks';

/** The task's formula (+ - * and parentheses over integers and x) as a function of x, read by a small parser of its own. */
function fnOf(t: CodeTask): (x: number) => number {
  const expr = /^return (.*) for an integer x$/.exec(t.description)?.[1];
  assert.ok(expr, t.description);
  const tokens = expr.match(/\d+|[-+*()x]/g)!;
  assert.equal(tokens.join(''), expr, `${t.id}: only integers, x, + - * and parentheses`);
  return (x) => {
    let i = 0;
    const atom = (): number => {
      const tok = tokens[i++]!;
      if (tok === '(') {
        const v = sum();
        assert.equal(tokens[i++], ')');
        return v;
      }
      return tok === 'x' ? x : Number(tok);
    };
    const product = (): number => {
      let v = atom();
      while (tokens[i] === '*') {
        i++;
        v *= atom();
      }
      return v;
    };
    const sum = (): number => {
      let v = product();
      while (tokens[i] === '+' || tokens[i] === '-') v = tokens[i++] === '+' ? v + product() : v - product();
      return v;
    };
    const v = sum();
    assert.equal(i, tokens.length, expr);
    return v;
  };
}

/** A function's values on inputs wider than the splits' own probes. */
const valuesOf = (t: CodeTask): string => {
  const f = fnOf(t);
  return [-11, -7, -3, -1, 0, 1, 2, 3, 4, 5, 10, 13, 100].map((x) => f(x)).join(',');
};

describe('formula splits', () => {
  const test = formulaTestTasks();
  const validation = formulaValidationTasks();
  const shapes = formulaShapeTasks();
  const training = [...shapes.filter((t) => t.split === 'train'), ...formulaTasks()];

  it('the test split is the pre-registered one: 158 tasks of a*x*x+b, b-a*x, x*(x+a)-b and (x-a)*(x+b)', () => {
    assert.equal(test.length, 158);
    const family = (t: CodeTask): string => {
      const e = /^return (.*) for/.exec(t.description)![1]!;
      if (/^\d\*x\*x\+\d$/.test(e)) return 'a*x*x+b';
      if (/^\d-\d\*x$/.test(e)) return 'b-a*x';
      if (/^x\*\(x\+\d\)-\d$/.test(e)) return 'x*(x+a)-b';
      if (/^\(x-\d\)\*\(x\+\d\)$/.test(e)) return '(x-a)*(x+b)';
      return `other: ${e}`;
    };
    const counts = new Map<string, number>();
    for (const t of test) counts.set(family(t), (counts.get(family(t)) ?? 0) + 1);
    assert.deepEqual([...counts.keys()].sort(), ['(x-a)*(x+b)', 'a*x*x+b', 'b-a*x', 'x*(x+a)-b']);
    assert.equal(validation.length, 117);
  });

  it('no test or validation task computes a function that any training task computes, and the two share none', () => {
    const trained = new Set(training.map(valuesOf));
    for (const t of test) assert.ok(!trained.has(valuesOf(t)), `${t.id} is a training function`);
    for (const t of validation) assert.ok(!trained.has(valuesOf(t)), `${t.id} is a training function`);
    const tested = new Set(test.map(valuesOf));
    for (const t of validation) assert.ok(!tested.has(valuesOf(t)), `${t.id} is a test function`);
    assert.equal(tested.size, test.length, 'each test function once');
  });

  it("every task's public example is what its reference computes, and ids are unique", () => {
    const all = [...test, ...validation, ...shapes];
    for (const t of all) assert.equal(String(fnOf(t)(Number(t.publicArgs))), t.publicOutput, t.id);
    assert.equal(new Set(all.map((t) => t.id)).size, all.length);
    assert.ok(shapes.filter((t) => t.split === 'train').length > 1000, 'many training shapes');
  });

  it('envOptions.evaluationSet picks what a code run evaluates on; a formula split of the hand-written tasks is refused, naming the field and the fix', () => {
    const heldOut = (given: Record<string, unknown>): string[] => {
      const env = openCodeEnvironment(validateEnvOptions('code', given));
      try {
        return env.tasks().heldOut.map((t) => t.id);
      } finally {
        void env.dispose();
      }
    };
    assert.deepEqual(
      heldOut({ taskSet: 'formula-shapes', evaluationSet: 'test' }),
      test.map((t) => t.id),
    );
    assert.deepEqual(
      heldOut({ taskSet: 'formula-shapes', evaluationSet: 'new-families' }),
      validation.map((t) => t.id),
    );
    assert.deepEqual(
      heldOut({ taskSet: 'formula-shapes' }),
      shapes.filter((t) => t.split === 'heldOut').map((t) => t.id),
    );
    assert.throws(
      () => heldOut({ evaluationSet: 'test' }),
      (e: unknown) => e instanceof ConfigError && /envOptions\.evaluationSet/.test(e.message) && /taskSet to "formula-shapes"/.test(e.message),
    );
  });
});
