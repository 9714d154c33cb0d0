import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderTrajectory, fence } from '../../../src/host/commands/trajectoryMarkdown';
import { formatEta, statusText } from '../../../src/host/statusText';
import { describeRun, groupTrajectories } from '../../../src/host/views/treeModel';
import { webviewPage } from '../../../src/host/webviews/dashboardPage';
import type { TrajectoryDetail, TrajectorySummary } from '../../../src/shared/protocol/backendProtocol';
import { escapeClipped, escapeHtml } from '../../../src/shared/html';

const HOSTILE = ['<script>alert(1)</script>', '<img src=x onerror="alert(1)">', '</textarea><b>x</b>', "'\"`&", 'x'.repeat(100_000)];

describe('escaping hostile model output', () => {
  it('no tag, attribute quote or entity survives', () => {
    for (const h of HOSTILE) {
      const e = escapeHtml(h);
      assert.ok(!/[<>"'`]/.test(e), e.slice(0, 80));
      assert.ok(!/&(?!amp;|lt;|gt;|quot;|#39;|#96;)/.test(e), 'every & starts a known entity');
    }
    assert.equal(escapeHtml('<script>alert(1)</script>'), '&lt;script&gt;alert(1)&lt;/script&gt;');
    assert.equal(escapeHtml('<img src=x onerror="alert(1)">'), '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
  });

  it('very long lines are clipped with a marker', () => {
    const e = escapeClipped('y'.repeat(50_000), 1000);
    assert.equal(e.length < 1100, true);
    assert.match(e, /… \[49000 more characters\]$/);
  });

  it('the dashboard page has a strict CSP with a nonce and no inline script without it', () => {
    const html = webviewPage({ scriptUri: 'vscode-resource://x/dashboard.js', styleUri: 'vscode-resource://x/d.css', cspSource: 'vscode-resource:', nonce: 'abc123' });
    assert.match(html, /default-src &#39;none&#39;/);
    assert.match(html, /script-src &#39;nonce-abc123&#39;/);
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    assert.equal(scripts.length, 1);
    assert.match(scripts[0]!, /nonce="abc123"/);
    assert.ok(!/ on\w+=/.test(html), 'no inline event handlers');
  });

  it('trajectory Markdown fences model output so it cannot break out', () => {
    const text = 'before ``` after ```` four';
    const f = fence(text);
    assert.ok(f.startsWith('`````\n') && f.endsWith('\n`````'));
    const t: TrajectoryDetail = {
      id: 1, runId: 2, iteration: 3, group: 0, indexInGroup: 1, taskId: 'calc:`x`', reward: 0, advantage: -1, success: false, publicPass: true, privatePass: false,
      termination: 'finished', turns: 1, outcome: {},
      turnList: [{ index: 0, actionText: '```\n# Injected heading\n<script>x</script>', action: {}, observationText: '<obs>7</obs>', observation: {}, policy: {} }],
    };
    const md = renderTrajectory(t);
    const inside = md.split('**Action**')[1]!;
    assert.match(inside, /^\n\n````\n```\n# Injected heading/);
    assert.match(md, /task: `calc:'x'`/);
  });
});

describe('runs tree model and status bar', () => {
  const traj = (group: number, i: number, reward: number): TrajectorySummary => ({
    id: group * 10 + i, iteration: 1, group, indexInGroup: i, taskId: `task-${group}`, reward, advantage: 0, success: reward > 0, publicPass: true, privatePass: reward > 0, termination: 'finished', turns: 2,
  });

  it('groups an iteration page by group, in order, keeping each group’s task', () => {
    const groups = groupTrajectories([traj(1, 0, 1), traj(0, 0, 0), traj(1, 1, 0), traj(0, 1, 1)]);
    assert.deepEqual(groups.map((g) => [g.group, g.taskId, g.trajectories.map((t) => t.indexInGroup)]), [[0, 'task-0', [0, 1]], [1, 'task-1', [0, 1]]]);
  });

  it('describes runs and progress', () => {
    const run = { id: 1, name: 'r', status: 'running' as const, env: 'calculator', policy: 'transformer', method: 'grpo', seed: 1, iterationsPlanned: 40, iterationsDone: 3, latestRewardMean: 0.5, createdAt: '', finishedAt: null, error: null };
    assert.equal(describeRun(run), '3/40 · reward 0.500 · calculator · grpo');
    assert.equal(formatEta(65_000), '1m05s');
    assert.equal(statusText({ type: 'progress', runId: 4, iteration: 12, iterations: 100, rewardMean: 0.8125, successRate: 0.8, etaMs: 5000 }), '$(sync~spin) Agent RL: run 4 · 12/100 · reward 0.813 · ETA 5s');
  });
});
