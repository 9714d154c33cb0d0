// The inspector's view of a distillation teacher's per-token numbers (issue 51): the heat map's two
// teacher modes (student − teacher, the default where a teacher scored the tokens, and the teacher's
// log-prob), their colours and legend, a token's rows, the summary's line, and the worst-token tables
// and measures — offered only where a teacher scored the tokens, so a run without one looks as before.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultHeatMode, heatModes, heatPaint, teacherScored, tokenDetails, tokenSummary } from '../../../src/shared/inspectorModel';
import { remoteWorst, trajectoryWorst, WORST_MEASURES, worstMeasures } from '../../../src/shared/worstTable';
import { tokenRows, type TokenStatsJson } from '../../../src/shared/tokenStatsRows';
import { STATS, trajectory, worstTokens } from './viewModelFixtures';

// the fixture's trained tokens were sampled at −0.5, −1.5 | −0.1, −0.2, −2; the teacher's log-probs of them
// give student − teacher 0, −1, 2, 0 and one the teacher's pass left unknown (NaN: null)
const TEACHER: TokenStatsJson = { ...STATS, teacher: [-0.5, -0.5, -2.1, -0.2, null], reverseKl: [0, -1, 2, 0, null] };
const scored = trajectory('x', { tokenStats: TEACHER });
const plain = trajectory('x');
const rowsOf = (t: typeof scored): ReturnType<typeof tokenRows> => tokenRows(t.turnList, t.tokenStats);
const colour = (name: string, percent: number): string => `color-mix(in srgb, var(--vscode-charts-${name}) ${percent}%, transparent)`;

describe("the inspector: a distillation teacher's per-token numbers", () => {
  it('are placed on the generated tokens; only a scored trajectory offers the teacher modes, and opens on student − teacher', () => {
    const rows = rowsOf(scored);
    assert.deepEqual(
      rows.map((r) => [r.id, r.teacher, r.reverseKl]),
      [
        [5, -0.5, 0],
        [6, -0.5, -1],
        [7, -2.1, 2],
        [8, -0.2, 0],
        [4, undefined, undefined],
      ],
    );
    assert.equal(teacherScored(rows), true);
    assert.equal(teacherScored(rowsOf(plain)), false);
    const offered = (learner: boolean, teacher: boolean): [string, boolean][] => heatModes(learner, teacher).map((m) => [m.value, m.disabled]);
    assert.deepEqual(offered(true, true).slice(-2), [
      ['reverseKl', false],
      ['teacher', false],
    ]);
    assert.deepEqual(
      heatModes(true, true)
        .slice(-2)
        .map((m) => m.label),
      ['student − teacher log-prob (reverse KL term)', 'the teacher’s log-prob'],
    );
    assert.ok(!offered(true, false).some(([m]) => m === 'reverseKl' || m === 'teacher'), 'a run without a teacher: its menu as before');
    assert.deepEqual(offered(false, true).slice(-2), [
      ['reverseKl', true],
      ['teacher', true],
    ]);
    assert.equal(defaultHeatMode(scored, rows, undefined), 'reverseKl');
    assert.equal(defaultHeatMode(scored, rows, 'entropy'), 'entropy', 'a chosen mode stays');
    // chosen on a distillation trajectory, then another without a teacher opened: its own default, not an empty map
    assert.equal(defaultHeatMode(plain, rowsOf(plain), 'reverseKl'), 'mismatch');
    assert.equal(defaultHeatMode(plain, rowsOf(plain), 'teacher'), 'mismatch');
  });

  it('student − teacher: red where the student was likelier (pushed down), blue where the teacher was (pushed up), scaled to the largest', () => {
    const p = heatPaint(rowsOf(scored), 'reverseKl', scored.advantage);
    assert.deepEqual(p.colours, [colour('red', 0), colour('blue', 38), colour('red', 75), colour('red', 0), '']);
    assert.equal(p.legend, ' · red: the student likelier than the teacher (pushed down), blue: the teacher likelier (pushed up), full colour at ±2 nats');
    const t = heatPaint(rowsOf(scored), 'teacher', scored.advantage);
    // the teacher's log-prob as the sampling one is shown: hot where unlikely, 1 − p
    assert.equal(t.colours[2], colour('red', Math.round((1 - Math.exp(-2.1)) * 0.75 * 100)));
    assert.equal(t.colours[4], '');
    assert.equal(t.legend, ' · red: unlikely to the teacher (1 − p_teacher)');
    assert.equal(heatPaint(rowsOf(plain), 'reverseKl', 0).legend, ' · no token of this trajectory has this number');
  });

  it("a token's numbers and the summary say what the teacher gave; a trajectory without one shows neither", () => {
    const rows = rowsOf(scored);
    const details = Object.fromEntries(tokenDetails(rows[2]!, 'c', 0.5).map((r) => [r.key, r]));
    assert.equal(details.teacher!.value, '-2.1');
    assert.deepEqual([details.reverseKl!.label, details.reverseKl!.value, details.reverseKl!.tone], ['student − teacher', '2', 'bad']);
    assert.equal(Object.fromEntries(tokenDetails(rows[1]!, 'b', 0.5).map((r) => [r.key, r.tone])).reverseKl, 'good');
    assert.ok(!tokenDetails(rowsOf(plain)[2]!, 'c', 0.5).some((r) => r.key === 'teacher' || r.key === 'reverseKl'));
    const chip = tokenSummary(scored, rows).find((c) => c.key === 'teacher');
    // four tokens with a number: (0 − 1 + 2 + 0) / 4
    assert.equal(chip?.value, 'scored 4 tokens: mean student − teacher log-prob 0.25 nats (the reverse KL the update descended)');
    assert.equal(
      tokenSummary(plain, rowsOf(plain)).find((c) => c.key === 'teacher'),
      undefined,
    );
  });

  it('the worst tokens by |student − teacher|: a column of its own, offered only where a teacher scored the tokens', () => {
    const rows = rowsOf(scored);
    const pieces = rows.map((r) => `p${r.id}`);
    const table = trajectoryWorst(scored, rows, pieces, 'reverseKl', 2)!;
    assert.equal(table.sortedBy, 'teacher');
    assert.equal(table.title, 'worst in this trajectory by |student − teacher log-prob|');
    assert.deepEqual(
      table.rows.map((r) => [r.token, r.turn, r.cells.find((c) => c.key === 'teacher')!.text]),
      [
        [0, 1, '2'],
        [1, 0, '-1'],
      ],
    );
    // the column shows with every measure on a scored trajectory, never on another
    assert.ok(trajectoryWorst(scored, rows, pieces, 'mismatch')!.columns.some((c) => c.key === 'teacher'));
    const plainTable = trajectoryWorst(plain, rowsOf(plain), pieces, 'mismatch')!;
    assert.ok(!plainTable.columns.some((c) => c.key === 'teacher') && plainTable.rows.every((r) => r.cells.length === plainTable.columns.length));
    assert.ok(!remoteWorst(4, 'run', 'mismatch', worstTokens(2)).columns.some((c) => c.key === 'teacher'));
    const remote = remoteWorst(4, 'run', 'reverseKl', []);
    assert.deepEqual([remote.title, remote.note, remote.columns.at(-1)!.key], ['worst of the run by |student − teacher log-prob|', 'none recorded', 'teacher']);
    assert.deepEqual(worstMeasures(false), WORST_MEASURES);
    assert.deepEqual(worstMeasures(true).at(-1), { value: 'reverseKl', label: '|student − teacher log-prob|' });
  });
});
