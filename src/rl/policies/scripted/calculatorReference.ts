// A scripted reference agent for the calculator: evaluates the expression bottom-up with one tool call
// per operation, then answers. Its demonstrations can be imperfect on purpose, as real ones are:
// - a mistake (with probability `mistakeRate`): a bad first call (an unknown op), the error read, then
//   the right calls; marked, so a student reads it in context but is not trained to make it;
// - a habit (`skipToolOn`, `skipToolRate`): on a class of tasks it skips the tool and answers at once
//   with a guess. That is systematic, not a slip: above a rate of 0.5, greedy decoding of a student
//   copies it on the whole class, and only a verified reward can break it;
// - a redundant call (`redundantCallRate`): it repeats the call it just made, to double-check.
import { callPlan, evaluate, parseExpr, type Expr } from '../../envs/calculator/expressions';
import { fnv1a, type Rng } from '../../random';
import type { PolicyContext } from '../policy';
import { ScriptedPolicy } from './scriptedPolicy';

const OP_TYPO: Record<string, string> = { add: 'plus', sub: 'minus', mul: 'times', div: 'divide' };

export type SkipClass = 'none' | 'mul' | 'depth-1' | 'all';
export type GuessStyle = 'first-number' | 'near-miss';

export interface CalculatorHabits {
  readonly mistakeRate: number;
  readonly skipToolOn: SkipClass;
  readonly skipToolRate: number;
  readonly guess: GuessStyle;
  readonly redundantCallRate: number;
}

export const PERFECT: CalculatorHabits = { mistakeRate: 0, skipToolOn: 'none', skipToolRate: 0, guess: 'first-number', redundantCallRate: 0 };

/** Whether an expression is in a skip class. */
export function inSkipClass(expression: string, cls: SkipClass): boolean {
  switch (cls) {
    case 'none':
      return false;
    case 'all':
      return true;
    case 'mul':
      return expression.includes('*');
    case 'depth-1':
      return callPlan(parseExpr(expression)).length === 1;
  }
}

/** A guessed answer, never computed with the tool: the question's first number, or the result off by a fixed ±1, 2 or 10. */
export function guessFor(expression: string, expr: Expr, style: GuessStyle): number {
  if (style === 'first-number') return Number(/\d+/.exec(expression)?.[0] ?? 0);
  return evaluate(expr) + [1, -1, 2, -2, 10, -10][fnv1a(expression) % 6]!;
}

export class CalculatorReferenceAgent extends ScriptedPolicy {
  private readonly h: CalculatorHabits;

  constructor(habits: Partial<CalculatorHabits> = {}) {
    super();
    this.h = { ...PERFECT, ...habits };
  }

  /** A draw only where the rate can make a difference, so a perfect demonstrator's stream is the plain one. */
  private static chance(rng: Rng, rate: number): boolean {
    return rate > 0 && (rate >= 1 || rng.next() < rate);
  }

  protected act(ctx: PolicyContext, rng: Rng): string | { text: string; mistake: true } {
    const expression = String(ctx.task.data.expression);
    const expr = parseExpr(expression);
    const plan = callPlan(expr).map(([op, a, b]) => ({ op, text: `<call>${op}(${a},${b})</call>`, a, b }));
    const first = ctx.turns.length === 0;
    if (first && inSkipClass(expression, this.h.skipToolOn) && CalculatorReferenceAgent.chance(rng, this.h.skipToolRate)) {
      return `<answer>\\boxed{${guessFor(expression, expr, this.h.guess)}}</answer>`;
    }
    // Progress through the plan: successful calls matched in order; a call repeating the step just
    // taken is a double-check and does not advance it.
    let done = 0;
    let lastRedundant = false;
    for (const t of ctx.turns) {
      if (t.action.kind !== 'tool' || t.action.name !== 'call' || t.observation.text.startsWith('<obs>error')) continue;
      if (done < plan.length && t.actionText === plan[done]!.text) {
        done += 1;
        lastRedundant = false;
      } else if (done > 0 && t.actionText === plan[done - 1]!.text) {
        lastRedundant = true;
      }
    }
    const last = ctx.turns[ctx.turns.length - 1];
    if (last && done > 0 && !lastRedundant && last.actionText === plan[done - 1]!.text && CalculatorReferenceAgent.chance(rng, this.h.redundantCallRate)) {
      return last.actionText;
    }
    const next = plan[Math.min(done, plan.length - 1)];
    if (first && next && CalculatorReferenceAgent.chance(rng, this.h.mistakeRate))
      return { text: `<call>${OP_TYPO[next.op]}(${next.a},${next.b})</call>`, mistake: true };
    if (next && done < plan.length) return next.text;
    return `<answer>\\boxed{${evaluate(expr)}}</answer>`;
  }
}
