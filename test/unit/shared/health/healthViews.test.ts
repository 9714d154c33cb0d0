// The findings where a person meets them: the dashboard's Health rows (most severe first, "show me"
// episode ids, why the section is empty) and the Runs tree's badge (severe and warnings counted, info
// not; summaries one line with invisibles marked, whatever the stored names hold).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findingMessage, outcomeMessage } from '../../../../src/host/commands/runMessages';
import { healthBadge, runParts } from '../../../../src/host/views/treeModel';
import { isWorkerToHost } from '../../../../src/shared/protocol/workerProtocol';
import { healthEmpty, healthRows, sparkPoints } from '../../../../src/shared/health/healthView';
import type { FindingView } from '../../../../src/shared/health/findings';
import type { RunSeries } from '../../../../src/shared/protocol/webviewProtocol';
import type { RunSummary } from '../../../../src/shared/types';
import { HOSTILE, rawInvisible } from '../hostileInputs';

const RUN: RunSummary = {
  id: 7,
  name: 'hot',
  status: 'completed',
  env: 'binary-search',
  policy: 'table',
  method: 'grpo',
  methodLabel: 'GRPO',
  seed: 3,
  iterationsPlanned: 6,
  iterationsDone: 6,
  latestRewardMean: 1,
  createdAt: '',
  finishedAt: null,
  error: null,
};

const finding = (over: Partial<FindingView>): FindingView => ({
  id: 'entropy-collapse',
  severity: 'severe',
  iterations: [1, 4],
  summary: 'entropy collapse: mean token entropy fell 98%',
  episodes: [11, 12, 13],
  spark: [1.8, 1.7, 0.1],
  ...over,
});

const series = (findings: FindingView[] | undefined, run = RUN): RunSeries => ({
  run,
  iterations: [{ iteration: 1 } as RunSeries['iterations'][number]],
  evaluations: [],
  ...(findings ? { findings } : {}),
});

describe('dashboard Health rows', () => {
  it('lists every selected run’s findings, the most severe first, with the episodes to open', () => {
    const rows = healthRows([
      series([finding({ id: 'no-signal', severity: 'info', iterations: [3, 3] })]),
      series([finding({}), finding({ id: 'clip-spike', severity: 'warning', episodes: [5, -1, 2.5] })], { ...RUN, id: 8, name: 'other' }),
    ]);
    assert.deepEqual(
      rows.map((r) => [r.severity, r.id, r.runId, r.run, r.iterations]),
      [
        ['severe', 'entropy-collapse', 8, 'other', 'iterations 1–4'],
        ['warning', 'clip-spike', 8, 'other', 'iterations 1–4'],
        ['info', 'no-signal', 7, 'hot', 'iteration 3'],
      ],
    );
    assert.deepEqual(rows[0]!.episodes, [11, 12, 13]);
    assert.deepEqual(rows[1]!.episodes, [5], 'ids that are not trajectory ids are not links');
    // one run selected: its name is the dashboard's, not repeated per row
    assert.equal(healthRows([series([finding({})])])[0]!.run, '');
  });

  it('draws the series behind each finding as a sparkline in a 100 × 20 box', () => {
    assert.equal(healthRows([series([finding({})])])[0]!.spark, '0,1 50,2.1 100,19');
    assert.equal(sparkPoints([2, 2]), '0,10 100,10', 'a flat series is a line through the middle');
    assert.equal(sparkPoints([1]), '', 'one point is no line');
    assert.equal(sparkPoints([1, 'x', null, Infinity, 3]), '0,19 100,1', 'only finite numbers are drawn');
    assert.equal(sparkPoints('1,2' as unknown as number[]), '');
  });

  it('says why it is empty', () => {
    assert.match(healthEmpty([], [])!, /no run selected/);
    assert.match(healthEmpty([{ ...series([]), iterations: [] }], [])!, /no iterations yet/);
    assert.match(healthEmpty([series([])], [])!, /no findings/);
    assert.match(healthEmpty([series(undefined)], [])!, /no findings/);
    assert.equal(healthEmpty([series([finding({})])], healthRows([series([finding({})])])), undefined);
  });
});

describe('Runs tree health badge', () => {
  it('counts severe findings and warnings, not info; the tooltip lists them', () => {
    const b = healthBadge([finding({}), finding({ severity: 'warning' }), finding({ severity: 'warning', id: 'clip-spike' }), finding({ severity: 'info' })])!;
    assert.equal(b.text, '⚠ 1 severe, 2 warnings');
    assert.equal(b.tooltip.split('\n').length, 4);
    assert.equal(healthBadge([finding({ severity: 'info' })]), undefined);
    assert.equal(healthBadge(undefined), undefined);
    const parts = runParts(RUN, [finding({ severity: 'warning' })]);
    assert.match(parts.description!, /^⚠ 1 warning · 6\/6/);
    assert.match(parts.tooltip!, /\nHealth:\nwarning · entropy-collapse: entropy collapse/);
    assert.doesNotMatch(runParts(RUN).description!, /⚠/);
  });

  for (const p of HOSTILE) {
    it(`${p.name}: a summary quoting stored text stays one inert line in the badge and the Health rows`, () => {
      const f = finding({ summary: `tool trouble: 90% of "${p.text}" calls failed` });
      const b = healthBadge([f])!;
      for (const line of b.tooltip.split('\n')) assert.equal(rawInvisible(line), undefined);
      assert.equal(b.tooltip.split('\n').length, 2, 'the summary adds no line');
      const row = healthRows([series([f], { ...RUN, name: p.text }), series([])])[0]!;
      for (const text of [row.summary, row.run]) {
        assert.equal(rawInvisible(text), undefined);
        assert.ok(!text.includes('\n'));
      }
    });
  }
});

describe('the run’s outcome notification', () => {
  it('names its severe findings once, at the end', () => {
    const findings = [finding({}), finding({ id: 'no-signal' }), finding({ id: 'no-signal' }), finding({ id: 'clip-spike', severity: 'warning' })];
    assert.equal(
      outcomeMessage('hot', { kind: 'finished', runId: 7, status: 'completed', findings }),
      'Agent RL: run "hot" completed. Severe findings: entropy-collapse, no-signal (the dashboard\'s Health section shows the episodes).',
    );
    assert.equal(
      outcomeMessage('hot', { kind: 'finished', runId: 7, status: 'completed', findings: [finding({ severity: 'info' })] }),
      'Agent RL: run "hot" completed.',
    );
    assert.equal(outcomeMessage('hot', { kind: 'finished', runId: 7, status: 'completed' }), 'Agent RL: run "hot" completed.');
  });

  it('a live severe finding is one warning, its stored names inert', () => {
    assert.equal(
      findingMessage('hot', finding({})),
      'Agent RL: run "hot": entropy-collapse — entropy collapse: mean token entropy fell 98%. The dashboard\'s Health section shows the episodes.',
    );
    for (const p of HOSTILE) {
      const m = findingMessage(p.text, finding({ summary: `tool trouble: "${p.text}"` }));
      assert.equal(rawInvisible(m), undefined, p.name);
      assert.ok(!m.includes('\n'));
    }
    assert.ok(isWorkerToHost({ type: 'finding', runId: 1, finding: finding({}) }));
    assert.ok(!isWorkerToHost({ type: 'finding', runId: 1, finding: { id: 3 } }));
  });

  it('the worker’s finished message carries findings as an array of records or not at all', () => {
    const base = { type: 'finished', runId: 1, status: 'completed', wallMs: 5 };
    assert.ok(isWorkerToHost({ ...base, findings: [finding({})] }));
    assert.ok(isWorkerToHost(base));
    assert.ok(!isWorkerToHost({ ...base, findings: [null] }));
    assert.ok(!isWorkerToHost({ ...base, findings: 'severe' }));
  });
});
