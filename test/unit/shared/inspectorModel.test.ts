import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  defaultHeatMode,
  groupRows,
  heatModes,
  heatPaint,
  inspectorHeader,
  outcomeDetails,
  rescoreView,
  tokenDetails,
  tokenDetailsTitle,
  tokenPieces,
  tokenSummary,
  turnTokensSummary,
} from '../../../src/shared/inspectorModel';
import { remoteWorst, nextWorstSort, sortWorst, trajectoryWorst, WORST_MEASURES, worstScopes } from '../../../src/shared/worstTable';
import type { TrajectoryDetail } from '../../../src/shared/protocol/backendProtocol';
import type { TrajectoryRescores } from '../../../src/shared/rescore';
import { tokenRows } from '../../../src/shared/tokenStatsRows';
import { HOSTILE, rawInvisible } from './hostileInputs';
import { group, STATS, strings, trajectory, worstTokens } from './viewModelFixtures';

const byKey = <T extends { key: string }>(xs: readonly T[]): Record<string, T> => Object.fromEntries(xs.map((x) => [x.key, x]));

describe('inspectorModel: what the trajectory inspector shows', () => {
  it('the header: task line, outcome chips coloured by meaning, the episode statistics', () => {
    const h = inspectorHeader(trajectory('x'), 'wasm engine (qwen3)');
    assert.equal(h.title, 'Trajectory 7');
    assert.equal(h.task, 'task task x · run 2 · iteration 4 · group 1 #0');
    const chips = byKey(h.outcome);
    assert.deepEqual(Object.keys(chips), ['reward', 'advantage', 'outcome', 'public', 'private', 'excluded']);
    assert.equal(chips.reward!.value, '0.50');
    assert.equal(chips.advantage!.value, '-4.77e-7');
    assert.equal(chips.advantage!.tone, 'bad');
    assert.deepEqual([chips.outcome!.label, chips.outcome!.value, chips.outcome!.tone], ['failure', 'ended: x', 'bad']);
    assert.deepEqual([chips.public!.value, chips.public!.tone, chips.private!.value, chips.private!.tone], ['pass', 'good', 'fail', 'bad']);
    assert.equal(chips.excluded!.tone, 'warn');
    // the form the e2e suite reads (.episode-stats)
    assert.match(
      h.stats,
      /^\d+ turns · (\d+ generated tokens · )?\d+ tool calls · .*\d+ format errors · \d+ bad tool calls · \d+ repeated actions · blocked by the sandbox: /,
    );
    assert.match(h.stats, /^2 turns · 5 generated tokens · .* · sampled by policy version 3$/);
    assert.equal(h.compute, 'policy: wasm engine (qwen3)');
    assert.equal(inspectorHeader(trajectory('x'), '').compute, undefined);
  });

  it("the header counts an OpenEnv episode's turns as environment steps, with no tool counts beside them", () => {
    const base = trajectory('x');
    const step = (index: number, done: boolean): TrajectoryDetail['turnList'][number] => ({
      ...base.turnList[index]!,
      action: { kind: 'tool', name: 'message', args: { message: 'pear' } },
      observation: { observation: { text: done ? 'Right.' : 'No.' }, reward: done ? 1 : 0, done },
    });
    const h = inspectorHeader({ ...base, turnList: [step(0, false), step(1, true)] }, '');
    assert.match(h.stats, /^2 turns · 5 generated tokens · 2 environment steps · 0 format errors · 0 repeated actions · blocked by the sandbox: nothing/);
    assert.doesNotMatch(h.stats, /tool calls/);
  });

  it("the policy line says how the run's model held its base weights (8 bits, Q8_0), after the stored compute string", () => {
    assert.equal(inspectorHeader(trajectory('x'), 'wasm engine (qwen3)', 'q8').compute, 'policy: wasm engine (qwen3) · base weights 8 bits (Q8_0)');
    assert.equal(inspectorHeader(trajectory('x'), 'wasm engine (qwen3)', 'bf16').compute, 'policy: wasm engine (qwen3) · base weights bfloat16');
    assert.equal(inspectorHeader(trajectory('x'), '', 'f32').compute, 'policy: base weights float32');
    for (const h of HOSTILE) {
      const line = inspectorHeader(trajectory('x'), h.text, 'q8').compute!;
      assert.equal(rawInvisible(line), undefined, h.name);
      assert.ok(line.endsWith(' · base weights 8 bits (Q8_0)'), h.name);
    }
  });

  it("the outcome's details: one row per key, metrics with their numbers formatted, the other extras", () => {
    const d = outcomeDetails(trajectory('x').outcome.details)!;
    assert.deepEqual(
      d.rows.map((r) => [r.key, r.label, r.value, r.block]),
      [
        ['prompt', 'prompt: ', 'x\nsecond line', true],
        ['metrics', 'metrics: ', 'acc 1 · m x 0.123', false],
      ],
    );
    assert.equal(d.otherExtras, 'other extras: note "x"');
    assert.equal(outcomeDetails(undefined), undefined);
    assert.equal(outcomeDetails('text'), undefined);
    assert.deepEqual(
      outcomeDetails({ n: 2e-7 * (1 + 2 ** -52), o: { a: 1 } })!.rows.map((r) => r.value),
      ['2e-7', '{"a":1}'],
    );
  });

  it("the group's trajectories, the shown one marked", () => {
    assert.deepEqual(groupRows(7, group('x')), [
      { id: 7, current: true, text: '✗ #0 reward 0.50 adv -4.77e-7 · 2 turns', tone: 'bad' },
      { id: 8, current: false, text: '✓ #1 reward 1.00 adv 0.25 · 2 turns', tone: 'good' },
    ]);
  });

  it('the token summary as chips, with what each number means', () => {
    const t = trajectory('x');
    const rows = tokenRows(t.turnList, t.tokenStats);
    const chips = byKey(tokenSummary(t, rows));
    assert.deepEqual(Object.keys(chips), ['generated', 'trained', 'firstPass', 'old', 'epoch']);
    assert.equal(chips.generated!.value, '5');
    assert.equal(chips.trained!.label, "with the learner's numbers");
    assert.equal(chips.trained!.value, '5');
    assert.equal(chips.firstPass!.value, 'before any step of its update');
    const later = byKey(tokenSummary({ tokenStats: { ...STATS, stepsBefore: 2, lag: 1, before: undefined } }, rows));
    assert.equal(later.firstPass!.value, 'after 2 steps of its update');
    assert.equal(later.firstPass!.tone, 'warn');
    assert.match(later.before!.value, /algorithm\.oldLogprobs "recompute"/);
    assert.match(later.lag!.value, /^1 policy version before the update: training − sampling log-prob is lag/);
    const none = tokenSummary({ excluded: 'zero advantage' }, rows);
    assert.deepEqual(
      none.map((c) => [c.key, c.value]),
      [
        ['generated', '5'],
        ['learner', 'none stored (not trained on: zero advantage)'],
      ],
    );
  });

  it("each token's text: the decoded piece, else the action's character, else its id", () => {
    const t = trajectory('x');
    const rows = tokenRows(t.turnList, t.tokenStats);
    assert.deepEqual(tokenPieces(t, rows), ['x', 'b', 'c', 'dx', 'e']);
    const chars = trajectory('x', {
      pieces: undefined,
      turnList: trajectory('x').turnList.map((u) => ({ ...u, actionText: u.index === 0 ? 'ab' : 'long text' })),
    });
    assert.deepEqual(tokenPieces(chars, tokenRows(chars.turnList, chars.tokenStats)), ['a', 'b', '#7', '#8', '#4']);
  });

  it("a token's numbers as key/value rows (3 significant digits, tiny numbers in exponent form)", () => {
    const t = trajectory('x');
    const rows = tokenRows(t.turnList, t.tokenStats);
    const d = tokenDetails(rows[4]!, 'e', 0.25);
    assert.deepEqual(
      d.map((r) => [r.key, r.value]),
      [
        ['token', '"e"'],
        ['id', '4'],
        ['sampled', '-2'],
        ['before', '—'],
        ['mismatch', '—'],
        ['logp', '-2'],
        ['ratio', '0.5'],
        ['clip', 'low'],
        ['advantage', '0.25'],
        ['entropy', '2'],
        ['kl', '2e-7'],
      ],
    );
    assert.equal(byKey(d).clip!.tone, 'info');
    assert.equal(byKey(d).advantage!.tone, 'good');
    assert.equal(tokenDetailsTitle(d).split('\n').length, d.length);
    const untrained = tokenDetails({ ...rows[0]!, trained: false }, 'x', 1);
    assert.deepEqual(
      untrained.map((r) => r.key),
      ['token', 'id', 'sampled', 'trained'],
    );
  });

  it('the worst tokens as tables: token, turn, position, sampled, trained, Δ, ratio, clip, advantage, KL', () => {
    const t = trajectory('x');
    const rows = tokenRows(t.turnList, t.tokenStats);
    const table = trajectoryWorst(t, rows, tokenPieces(t, rows), 'mismatch')!;
    assert.deepEqual(
      table.columns.map((c) => c.label),
      ['token', 'turn', 'position', 'sampled', 'trained', 'Δ', 'ratio', 'clip', 'advantage', 'KL'],
    );
    assert.equal(table.sortedBy, 'delta');
    assert.equal(table.title, 'worst in this trajectory by |training − sampling log-prob|');
    const first = table.rows[0]!;
    assert.deepEqual([first.trajectoryId, first.turn, first.token], [7, 1, 1]);
    assert.deepEqual(
      first.cells.map((c) => c.text),
      ['"dx"', '1', '1', '-0.2', '-0.9', '-0.7', '3', 'high', '-4.77e-7', '0.7'],
    );
    assert.equal(first.cells.find((c) => c.key === 'clip')!.tone, 'bad');
    assert.equal(
      trajectoryWorst(
        t,
        rows.map((r) => ({ ...r, kl: undefined })),
        [],
        'kl',
      ),
      undefined,
    );

    const remote = remoteWorst(4, 'run', 'logRatio', worstTokens(3));
    assert.equal(remote.title, 'worst of the run by |log π/π_old|');
    assert.equal(remote.columns[0]!.key, 'trajectory');
    assert.equal(remote.sortedBy, 'ratio');
    assert.deepEqual(
      remote.rows[0]!.cells.map((c) => c.text),
      ['100', '#300', '0', '0', '-4.64', '-4', '1', '1.02', 'high', '-0.5', '2e-7'],
    );
    assert.equal(remoteWorst(4, 'iteration', 'kl', []).note, 'none recorded');
    assert.equal(remoteWorst(4, 'iteration', 'kl', [], 'database is locked').note, 'could not be read (database is locked)');
    // one scope selector and one measure selector in place of six buttons
    assert.deepEqual(
      worstScopes(4).map((o) => [o.value, o.label]),
      [
        ['trajectory', 'this trajectory'],
        ['iteration', 'iteration 4'],
        ['run', 'the whole run'],
      ],
    );
    assert.deepEqual(
      WORST_MEASURES.map((o) => [o.value, o.label]),
      [
        ['mismatch', '|training − sampling log-prob|'],
        ['logRatio', '|log π/π_old|'],
        ['kl', 'KL to the reference'],
      ],
    );
  });

  it('a worst-token table sorts by a clicked column: numbers largest first, text A–Z, a second click turns it around, no number last', () => {
    const remote = remoteWorst(4, 'run', 'mismatch', [
      ...worstTokens(3),
      { ...worstTokens(1)[0]!, id: 9, token: 5, kl: undefined, mismatch: undefined, behaviour: -0.1 },
    ]);
    assert.equal(remote.direction, 'descending');
    const column = (t: typeof remote, key: string): (string | undefined)[] => t.rows.map((r) => r.cells.find((c) => c.key === key)?.text);
    // the token's position: a number, largest first on the first click
    assert.equal(nextWorstSort(remote, 'position'), 'descending');
    const byPosition = sortWorst(remote, 'position', 'descending');
    assert.deepEqual(
      byPosition.rows.map((r) => r.token),
      [...remote.rows.map((r) => r.token)].sort((a, b) => b - a),
    );
    assert.equal(byPosition.sortedBy, 'position');
    assert.equal(nextWorstSort(byPosition, 'position'), 'ascending');
    assert.deepEqual(
      sortWorst(remote, 'position', 'ascending').rows.map((r) => r.token),
      [...remote.rows.map((r) => r.token)].sort((a, b) => a - b),
    );
    // a row without the number is last either way
    assert.equal(column(sortWorst(remote, 'kl', 'descending'), 'kl').at(-1), '—');
    assert.equal(column(sortWorst(remote, 'kl', 'ascending'), 'kl').at(-1), '—');
    // Δ sorts by its size |Δ| (the worst first, as the list comes)
    const byDelta = sortWorst(remote, 'delta', 'descending');
    const sizes = byDelta.rows.map((r) => r.cells.find((c) => c.key === 'delta')!.sort).filter((x): x is number => typeof x === 'number');
    assert.deepEqual(
      sizes,
      [...sizes].sort((a, b) => b - a),
    );
    assert.ok(sizes.every((x) => x >= 0));
    // text columns sort A–Z first, by code point (no locale)
    assert.equal(nextWorstSort(remote, 'clip'), 'ascending');
    const clips = column(sortWorst(remote, 'clip', 'ascending'), 'clip');
    assert.deepEqual(clips, [...clips].sort());
    // the sort keeps the rows' links and does not change the table it was given
    assert.deepEqual(
      new Set(byPosition.rows.map((r) => `${r.trajectoryId}:${r.turn}:${r.token}`)),
      new Set(remote.rows.map((r) => `${r.trajectoryId}:${r.turn}:${r.token}`)),
    );
    assert.equal(remote.sortedBy, 'delta');
  });

  it('colour modes, colours and the legend', () => {
    const t = trajectory('x');
    const rows = tokenRows(t.turnList, t.tokenStats);
    assert.deepEqual(
      heatModes(false).map((m) => [m.value, m.disabled]),
      [
        ['behaviour', false],
        ['before', true],
        ['mismatch', true],
        ['ratio', true],
        ['clip', true],
        ['advantage', true],
        ['entropy', true],
        ['kl', true],
      ],
    );
    assert.equal(defaultHeatMode(t, rows, undefined), 'mismatch');
    assert.equal(defaultHeatMode(t, rows, 'kl'), 'kl');
    assert.equal(defaultHeatMode({}, rows, 'kl'), 'behaviour');
    const kl = heatPaint(rows, 'kl', t.advantage);
    assert.equal(kl.legend, ' · red: positive, blue: negative, full colour at ±0.7');
    assert.equal(kl.colours[3], 'color-mix(in srgb, var(--vscode-charts-red) 75%, transparent)');
    const mismatch = heatPaint(rows, 'mismatch', t.advantage);
    assert.match(mismatch.colours[3]!, /^color-mix\(in srgb, var\(--vscode-charts-blue\) \d+%, transparent\)$/, 'negative: blue');
    assert.equal(mismatch.colours[4], '', 'unknown: no colour');
    assert.equal(heatPaint(rows, 'clip', 0).colours[4], 'color-mix(in srgb, var(--vscode-charts-blue) 60%, transparent)');
    assert.equal(heatPaint(rows, 'ratio', 0).legend, ' · red: positive, blue: negative, full colour at ±1.1 (log ratio)');
    assert.equal(heatPaint([], 'kl', 0).legend, ' · no token of this trajectory has this number');
    assert.equal(turnTokensSummary(t.turnList[1]!.policy, rows.slice(2)), "tokens: 3 context (mask 0), 3 generated, 3 with the learner's numbers");
  });

  it('the re-scores beside the stored reward', () => {
    const r: TrajectoryRescores = {
      rescores: [
        {
          rescoreId: 3,
          reward: { file: null, sha256: null, label: 'reward.py' },
          createdAt: '2025-01-02T13:45:07.000Z',
          score: { reward: 1, success: true, publicPass: true, privatePass: true },
          error: null,
        },
        { rescoreId: 4, reward: { file: null, sha256: null, label: 'exact_match' }, createdAt: 'yesterday', score: null, error: 'Traceback\nValueError: bad' },
      ],
      edits: [
        {
          id: 9,
          trajectoryId: 7,
          turnIndex: 1,
          actionText: 'A'.repeat(2500),
          reward: { file: null, sha256: null, label: 'reward.py' },
          score: { reward: 0.5, success: false, publicPass: false, privatePass: false },
          error: null,
          createdAt: '2025-01-02T13:45:07.000Z',
        },
      ],
    };
    const stored = { reward: 0.5, success: false, publicPass: true, privatePass: false };
    const v = rescoreView(r, stored)!;
    assert.equal(v.title, 're-scores (2) and edits (1) — stored reward 0.500');
    assert.match(
      v.rescores[0]!.text,
      /^rescore 3 with reward\.py \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\): reward 1\.000 \(\+0\.500 vs stored\) · now a success · public pass · private pass$/,
    );
    assert.equal(v.rescores[0]!.tone, 'good');
    assert.match(v.rescores[1]!.text, /^rescore 4 with exact_match \(yesterday\): not scored: /);
    assert.equal(v.edits[0]!.score, 'edit 9 of turn 1 with reward.py: reward 0.500 (0.000 vs stored) · public fail · private fail');
    assert.ok(v.edits[0]!.text.endsWith('… (500 more characters)'));
    assert.equal(rescoreView(undefined, stored), undefined);
    assert.equal(rescoreView({ rescores: [], edits: [] }, stored), undefined);
  });

  it('hostile text: every string of every part of the view is inert, one-line parts stay on one line and short', () => {
    for (const h of HOSTILE) {
      const t = trajectory(h.text);
      const rows = tokenRows(t.turnList, t.tokenStats);
      const pieces = tokenPieces(t, rows);
      const header = inspectorHeader(t, h.text);
      const lines = {
        task: header.task,
        outcome: header.outcome,
        stats: header.stats,
        compute: header.compute,
        detailKeys: outcomeDetails(t.outcome.details)!.rows.map((r) => [r.key, r.label]),
        group: groupRows(7, group(h.text)),
        summary: tokenSummary(t, rows),
        summaryUntrained: tokenSummary({ excluded: h.text }, rows),
        details: rows.map((r, i) => tokenDetails(r, pieces[i]!, t.advantage)),
        worst: (['mismatch', 'logRatio', 'kl'] as const).map((by) => trajectoryWorst(t, rows, pieces, by)),
        sorted: sortWorst(trajectoryWorst(t, rows, pieces, 'mismatch')!, 'token', 'ascending'),
        remote: remoteWorst(4, 'run', 'kl', worstTokens(2), h.text),
        rescores: rescoreView(
          {
            rescores: [{ rescoreId: 1, reward: { file: h.text, sha256: h.text, label: h.text }, createdAt: h.text, score: null, error: h.text }],
            edits: [],
          },
          t,
        )!.rescores,
      };
      const blocks = {
        detailValues: outcomeDetails(t.outcome.details),
        pieces,
        titles: rows.map((r, i) => tokenDetailsTitle(tokenDetails(r, pieces[i]!, t.advantage))),
        edits: rescoreView(
          {
            rescores: [],
            edits: [
              {
                id: 1,
                trajectoryId: 7,
                turnIndex: 0,
                actionText: h.text,
                reward: { file: h.text, sha256: h.text, label: h.text },
                score: null,
                error: h.text,
                createdAt: h.text,
              },
            ],
          },
          t,
        ),
      };
      for (const s of [...strings(lines), ...strings(blocks)]) assert.equal(rawInvisible(s.text), undefined, `${h.name}: ${s.where}`);
      for (const s of strings(lines)) {
        assert.doesNotMatch(s.text, /[\n\r]/, `${h.name}: ${s.where} is one line`);
        assert.ok(s.text.length <= 2000, `${h.name}: ${s.where} is ${s.text.length} characters`);
      }
    }
  });
});
