// The calculator tool environment of seed 003. The policy writes `<call>op(a,b)</call>` (add, sub,
// mul, div on integers) and reads `<obs>result</obs>`, until `<answer>\boxed{N}</answer>` ends the
// episode or the tool-call budget runs out. Bad calls (unknown op, bad arguments, division by zero,
// malformed text) are error observations. Reward = formatWeight · (answered in format) + (answer right)
// − callCost · (tool calls and malformed turns) − formatErrorCost · (malformed turns).
import type { EpisodeOutcome, Observation, ParsedAction } from '../../../shared/types';
import { parseCalculatorAction } from '../parsers';
import type { CalculatorEnvOptions } from '../../../shared/runConfig';
import type { Environment, EnvironmentDefinition, RunEnvironment, StepResult, Task, TaskSource } from '../environment';
import { expressionSets, textDepth } from './expressionSets';
import { applyOp, evaluate, GENERATOR_OPS, parseExpr, type GeneratorOptions, type Op } from './expressions';

const OPS: readonly Op[] = ['add', 'sub', 'mul', 'div'];
const INT_RE = /^-?\d{1,15}$/;

export interface CalculatorOptions {
  readonly maxCalls: number;
  readonly formatWeight: number;
  readonly callCost: number;
  readonly formatErrorCost: number;
  readonly generator: GeneratorOptions;
  readonly trainTasks: number;
  readonly heldOutTasks: number;
  /** What evaluations run on: the held-out split, or the deeper expressions' validation or test split. */
  readonly evaluationSet: 'held-out' | 'validation' | 'test';
}

/** The run's options as the environment uses them (the generator's settings together). */
export function calculatorOptions(o: CalculatorEnvOptions): CalculatorOptions {
  return {
    maxCalls: o.maxCalls,
    formatWeight: o.formatWeight,
    callCost: o.callCost,
    formatErrorCost: o.formatErrorCost,
    trainTasks: o.trainTasks,
    heldOutTasks: o.heldOutTasks,
    evaluationSet: o.evaluationSet,
    generator: { minDepth: o.minDepth, maxDepth: o.maxDepth, minOperand: o.minOperand, maxOperand: o.maxOperand, ops: GENERATOR_OPS },
  };
}

export function calculatorTask(expression: string): Task {
  const expr = parseExpr(expression);
  return { id: `calc:${expression}`, prompt: `Q:${expression}\n`, data: { expression, answer: evaluate(expr) } };
}

const obs = (text: string, data: Record<string, unknown>): Observation => ({ text: `<obs>${text}</obs>`, data });

class CalculatorEnv implements Environment {
  private task: Task | undefined;
  private calls = 0;
  private formatErrors = 0;
  private answer: number | undefined;
  private done = false;

  constructor(private readonly o: CalculatorOptions) {}

  reset(task: Task): Promise<Observation> {
    this.task = task;
    this.calls = 0;
    this.formatErrors = 0;
    this.answer = undefined;
    this.done = false;
    return Promise.resolve({ text: task.prompt, data: { expression: task.data.expression } });
  }

  parseAction(text: string): ParsedAction {
    return parseCalculatorAction(text);
  }

  step(action: ParsedAction): Promise<StepResult> {
    if (this.done || !this.task) throw new Error('calculator: step() outside an episode; call reset() first');
    if (action.kind === 'tool' && action.name === 'answer') {
      this.answer = action.args.value as number;
      this.done = true;
      return Promise.resolve({ observation: obs('answered', { answer: this.answer }), done: true, termination: 'finished' });
    }
    // Every other turn (a call or a malformed output) spends one unit of the tool-call budget.
    this.calls += 1;
    let observation: Observation;
    if (action.kind === 'format_error') {
      this.formatErrors += 1;
      observation = obs(`error: ${action.message}`, { error: 'format', calls: this.calls });
    } else {
      const op = String(action.args.op);
      const args = action.args.args as string[];
      if (!(OPS as readonly string[]).includes(op)) {
        observation = obs(`error: unknown op ${op.slice(0, 20)}; use add, sub, mul or div`, { error: 'unknown_op', calls: this.calls });
      } else if (args.length !== 2 || !args.every((a) => INT_RE.test(a))) {
        observation = obs(`error: invalid args ${String(action.args.rawArgs).slice(0, 40)}; use two integers`, { error: 'bad_args', calls: this.calls });
      } else {
        try {
          const r = applyOp(op as Op, Number(args[0]), Number(args[1]));
          observation = obs(String(r), { op, a: Number(args[0]), b: Number(args[1]), result: r, calls: this.calls });
        } catch (e) {
          observation = obs(`error: ${(e as Error).message}`, { error: 'math', calls: this.calls });
        }
      }
    }
    if (this.calls >= this.o.maxCalls) {
      this.done = true;
      return Promise.resolve({ observation, done: true, termination: 'budget_exhausted' });
    }
    return Promise.resolve({ observation, done: false });
  }

  verify(): Promise<EpisodeOutcome> {
    const gold = Number(this.task?.data.answer);
    const formatted = this.answer !== undefined;
    const correct = formatted && this.answer === gold;
    return Promise.resolve({
      reward: (formatted ? this.o.formatWeight : 0) + (correct ? 1 : 0) - this.o.callCost * this.calls - this.o.formatErrorCost * this.formatErrors,
      success: correct,
      publicPass: formatted,
      privatePass: correct,
      details: { gold, answer: this.answer ?? null, calls: this.calls, formatErrors: this.formatErrors },
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Expression sets by generator settings: runs in one process with the same options share them (they are pure). */
const taskCache = new Map<string, TaskSource>();

/**
 * The evaluation sets that differ from training in substance: `count` expressions one level deeper than
 * the generator's (its operands), kept only where the text as parsed is deeper than every training
 * task's (a flat "1+2+3+4" of a depth-2 tree reads as depth 3, so depth alone would overlap), from the
 * training side of the call-plan hash (validation) or its held-out side (test).
 */
export function deeperSet(g: GeneratorOptions, train: readonly string[], count: number, side: 'validation' | 'test'): string[] {
  const deepest = train.reduce((d, x) => Math.max(d, textDepth(x)), 0);
  const deeper = { ...g, minDepth: g.maxDepth + 1, maxDepth: g.maxDepth + 1 };
  // three times the count drawn: about half of a depth-3 tree's texts read no deeper than training's
  const sets = expressionSets({ train: 3 * count, heldOut: 3 * count }, deeper);
  return (side === 'test' ? sets.heldOut : sets.train).filter((x) => textDepth(x) > deepest).slice(0, count);
}

function taskSource(o: CalculatorOptions): TaskSource {
  const key = JSON.stringify([o.generator, o.trainTasks, o.heldOutTasks, o.evaluationSet]);
  let source = taskCache.get(key);
  if (!source) {
    // both splits drawn together: they share one depth mix (expressionSets.ts says why)
    const sets = expressionSets({ train: o.trainTasks, heldOut: o.heldOutTasks }, o.generator);
    let heldOut = sets.heldOut;
    if (o.evaluationSet !== 'held-out') heldOut = deeperSet(o.generator, sets.train, o.heldOutTasks, o.evaluationSet);
    source = { train: sets.train.map(calculatorTask), heldOut: heldOut.map(calculatorTask) };
    taskCache.set(key, source);
  }
  return source;
}

const DESCRIPTION = 'Arithmetic with calculator tool calls (seed 003).';

export function openCalculator(options: CalculatorEnvOptions): RunEnvironment {
  const o = calculatorOptions(options);
  return {
    name: 'calculator',
    description: DESCRIPTION,
    stop: { strings: ['</call>', '</answer>'], grammar: 'calculator' },
    create: () => new CalculatorEnv(o),
    taskFromId: (id) => {
      try {
        return calculatorTask(id.startsWith('calc:') ? id.slice(5) : id);
      } catch {
        return undefined;
      }
    },
    tasks: () => taskSource(o),
    dispose: () => Promise.resolve(),
  };
}

export const calculator: EnvironmentDefinition<CalculatorEnvOptions> = {
  name: 'calculator',
  description: DESCRIPTION,
  open: (o) => Promise.resolve(openCalculator(o)),
};
