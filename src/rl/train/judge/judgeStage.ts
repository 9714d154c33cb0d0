// A judge's reward in the trainer (issue 51): each group of a batch is sent to the judge as one request
// (judgePrompt.ts), its scores read strictly (judgeAnswer.ts) and each trajectory's reward becomes
// (1 − w) × the environment's + w × the judge's (groupRelative: the judge's ranks in the group, scaled to
// [0, 1]), before the group's advantages are taken. A group the judge failed keeps its environment
// rewards but becomes env_error (not trained on, advantage 0), its outcome.details.judgeError the
// reason and details.termination what ended the episode — the group's error, never a silent 0, and the
// batch goes on. Answers are cached by sha256(model, rubric, the request's messages): the run's own
// answers in memory, earlier runs' through the store (JudgeCache). What each group sent and got back is
// kept for the store (JudgeExchange), and the iteration's judge metrics for its record.
import { createHash } from 'node:crypto';
import type { JudgeSettings } from '../../../shared/judgeSettings';
import type { IterationMetrics, Trajectory } from '../../../shared/types';
import { readAnswer, type JudgeScores } from './judgeAnswer';
import { callJudge, type JudgeEndpoint } from './judgeClient';
import { judgeRequest, trajectoryId } from './judgePrompt';

/** One group's exchange with the judge, as stored beside its trajectories (no key: the key is a header, never here). */
export interface JudgeExchange {
  readonly group: number;
  /** sha256 hex of the model, rubric and messages: the cache key. */
  readonly key: string;
  /** The chat-completions body sent (JSON). */
  readonly request: string;
  /** The last answer body received (up to the size limit), absent when none came. */
  readonly answer?: string;
  /** Why the group has no judge scores; absent when it has them. */
  readonly error?: string;
  /** The scores by trajectory id (t0, t1, …) as the judge gave them. */
  readonly scores?: Readonly<Record<string, number>>;
  readonly latencyMs: number;
  readonly tokens: number;
  readonly tries: number;
  /** Answered from the cache: no request went out. */
  readonly cached: boolean;
}

/** Earlier answers by cache key (the store's judge exchanges without an error). */
export interface JudgeCache {
  get(key: string): string | undefined;
}

/** What the stage found in one iteration: its exchanges and the metrics for the iteration's record. */
export interface JudgeReport {
  readonly exchanges: JudgeExchange[];
  readonly metrics: Partial<IterationMetrics>;
}

/** The judge's scores as ranks in [0, 1]: lowest 0, highest 1, ties at their mean rank; one score, or all tied, 0.5. */
export function relativeScores(scores: readonly number[]): number[] {
  const n = scores.length;
  if (n < 2 || scores.every((s) => s === scores[0])) return scores.map(() => 0.5);
  const order = scores.map((s, i) => ({ s, i })).sort((a, b) => a.s - b.s);
  const rank = new Array<number>(n);
  for (let a = 0; a < n;) {
    let b = a;
    while (b + 1 < n && order[b + 1]!.s === order[a]!.s) b++;
    for (let k = a; k <= b; k++) rank[order[k]!.i] = (a + b) / 2;
    a = b + 1;
  }
  return rank.map((r) => r / (n - 1));
}

/**
 * Pairwise judge–verifier agreement in a group: over pairs whose verifier outcomes differ, the share in
 * which the judge scored the successful one higher (a tie counts half). Undefined with no such pair.
 */
export function agreementPairs(scores: readonly number[], success: readonly boolean[]): { agree: number; pairs: number } {
  let agree = 0;
  let pairs = 0;
  for (let i = 0; i < scores.length; i++) {
    for (let j = i + 1; j < scores.length; j++) {
      if (success[i] === success[j]) continue;
      pairs += 1;
      const [win, lose] = success[i] ? [scores[i]!, scores[j]!] : [scores[j]!, scores[i]!];
      agree += win > lose ? 1 : win === lose ? 0.5 : 0;
    }
  }
  return { agree, pairs };
}

export class JudgeStage {
  private readonly answers = new Map<string, string>();
  private exchanges: JudgeExchange[] = [];

  constructor(
    private readonly settings: JudgeSettings,
    private readonly endpoint: JudgeEndpoint,
    /** The task's prompt by id (the group's shared task), '' when unknown. */
    private readonly promptOf: (taskId: string) => string,
    private readonly cache?: JudgeCache,
    /** Requests in flight at once. */
    private readonly concurrency = 4,
  ) {}

  /** The batch with the judge's reward mixed in, group by group (a failed group as env_error); the exchanges kept for take(). */
  async judge(trajectories: readonly Trajectory[], signal?: AbortSignal): Promise<Trajectory[]> {
    const groups = new Map<number, Trajectory[]>();
    for (const t of trajectories) {
      if (t.termination === 'env_error') continue; // the environment failed it: nothing for a judge to read
      const g = groups.get(t.group) ?? [];
      g.push(t);
      groups.set(t.group, g);
    }
    const replaced = new Map<Trajectory, Trajectory>();
    const queue = [...groups.values()];
    const worker = async (): Promise<void> => {
      for (let g = queue.shift(); g; g = queue.shift()) {
        for (const [from, to] of await this.judgeGroup(g, signal)) replaced.set(from, to);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, queue.length) }, worker));
    return trajectories.map((t) => replaced.get(t) ?? t);
  }

  /** The exchanges and metrics since the last take (one iteration's), and a fresh start. */
  take(): JudgeReport {
    const exchanges = this.exchanges.sort((a, b) => a.group - b.group);
    this.exchanges = [];
    const sent = exchanges.filter((x) => !x.cached);
    const metrics: Partial<IterationMetrics> = {
      judgeGroups: exchanges.length,
      judgeFailures: exchanges.filter((x) => x.error !== undefined).length,
      judgeCachedGroups: exchanges.length - sent.length,
      judgeTokens: sent.reduce((n, x) => n + x.tokens, 0),
      ...(sent.length > 0 ? { judgeLatencyMs: sent.reduce((n, x) => n + x.latencyMs, 0) / sent.length } : {}),
    };
    return { exchanges, metrics };
  }

  private async judgeGroup(group: readonly Trajectory[], signal?: AbortSignal): Promise<[Trajectory, Trajectory][]> {
    const request = judgeRequest(this.settings.model, this.settings.rubric, this.promptOf(group[0]!.taskId), group);
    const body = JSON.stringify(request);
    const key = createHash('sha256')
      .update(JSON.stringify([request.model, this.settings.rubric, request.messages]))
      .digest('hex');
    const ids = group.map(trajectoryId);
    const base = { group: group[0]!.group, key, request: body };
    const hit = this.answers.get(key) ?? this.cache?.get(key);
    let answer: JudgeScores | undefined;
    if (hit !== undefined) {
      try {
        answer = readAnswer(hit, ids);
        this.exchanges.push({ ...base, answer: hit, scores: Object.fromEntries(answer.scores), latencyMs: 0, tokens: answer.tokens, tries: 0, cached: true });
      } catch {
        answer = undefined; // a cached answer that no longer reads (ids changed): ask again
      }
    }
    if (!answer) {
      const call = await callJudge(this.endpoint, request, ids, signal);
      const common = { ...base, ...(call.body !== undefined ? { answer: call.body } : {}), latencyMs: call.latencyMs, tries: call.tries, cached: false };
      if (!call.answer) {
        this.exchanges.push({ ...common, error: call.error ?? 'no answer', tokens: 0 });
        return group.map((t) => [t, failed(t, call.error ?? 'no answer')]);
      }
      answer = call.answer;
      if (call.body !== undefined) this.answers.set(key, call.body);
      this.exchanges.push({ ...common, scores: Object.fromEntries(answer.scores), tokens: answer.tokens });
    }
    const raw = ids.map((id) => answer.scores.get(id)!);
    const used = this.settings.groupRelative ? relativeScores(raw) : raw;
    const w = this.settings.weight;
    return group.map((t, i) => [t, combined(t, raw[i]!, used[i]!, w)]);
  }
}

type Details = Readonly<Record<string, unknown>>;
const metricsOf = (d: Details | undefined): Details => (typeof d?.metrics === 'object' && d.metrics !== null ? (d.metrics as Details) : {});

/** A trajectory with the judge's score mixed into its reward; the parts kept in details (and charted as reward extras). */
function combined(t: Trajectory, score: number, used: number, w: number): Trajectory {
  const env = t.outcome.reward;
  const details = t.outcome.details ?? {};
  return {
    ...t,
    outcome: {
      ...t.outcome,
      reward: (1 - w) * env + w * used,
      details: { ...details, judge: { score, used, weight: w, envReward: env }, metrics: { ...metricsOf(details), judgeScore: score, envReward: env } },
    },
  };
}

/** A trajectory of a group the judge failed: left out of the update, the reason in its details. */
function failed(t: Trajectory, reason: string): Trajectory {
  return {
    ...t,
    termination: 'env_error',
    outcome: { ...t.outcome, details: { ...(t.outcome.details ?? {}), judgeError: `the judge failed this group: ${reason}`, termination: t.termination } },
  };
}

/** Judge–verifier agreement over a judged batch (the judge's raw scores against the verifier's success), or nothing. */
export function judgeAgreement(trajectories: readonly Trajectory[]): Partial<IterationMetrics> {
  const groups = new Map<number, { s: number[]; ok: boolean[] }>();
  for (const t of trajectories) {
    const j = (t.outcome.details as { judge?: { score?: unknown } } | undefined)?.judge;
    if (typeof j?.score !== 'number') continue;
    const g = groups.get(t.group) ?? { s: [], ok: [] };
    g.s.push(j.score);
    g.ok.push(t.outcome.success);
    groups.set(t.group, g);
  }
  let agree = 0;
  let pairs = 0;
  for (const g of groups.values()) {
    const r = agreementPairs(g.s, g.ok);
    agree += r.agree;
    pairs += r.pairs;
  }
  return pairs > 0 ? { judgeVerifierAgreement: agree / pairs } : {};
}
