// Small programming tasks for the code environment. Each asks for one function, gives a public
// example the agent can print (`publicCall` → `publicOutput`), and keeps hidden inputs for the private
// verifier, which calls the agent's function on them and compares with the reference solution's
// results (computed in a separate sandbox run). Printing a memorised answer passes the public check
// and fails the private one. Every fourth task is held out (never trained on). The hand-written tasks'
// data is in codeTaskRows.ts and moreCodeTaskRows.ts; this file builds tasks and splits from it, and
// generates the formula families.
import { CODE_TASK_ROWS } from './codeTaskRows';
import { MORE_CODE_TASK_ROWS } from './moreCodeTaskRows';

export interface CodeTask {
  readonly id: string;
  /** What to write, in one sentence. */
  readonly description: string;
  readonly fn: string;
  /** Python source of a correct solution (defines `fn`). */
  readonly reference: string;
  /** Argument list of the public example, as Python source: printed with print(fn(<args>)). */
  readonly publicArgs: string;
  /** What print(fn(publicArgs)) prints for a correct solution. */
  readonly publicOutput: string;
  /** Argument lists (Python source) for the private verifier. */
  readonly hidden: readonly string[];
  /** compact: a one-line prompt for the generated family (small models pay for every prompt token). */
  readonly promptStyle?: 'full' | 'compact';
}

/** The hand-written tasks (codeTaskRows.ts, then moreCodeTaskRows.ts), every fourth held out. */
export const CODE_TASKS: readonly (CodeTask & { readonly split: 'train' | 'heldOut' })[] = [...CODE_TASK_ROWS, ...MORE_CODE_TASK_ROWS].map(
  ([id, fn, description, reference, publicArgs, publicOutput, hidden], i) => ({
    id: `code:${id}`,
    fn,
    description,
    reference,
    publicArgs,
    publicOutput,
    hidden,
    split: i % 4 === 3 ? 'heldOut' : 'train',
  }),
);

export function codeTaskPrompt(t: CodeTask): string {
  if (t.promptStyle === 'compact') {
    return `Write ${t.fn}(x): ${t.description}. Print ${t.fn}(${t.publicArgs}) in a \`\`\`python block, then reply FINAL ANSWER: and the printed value.\n`;
  }
  return (
    `Write a Python function ${t.fn} that should ${t.description}. ` +
    `Then print ${t.fn}(${t.publicArgs}); it should print ${t.publicOutput}. ` +
    'Run code by writing a ```python block; read the output; fix errors; when it is right, reply FINAL ANSWER: followed by the printed value.'
  );
}

/** Inputs on which two formulas must agree to count as the same function (a held-out split by function). */
const PROBES = [-7, -3, -1, 0, 1, 2, 3, 5, 10, 100];

type Form = readonly [form: string, value: (x: number, a: number, b: number) => number];

/** The formula tasks' five forms (training and validation). */
const FORMULA_FORMS: readonly Form[] = [
  ['a*x+b', (x, a, b) => a * x + b],
  ['a*x-b', (x, a, b) => a * x - b],
  ['x*x+a*b', (x, a, b) => x * x + a * b],
  ['a*(x+b)', (x, a, b) => a * (x + b)],
  ['x*a-b*x', (x, a, b) => x * a - b * x],
];

/** One formula task: f(x) = the form with a and b filled in, its public example at x = 2 + (a + b) mod 3. */
function formulaTask(form: string, value: Form[1], a: number, b: number): CodeTask {
  const expr = form.replace('a', String(a)).replace('b', String(b));
  const x = 2 + ((a + b) % 3);
  return {
    id: `code:f=${expr}`,
    fn: 'f',
    description: `return ${expr} for an integer x`,
    reference: `def f(x):\n    return ${expr}\n`,
    publicArgs: String(x),
    publicOutput: String(value(x, a, b)),
    hidden: ['0', '1', '-3', '7', '10'],
    promptStyle: 'compact',
  };
}

/**
 * A generated family of one-line tasks, `f(x) = <formula>` with small integer constants, for models
 * trained here from scratch: what a held-out task asks is new (unseen constants and combinations),
 * the skill is not (read the formula, write it as Python, print the example, report it). About one
 * task in four is held out, chosen by a fixed hash of the function's values on probe inputs, so a
 * held-out task never computes the same function as a training one (x*x+2*3 and x*x+3*2 and
 * x*x+1*6 are one function, in one split). That split was looked at while designing the learning
 * checks: it is a validation split; `formulaTestTasks` is the test split.
 */
export function formulaTasks(): readonly (CodeTask & { readonly split: 'train' | 'heldOut' })[] {
  const out: (CodeTask & { split: 'train' | 'heldOut' })[] = [];
  for (const [form, value] of FORMULA_FORMS) {
    for (let a = 1; a <= 9; a++) {
      for (let b = 1; b <= 9; b++) {
        let h = 0;
        for (const c of PROBES.map((p) => value(p, a, b)).join(',')) h = (h * 31 + c.charCodeAt(0)) >>> 0;
        out.push({ ...formulaTask(form, value, a, b), split: h % 4 === 3 ? 'heldOut' : 'train' });
      }
    }
  }
  return out;
}

/** Each task of these forms with a + b even whose function (its values on the probe inputs) is not in `taken`, each function once. */
function familyTasks(forms: readonly Form[], taken: ReadonlySet<string>): CodeTask[] {
  const out: CodeTask[] = [];
  const seen = new Set(taken);
  for (const [form, value] of forms)
    for (let a = 1; a <= 9; a++)
      for (let b = 1; b <= 9; b++) {
        const fn = probeValues(value, a, b);
        if ((a + b) % 2 !== 0 || seen.has(fn)) continue;
        seen.add(fn);
        out.push(formulaTask(form, value, a, b));
      }
  return out;
}

const probeValues = (value: Form[1], a: number, b: number): string => PROBES.map((p) => value(p, a, b)).join(',');

/** The functions of these forms, by their values on the probe inputs (constants 1–9). */
function functionsOf(forms: readonly Form[]): Set<string> {
  const out = new Set<string>();
  for (const [, value] of forms) for (let a = 1; a <= 9; a++) for (let b = 1; b <= 9; b++) out.add(probeValues(value, a, b));
  return out;
}

/**
 * The test split of the formula tasks (verify:seed000's; written down before its first run and never
 * used while designing): four function families that no training task has — a*x*x+b, b-a*x,
 * x*(x+a)-b, (x-a)*(x+b) — with the same constants 1–9, the (a, b) pairs of each family with a + b
 * even, less any task whose values on the probe inputs equal those of a formula task (1*x*x+b is
 * x*x+1*b): what differs from training is the shape of the formula, never a function it trains on.
 */
const TEST_FORMS: readonly Form[] = [
  ['a*x*x+b', (x, a, b) => a * x * x + b],
  ['b-a*x', (x, a, b) => b - a * x],
  ['x*(x+a)-b', (x, a, b) => x * (x + a) - b],
  ['(x-a)*(x+b)', (x, a, b) => (x - a) * (x + b)],
];

export function formulaTestTasks(): readonly CodeTask[] {
  return familyTasks(TEST_FORMS, functionsOf(FORMULA_FORMS));
}

/**
 * A validation split of new formula families, for designing what the test split measures (looked at
 * freely): a*x*x-b, a*(x-b), x*x-a*x, x*(x-a)+b, the same constants and selection, less any function
 * of a training or a test task.
 */
const VALIDATION_FORMS: readonly Form[] = [
  ['a*x*x-b', (x, a, b) => a * x * x - b],
  ['a*(x-b)', (x, a, b) => a * (x - b)],
  ['x*x-a*x', (x, a) => x * x - a * x],
  ['x*(x-a)+b', (x, a, b) => x * (x - a) + b],
];

export function formulaValidationTasks(): readonly CodeTask[] {
  return familyTasks(VALIDATION_FORMS, new Set([...functionsOf(FORMULA_FORMS), ...functionsOf(TEST_FORMS)]));
}

type Shape =
  { readonly kind: 'leaf'; readonly name: 'x' | 'a' | 'b' } | { readonly kind: 'op'; readonly op: '+' | '-' | '*'; readonly l: Shape; readonly r: Shape };

const PRECEDENCE = { '+': 1, '-': 1, '*': 2 } as const;

function shapeText(s: Shape): string {
  if (s.kind === 'leaf') return s.name;
  const side = (c: Shape, right: boolean): string => {
    const t = shapeText(c);
    if (c.kind === 'leaf') return t;
    const [pc, pp] = [PRECEDENCE[c.op], PRECEDENCE[s.op]];
    return pc < pp || (right && pc === pp) ? `(${t})` : t;
  };
  return `${side(s.l, false)}${s.op}${side(s.r, true)}`;
}

function shapeValue(s: Shape, x: number, a: number, b: number): number {
  if (s.kind === 'leaf') return s.name === 'x' ? x : s.name === 'a' ? a : b;
  const [l, r] = [shapeValue(s.l, x, a, b), shapeValue(s.r, x, a, b)];
  return s.op === '+' ? l + r : s.op === '-' ? l - r : l * r;
}

/**
 * Every formula shape of up to four leaves (x at most twice, a and b at most once each, x at least
 * once; b only beside a), built left-associatively (a right operand never has its parent's precedence),
 * one shape per function (a*x and x*a are one; none constant in x), in a fixed order.
 */
function allShapes(): Form[] {
  const leaves: Shape[] = (['x', 'a', 'b'] as const).map((name) => ({ kind: 'leaf', name }));
  const count = (s: Shape, n: string): number => (s.kind === 'leaf' ? (s.name === n ? 1 : 0) : count(s.l, n) + count(s.r, n));
  const size = (s: Shape): number => (s.kind === 'leaf' ? 1 : size(s.l) + size(s.r));
  const bySize: Shape[][] = [[], leaves];
  for (let n = 2; n <= 4; n++) {
    const made: Shape[] = [];
    for (let k = 1; k < n; k++)
      for (const l of bySize[k]!)
        for (const r of bySize[n - k]!)
          for (const op of ['+', '-', '*'] as const) {
            if (r.kind === 'op' && PRECEDENCE[r.op] === PRECEDENCE[op]) continue;
            const s: Shape = { kind: 'op', op, l, r };
            if (count(s, 'x') <= 2 && count(s, 'a') <= 1 && count(s, 'b') <= 1) made.push(s);
          }
    bySize.push(made);
  }
  const grid = [1, 2, 3, 5, 8].flatMap((a) => [1, 4, 7].map((b) => [a, b] as const));
  const seen = new Set<string>();
  const out: Form[] = [];
  for (const s of bySize.flat()) {
    if (size(s) < 2 || count(s, 'x') === 0 || (count(s, 'a') === 0 && count(s, 'b') > 0)) continue;
    const sig = grid.map(([a, b]) => PROBES.map((x) => shapeValue(s, x, a, b)).join(',')).join(';');
    // x-x+a is no function of x
    if (seen.has(sig) || grid.every(([a, b]) => PROBES.every((x) => shapeValue(s, x, a, b) === shapeValue(s, 0, a, b)))) continue;
    seen.add(sig);
    out.push([shapeText(s), (x, a, b) => shapeValue(s, x, a, b)]);
  }
  return out;
}

/** A form's text with every minus a plus, and with a and b swapped too: its shape up to signs and names. */
function skeletons(form: string): string[] {
  const plus = form.replace(/-/g, '+');
  return [plus, plus.replace(/a/g, '#').replace(/b/g, 'a').replace(/#/g, 'b')];
}

/**
 * A training set of many formula shapes (every shape of `allShapes` but those of the validation and
 * test families and their sign variants — x*(x+a)+b is x*(x+a)-b's — and but any task whose function a
 * validation or test task computes), the (a, b) pairs with a + b odd (the validation and test families
 * take the even ones), each function once; one function in four held out by a hash of its values, as
 * the formula tasks are. Shapes enough that copying a formula, not recalling five, is what a model
 * learns; what verify:seed000 trains on.
 */
export function formulaShapeTasks(): readonly (CodeTask & { readonly split: 'train' | 'heldOut' })[] {
  const reserved = [...TEST_FORMS, ...VALIDATION_FORMS];
  const banned = new Set(reserved.flatMap(([form]) => skeletons(form)));
  const taken = new Set([...functionsOf(TEST_FORMS), ...functionsOf(VALIDATION_FORMS)]);
  const out: (CodeTask & { split: 'train' | 'heldOut' })[] = [];
  for (const [form, value] of allShapes()) {
    if (skeletons(form).some((k) => banned.has(k))) continue;
    for (let a = 1; a <= 9; a++)
      for (let b = 1; b <= 9; b++) {
        const fn = probeValues(value, a, b);
        if ((a + b) % 2 === 0 || taken.has(fn)) continue;
        taken.add(fn);
        let h = 0;
        for (const c of fn) h = (h * 31 + c.charCodeAt(0)) >>> 0;
        out.push({ ...formulaTask(form, value, a, b), split: h % 4 === 3 ? 'heldOut' : 'train' });
      }
  }
  return out;
}
