import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { comparisonView } from '../../../src/shared/comparisonModel';
import { configDifferences } from '../../../src/shared/configDiff';
import type { DashboardComparison } from '../../../src/shared/protocol/webviewProtocol';
import { HOSTILE, rawInvisible } from './hostileInputs';
import { strings } from './viewModelFixtures';

const a = { name: 'a', env: 'code', policy: 'transformer', method: 'grpo', algorithm: { learningRate: 0.01, klCoef: 0 }, policyOptions: { dModel: 16 } };
const b = { name: 'b', env: 'code', policy: 'table', method: 'sft', algorithm: { learningRate: 0.02, klCoef: 0 }, policyOptions: { dModel: 32 }, seed: 3 };

const comparison = (over: Partial<DashboardComparison> = {}): DashboardComparison => ({
  type: 'comparison',
  runs: [
    { id: 3, name: 'grpo run' },
    { id: 5, name: 'sft run' },
  ],
  differences: configDifferences([a, b]),
  sharedTasks: [
    {
      taskId: 'add 2 3',
      runs: [
        { runId: 3, episodes: 1234, rewardMean: 0.5, successRate: 0.5, trajectoryId: 11 },
        { runId: 5, episodes: 4, rewardMean: 1, successRate: 1, trajectoryId: 12 },
      ],
    },
  ],
  ...over,
});

describe('comparisonModel: Compare Runs', () => {
  it('config differences grouped by section, the top-level keys first', () => {
    const v = comparisonView(comparison());
    assert.equal(v.hidden, false);
    assert.deepEqual(
      v.runs.map((r) => r.text),
      ['grpo run (run 3)', 'sft run (run 5)'],
    );
    assert.equal(v.differences.title, 'Config differences (6)');
    assert.deepEqual(
      v.differences.sections.map((s) => [s.title, s.rows.map((r) => [r.key, ...r.values])]),
      [
        [
          'run',
          [
            ['method', '"grpo"', '"sft"'],
            ['name', '"a"', '"b"'],
            ['policy', '"transformer"', '"table"'],
            ['seed', '—', '3'],
          ],
        ],
        ['algorithm', [['learningRate', '0.01', '0.02']]],
        ['policyOptions', [['dModel', '16', '32']]],
      ],
    );
    assert.equal(v.differences.sections[1]!.rows[0]!.title, 'algorithm.learningRate');
  });

  it("the shared tasks: each run's reward, success and episodes, a cell opening its trajectory", () => {
    const v = comparisonView(comparison());
    assert.equal(v.tasks.title, 'Tasks every run sampled (1 shown, the most different rewards first)');
    assert.deepEqual(v.tasks.rows[0]!.cells, [
      {
        text: 'reward 0.50 · success 50% · 1,234 ep.',
        title: "Open run 3's latest trajectory of this task (11) in the inspector",
        trajectoryId: 11,
        tone: 'neutral',
      },
      {
        text: 'reward 1.00 · success 100% · 4 ep.',
        title: "Open run 5's latest trajectory of this task (12) in the inspector",
        trajectoryId: 12,
        tone: 'good',
      },
    ]);
  });

  it('empty and hidden', () => {
    const same = comparisonView(comparison({ differences: [], sharedTasks: [] }));
    assert.equal(same.differences.empty, 'The configs are the same.');
    assert.equal(same.tasks.empty, 'No training task was sampled by every selected run.');
    assert.equal(comparisonView(comparison({ runs: [{ id: 3, name: 'x' }] })).hidden, true);
  });

  it('hostile text (run names, config keys and values, task ids): inert, on one line, cut', () => {
    for (const h of HOSTILE) {
      const evil = { [h.text]: h.text, algorithm: { [h.text]: h.text }, [`${h.text}.x`]: { y: 1 } };
      const v = comparisonView(
        comparison({
          runs: [
            { id: 3, name: h.text },
            { id: 5, name: h.text },
          ],
          differences: configDifferences([evil, {}]),
          sharedTasks: [{ taskId: h.text, runs: [{ runId: 3, episodes: 1, rewardMean: 1, successRate: 1, trajectoryId: 2 }] }],
        }),
      );
      const titles = new Set(['title']);
      for (const s of strings(v)) {
        assert.equal(rawInvisible(s.text), undefined, `${h.name}: ${s.where}`);
        if (titles.has(s.where.split('.').pop()!)) continue; // hover text: whole, invisibles marked
        assert.doesNotMatch(s.text, /[\n\r]/, `${h.name}: ${s.where}`);
        assert.ok(s.text.length <= 2000, `${h.name}: ${s.where} is ${s.text.length} characters`);
      }
    }
  });
});
