import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  chartSummary,
  emptyReason,
  PANELS,
  PHASE_PANEL,
  panelLines,
  panelsFor,
  phaseBars,
  phaseEmptyReason,
  pointLabel,
  pointRadius,
  pointTitle,
  showLegend,
} from '../../../src/shared/dashboardModel';
import { HOSTILE, rawInvisible } from './hostileInputs';
import type { RunSeries } from '../../../src/shared/protocol/webviewProtocol';
import type { IterationMetrics } from '../../../src/shared/types';
import { LOSS_METRICS } from '../../../src/shared/lossMetrics';

const metrics = (iteration: number, extra: Partial<IterationMetrics> = {}): IterationMetrics => ({
  iteration,
  rewardMean: 1,
  rewardMax: 1,
  rewardMin: 1,
  successRate: 1,
  publicPassRate: 1,
  privatePassRate: 1,
  meanTurns: 2,
  zeroVarianceGroups: 0,
  trajectories: 8,
  loss: 0.5,
  policyLoss: 0.5,
  kl: 0,
  clipFraction: 0,
  entropy: 1,
  gradNorm: 1,
  ratioMin: 1,
  ratioMax: 1,
  updated: 1,
  trainedTrajectories: 8,
  policyVersion: iteration,
  wallMs: 100,
  ...extra,
});
const series = (policy: string, iterations: IterationMetrics[], name = `${policy} run`, method = 'grpo'): RunSeries => ({
  run: {
    id: 1,
    name,
    status: 'completed',
    env: 'binary-search',
    policy,
    method,
    methodLabel: method,
    seed: 1,
    iterationsPlanned: 1,
    iterationsDone: iterations.length,
    latestRewardMean: 1,
    createdAt: '',
    finishedAt: null,
    error: null,
  },
  iterations,
  evaluations: [
    {
      iteration: 0,
      episodes: 1,
      successes: 1,
      successRate: 1,
      meanActions: 1,
      publicPassRate: 1,
      privatePassRate: 1,
      rewardMean: 1,
      seed: 1,
      policyVersion: 0,
    },
  ],
});
const panel = (id: string) => PANELS.find((p) => p.id === id)!;

describe('dashboard model', () => {
  it('a series of one point is drawn with visible points; long ones as lines', () => {
    const [line] = panelLines(panel('success'), [series('table', [metrics(1)])]);
    assert.equal(line!.data.length, 1);
    assert.ok(line!.pointRadius > 0);
    assert.equal(pointRadius(500), 0);
    assert.equal(panel('success').rate, true, 'a constant share is drawn on a 0–1 axis');
    assert.equal(panelLines(panel('evaluation'), [series('table', [])])[0]!.pointRadius, 3);
  });

  it('an empty chart says why', () => {
    const table = series('table', [metrics(1)]);
    assert.equal(
      emptyReason(panel('tools'), [table], panelLines(panel('tools'), [table]).length),
      'table policies make no tool calls (their actions are table entries)',
    );
    const lm = series('transformer', [metrics(1)]);
    assert.equal(emptyReason(panel('tools'), [lm], 0), 'this run has no language-model metrics');
    // an empty state says what will appear, and when
    assert.match(emptyReason(panel('evaluation'), [{ ...table, evaluations: [] }], 0)!, /^no evaluations yet: a point appears when a run evaluates/);
    assert.equal(emptyReason(panel('reward'), [series('table', [])], 0), 'no iterations yet: a point appears here as each iteration of the run finishes');
    assert.match(emptyReason(panel('reward'), [], 0)!, /no run selected/);
    assert.equal(emptyReason(panel('accuracy'), [table], 0), 'only SFT runs record token accuracy');
    assert.equal(emptyReason(panel('reward'), [table], 2), undefined);
  });

  it("a workspace reward's extras get a line each, by name, from whatever the runs recorded", () => {
    const s = series('transformer', [metrics(1, { rewardExtras: { calls: 2, answered: 1 } }), metrics(2, { rewardExtras: { calls: 1.5, answered: 1 } })]);
    const lines = panelLines(panel('rewardExtras'), [s]);
    assert.deepEqual(
      lines.map((l) => [l.label, l.data.map((p) => p.y)]),
      [
        ['transformer run · answered', [1, 1]],
        ['transformer run · calls', [2, 1.5]],
      ],
    );
    const none = series('table', [metrics(1)]);
    assert.equal(panelLines(panel('rewardExtras'), [none]).length, 0);
    assert.match(emptyReason(panel('rewardExtras'), [none], 0)!, /no reward extras/);
  });

  it('legends shorten long names and keep the whole name for the hover', () => {
    const long = series('table', [metrics(1)], `a very long run name that goes on and on \u202Eand on`);
    const [line] = panelLines(panel('success'), [long]);
    assert.equal(line!.label, 'a very long run name tha…');
    assert.equal(line!.fullLabel, 'a very long run name that goes on and on ⟨U+202E⟩and on (run 1)');
  });

  it('stacks where each iteration’s time went, and says when no timings were recorded', () => {
    const timed = series('transformer', [
      metrics(1, { phaseGenerateMs: 3000, phaseEnvMs: 1000, phaseUpdateMs: 2000 }),
      metrics(2, { phaseGenerateMs: 5000, phaseEnvMs: 0, phaseUpdateMs: 1000 }),
    ]);
    const bars = phaseBars([timed]);
    assert.deepEqual(
      bars.map((b) => b.phase),
      ['generate', 'environment', 'reference', 'update', 'evaluate', 'store'],
    );
    assert.deepEqual(bars[0]!.data, [
      { x: 1, y: 3 },
      { x: 2, y: 5 },
    ]);
    assert.deepEqual(
      bars[2]!.data,
      [
        { x: 1, y: 0 },
        { x: 2, y: 0 },
      ],
      'a phase not recorded counts 0 in a timed iteration',
    );
    assert.deepEqual(phaseBars([timed], 1)[0]!.data, [{ x: 1, y: 4 }], 'long runs are drawn as bucket means');
    const untimed = series('table', [metrics(1)]);
    assert.deepEqual(phaseBars([untimed]), []);
    assert.equal(phaseEmptyReason([untimed], 0), 'no phase timings recorded for this run');
    assert.equal(phaseEmptyReason([timed], bars.length), undefined);
  });
});

describe('evaluation panel', () => {
  it('draws sampled pass@1, greedy pass@1 and pass@k (named with its k) for every run that recorded them', () => {
    const s: RunSeries = {
      ...series('transformer', []),
      evaluations: [0, 10].map((iteration) => ({
        iteration,
        episodes: 16,
        successes: 8,
        successRate: 0.5,
        meanActions: 2,
        publicPassRate: 1,
        privatePassRate: 0.5,
        rewardMean: 0.5,
        seed: 1,
        policyVersion: iteration,
        greedySuccessRate: 0.6,
        passAtK: 0.9,
        passK: 8,
      })),
    };
    const lines = panelLines(
      PANELS.find((p) => p.id === 'evaluation')!,
      [s],
    );
    assert.deepEqual(
      lines.map((l) => l.label),
      ['transformer run · sampled', 'transformer run · greedy', 'transformer run · pass@8'],
    );
    assert.deepEqual(lines[1]!.data, [
      { x: 0, y: 0.6 },
      { x: 10, y: 0.6 },
    ]);
    // a table run's evaluations have no greedy or pass@k figures: only its sampled line
    assert.equal(
      panelLines(
        PANELS.find((p) => p.id === 'evaluation')!,
        [series('table', [])],
      ).length,
      1,
    );
  });

  it('charts explain themselves: a unit on every y axis, a legend only for more than one line, a hover per iteration, the chart in words', () => {
    for (const p of [...PANELS, PHASE_PANEL]) assert.ok(p.unit.trim().length > 0, `${p.id} has a unit`);
    assert.equal(new Set(PANELS.map((p) => p.id)).size, PANELS.length);
    assert.equal(showLegend(0), false);
    assert.equal(showLegend(1), false);
    assert.equal(showLegend(2), true);
    assert.equal(pointTitle(12345), 'iteration 12,345');
    assert.equal(pointLabel('run a · mean', 0.123456), 'run a · mean: 0.123');
    const reward = PANELS.find((p) => p.id === 'reward')!;
    const one = series('table', [metrics(0), metrics(1, { rewardMean: 0.25 }), metrics(2, { rewardMean: 0.5 })], 'one');
    assert.equal(
      chartSummary(reward, panelLines(reward, [one]), undefined),
      'Reward (mean, max) — reward per episode by iteration: one · mean: 3 points, iterations 0–2, last 0.5; one · max: 3 points, iterations 0–2, last 1',
    );
    assert.equal(
      chartSummary(reward, [], emptyReason(reward, [], 0)),
      'Reward (mean, max) — reward per episode by iteration: empty, no run selected: tick one above, or run “Agent RL: Compare Runs”',
    );
    const many = Array.from({ length: 10 }, (_, i) => ({ label: `l${i}`, data: [{ x: 3, y: i }] }));
    assert.match(chartSummary(reward, many, undefined), /l7: 1 point, iteration 3, last 7; and 2 more lines$/);
  });

  it("hostile text: the chart in words and a point's hover show a run's name as text", () => {
    for (const h of HOSTILE) {
      const run = series('table', [metrics(0), metrics(1)], h.text);
      for (const p of PANELS) {
        const lines = panelLines(p, [run]);
        const text = chartSummary(p, lines, emptyReason(p, [run], lines.length));
        assert.equal(rawInvisible(text), undefined, `${h.name} in ${p.id}'s summary`);
        for (const l of lines) assert.equal(rawInvisible(pointLabel(l.label, 1)), undefined, `${h.name} in ${p.id}'s hover`);
      }
    }
  });
});

describe("the policy loss's metrics", () => {
  const ids = (ps: readonly { id: string }[]): string[] => ps.map((p) => p.id);
  it("a metric added to a loss's map gets a chart: described ones with their title and unit, any other under its own name", () => {
    const run = series('transformer', [
      metrics(1, { lossMetrics: { sequenceClipFraction: 0.25, approxKl: 0.01, myNewMetric: 7 } }),
      metrics(2, { lossMetrics: { sequenceClipFraction: 0.5, approxKl: 0.02, myNewMetric: 8 } }),
    ]);
    const panels = panelsFor([run]);
    assert.deepEqual(ids(panels).slice(0, PANELS.length), ids(PANELS));
    // in the descriptor table's order, then the undescribed ones by name
    assert.deepEqual(ids(panels).slice(PANELS.length), ['loss:approxKl', 'loss:sequenceClipFraction', 'loss:myNewMetric']);
    const seqClip = panels.find((p) => p.id === 'loss:sequenceClipFraction')!;
    assert.equal(seqClip.title, LOSS_METRICS.sequenceClipFraction!.title);
    assert.equal(seqClip.unit, 'share of sequences');
    assert.equal(seqClip.rate, true);
    assert.deepEqual(panelLines(seqClip, [run])[0]!.data, [
      { x: 1, y: 0.25 },
      { x: 2, y: 0.5 },
    ]);
    const generic = panels.find((p) => p.id === 'loss:myNewMetric')!;
    assert.match(generic.title, /myNewMetric/);
    assert.equal(generic.drill, undefined, 'a metric without a drill-down in its descriptor has none');
    // the distillation teacher's reverse KL opens the iteration's worst tokens by |student − teacher|
    const distill = panelsFor([series('transformer', [metrics(1, { lossMetrics: { teacherReverseKl: 0.4, teacherMs: 12 } })], 'd', 'distill')]);
    assert.equal(distill.find((p) => p.id === 'loss:teacherReverseKl')!.drill, 'reverseKl');
    assert.equal(distill.find((p) => p.id === 'loss:teacherMs')!.drill, undefined);
    assert.deepEqual(
      panelLines(generic, [run])[0]!.data.map((p) => p.y),
      [7, 8],
    );
  });
  it('no chart for a metric no selected run recorded; the clip sides are lines of the clip chart, not charts of their own', () => {
    assert.deepEqual(ids(panelsFor([series('table', [metrics(1)])])), ids(PANELS));
    const run = series('table', [metrics(1, { clipFraction: 0.3, lossMetrics: { clipFractionLow: 0.1, clipFractionHigh: 0.2 } })]);
    assert.deepEqual(ids(panelsFor([run])), ids(PANELS));
    assert.deepEqual(
      panelLines(panel('clip'), [run]).map((l) => [l.label, l.data[0]!.y]),
      [
        ['table run · all', 0.3],
        ['table run · low', 0.1],
        ['table run · high', 0.2],
      ],
    );
  });
  it('runs stored before the map still chart: their top-level clip sides, dual clip and approximate KL', () => {
    const old = series('transformer', [metrics(1, { clipFractionLow: 0.05, clipFractionHigh: 0.15, dualClipFraction: 0, approxKl: 0.003 })]);
    assert.deepEqual(ids(panelsFor([old])).slice(PANELS.length), ['loss:dualClipFraction', 'loss:approxKl']);
    assert.deepEqual(
      panelLines(panel('clip'), [old]).map((l) => l.data[0]!.y),
      [0, 0.05, 0.15],
    );
    const kl = panelsFor([old]).find((p) => p.id === 'loss:approxKl')!;
    assert.equal(panelLines(kl, [old])[0]!.data[0]!.y, 0.003);
  });
  it('stored maps are data: values that are not finite numbers are not drawn, and a map that is not an object is none', () => {
    const bad = series('transformer', [
      metrics(1, { lossMetrics: { approxKl: 'x' as unknown as number, truncatedFraction: Number.NaN } }),
      metrics(2, { lossMetrics: 'oops' as unknown as Record<string, number> }),
    ]);
    const panels = panelsFor([bad]);
    assert.deepEqual(ids(panels).slice(PANELS.length), ['loss:approxKl', 'loss:truncatedFraction']);
    for (const p of panels.slice(PANELS.length)) assert.deepEqual(panelLines(p, [bad]), []);
  });
});
