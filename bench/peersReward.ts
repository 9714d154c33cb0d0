// The agreement check of bench/peers_reward.py (the calculator reward ported to Python for TRL) with the
// workbench's own calculator environment: a sample of single-turn completions per task (right, wrong,
// spaced and trailing answers, calls, an answer after a call, malformed and empty text, text past the
// stop string) under two reward settings, scored by the environment (reset, parseAction, step, verify at
// envOptions.maxCalls 1) and by the port run by a Python interpreter. bench/peers.ts runs it before every
// bench; test/unit/bench/peersReward.test.ts runs it with python3.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import type { Task } from '../src/rl/envs/environment';
import { openCalculator } from '../src/rl/envs/calculator/calculatorEnv';
import { Rng } from '../src/rl/random';
import type { CalculatorEnvOptions } from '../src/shared/optionSpecs';

/** The repository (this file runs compiled, from out/bench). */
const ROOT = path.resolve(__dirname, '..', '..');

export interface RewardCase {
  readonly completion: string;
  readonly gold: number;
  readonly task: Task;
  readonly options: CalculatorEnvOptions;
}

export interface RewardScore {
  readonly reward: number;
  readonly success: boolean;
}

/** The stop strings of the calculator's sampler: a turn ends after the first of them (included). */
const STOPS = ['</call>', '</answer>'];

/** What the sampler returns of a completion that went on: up to and including the first stop string. */
export function cutAtStop(text: string): string {
  const ends = STOPS.map((s) => text.indexOf(s)).flatMap((i, k) => (i < 0 ? [] : [i + STOPS[k]!.length]));
  return ends.length === 0 ? text : text.slice(0, Math.min(...ends));
}

/** Completions for one task whose answer is `gold`: every branch of the parser and of the reward. */
function completionsFor(gold: number): string[] {
  return [
    `<answer>\\boxed{${gold}}</answer>`,
    `<answer>\\boxed{${gold + 1}}</answer>`,
    `<answer> \\boxed{ ${gold} } </answer>`,
    `<answer>\\boxed{${gold}}</answer> and more`,
    `<answer>\\boxed{${gold}}</answer><call>add(1,2)</call>`,
    `<call>add(1,2)</call><answer>\\boxed{${gold}}</answer>`,
    `<call>mul(3, 4)</call>`,
    `<call>pow(3,4)</call>`,
    `<call>add(1,2`,
    `<answer>\\boxed{x}</answer>`,
    `<answer>\\boxed{${gold}}`,
    `Q:${gold}+0\n<answer>\\boxed{0${Math.abs(gold)}}</answer>`,
    `<answer>\\boxed{-0}</answer>`,
    'no tags at all',
    '   ',
    '',
  ];
}

/** Two reward settings: seed 003's (answer only) and every charge on. */
export function rewardSettings(base: CalculatorEnvOptions): CalculatorEnvOptions[] {
  return [
    { ...base, maxCalls: 1 },
    { ...base, maxCalls: 1, formatWeight: 0.1, callCost: 0.05, formatErrorCost: 0.1 },
  ];
}

/** The sample: `tasks` × completions × settings. */
export function rewardCases(tasks: readonly Task[], settings: readonly CalculatorEnvOptions[]): RewardCase[] {
  return tasks.flatMap((task) => {
    const gold = Number(task.data.answer);
    return settings.flatMap((options) => completionsFor(gold).map((completion) => ({ completion, gold, task, options })));
  });
}

/** The workbench's environment's reward for each case (one turn, at maxCalls 1). */
export async function workbenchScores(cases: readonly RewardCase[]): Promise<RewardScore[]> {
  const out: RewardScore[] = [];
  for (const c of cases) {
    const env = openCalculator(c.options).create();
    await env.reset(c.task);
    const step = await env.step(env.parseAction(cutAtStop(c.completion)));
    if (!step.done) throw new Error(`calculator at maxCalls ${c.options.maxCalls}: one turn did not end the episode`);
    const outcome = await env.verify(new Rng(0)); // the calculator's verifier draws nothing
    out.push({ reward: outcome.reward, success: outcome.success });
  }
  return out;
}

/** The Python port's reward for each case, run by `python` (standard library only). */
export function portScores(python: string, cases: readonly RewardCase[]): RewardScore[] {
  const input = cases.map((c) => JSON.stringify({ completion: c.completion, gold: c.gold, options: c.options })).join('\n');
  const r = spawnSync(python, [path.join(ROOT, 'bench', 'peers_reward.py')], { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${python} bench/peers_reward.py: exit ${r.status}: ${r.stderr || r.error?.message}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RewardScore);
}

/** The cases where the two differ (reward beyond 1e-9, or success), with both scores. */
export function disagreements(cases: readonly RewardCase[], ours: readonly RewardScore[], port: readonly RewardScore[]): string[] {
  if (ours.length !== cases.length || port.length !== cases.length)
    return [`${cases.length} cases, ${ours.length} workbench scores, ${port.length} port scores`];
  return cases.flatMap((c, i) =>
    Math.abs(ours[i]!.reward - port[i]!.reward) > 1e-9 || ours[i]!.success !== port[i]!.success
      ? [
          `${JSON.stringify(c.completion)} (gold ${c.gold}, ${JSON.stringify(c.options)}): workbench ${JSON.stringify(ours[i])}, port ${JSON.stringify(port[i])}`,
        ]
      : [],
  );
}
