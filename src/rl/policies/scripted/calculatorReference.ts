// A scripted reference agent for the calculator: evaluates the expression bottom-up with one tool call
// per operation, then answers. With probability `mistakeRate` it first makes a bad call (an unknown op),
// reads the error and carries on correctly, so demonstrations show an error being repaired (the mistake
// is marked: a student reads it in context but is not trained to make it).
import { callPlan, evaluate, parseExpr } from '../../envs/calculator/expressions';
import type { Rng } from '../../random';
import type { PolicyContext } from '../policy';
import { ScriptedPolicy } from './scriptedPolicy';

const OP_TYPO: Record<string, string> = { add: 'plus', sub: 'minus', mul: 'times', div: 'divide' };

export class CalculatorReferenceAgent extends ScriptedPolicy {
  constructor(private readonly mistakeRate = 0) {
    super();
  }

  protected act(ctx: PolicyContext, rng: Rng): string | { text: string; mistake: true } {
    const expr = parseExpr(String(ctx.task.data.expression));
    const plan = callPlan(expr);
    const okCalls = ctx.turns.filter((t) => t.action.kind === 'tool' && t.action.name === 'call' && !t.observation.text.startsWith('<obs>error')).length;
    const [op, a, b] = plan[Math.min(okCalls, plan.length - 1)] ?? ['add', 0, 0];
    if (ctx.turns.length === 0 && plan.length > 0 && rng.next() < this.mistakeRate) return { text: `<call>${OP_TYPO[op]}(${a},${b})</call>`, mistake: true };
    if (okCalls < plan.length) return `<call>${op}(${a},${b})</call>`;
    return `<answer>\\boxed{${evaluate(expr)}}</answer>`;
  }
}
