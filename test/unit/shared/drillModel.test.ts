import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drillView } from '../../../src/shared/drillModel';
import type { DashboardDrill } from '../../../src/shared/protocol/webviewProtocol';
import { HOSTILE, rawInvisible } from './hostileInputs';
import { strings, worstTokens } from './viewModelFixtures';

const drill = (over: Partial<DashboardDrill> = {}): DashboardDrill => ({
  type: 'drill',
  runId: 2,
  iteration: 4,
  by: 'mismatch',
  items: worstTokens(20),
  histogram: { edges: [0, 1e-7, 2e-7, 3e-7], counts: [1200, 3, 1], tokens: 1204, unknown: 12 },
  ...over,
});

describe("drillModel: the dashboard's drill-down", () => {
  it('the worst 20 as a table with the inspector’s columns, sorted by the chart’s measure', () => {
    const v = drillView(drill(), 'grpo run');
    assert.equal(v.title, 'grpo run · iteration 4: worst tokens by |training − sampling log-prob|');
    assert.equal(v.empty, undefined);
    assert.equal(v.table.rows.length, 20);
    assert.deepEqual(
      v.table.columns.map((c) => c.label),
      ['trajectory', 'token', 'turn', 'position', 'sampled', 'trained', 'Δ', 'ratio', 'clip', 'advantage', 'KL'],
    );
    assert.equal(v.table.sortedBy, 'delta');
    assert.deepEqual(
      v.table.rows[2]!.cells.map((c) => c.text),
      ['102', '#302', '2', '4', '-4.64', '-4', '0.333', '1.02', 'no', '-0.5', '2e-7'],
    );
    assert.deepEqual([v.table.rows[2]!.trajectoryId, v.table.rows[2]!.turn, v.table.rows[2]!.token], [102, 2, 4]);
    assert.equal(drillView(drill({ by: 'logRatio' }), 'r').table.sortedBy, 'ratio');
    assert.match(drillView(drill({ by: 'kl' }), 'r').title, /worst tokens by KL to the reference$/);
    // from the teacher's reverse-KL chart: sorted by |student − teacher|, whose column joins the table
    const teacher = drillView(
      drill({ by: 'reverseKl', items: worstTokens(3).map((w, i) => ({ ...w, by: 'reverseKl' as const, teacher: -2, reverseKl: 1 - i })) }),
      'r',
    );
    assert.match(teacher.title, /worst tokens by \|student − teacher log-prob\| \(the distillation teacher’s per-token term\)$/);
    assert.equal(teacher.table.sortedBy, 'teacher');
    assert.equal(teacher.table.columns.at(-1)!.label, 'student − teacher');
    assert.deepEqual(
      teacher.table.rows.map((r) => [r.cells.at(-1)!.text, r.cells.at(-1)!.title]),
      [
        ['1', 'teacher log-prob -2'],
        ['0', 'teacher log-prob -2'],
        ['-1', 'teacher log-prob -2'],
      ],
    );
  });

  it('the histogram: bars at the bins’ centres, labels and the line above it in format.ts’s numbers', () => {
    const h = drillView(drill(), 'r').histogram;
    assert.equal(
      h.meta,
      '|training − sampling log-prob| of 1,204 tokens (12 more trained after another step of the update: unknown; algorithm.oldLogprobs "recompute" records every token)',
    );
    assert.deepEqual(
      h.bars.map((b) => b.label),
      ['[0, 1e-7): 1,200 tokens', '[1e-7, 2e-7): 3 tokens', '[2e-7, 3e-7]: 1 token'],
    );
    assert.ok(Math.abs(h.bars[1]!.x - 1.5e-7) < 1e-15);
    assert.equal(
      drillView(drill({ histogram: { edges: [0, 1], counts: [0], tokens: 0, unknown: 0 } }), 'r').histogram.meta,
      '|training − sampling log-prob| of 0 tokens',
    );
  });

  it('why the table is empty', () => {
    assert.match(drillView(drill({ items: [] }), 'r').empty!, /^no token of this iteration has this number recorded/);
    assert.equal(drillView(drill({ items: [], error: 'database is locked' }), 'r').empty, 'could not be read: database is locked');
  });

  it('hostile text (run name, backend error): inert, on one line, cut', () => {
    for (const h of HOSTILE) {
      const v = drillView(drill({ error: h.text }), h.text);
      for (const s of strings(v)) {
        assert.equal(rawInvisible(s.text), undefined, `${h.name}: ${s.where}`);
        assert.doesNotMatch(s.text, /[\n\r]/, `${h.name}: ${s.where}`);
        assert.ok(s.text.length <= 2000, `${h.name}: ${s.where}`);
      }
    }
  });
});
