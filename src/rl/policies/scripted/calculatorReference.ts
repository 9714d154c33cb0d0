// A scripted reference agent for the calculator: evaluates the expression bottom-up with one tool call
// per operation, then answers. With probability `mistakeRate` it first makes a bad call (an unknown op),
// reads the error and carries on correctly, so demonstrations show an error being repaired.
import type { Trajectory } from '../../../shared/types';
import { callPlan, evaluate, parseExpr } from '../../envs/calculator/expressions';
import type { Rng } from '../../random';
import type { Policy, PolicyContext, PolicySample, UpdateStats } from '../policy';

const OP_TYPO: Record<string, string> = { add: 'plus', sub: 'minus', mul: 'times', div: 'divide' };

export class CalculatorReferenceAgent implements Policy {
  readonly version = 0;
  readonly compute = 'scripted reference agent';
  constructor(private readonly mistakeRate = 0) {}

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    return Promise.resolve(
      contexts.map((ctx) => {
        const expr = parseExpr(String(ctx.task.data.expression));
        const plan = callPlan(expr);
        const okCalls = ctx.turns.filter((t) => t.action.kind === 'tool' && t.action.name === 'call' && !t.observation.text.startsWith('<obs>error')).length;
        let text: string;
        const [op, a, b] = plan[Math.min(okCalls, plan.length - 1)] ?? ['add', 0, 0];
        if (ctx.turns.length === 0 && plan.length > 0 && rng.next() < this.mistakeRate) text = `<call>${OP_TYPO[op]}(${a},${b})</call>`;
        else if (okCalls < plan.length) text = `<call>${op}(${a},${b})</call>`;
        else text = `<answer>\\boxed{${evaluate(expr)}}</answer>`;
        return { text, step: { behaviourLogprob: 0, policyVersion: 0 } };
      }),
    );
  }

  update(_t: readonly Trajectory[]): UpdateStats {
    throw new Error('the reference agent is scripted and cannot be trained');
  }
}
