// A scripted reference agent for the code environment: writes the task's reference solution and the
// public print, reads the result, and submits the printed value. With probability `mistakeRate` its
// first attempt calls the function by a wrong name (a NameError), so demonstrations show a traceback
// being read and the code being fixed.
import type { Trajectory } from '../../../shared/types';
import type { Rng } from '../../random';
import type { Policy, PolicyContext, PolicySample, UpdateStats } from '../policy';

export class CodeReferenceAgent implements Policy {
  readonly version = 0;
  readonly compute = 'scripted reference agent';
  constructor(private readonly mistakeRate = 0) {}

  sample(contexts: readonly PolicyContext[], rng: Rng): Promise<PolicySample[]> {
    return Promise.resolve(
      contexts.map((ctx) => {
        const { fn, publicArgs, reference } = ctx.task.data as { fn: string; publicArgs: string; reference: string };
        const program = (name: string): string => `\`\`\`python\n${reference}\nprint(${name}(${publicArgs}))\n\`\`\``;
        const last = ctx.turns[ctx.turns.length - 1];
        let text: string;
        if (!last) {
          text = rng.next() < this.mistakeRate ? `Let me try.\n${program(`${fn}_v2`)}` : program(fn);
        } else if (last.observation.data.exitCode !== 0) {
          text = `The run failed; fixing the call.\n${program(fn)}`;
        } else {
          const stdout = last.observation.data.stdout;
          const out = (typeof stdout === 'string' ? stdout : '').trim().split('\n').pop() ?? '';
          text = `FINAL ANSWER: ${out}`;
        }
        return { text, step: { behaviourLogprob: 0, policyVersion: 0 } };
      }),
    );
  }

  update(_t: readonly Trajectory[]): UpdateStats {
    throw new Error('the reference agent is scripted and cannot be trained');
  }
}
