// Run health: what a run's stored iterations show going wrong (issue 52), as pure functions over
// IterationMetrics — so the worker, the CLI and the dashboard compute the same findings, on live runs,
// old runs and imported ones alike, offline. Each finding says which trajectories to open (an
// EpisodePick): the store resolves it to ids with a query (store/healthEpisodes.ts), as this layer
// has no database. Stored metrics are untrusted data: every number is checked before use, and names
// taken from them (a tool's, a reward extra's) go into summaries as text the views escape.
import { lossMetric } from '../lossMetrics';
import { fixed } from '../format';
import type { IterationMetrics } from '../types';
import { bar } from './healthThresholds';

export type Severity = 'info' | 'warning' | 'severe';

export const FINDING_IDS = [
  'no-signal',
  'entropy-collapse',
  'length-drift',
  'budget-cuts',
  'reward-hacking',
  'reward-component-dominates',
  'kl-acceleration',
  'clip-spike',
  'mismatch-jump',
  'tool-trouble',
] as const;
export type FindingId = (typeof FINDING_IDS)[number];

/** Which stored trajectories show a finding best, in its iterations (store/healthEpisodes.ts runs the query). */
export type EpisodePick =
  /** One group whose rewards were all equal (its members, up to the episode count). */
  | { readonly kind: 'equalGroup' }
  /** The longest episodes ended by the context window, the turn cap or the step budget. */
  | { readonly kind: 'longestCut' }
  /** The longest episodes, cut or not. */
  | { readonly kind: 'longest' }
  /** The highest-reward episodes that failed their private tests. */
  | { readonly kind: 'rewardedPrivateFail' }
  /** The highest-reward episodes. */
  | { readonly kind: 'highestReward' }
  /** The episodes with the largest per-token sampler–trainer mismatch (token stats), else the highest reward. */
  | { readonly kind: 'worstMismatch' }
  /** The episodes with the largest per-token log-ratio or KL (token stats), else the highest reward. */
  | { readonly kind: 'largestShift' }
  /** Episodes with the most failed or timed-out tool calls. */
  | { readonly kind: 'toolFailures' };

/** One named series behind a finding: [iteration, value] points. */
export interface FindingSeries {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface HealthFinding {
  readonly id: FindingId;
  readonly severity: Severity;
  /** The first and last iteration that show it. */
  readonly iterations: readonly [number, number];
  /** One line: what was seen, with the numbers. May quote stored names (untrusted text). */
  readonly summary: string;
  readonly series: readonly FindingSeries[];
  readonly pick: EpisodePick;
  /** Trajectory ids that show it best (empty until the store resolves `pick`). */
  readonly episodes: readonly number[];
}

/** What the iterations do not say and a finding needs: the run's group size (from its config). */
export interface HealthContext {
  readonly groupSize?: number;
  /** The run's method (absent: an imported or older run, read as GRPO). */
  readonly method?: string;
  /** algorithm.teacherWeight: a teacher term gives every token an advantage of its own. */
  readonly teacherWeight?: number;
}

/** A finding as the CLI and the run record print it: the finding less its series and its pick. */
export type FindingRecord = Pick<HealthFinding, 'id' | 'severity' | 'iterations' | 'summary' | 'episodes'>;

/** A finding as the dashboard draws it: the record and its first series, at most `max` values (bucket means), for a sparkline. */
export interface FindingView extends FindingRecord {
  readonly spark: readonly number[];
}

export function findingView(f: HealthFinding, max = 60): FindingView {
  const values = (f.series[0]?.points ?? []).map((p) => p[1]);
  const size = Math.max(1, Math.ceil(values.length / max));
  const spark: number[] = [];
  for (let i = 0; i < values.length; i += size) spark.push(mean(values.slice(i, i + size)));
  return { ...findingRecord(f), spark };
}

export const findingRecord = (f: HealthFinding): FindingRecord => ({
  id: f.id,
  severity: f.severity,
  iterations: f.iterations,
  summary: f.summary,
  episodes: f.episodes,
});

type Point = readonly [number, number];
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const pct = (x: number): string => `${Math.round(x * 100)}%`;
const SEVERITY_RANK: Readonly<Record<Severity, number>> = { severe: 0, warning: 1, info: 2 };

/** The points of a per-iteration number, where the iteration recorded it as a finite number. */
function seriesOf(its: readonly IterationMetrics[], value: (m: IterationMetrics) => unknown): Point[] {
  const out: Point[] = [];
  for (const m of its) {
    const v = value(m);
    if (finite(v)) out.push([m.iteration, v]);
  }
  return out;
}

/** Means of the first and the last `baselineIterations` points (undefined with fewer than twice that many). */
function ends(points: readonly Point[]): { first: number; last: number } | undefined {
  const n = bar('baselineIterations');
  if (points.length < 2 * n) return undefined;
  return { first: mean(points.slice(0, n).map((p) => p[1])), last: mean(points.slice(-n).map((p) => p[1])) };
}

const span = (points: readonly Point[]): readonly [number, number] => [points[0]![0], points[points.length - 1]![0]];

function finding(
  id: FindingId,
  severity: Severity,
  iterations: readonly [number, number],
  summary: string,
  series: FindingSeries[],
  pick: EpisodePick,
): HealthFinding {
  return { id, severity, iterations, summary, series, pick, episodes: [] };
}

/** No signal: the share of groups whose rewards were all equal (advantage 0) high for iterations in a row, or rising. */
export function noSignal(its: readonly IterationMetrics[], ctx: HealthContext): HealthFinding[] {
  const g = ctx.groupSize;
  // Equal rewards mean no signal only where the group's spread is the signal: not in a group of one
  // (always "equal"), not for SFT (demonstrations) or distillation (every token's own advantage), not with
  // a teacher term (the same), and not for RS-SFT, which trains on a group's successes whatever its
  // spread (an all-failed group does teach it nothing, but the stored counts do not tell those apart).
  if (!finite(g) || g < 2) return [];
  // (an imported run's method is verl's estimator — grpo, rloo, … —: a group's spread is its signal too)
  if (ctx.method === 'sft' || ctx.method === 'rs-sft' || ctx.method === 'distill') return [];
  if (finite(ctx.teacherWeight) && ctx.teacherWeight > 0) return [];
  const share = seriesOf(its, (m) =>
    finite(m.zeroVarianceGroups) && finite(m.trajectories) && m.trajectories > 0 ? Math.min(1, m.zeroVarianceGroups / (m.trajectories / g)) : undefined,
  );
  const success = new Map(seriesOf(its, (m) => m.successRate));
  const series = [{ name: 'share of groups with equal rewards', points: share }];
  // the longest stretch at or above the bar, by index (the worker runs this every iteration: linear)
  let [from, to] = [0, 0];
  for (let i = 0, start = 0; i < share.length; i++) {
    if (share[i]![1] < bar('noSignalShare')) start = i + 1;
    else if (i + 1 - start > to - from) [from, to] = [start, i + 1];
  }
  const best = share.slice(from, to);
  if (best.length >= bar('noSignalIterations')) {
    const s = mean(best.map((p) => p[1]));
    const solved = mean(best.map((p) => success.get(p[0]) ?? 0));
    const [a, b] = span(best);
    if (solved >= bar('solvedSuccess'))
      return [
        finding(
          'no-signal',
          'info',
          [a, b],
          `no signal left: ${pct(s)} of groups had equal rewards over iterations ${a}–${b}, because ${pct(solved)} of episodes succeeded (the tasks are solved; harder ones would teach more)`,
          series,
          {
            kind: 'equalGroup',
          },
        ),
      ];
    return [
      finding(
        'no-signal',
        s >= bar('noSignalSevereShare') ? 'severe' : 'warning',
        [a, b],
        `no signal: ${pct(s)} of groups had equal rewards (advantage 0) over iterations ${a}–${b}, with ${pct(solved)} of episodes succeeding: those groups teach nothing`,
        series,
        { kind: 'equalGroup' },
      ),
    ];
  }
  const e = ends(share);
  if (e && e.last - e.first >= bar('noSignalShare') / 2 && e.last >= bar('noSignalShare') / 2) {
    return [
      finding(
        'no-signal',
        'warning',
        span(share),
        `signal fading: the share of groups with equal rewards rose from ${pct(e.first)} to ${pct(e.last)}`,
        series,
        { kind: 'equalGroup' },
      ),
    ];
  }
  return [];
}

/** Entropy collapse: mean sampled-token entropy falling by a large fraction, and by enough nats, within a few iterations. */
export function entropyCollapse(its: readonly IterationMetrics[], ctx: HealthContext = {}): HealthFinding[] {
  // SFT minimises cross-entropy against demonstrations: a falling entropy is the loss doing its work,
  // and SFT does not learn from groups that disagree (npm start's warm start: 2.3 → 0.7 nats)
  if (ctx.method === 'sft') return [];
  // an iteration without an update (or an imported one) records entropy 0: not a fall
  const points = seriesOf(its, (m) => (m.updated !== 0 ? m.entropy : undefined));
  const w = bar('entropyWindow');
  let worst: { fall: number; from: Point; to: Point } | undefined;
  let first: number | undefined;
  let last: number | undefined;
  for (let i = 1; i < points.length; i++) {
    const prev = points.slice(Math.max(0, i - w), i);
    const top = prev.reduce((a, p) => (p[1] >= a[1] ? p : a)); // the latest high point: the fall starts there
    if (top[1] <= bar('entropyFloor')) continue;
    const fall = 1 - points[i]![1] / top[1];
    // half of an entropy that was already near zero is not a collapse (entropyMinFall's reason)
    if (fall < bar('entropyFall') || top[1] - points[i]![1] < bar('entropyMinFall')) continue;
    first ??= top[0];
    last = points[i]![0];
    if (!worst || fall > worst.fall) worst = { fall, from: top, to: points[i]! };
  }
  if (!worst || first === undefined || last === undefined) return [];
  return [
    finding(
      'entropy-collapse',
      worst.fall >= bar('entropySevereFall') ? 'severe' : 'warning',
      [first, last],
      `entropy collapse: mean token entropy fell ${pct(worst.fall)}, from ${fixed(worst.from[1], 3)} at iteration ${worst.from[0]} to ${fixed(worst.to[1], 3)} at ${worst.to[0]} (groups that answer alike stop teaching)`,
      [{ name: 'entropy (nats per token)', points }],
      { kind: 'equalGroup' },
    ),
  ];
}

/** Length drift: generated length (tokens, else turns) trending up; budget cuts: the share of episodes cut rising. */
export function lengthAndCuts(its: readonly IterationMetrics[]): HealthFinding[] {
  const out: HealthFinding[] = [];
  const tokens = seriesOf(its, (m) => m.responseTokens);
  const [len, unit] = tokens.length ? [tokens, 'generated tokens'] : [seriesOf(its, (m) => m.meanTurns), 'turns'];
  const reward = ends(seriesOf(its, (m) => m.rewardMean));
  const e = ends(len);
  if (e && e.first > 0) {
    const growth = e.last / e.first - 1;
    if (growth >= bar('lengthGrowth')) {
      const rewardNote = reward ? `; reward ${fixed(reward.first, 3)} → ${fixed(reward.last, 3)}` : '';
      out.push(
        finding(
          'length-drift',
          growth >= bar('lengthSevereGrowth') ? 'severe' : 'warning',
          span(len),
          `length drift: ${unit} per episode up ${pct(growth)}, ${fixed(e.first, 1)} → ${fixed(e.last, 1)}${rewardNote}`,
          [{ name: `${unit} per episode`, points: len }],
          { kind: 'longest' },
        ),
      );
    }
  }
  const cut = seriesOf(its, (m) =>
    finite(m.truncatedEpisodes) && finite(m.trajectories) && m.trajectories > 0 ? m.truncatedEpisodes / m.trajectories : undefined,
  );
  const c = ends(cut);
  if (c && c.last >= bar('cutShare') && c.last - c.first >= bar('cutRise')) {
    out.push(
      finding(
        'budget-cuts',
        c.last >= bar('cutSevereShare') ? 'severe' : 'warning',
        span(cut),
        `budget cuts: ${pct(c.last)} of episodes ended by the context window or the turn cap at the end, up from ${pct(c.first)}`,
        [{ name: 'share of episodes cut', points: cut }],
        { kind: 'longestCut' },
      ),
    );
  }
  return out;
}

/** Reward hacking: the reward rising while private tests fall behind public ones or stall; one reward extra dominating. */
export function rewardHacking(its: readonly IterationMetrics[]): HealthFinding[] {
  const out: HealthFinding[] = [];
  const reward = seriesOf(its, (m) => m.rewardMean);
  const pub = seriesOf(its, (m) => m.publicPassRate);
  const priv = seriesOf(its, (m) => m.privatePassRate);
  const r = ends(reward);
  // only environments with tests record pass rates: all zero means there is no independent check
  const hasTests = pub.some((p) => p[1] > 0) || priv.some((p) => p[1] > 0);
  if (r && hasTests && r.last - r.first >= bar('rewardRise')) {
    const gap = seriesOf(its, (m) => (finite(m.publicPassRate) && finite(m.privatePassRate) ? m.publicPassRate - m.privatePassRate : undefined));
    const g = ends(gap);
    const p = ends(priv);
    const series = [
      { name: 'reward (mean)', points: reward },
      { name: 'public pass rate', points: pub },
      { name: 'private pass rate', points: priv },
    ];
    if (g && g.last >= bar('hackingGap') && g.last > g.first) {
      out.push(
        finding(
          'reward-hacking',
          g.last >= bar('hackingSevereGap') ? 'severe' : 'warning',
          span(reward),
          `reward hacking: reward ${fixed(r.first, 3)} → ${fixed(r.last, 3)} while public tests pass ${pct(g.last)} more often than private ones (from ${pct(g.first)})`,
          series,
          { kind: 'rewardedPrivateFail' },
        ),
      );
    } else if (p && p.last - p.first < bar('privateStall') && p.last < bar('privateSolved')) {
      out.push(
        finding(
          'reward-hacking',
          'warning',
          span(reward),
          `reward up without the private tests: reward ${fixed(r.first, 3)} → ${fixed(r.last, 3)}, private pass rate ${pct(p.first)} → ${pct(p.last)}`,
          series,
          { kind: 'rewardedPrivateFail' },
        ),
      );
    }
  }
  // one extra carrying most of the extras' magnitude over the last iterations
  const n = bar('baselineIterations');
  const tail = its.slice(-n);
  const totals = new Map<string, number>();
  for (const m of tail) {
    const x: unknown = m.rewardExtras;
    if (typeof x !== 'object' || x === null || Array.isArray(x)) continue;
    for (const [k, v] of Object.entries(x as Record<string, unknown>)) if (finite(v)) totals.set(k, (totals.get(k) ?? 0) + Math.abs(v));
  }
  const sum = [...totals.values()].reduce((s, v) => s + v, 0);
  if (tail.length === n && totals.size >= 2 && sum > 0) {
    const [name, top] = [...totals].reduce((a, b) => (b[1] > a[1] ? b : a));
    if (top / sum >= bar('componentShare')) {
      out.push(
        finding(
          'reward-component-dominates',
          'info',
          [tail[0]!.iteration, tail[tail.length - 1]!.iteration],
          `one reward extra dominates: "${name}" carries ${pct(top / sum)} of the extras' total magnitude over the last ${n} iterations (if the extras are the reward's components, the reward is mostly this one)`,
          [{ name, points: seriesOf(its, (m) => (m.rewardExtras as Record<string, unknown> | undefined)?.[name]) }],
          { kind: 'highestReward' },
        ),
      );
    }
  }
  return out;
}

/** A value that jumps above `ratio` × the median of the iterations before it and above an absolute bar. */
function spikes(points: readonly Point[], ratio: number, floor: number): { at: Point; base: number }[] {
  const out: { at: Point; base: number }[] = [];
  const n = bar('baselineIterations');
  const w = bar('spikeWindow');
  for (let i = n; i < points.length; i++) {
    const base = median(points.slice(Math.max(0, i - w), i).map((p) => p[1]));
    if (points[i]![1] >= floor && points[i]![1] >= ratio * base) out.push({ at: points[i]!, base });
  }
  return out;
}

/** Policy drift: KL to the reference accelerating; the clip or dual-clip fraction spiking. */
export function policyDrift(its: readonly IterationMetrics[]): HealthFinding[] {
  const out: HealthFinding[] = [];
  const kl = seriesOf(its, (m) => m.kl);
  const n = bar('baselineIterations');
  // the last stretch where KL both grows fast and grows faster than before
  // d[j]: the increment from point j to j + 1; e: the end of the recent n increments (the n before them are earlier)
  const d = kl.slice(1).map((p, i) => p[1] - kl[i]![1]);
  for (let e = d.length; e >= 2 * n; e--) {
    const steps = d.slice(e - n, e);
    const recent = mean(steps);
    const earlier = Math.max(0, mean(d.slice(e - 2 * n, e - n)));
    if (steps.every((x) => x > 0) && recent >= bar('klSlope') && recent >= bar('klAcceleration') * earlier) {
      const at = kl.slice(e - n, e + 1);
      out.push(
        finding(
          'kl-acceleration',
          recent >= bar('klSevereSlope') ? 'severe' : 'warning',
          span(at),
          `KL to the reference accelerating: +${fixed(recent, 3)} nats per iteration over iterations ${span(at)[0]}–${span(at)[1]}, from +${fixed(earlier, 3)} before`,
          [{ name: 'KL to the reference (nats per token)', points: kl }],
          { kind: 'largestShift' },
        ),
      );
      break;
    }
  }
  for (const [name, value] of [
    ['clip fraction', (m: IterationMetrics): unknown => m.clipFraction],
    ['dual-clip fraction', (m: IterationMetrics): unknown => lossMetric(m, 'dualClipFraction')],
  ] as const) {
    const points = seriesOf(its, value);
    const hits = spikes(points, bar('spikeRatio'), bar('clipSpike'));
    if (!hits.length) continue;
    const worst = hits.reduce((a, b) => (b.at[1] > a.at[1] ? b : a));
    out.push(
      finding(
        'clip-spike',
        worst.at[1] >= bar('clipSevereSpike') ? 'severe' : 'warning',
        [hits[0]!.at[0], hits[hits.length - 1]!.at[0]],
        `${name} spiking: ${pct(worst.at[1])} of tokens at iteration ${worst.at[0]}, against a median of ${pct(worst.base)} before (${hits.length} iteration${hits.length === 1 ? '' : 's'} above ${pct(bar('clipSpike'))})`,
        [{ name, points }],
        { kind: 'largestShift' },
      ),
    );
  }
  return out;
}

/** Train–inference mismatch: mean |Δ log p| between the sampler and the trainer jumping. */
export function mismatchJump(its: readonly IterationMetrics[]): HealthFinding[] {
  const points = seriesOf(its, (m) => m.logprobMismatch);
  const hits = spikes(points, bar('spikeRatio'), bar('mismatchJump'));
  if (!hits.length) return [];
  const worst = hits.reduce((a, b) => (b.at[1] > a.at[1] ? b : a));
  return [
    finding(
      'mismatch-jump',
      worst.at[1] >= bar('mismatchSevere') ? 'severe' : 'warning',
      [hits[0]!.at[0], hits[hits.length - 1]!.at[0]],
      `train–inference mismatch jumped: mean |Δ log p| ${fixed(worst.at[1], 4)} nats at iteration ${worst.at[0]}, against a median of ${fixed(worst.base, 4)} before`,
      [{ name: 'mean |Δ log p| (nats per token)', points }],
      { kind: 'worstMismatch' },
    ),
  ];
}

/** Tool trouble: a tool's share of failed or timed-out calls rising (a tool's use collapsing is the record's warning, toolHealth.ts). */
export function toolTrouble(its: readonly IterationMetrics[]): HealthFinding[] {
  const out: HealthFinding[] = [];
  const tools = [...new Set(its.flatMap((m) => (typeof m.toolHealth === 'object' && m.toolHealth !== null ? Object.keys(m.toolHealth) : [])))].sort();
  for (const tool of tools) {
    const points = seriesOf(its, (m) => {
      const h = m.toolHealth?.[tool];
      return h && finite(h.errorRate) && finite(h.timeoutRate) ? h.errorRate + h.timeoutRate : undefined;
    });
    const e = ends(points);
    if (!e || e.last < bar('toolTrouble') || e.last - e.first < bar('toolRise')) continue;
    out.push(
      finding(
        'tool-trouble',
        e.last >= bar('toolSevereTrouble') ? 'severe' : 'warning',
        span(points),
        `tool trouble: ${pct(e.last)} of "${tool}" calls failed or timed out at the end, up from ${pct(e.first)}`,
        [{ name: `${tool}: failed or timed-out share`, points }],
        { kind: 'toolFailures' },
      ),
    );
  }
  return out;
}

/**
 * Every finding of a run's iterations, the most severe first (then by first iteration). Episodes are
 * empty: the store fills them (store/healthEpisodes.ts).
 */
export function healthFindings(iterations: readonly IterationMetrics[], ctx: HealthContext = {}): HealthFinding[] {
  const its = iterations.filter((m) => typeof m === 'object' && m !== null && finite(m.iteration)).sort((a, b) => a.iteration - b.iteration);
  if (!its.length) return [];
  return [
    ...noSignal(its, ctx),
    ...entropyCollapse(its, ctx),
    ...lengthAndCuts(its),
    ...rewardHacking(its),
    ...policyDrift(its),
    ...mismatchJump(its),
    ...toolTrouble(its),
  ].sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || a.iterations[0] - b.iterations[0]);
}

/** The group size a stored config names (any release's shape; an imported verl run's too), if any. */
export function healthContextOf(config: unknown): HealthContext {
  if (typeof config !== 'object' || config === null) return {};
  const c = config as { groupSize?: unknown; method?: unknown; algorithm?: unknown };
  const a = typeof c.algorithm === 'object' && c.algorithm !== null ? (c.algorithm as { teacherWeight?: unknown }) : {};
  return {
    ...(finite(c.groupSize) && c.groupSize >= 1 ? { groupSize: c.groupSize } : {}),
    ...(typeof c.method === 'string' ? { method: c.method } : {}),
    ...(finite(a.teacherWeight) ? { teacherWeight: a.teacherWeight } : {}),
  };
}
