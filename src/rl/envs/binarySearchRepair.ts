// The binary-search repair environment of seed 002. The agent repairs the `low` and `high` updates of a
// binary search with six tool actions; each call costs one step of a six-step budget. The public smoke
// test (find 3 in [1, 3, 5]) passes for wrong code too; only the private verifier (empty arrays,
// boundaries, missing targets, random arrays, with an iteration cap) tells a real repair apart.
// Reward 1 only for `finish` within budget with the private check passing, else 0.
import type { EpisodeOutcome, Observation, ParsedAction } from '../../shared/types';
import type { Rng } from '../random';
import type { BinarySearchOptions } from '../../shared/runConfig';
import type { Environment, EnvironmentDefinition, RunEnvironment, StepResult, TabularSpec, Task, TaskSource } from './environment';

export const BINARY_SEARCH_ACTIONS = ['read', 'fix_low', 'fix_high', 'undo_low', 'test', 'finish'] as const;
export type BinarySearchAction = (typeof BINARY_SEARCH_ACTIONS)[number];

/** The two lines under repair: `low = mid` (bug) or `low = mid + 1`; `high = mid` (bug) or `high = mid - 1`. */
export interface CodeVariant {
  readonly lowFixed: boolean;
  readonly highFixed: boolean;
}

/** Variant index in [0, 4): bit 0 = low fixed, bit 1 = high fixed. */
export function variantIndex(v: CodeVariant): number {
  return (v.lowFixed ? 1 : 0) + (v.highFixed ? 2 : 0);
}

export function renderCode(v: CodeVariant): string {
  return [
    'def binary_search(arr, target):',
    '    low, high = 0, len(arr) - 1',
    '    while low <= high:',
    '        mid = (low + high) // 2',
    '        if arr[mid] == target:',
    '            return mid',
    '        if arr[mid] < target:',
    `            low = ${v.lowFixed ? 'mid + 1' : 'mid'}`,
    '        else:',
    `            high = ${v.highFixed ? 'mid - 1' : 'mid'}`,
    '    return -1',
  ].join('\n');
}

/** Result of running a variant: the index found, -1, or 'hang' when the iteration cap was hit. */
export function runVariant(v: CodeVariant, arr: readonly number[], target: number, iterationCap = 4 * arr.length + 8): number | 'hang' {
  let low = 0;
  let high = arr.length - 1;
  for (let it = 0; low <= high; it++) {
    if (it >= iterationCap) return 'hang';
    const mid = Math.floor((low + high) / 2);
    const value = arr[mid] as number;
    if (value === target) return mid;
    if (value < target) low = v.lowFixed ? mid + 1 : mid;
    else high = v.highFixed ? mid - 1 : mid;
  }
  return -1;
}

/** The public smoke test: find 3 in [1, 3, 5]. The first probe hits it, so every variant passes. */
export function publicSmokeTest(v: CodeVariant): boolean {
  return runVariant(v, [1, 3, 5], 3) === 1;
}

export interface VerifierCase {
  readonly arr: readonly number[];
  readonly target: number;
  readonly expected: number;
}

/** Fixed edge cases plus `randomCases` random sorted arrays of distinct values (half the targets missing). */
export function privateCases(rng: Rng, randomCases = 20): VerifierCase[] {
  const base = [1, 3, 5, 7, 9];
  const cases: VerifierCase[] = [
    { arr: [], target: 1, expected: -1 }, // empty array
    { arr: [4], target: 4, expected: 0 }, // single element
    { arr: [4], target: 2, expected: -1 },
    { arr: [4], target: 6, expected: -1 },
    { arr: base, target: 1, expected: 0 }, // boundaries
    { arr: base, target: 9, expected: 4 },
    { arr: base, target: 0, expected: -1 }, // missing: below, above, between
    { arr: base, target: 10, expected: -1 },
    { arr: base, target: 4, expected: -1 },
  ];
  for (let i = 0; i < randomCases; i++) {
    const n = 1 + rng.int(20);
    const arr: number[] = [];
    let x = rng.int(5);
    for (let j = 0; j < n; j++) {
      x += 2 + rng.int(3); // strictly increasing, even gaps ≥ 2 leave room for missing targets
      arr.push(x);
    }
    if (rng.next() < 0.5) {
      const idx = rng.int(n);
      cases.push({ arr, target: arr[idx] as number, expected: idx });
    } else {
      const idx = rng.int(n);
      cases.push({ arr, target: (arr[idx] as number) - 1, expected: -1 });
    }
  }
  return cases;
}

export function privateVerifier(v: CodeVariant, rng: Rng): { pass: boolean; failed?: VerifierCase; got?: number | 'hang' } {
  for (const c of privateCases(rng)) {
    const got = runVariant(v, c.arr, c.target);
    if (got !== c.expected) return { pass: false, failed: c, got };
  }
  return { pass: true };
}

const TASK: Task = {
  id: 'binary-search-repair',
  prompt: 'Repair the low/high updates of binary_search so it finds any target in a sorted array. Actions: read, fix_low, fix_high, undo_low, test, finish.',
  data: {},
};

class BinarySearchRepairEnv implements Environment {
  private code: CodeVariant = { lowFixed: false, highFixed: false };
  private steps = 0;
  private finished = false;
  private done = false;

  constructor(private readonly budget: number) {}

  private observe(text: string, extra: Record<string, unknown> = {}): Observation {
    const lowLine = `low = ${this.code.lowFixed ? 'mid + 1' : 'mid'}`;
    const highLine = `high = ${this.code.highFixed ? 'mid - 1' : 'mid'}`;
    return {
      text: `${text}\n${lowLine}\n${highLine}`,
      data: { variant: variantIndex(this.code), steps: this.steps, budget: this.budget, lowLine, highLine, ...extra },
    };
  }

  reset(_task: Task): Promise<Observation> {
    this.code = { lowFixed: false, highFixed: false };
    this.steps = 0;
    this.finished = false;
    this.done = false;
    return Promise.resolve(this.observe(TASK.prompt));
  }

  parseAction(text: string): ParsedAction {
    const name = text.trim();
    return (BINARY_SEARCH_ACTIONS as readonly string[]).includes(name)
      ? { kind: 'tool', name, args: {} }
      : { kind: 'format_error', message: `unknown action ${JSON.stringify(name.slice(0, 40))}; expected one of ${BINARY_SEARCH_ACTIONS.join(', ')}` };
  }

  step(action: ParsedAction): Promise<StepResult> {
    if (this.done) throw new Error('binary-search: step() after the episode ended; call reset() first');
    this.steps += 1;
    let obs: Observation;
    if (action.kind === 'format_error') {
      obs = this.observe(`format error: ${action.message}`, { formatError: true });
    } else {
      switch (action.name as BinarySearchAction) {
        case 'read':
          obs = this.observe(renderCode(this.code));
          break;
        case 'fix_low':
          this.code = { ...this.code, lowFixed: true };
          obs = this.observe('low update set to mid + 1');
          break;
        case 'fix_high':
          this.code = { ...this.code, highFixed: true };
          obs = this.observe('high update set to mid - 1');
          break;
        case 'undo_low':
          this.code = { ...this.code, lowFixed: false };
          obs = this.observe('low update set back to mid');
          break;
        case 'test': {
          const pass = publicSmokeTest(this.code);
          obs = this.observe(`public test binary_search([1, 3, 5], 3) == 1: ${pass ? 'passed' : 'failed'}`, { publicPass: pass });
          break;
        }
        case 'finish':
          this.finished = true;
          this.done = true;
          return Promise.resolve({ observation: this.observe('submitted'), done: true, termination: 'finished' });
      }
    }
    if (this.steps >= this.budget) {
      this.done = true;
      return Promise.resolve({ observation: obs, done: true, termination: 'budget_exhausted' });
    }
    return Promise.resolve({ observation: obs, done: false });
  }

  verify(rng: Rng): Promise<EpisodeOutcome> {
    const publicPass = publicSmokeTest(this.code);
    const check = privateVerifier(this.code, rng);
    const success = this.finished && check.pass;
    return Promise.resolve({
      reward: success ? 1 : 0,
      success,
      publicPass,
      privatePass: check.pass,
      details: {
        variant: variantIndex(this.code),
        finished: this.finished,
        steps: this.steps,
        ...(check.failed ? { failedCase: check.failed, got: check.got } : {}),
      },
    });
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

const DESCRIPTION = 'Repair a binary search with six tool actions (seed 002).';

/** The binary-search repair with a run's step budget. */
export function openBinarySearch(o: BinarySearchOptions): RunEnvironment {
  const budget = o.stepBudget;
  return {
    name: 'binary-search',
    description: DESCRIPTION,
    create: () => new BinarySearchRepairEnv(budget),
    // One task: the same repair every episode; held-out evaluation differs in the verifier's random inputs.
    tasks: (): TaskSource => ({ train: [TASK], heldOut: [TASK] }),
    tabular: (): TabularSpec => ({
      // visible state = steps taken (0 … budget-1) × code variant (4)
      stateCount: budget * 4,
      actions: BINARY_SEARCH_ACTIONS,
      stateOf: (obs) => {
        const steps = obs.data.steps;
        const variant = obs.data.variant;
        if (typeof steps !== 'number' || typeof variant !== 'number' || steps >= budget) {
          throw new Error(`binary-search: observation has no visible state (steps=${String(steps)}, variant=${String(variant)})`);
        }
        return steps * 4 + variant;
      },
    }),
    dispose: () => Promise.resolve(),
  };
}

export const binarySearchRepair: EnvironmentDefinition<BinarySearchOptions> = {
  name: 'binary-search',
  description: DESCRIPTION,
  open: (o) => Promise.resolve(openBinarySearch(o)),
};
