// Arithmetic expressions for the calculator environment: a seeded generator (depth 1–3), exact
// integer evaluation, the tool-call plan a careful agent follows, and a fixed train / held-out split
// by canonical call plan (the two task sets are drawn in expressionSets.ts).
import { CALCULATOR_OPTION_SPECS } from '../../../shared/runConfig';
import { fnv1a, Rng } from '../../random';

export type Op = 'add' | 'sub' | 'mul' | 'div';
export type Expr = { readonly kind: 'num'; readonly value: number } | { readonly kind: 'bin'; readonly op: Op; readonly left: Expr; readonly right: Expr };

const SYMBOL: Record<Op, string> = { add: '+', sub: '-', mul: '*', div: '/' };
const PRECEDENCE: Record<Op, number> = { add: 1, sub: 1, mul: 2, div: 2 };

/** Integer semantics of the calculator tool (div: exact floor division; division by zero is an error). */
export function applyOp(op: Op, a: number, b: number): number {
  switch (op) {
    case 'add':
      return a + b;
    case 'sub':
      return a - b;
    case 'mul':
      return a * b;
    case 'div':
      if (b === 0) throw new Error('division by zero');
      return Math.floor(a / b);
  }
}

export function evaluate(e: Expr): number {
  return e.kind === 'num' ? e.value : applyOp(e.op, evaluate(e.left), evaluate(e.right));
}

export function depth(e: Expr): number {
  return e.kind === 'num' ? 0 : 1 + Math.max(depth(e.left), depth(e.right));
}

/** Infix text with only the parentheses precedence needs, e.g. "(3+4)*5". */
export function render(e: Expr): string {
  if (e.kind === 'num') return e.value < 0 ? `(${e.value})` : String(e.value);
  const side = (child: Expr, right: boolean): string => {
    const s = render(child);
    if (child.kind === 'num') return s;
    const p = PRECEDENCE[child.op];
    const me = PRECEDENCE[e.op];
    const needs = p < me || (right && p === me && (e.op === 'sub' || e.op === 'div'));
    return needs ? `(${s})` : s;
  };
  return `${side(e.left, false)}${SYMBOL[e.op]}${side(e.right, true)}`;
}

/** Parses what render() writes (non-negative literals, + - * /, parentheses). Throws on anything else. */
export function parseExpr(text: string): Expr {
  let i = 0;
  const peek = (): string => text[i] ?? '';
  const primary = (): Expr => {
    if (peek() === '(') {
      i++;
      if (peek() === '-' && /\d/.test(text[i + 1] ?? '')) {
        i++;
        const n = number();
        if (peek() !== ')') throw new Error(`expected ) at ${i}`);
        i++;
        return { kind: 'num', value: -n };
      }
      const e = sum();
      if (peek() !== ')') throw new Error(`expected ) at ${i}`);
      i++;
      return e;
    }
    return { kind: 'num', value: number() };
  };
  const number = (): number => {
    const m = /^\d+/.exec(text.slice(i));
    if (!m) throw new Error(`expected a number at ${i} in ${JSON.stringify(text)}`);
    i += m[0].length;
    return Number(m[0]);
  };
  const product = (): Expr => {
    let e = primary();
    while (peek() === '*' || peek() === '/') {
      const op: Op = peek() === '*' ? 'mul' : 'div';
      i++;
      e = { kind: 'bin', op, left: e, right: primary() };
    }
    return e;
  };
  const sum = (): Expr => {
    let e = product();
    while (peek() === '+' || peek() === '-') {
      const op: Op = peek() === '+' ? 'add' : 'sub';
      i++;
      e = { kind: 'bin', op, left: e, right: product() };
    }
    return e;
  };
  const e = sum();
  if (i !== text.length) throw new Error(`unexpected ${JSON.stringify(text.slice(i, i + 5))} at ${i}`);
  return e;
}

export interface GeneratorOptions {
  readonly minDepth: number;
  readonly maxDepth: number;
  readonly minOperand: number;
  readonly maxOperand: number;
  readonly ops: readonly Op[];
}

/** The operations generated expressions use (division is left out: a small model's exact division is noise). */
export const GENERATOR_OPS: readonly Op[] = ['add', 'sub', 'mul'];

/** The generator at the calculator's default options (envOptions.minDepth … maxOperand, from their table). */
export const DEFAULT_GENERATOR: GeneratorOptions = {
  minDepth: CALCULATOR_OPTION_SPECS.minDepth.default,
  maxDepth: CALCULATOR_OPTION_SPECS.maxDepth.default,
  minOperand: CALCULATOR_OPTION_SPECS.minOperand.default,
  maxOperand: CALCULATOR_OPTION_SPECS.maxOperand.default,
  ops: GENERATOR_OPS,
};

/** A random expression with depth in [minDepth, maxDepth]; divisions are kept exact and non-zero. */
export function generate(rng: Rng, o: GeneratorOptions): Expr {
  const target = o.minDepth + rng.int(o.maxDepth - o.minDepth + 1);
  const build = (d: number): Expr => {
    if (d === 0) return { kind: 'num', value: o.minOperand + rng.int(o.maxOperand - o.minOperand + 1) };
    const op = o.ops[rng.int(o.ops.length)]!;
    // one side reaches depth d − 1, the other anything below it
    const deep = build(d - 1);
    const shallow = build(rng.int(d));
    const [left, right] = rng.next() < 0.5 ? [deep, shallow] : [shallow, deep];
    if (op === 'div') {
      const r = evaluate(right);
      if (r === 0 || evaluate(left) % r !== 0) return { kind: 'bin', op: 'mul', left, right };
    }
    return { kind: 'bin', op, left, right };
  };
  return build(target);
}

/** Post-order tool calls that evaluate the expression: [op, a, b, result] per call. */
export function callPlan(e: Expr): [Op, number, number, number][] {
  const plan: [Op, number, number, number][] = [];
  const walk = (x: Expr): number => {
    if (x.kind === 'num') return x.value;
    const a = walk(x.left);
    const b = walk(x.right);
    const r = applyOp(x.op, a, b);
    plan.push([x.op, a, b, r]);
    return r;
  };
  walk(e);
  return plan;
}

/** The expression with every add's and mul's two sides in a fixed order (by their canonical text). */
function canonicalTree(e: Expr): { expr: Expr; key: string } {
  if (e.kind === 'num') return { expr: e, key: String(e.value) };
  let [l, r] = [canonicalTree(e.left), canonicalTree(e.right)];
  if ((e.op === 'add' || e.op === 'mul') && r.key < l.key) [l, r] = [r, l];
  return { expr: { kind: 'bin', op: e.op, left: l.expr, right: r.expr }, key: `${e.op}(${l.key},${r.key})` };
}

/**
 * What an expression asks of the agent, up to the order of a commutative operation's operands at any
 * depth: the call plan of the expression with every add's and mul's sides in a fixed order, e.g.
 * "(3+4)*5", "5*(4+3)" and "(4+3)*5" are all "add(3,4)=7 mul(5,7)=35", and "(1+2)*(3+4)" and
 * "(3+4)*(1+2)" one plan too. Expressions with the same canonical form are the same task in substance.
 */
export function canonicalPlan(e: Expr): string {
  return callPlan(canonicalTree(e).expr)
    .map(([op, a, b, r]) => `${op}(${a},${b})=${r}`)
    .join(' ');
}

/**
 * One canonical form in five is held out, so no held-out task shares its call plan (up to operand
 * order) with a training task: the split is a property of what the task asks, not of its text.
 */
export function isHeldOut(text: string): boolean {
  return isHeldOutExpr(parseExpr(text));
}

/** isHeldOut for an expression already parsed. */
export function isHeldOutExpr(e: Expr): boolean {
  return fnv1a(canonicalPlan(e)) % 5 === 0;
}
