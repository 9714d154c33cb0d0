// The hostile-input table (hostileInputs.ts) through every renderer of stored text: the Markdown
// document, tree labels and tooltips, notifications and the status bar, webview HTML and the dashboard's
// labels, the CLI's tables and JSON. Each must show the text — visibly, invisible characters as markers
// — and never as a link, an image, HTML, a heading, an icon, or a terminal control sequence.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configProblemMessage, outcomeMessage, sandboxQuestion } from '../../../src/host/commands/runMessages';
import { renderTrajectory } from '../../../src/host/commands/trajectoryMarkdown';
import { rerunMessage } from '../../../src/host/replay/replayModel';
import { statusText } from '../../../src/host/statusText';
import { describeRun, groupParts, messageParts, runParts, trajectoryParts, turnParts } from '../../../src/host/views/treeModel';
import { webviewPage } from '../../../src/host/webviews/dashboardPage';
import { cell, runsTable } from '../../../src/cli/format';
import { PANELS, panelLines, runLabels } from '../../../src/shared/dashboardModel';
import type { TrajectoryDetail } from '../../../src/shared/protocol/backendProtocol';
import type { RunSeries } from '../../../src/shared/protocol/webviewProtocol';
import type { IterationMetrics, RunSummary } from '../../../src/shared/types';
import {
  clip,
  DEFAULT_MAX_TEXT_LENGTH,
  escapeHtml,
  fence,
  jsonText,
  markdownCode,
  MESSAGE_MAX_LENGTH,
  messageText,
  oneLine,
  showInvisibles,
  visibleText,
} from '../../../src/shared/untrustedText';
import { DANGEROUS_HTML, HOSTILE, hoverHtml, ICON, markdownStructure, NOTIFICATION_LINK, rawInvisible } from './hostileInputs';

const benign = (h: string): string => 'y'.repeat(h.length);

function plain(out: string, where: string): void {
  assert.equal(rawInvisible(out), undefined, `${where}: a raw invisible character`);
}

function line(out: string, where: string, max: number): void {
  plain(out, where);
  assert.ok(!out.includes('\n'), `${where}: one line`);
  assert.ok(out.length <= max, `${where}: ${out.length} > ${max} characters`);
}

function notification(out: string, where: string, max = 1000): void {
  line(out, where, max);
  assert.ok(!NOTIFICATION_LINK.test(out), `${where}: a link VS Code would render: ${out.slice(0, 200)}`);
  assert.ok(!ICON.test(out), `${where}: an icon VS Code would render`);
  assert.ok(!/\b(command|javascript):\S/i.test(out), `${where}: a raw command or script URI`);
}

const run = (name: string, extra: Partial<RunSummary> = {}): RunSummary => ({
  id: 3,
  name,
  status: 'failed',
  env: 'code',
  policy: 'transformer',
  method: 'grpo',
  methodLabel: 'GRPO',
  seed: 1,
  iterationsPlanned: 1,
  iterationsDone: 1,
  latestRewardMean: 0.5,
  createdAt: '2026-01-01T00:00:00.000Z',
  finishedAt: null,
  error: name,
  ...extra,
});

const trajectory = (h: string): TrajectoryDetail => ({
  id: 12,
  runId: 3,
  iteration: 1,
  group: 0,
  indexInGroup: 0,
  taskId: h,
  reward: 0,
  advantage: 0,
  success: false,
  publicPass: false,
  privatePass: false,
  termination: h,
  turns: 1,
  outcome: {},
  turnList: [{ index: 0, actionText: h, action: { kind: 'tool', name: 'execute_code', args: { code: h } }, observationText: h, observation: {}, policy: {} }],
});

describe('the one rule for untrusted text', () => {
  it('invisible and direction-changing characters become markers; newlines and tabs stay', () => {
    assert.equal(showInvisibles('invoice\u202Efdp.exe'), 'invoice⟨U+202E⟩fdp.exe');
    assert.equal(showInvisibles('a\u200Bb\n\tc\r\nd\re'), 'a⟨U+200B⟩b\n\tc\nd⟨U+000D⟩e');
    assert.equal(showInvisibles('\u{E0067}'), '⟨U+E0067⟩');
    assert.equal(showInvisibles('plain text\n'), 'plain text\n');
  });

  it('cuts at the limit without splitting a surrogate pair, and says how much', () => {
    assert.deepEqual(clip('ab😀cd', 3), { text: 'ab', cut: 4 });
    assert.deepEqual(clip('abc', 0), { text: 'abc', cut: 0 });
    assert.equal(visibleText('x'.repeat(12), 10, 'see all'), `${'x'.repeat(10)}\n… [2 more characters not shown; see all]`);
    assert.equal(oneLine('a\nb'.repeat(3), 4), 'a⏎ba…');
  });

  it('a fence and a code span are longer than any backtick run inside', () => {
    assert.equal(fence('a ```` b'), '`````\na ```` b\n`````');
    assert.equal(markdownCode('a`b``c'), '``` a`b``c ```');
    assert.equal(markdownCode('x\n\n# h'), '` x⏎⏎# h `');
    assert.equal(markdownCode('z'.repeat(600)), '` ' + 'z'.repeat(500) + '… `');
  });

  it('JSON keeps the data and escapes what a terminal would obey', () => {
    const value = { name: 'a\u202Eb\x1b[2J', list: ['\u2028'] };
    const text = jsonText(value, 2);
    assert.deepEqual(JSON.parse(text), value);
    assert.ok(text.includes('\\u202e') && text.includes('\\u2028'));
  });
});

describe('every renderer over the hostile-input table', () => {
  for (const h of HOSTILE) {
    describe(h.name, () => {
      it('untrustedText primitives', () => {
        const v = visibleText(h.text, DEFAULT_MAX_TEXT_LENGTH);
        plain(v, 'visibleText');
        assert.ok(v.length <= 11 * DEFAULT_MAX_TEXT_LENGTH + 100, 'visibleText is cut');
        line(oneLine(h.text, 80), 'oneLine', 11 * 80 + 1);
        notification(messageText(h.text), 'messageText', 11 * MESSAGE_MAX_LENGTH + 1);
        const html = escapeHtml(visibleText(h.text, DEFAULT_MAX_TEXT_LENGTH));
        assert.ok(!/[<>"'`]/.test(html), 'escapeHtml escapes every markup character');
        plain(html, 'HTML text');
        assert.ok(!/[<>"'`]/.test(escapeHtml(h.text)));
      });

      it('Markdown document: the same structure as for plain text, no link, image or HTML', () => {
        const options = { maxTextLength: DEFAULT_MAX_TEXT_LENGTH, runName: h.text };
        const md = renderTrajectory(trajectory(h.text), options);
        plain(md, 'document');
        assert.deepEqual(markdownStructure(md), markdownStructure(renderTrajectory(trajectory(benign(h.text)), { ...options, runName: benign(h.text) })));
        const html = hoverHtml(md);
        assert.ok(!/<(a|img|script|iframe|b|table|blockquote)\b/i.test(html), html.slice(0, 300));
        assert.ok(md.length < 4 * 11 * DEFAULT_MAX_TEXT_LENGTH + 2000, 'every field is cut');
      });

      it('notifications and the status bar', () => {
        notification(
          configProblemMessage(h.text, [{ field: h.text, value: h.text, message: 'is not a known config key', fix: 'remove it' }]),
          'config problem',
          6601,
        );
        notification(outcomeMessage(h.text, { kind: 'failed', reason: h.text }), 'run failed', 6601);
        notification(outcomeMessage(h.text, { kind: 'finished', runId: 1, status: 'completed' }), 'run completed', 6601);
        notification(rerunMessage(0, { observationText: h.text, same: false, level: 'strict', python: h.text, notes: [h.text] }), 're-run', 8801);
        notification(sandboxQuestion(h.text, [h.text]), 'sandbox question', 8801);
        notification(
          statusText({ name: h.text, method: 'grpo', iterations: 5, runId: 1, phase: { kind: 'loading' } }).replace(/^\$\(sync~spin\)/, ''),
          'status bar',
          2000,
        );
      });

      it('webview HTML and the dashboard’s labels', () => {
        const page = webviewPage({ scriptUri: 's.js', styleUri: 's.css', cspSource: 'x:', nonce: 'n', title: h.text });
        const title = /<title>([\s\S]*)<\/title>/.exec(page)?.[1] ?? '';
        assert.ok(!/[<>"'`]/.test(title));
        const m: IterationMetrics = {
          iteration: 1,
          rewardMean: 1,
          rewardMax: 1,
          rewardMin: 1,
          successRate: 1,
          publicPassRate: 1,
          privatePassRate: 1,
          meanTurns: 1,
          zeroVarianceGroups: 0,
          trajectories: 1,
          loss: 0,
          policyLoss: 0,
          kl: 0,
          clipFraction: 0,
          entropy: 0,
          gradNorm: 0,
          ratioMin: 1,
          ratioMax: 1,
          updated: 1,
          trainedTrajectories: 1,
          policyVersion: 1,
          wallMs: 1,
        };
        const series: RunSeries = { run: run(h.text), iterations: [m], evaluations: [] };
        const labels = runLabels(series);
        line(labels.short, 'legend label', 11 * 24 + 1);
        plain(labels.full, 'legend hover text');
        for (const l of panelLines(PANELS[0]!, [series])) line(l.label, 'dataset label', 11 * 24 + 20);
      });

      it('tree labels and tooltips', () => {
        const r = runParts(run(h.text));
        line(r.label, 'run label', 11 * 120 + 1);
        line(r.description!, 'run description', 2000);
        line(describeRun(run('x', { env: h.text, method: h.text })), 'run description (env, method)', 2000);
        plain(r.tooltip!, 'run tooltip');
        const t = trajectory(h.text);
        line(groupParts(0, [t]).label, 'group label', 11 * 80 + 20);
        line(trajectoryParts(t).description!, 'trajectory description', 11 * 40 + 40);
        line(messageParts(h.text).label, 'message', 11 * 300 + 1);
        const turn = turnParts({ trajectoryId: 12, index: 0, action: h.text, observation: h.text }, DEFAULT_MAX_TEXT_LENGTH);
        line(turn.label, 'turn label', 11 * 80 + 10);
        line(turn.description!, 'turn description', 11 * 80 + 1);
        const tip = turn.tooltipMarkdown!;
        plain(tip, 'turn tooltip');
        assert.deepEqual(
          markdownStructure(tip),
          markdownStructure(
            turnParts({ trajectoryId: 12, index: 0, action: benign(h.text), observation: benign(h.text) }, DEFAULT_MAX_TEXT_LENGTH).tooltipMarkdown!,
          ),
        );
        assert.ok(!DANGEROUS_HTML.test(hoverHtml(tip)), hoverHtml(tip).slice(0, 300));
        assert.ok(tip.length < 2 * 11 * 2000 + 500, `tooltip of ${tip.length} characters`);
      });

      it('CLI tables and JSON', () => {
        const table = runsTable([run(h.text, { env: h.text, status: h.text as RunSummary['status'] })]);
        plain(table, 'runs table');
        assert.equal(table.split('\n').length, 3, 'header, rule, one row');
        line(cell(h.text), 'show line', 11 * 60 + 1);
        const json = jsonText({ name: h.text }, 2);
        plain(json, 'JSON');
        assert.deepEqual(JSON.parse(json), { name: h.text });
      });
    });
  }
});
