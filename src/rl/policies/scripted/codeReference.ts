// A scripted reference agent for the code environment: writes the task's reference solution and the
// public print, reads the result, and submits the printed value on a line of its own (the newline is
// where the environment's stop rule ends the action). With probability `mistakeRate` its
// first attempt calls the function by a wrong name (a NameError), so demonstrations show a traceback
// being read and the code being fixed (marked as a mistake: shown to a student, not imitated).
import { codeTaskOf } from '../../envs/codeSandbox/codeEnv';
import type { Rng } from '../../random';
import type { PolicyContext } from '../policy';
import { ScriptedPolicy } from './scriptedPolicy';

export class CodeReferenceAgent extends ScriptedPolicy {
  constructor(private readonly mistakeRate = 0) {
    super();
  }

  protected act(ctx: PolicyContext, rng: Rng): string | { text: string; mistake: true } {
    const { fn, publicArgs, reference } = codeTaskOf(ctx.task);
    const program = (name: string): string => `\`\`\`python\n${reference}\nprint(${name}(${publicArgs}))\n\`\`\``;
    const last = ctx.turns[ctx.turns.length - 1];
    if (!last) return rng.next() < this.mistakeRate ? { text: `Let me try.\n${program(`${fn}_v2`)}`, mistake: true } : program(fn);
    if (last.observation.data.exitCode !== 0) return `The run failed; fixing the call.\n${program(fn)}`;
    const stdout = last.observation.data.stdout;
    // the newline ends the action: the environment's stop rule waits for it, so a student must learn it
    return `FINAL ANSWER: ${(typeof stdout === 'string' ? stdout : '').trim().split('\n').pop() ?? ''}\n`;
  }
}
