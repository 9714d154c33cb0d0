// The own-agent example's task files are what makeTasks.mjs writes, and verify:own-agent's test split
// (verify-tasks.jsonl) shares no expression with the example's file, whose training tasks it keeps; each
// later design's (verify-tasks-N.jsonl) none with an earlier file.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../../helpers/cli';

const dir = path.join(ROOT, 'examples', 'own-agent');
const write = (...args: string[]): string => {
  const r = spawnSync(process.execPath, [path.join(dir, 'makeTasks.mjs'), ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
};
interface Task {
  readonly id: string;
  readonly prompt: string;
  readonly split: string;
}
const parse = (text: string): Task[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Task);

describe('examples/own-agent task files', () => {
  it('are makeTasks.mjs’s output; the verify file keeps the training tasks and tests on expressions the example file never holds', () => {
    const example = write();
    const verify = write('--verify');
    assert.equal(
      fs.readFileSync(path.join(dir, 'tasks.jsonl'), 'utf8'),
      example,
      'tasks.jsonl: node examples/own-agent/makeTasks.mjs > examples/own-agent/tasks.jsonl',
    );
    assert.equal(
      fs.readFileSync(path.join(dir, 'verify-tasks.jsonl'), 'utf8'),
      verify,
      'verify-tasks.jsonl: node examples/own-agent/makeTasks.mjs --verify > examples/own-agent/verify-tasks.jsonl',
    );
    const [all, v] = [parse(example), parse(verify)];
    const train = v.filter((t) => t.split === 'train');
    const test = v.filter((t) => t.split === 'test');
    assert.deepEqual(
      train,
      all.filter((t) => t.split === 'train'),
    );
    assert.equal(test.length, 264);
    const known = new Set(all.map((t) => t.prompt));
    assert.deepEqual(
      test.filter((t) => known.has(t.prompt)),
      [],
      'no test expression is in tasks.jsonl',
    );
    assert.equal(new Set(v.map((t) => t.id)).size, v.length, 'ids are unique');
    // each later design's split: the next 264 expressions, in no earlier file
    const before = new Set([...all, ...v].map((t) => t.prompt));
    for (const design of ['3', '4']) {
      const text = write('--verify', design);
      const file = `verify-tasks-${design}.jsonl`;
      assert.equal(
        fs.readFileSync(path.join(dir, file), 'utf8'),
        text,
        `${file}: node examples/own-agent/makeTasks.mjs --verify ${design} > examples/own-agent/${file}`,
      );
      const tasks = parse(text);
      assert.deepEqual(
        tasks.filter((t) => t.split === 'train'),
        train,
      );
      const split = tasks.filter((t) => t.split === 'test');
      assert.equal(split.length, 264);
      assert.deepEqual(
        split.filter((t) => before.has(t.prompt)),
        [],
        `no test expression of ${file} is in an earlier file`,
      );
      for (const t of split) before.add(t.prompt);
    }
  });
});
