// A small trajectory, its group and its worst tokens for the view-model tests (inspector, drill-down),
// and a walk over a model's output: every string it holds, with the path to it.
import type { TrajectoryDetail, TrajectorySummary, WorstToken } from '../../../src/shared/protocol/backendProtocol';
import type { TokenStatsJson } from '../../../src/shared/tokenStatsRows';

export const STATS: TokenStatsJson = {
  stepsBefore: 0,
  old: 'behaviour',
  lag: 0,
  before: [-0.5, -1.4, -0.1, -0.9, null],
  logp: [-0.5, -1.4, -0.1, -0.9, -2],
  ratio: [1, 1.2, 1, 3, 0.5],
  clipSide: [0, 0, 0, 2, 1],
  entropy: [0.3, 0.4, 0.1, 1.2, 2],
  kl: [0, 0.01, 0, 0.7, 2e-7 * (1 + 2 ** -52)],
};

/** Two turns of `text`: 2 generated tokens, then 3 (pieces decoded), a group of two. */
export function trajectory(text: string, over: Partial<TrajectoryDetail> = {}): TrajectoryDetail {
  const turn = (index: number, sampled: number[], logprobs: number[]): TrajectoryDetail['turnList'][number] => ({
    index,
    actionText: `${text} action ${index}`,
    action: { kind: 'tool', name: text },
    observationText: `${text} observation ${index}`,
    observation: { note: text },
    policy: { behaviourLogprob: -1, policyVersion: 3, tokens: { context: [1, 2, 3], sampled, logprobs } },
  });
  return {
    id: 7,
    runId: 2,
    iteration: 4,
    group: 1,
    indexInGroup: 0,
    taskId: `task ${text}`,
    reward: 0.5,
    advantage: -4.77e-7,
    success: false,
    publicPass: true,
    privatePass: false,
    termination: `ended: ${text}`,
    turns: 2,
    excluded: `left out: ${text}`,
    outcome: { details: { prompt: `${text}\nsecond line`, metrics: { acc: 1, [`m ${text}`]: 0.123456 }, extras: { acc: 1, note: text } } },
    turnList: [turn(0, [5, 6], [-0.5, -1.5]), turn(1, [7, 8, 4], [-0.1, -0.2, -2])],
    tokenStats: STATS,
    pieces: [
      [text, 'b'],
      ['c', `d${text}`, 'e'],
    ],
    ...over,
  };
}

export function group(text: string): TrajectorySummary[] {
  const t = trajectory(text);
  return [t, { ...t, id: 8, indexInGroup: 1, success: true, reward: 1, advantage: 0.25, termination: text }];
}

export function worstTokens(n: number): WorstToken[] {
  return Array.from({ length: n }, (_, i) => ({
    trajectoryId: 100 + i,
    iteration: 4,
    advantage: i % 2 ? 0.5 : -0.5,
    by: 'mismatch' as const,
    value: 1 / (i + 1),
    turn: i,
    token: 2 * i,
    id: 300 + i,
    behaviour: -4.64,
    trained: true,
    before: -4.64 + 1 / (i + 1),
    mismatch: 1 / (i + 1),
    logp: -4,
    ratio: 1.02,
    clip: i === 0 ? ('high' as const) : ('none' as const),
    entropy: 0.5,
    kl: 2e-7,
  }));
}

/** Every string in `x`, with where it is. */
export function strings(x: unknown, where = ''): { where: string; text: string }[] {
  if (typeof x === 'string') return [{ where, text: x }];
  if (Array.isArray(x)) return x.flatMap((v, i) => strings(v, `${where}[${i}]`));
  if (typeof x === 'object' && x !== null) return Object.entries(x).flatMap(([k, v]) => strings(v, `${where}.${k}`));
  return [];
}
