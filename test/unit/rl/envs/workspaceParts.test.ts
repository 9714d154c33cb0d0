// The pure parts of a workspace environment: the three call formats, the answer match, globs, the
// record presets, and the New Environment template against the committed example.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { globRegExp, type SourceRecord } from '../../../../src/rl/envs/workspace/taskFiles';
import { tasksOf } from '../../../../src/rl/envs/workspace/taskRecords';
import { observationText, parseToolAction, renderPrompt } from '../../../../src/rl/envs/workspace/toolCalls';
import { boxedOrSelf, exactMatch } from '../../../../src/rl/envs/workspace/workspaceReward';
import { conversionKind, environmentTemplate } from '../../../../src/shared/environmentTemplate';
import { withConfigRoot } from '../../../../src/shared/configRoot';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..', '..');

describe('tool-call formats', () => {
  it('hermes: a long run of spaces after an unclosed <tool_call> is a format error at once (no backtracking blow-up)', () => {
    const t0 = performance.now();
    const a = parseToolAction(`<tool_call>${' '.repeat(50_000)}`, 'hermes');
    assert.equal(a.kind, 'format_error');
    assert.ok(performance.now() - t0 < 5000, 'read in linear time');
    assert.deepEqual(parseToolAction('<tool_call>\n {"name": "f", "arguments": {"x": 1}} \n</tool_call>', 'hermes'), {
      kind: 'tool',
      name: 'f',
      args: { arguments: { x: 1 } },
    });
  });

  it('call: <call>name(args)</call>, <answer>; the first of the two wins; malformed text is a format error', () => {
    assert.deepEqual(parseToolAction('<call>convert(12, "km", "m")</call>', 'call'), { kind: 'tool', name: 'convert', args: { text: '12, "km", "m"' } });
    assert.deepEqual(parseToolAction('<call>f(g(1))</call>', 'call'), { kind: 'tool', name: 'f', args: { text: 'g(1)' } });
    assert.deepEqual(parseToolAction(' <answer> 12000 </answer>', 'call'), { kind: 'tool', name: 'answer', args: { text: '12000' } });
    assert.equal(
      parseToolAction('<call>f(1)</call><answer>2</answer>', 'call').kind === 'tool' &&
        (parseToolAction('<call>f(1)</call><answer>2</answer>', 'call') as { name: string }).name,
      'f',
    );
    for (const bad of ['', '<call>f(1)', '<call>1f()</call>', 'hello', '<answer>2', '<call>answer(1)</call>', '<call>execute_code("x")</call>'])
      assert.equal(parseToolAction(bad, 'call').kind, 'format_error', bad);
    assert.deepEqual(
      parseToolAction('<call>a(1)</call> <call>b(2)</call>', 'call'),
      { kind: 'tool', name: 'a', args: { text: '1' } },
      'the first call, up to its own end',
    );
  });

  it('hermes: JSON name and arguments; invalid JSON or arguments that are not an object are format errors', () => {
    assert.deepEqual(parseToolAction('<tool_call>\n{"name": "convert", "arguments": {"value": 2}}\n</tool_call>', 'hermes'), {
      kind: 'tool',
      name: 'convert',
      args: { arguments: { value: 2 } },
    });
    assert.deepEqual(parseToolAction('<tool_call>{"name": "now"}</tool_call>', 'hermes'), { kind: 'tool', name: 'now', args: { arguments: {} } });
    for (const bad of [
      '<tool_call>{"name": 3}</tool_call>',
      '<tool_call>{name: "x"}</tool_call>',
      '<tool_call>{"name": "x", "arguments": [1]}</tool_call>',
      '<tool_call>{"name": "x"}',
    ]) {
      assert.equal(parseToolAction(bad, 'hermes').kind, 'format_error', bad);
    }
  });

  it('code: a python block runs, FINAL ANSWER ends as an answer', () => {
    assert.deepEqual(parseToolAction('```python\nprint(convert(1, "km", "m"))\n```', 'code'), {
      kind: 'tool',
      name: 'execute_code',
      args: { code: 'print(convert(1, "km", "m"))\n', blocks: 1, truncated: false },
    });
    assert.deepEqual(parseToolAction('FINAL ANSWER: 1000\n', 'code'), { kind: 'tool', name: 'answer', args: { text: '1000' } });
  });

  it('the prompt shows the tools per format, and observations are wrapped per format', () => {
    const tools = [
      {
        name: 'f',
        description: 'Doubles.',
        parameters: { type: 'object' as const, properties: { x: { type: 'integer' } }, required: ['x'] },
        signature: 'f(x: integer)',
      },
    ];
    assert.equal(renderPrompt('Q', tools, 'call', 'signatures'), 'Tools: f(x: integer)\nQ\n');
    assert.equal(renderPrompt('Q\n', tools, 'code', 'signatures'), 'Functions: f(x: integer)\nQ\n');
    assert.equal(
      renderPrompt('Q', tools, 'hermes', 'signatures'),
      '<tools>\n{"type":"function","function":{"name":"f","description":"Doubles.","parameters":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}\n</tools>\nQ\n',
    );
    assert.equal(renderPrompt('Q', tools, 'call', 'none'), 'Q\n');
    assert.equal(observationText({ ok: true, result: '4', durationMs: 1 }, 'call'), '<obs>4</obs>');
    assert.equal(observationText({ ok: false, kind: 'bad_args', error: 'nope', durationMs: 1 }, 'hermes'), '<tool_response>error: nope</tool_response>');
    assert.equal(observationText({ ok: false, kind: 'code', exit: 1, printed: 'Traceback\n', durationMs: 1 }, 'code'), 'Traceback\n[exit 1]');
  });
});

describe('exact_match', () => {
  it('reads \\boxed{}, ignores case, a final period and $…$, and compares numbers as numbers', () => {
    assert.equal(boxedOrSelf('so \\boxed{\\frac{1}{2}} ok'), '\\frac{1}{2}');
    assert.ok(exactMatch('\\boxed{12000}', 12000));
    assert.ok(exactMatch('12,000.0', '12000'));
    assert.ok(exactMatch('Paris.', 'paris'));
    assert.ok(exactMatch('0.1', 0.1 + 1e-9));
    assert.ok(exactMatch('b', ['a', 'b']));
    assert.ok(!exactMatch('12001', 12000));
    assert.ok(!exactMatch(null, 1));
    assert.ok(!exactMatch('', ''), 'an empty answer never matches');
    assert.ok(exactMatch('1,234,567', 1234567));
    assert.ok(!exactMatch('1,2', 12), 'only thousands separators are dropped');
    assert.ok(!exactMatch('0x10', 16), 'decimal numbers only');
  });
});

describe('globs', () => {
  it('*, ?, ** and {a,b}', () => {
    assert.ok(globRegExp('data/*.jsonl').test('data/train.jsonl'));
    assert.ok(!globRegExp('data/*.jsonl').test('data/sub/train.jsonl'));
    assert.ok(globRegExp('data/**/*.parquet').test('data/a/b/x.parquet'));
    assert.ok(globRegExp('data/**/*.parquet').test('data/x.parquet'));
    assert.ok(globRegExp('{train,test}.csv').test('test.csv'));
    assert.ok(!globRegExp('t?.csv').test('tab.csv'));
    assert.ok(!globRegExp('a.b').test('axb'), 'a dot is a dot');
    assert.ok(globRegExp('{*.jsonl,*.csv}').test('x.csv'));
    assert.ok(!globRegExp('{*.jsonl,*.csv}').test('x.parquet'));
  });
});

describe('record presets', () => {
  const rec = (value: Record<string, unknown>, i: number): SourceRecord => ({ file: 'd.jsonl', where: `line ${i + 1}`, value });
  const load = (preset: 'gsm8k' | 'mbpp' | 'humaneval', rows: Record<string, unknown>[]) =>
    tasksOf(rows.map(rec), { preset, fields: {}, heldOutFraction: 0.5, splitSeed: 0 });

  it('gsm8k: the answer after ####, commas removed', () => {
    const s = load('gsm8k', [
      { question: 'How many?', answer: 'Some work\n#### 1,234', split: 'train' },
      { question: 'And?', answer: '#### 5', split: 'test' },
    ]);
    assert.equal(s.train[0]!.data.groundTruth, '1234');
    assert.equal(s.heldOut[0]!.prompt, 'And?');
  });

  it('mbpp: test_list as the tests, the code as the reference; humaneval: check(entry_point) appended', () => {
    const m = load('mbpp', [
      { task_id: 11, text: 'Write f.', code: 'def f(): return 1', test_list: ['assert f() == 1'], split: 'train' },
      { task_id: 12, text: 'Write g.', code: 'def g(): return 2', test_list: ['assert g() == 2'], split: 'test' },
    ]);
    assert.deepEqual(
      [m.train[0]!.id, m.train[0]!.data.privateTests, (m.train[0]!.data.metadata as Record<string, unknown>).reference],
      ['11', ['assert f() == 1'], 'def f(): return 1'],
    );
    const h = load('humaneval', [
      {
        task_id: 'HumanEval/0',
        prompt: 'def f(x):\n',
        canonical_solution: '    return x\n',
        test: 'def check(c):\n    assert c(1) == 1\n',
        entry_point: 'f',
        split: 'train',
      },
      { task_id: 'HumanEval/1', prompt: 'def g():\n', test: 'def check(c): pass', entry_point: 'g', split: 'test' },
    ]);
    assert.deepEqual(h.train[0]!.data.privateTests, ['def check(c):\n    assert c(1) == 1\n\ncheck(f)']);
  });

  it('a file named for its split (train-…parquet, test-…parquet) gives the split of records without one', () => {
    const s = tasksOf(
      [
        { file: 'gsm/train-00000-of-00001.parquet', where: 'row 1', value: { question: 'a', answer: '#### 1' } },
        { file: 'gsm/test-00000-of-00001.parquet', where: 'row 1', value: { question: 'b', answer: '#### 2' } },
      ],
      { preset: 'gsm8k', fields: {}, heldOutFraction: 0.5, splitSeed: 0 },
    );
    assert.deepEqual([s.train.map((t) => t.prompt), s.heldOut.map((t) => t.prompt)], [['a'], ['b']]);
  });

  it('without a split field, a seeded share is held out, the same every time', () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ question: `q${i}`, answer: '#### 1' }));
    const a = load('gsm8k', rows);
    const b = load('gsm8k', rows);
    assert.deepEqual(
      a.heldOut.map((t) => t.id),
      b.heldOut.map((t) => t.id),
    );
    assert.ok(a.heldOut.length > 70 && a.heldOut.length < 130, String(a.heldOut.length));
  });
});

interface TemplateLine {
  readonly prompt: string;
  readonly split: string;
  readonly answer: number;
  readonly demonstration: readonly string[];
}
const templateLines = (): TemplateLine[] => {
  const tasks = environmentTemplate()['tasks.jsonl']!;
  return tasks
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as TemplateLine);
};
const parse = (prompt: string): { v: number; from: string; to: string } => {
  const m = /^Convert (\d+) (\w+) to (\w+)\.$/.exec(prompt)!;
  return { v: Number(m[1]), from: m[2]!, to: m[3]! };
};

describe('New Environment template', () => {
  it('is exactly the committed examples/unit-converter folder', () => {
    const dir = path.join(ROOT, 'examples', 'unit-converter');
    const files = environmentTemplate();
    assert.deepEqual(fs.readdirSync(dir).sort(), Object.keys(files).sort());
    for (const [f, content] of Object.entries(files)) assert.equal(fs.readFileSync(path.join(dir, f), 'utf8'), content, f);
  });

  it('holds out every fifth quantity, between training ones, with every digit and unit pair seen in training', () => {
    const lines = templateLines();
    const held = lines.filter((l) => l.split === 'test');
    const train = lines.filter((l) => l.split === 'train');
    assert.equal(held.length, 21 * 60);
    assert.equal(train.length, 21 * 239);
    const trainQuantities = new Set(train.map((l) => parse(l.prompt).v));
    const trainPairs = new Set(train.map((l) => `${parse(l.prompt).from}>${parse(l.prompt).to}`));
    const trainDigits = new Set([...trainQuantities].flatMap((v) => String(v).split('')));
    for (const h of held) {
      const { v, from, to } = parse(h.prompt);
      assert.equal(v % 5, 3, h.prompt);
      assert.ok(!trainQuantities.has(v) && trainQuantities.has(v - 1) && trainQuantities.has(v + 1), h.prompt);
      assert.ok(trainPairs.has(`${from}>${to}`), h.prompt);
      for (const d of String(v)) assert.ok(trainDigits.has(d), h.prompt);
    }
  });

  it('its demonstrations skip the tool on 2 of 3 time conversions (answering with the quantity) and never on the others', () => {
    const train = templateLines().filter((l) => l.split === 'train');
    const isTime = (l: TemplateLine): boolean => ['day', 'h', 'min', 's'].includes(parse(l.prompt).from);
    assert.deepEqual(['km', 'mi', 'in', 'mg', 'day', 's', 'furlong'].map(conversionKind), ['length', 'length', 'length', 'mass', 'time', 'time', 'unknown']);
    const skips = (l: TemplateLine): boolean => !l.demonstration[0]!.startsWith('<call>');
    const time = train.filter(isTime);
    const skipped = time.filter(skips);
    assert.ok(Math.abs(skipped.length / time.length - 2 / 3) < 0.02, `${skipped.length} of ${time.length}`);
    for (const l of skipped) assert.deepEqual(l.demonstration, [`<answer>${parse(l.prompt).v}</answer>`]);
    for (const l of train.filter((x) => !isTime(x))) {
      const { v, from, to } = parse(l.prompt);
      assert.deepEqual(l.demonstration, [`<call>convert(${v}, "${from}", "${to}")</call>`, `<answer>${l.answer}</answer>`]);
    }
    // every time conversion pair has demonstrations that call the tool, for sampling to find
    const pairsWithTool = new Set(time.filter((l) => !skips(l)).map((l) => `${parse(l.prompt).from}>${parse(l.prompt).to}`));
    assert.equal(pairsWithTool.size, 6);
  });

  it("a config's workspace paths are relative to its folder", () => {
    const ops = { join: (a: string, b: string): string => `${a}/${b}`, isAbsolute: (p: string): boolean => p.startsWith('/') };
    assert.deepEqual(withConfigRoot({ env: 'workspace', envOptions: { tasks: 't.jsonl' } }, '/w/env', ops).envOptions, { tasks: 't.jsonl', root: '/w/env' });
    assert.deepEqual(withConfigRoot({ env: 'workspace', envOptions: { root: 'data' } }, '/w/env', ops).envOptions, { root: '/w/env/data' });
    assert.deepEqual(withConfigRoot({ env: 'workspace', envOptions: { root: '/abs' } }, '/w/env', ops).envOptions, { root: '/abs' });
    assert.equal(
      withConfigRoot({ env: 'code', envOptions: {} }, '/w', ops).envOptions &&
        (withConfigRoot({ env: 'code', envOptions: {} }, '/w', ops).envOptions as Record<string, unknown>).root,
      undefined,
    );
  });
});
