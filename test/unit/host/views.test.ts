import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configProblemMessage, sandboxOverrides } from '../../../src/host/commands/runMessages';
import { renderTrajectory } from '../../../src/host/commands/trajectoryMarkdown';
import { rerunMessage } from '../../../src/host/replay/replayModel';
import { activityText, formatEta, statusText, type LiveRunView } from '../../../src/host/statusText';
import { describeRun, groupTrajectories, runParts, turnParts } from '../../../src/host/views/treeModel';
import { webviewPage } from '../../../src/host/webviews/dashboardPage';
import { actionParts } from '../../../src/shared/linking';
import type { TrajectoryDetail, TrajectorySummary } from '../../../src/shared/protocol/backendProtocol';
import type { WorkerToHost } from '../../../src/shared/protocol/workerProtocol';
import { describePhase, progressFigures, remainingMs } from '../../../src/shared/runPhase';

describe('webview pages and the trajectory document', () => {
  it('the dashboard page has a strict CSP with a nonce and no inline script without it', () => {
    const html = webviewPage({
      scriptUri: 'vscode-resource://x/dashboard.js',
      styleUri: 'vscode-resource://x/d.css',
      cspSource: 'vscode-resource:',
      nonce: 'abc123',
    });
    assert.match(html, /default-src &#39;none&#39;/);
    assert.match(html, /script-src &#39;nonce-abc123&#39;/);
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
    assert.equal(scripts.length, 1);
    assert.match(scripts[0]!, /nonce="abc123"/);
    assert.ok(!/ on\w+=/.test(html), 'no inline event handlers');
    // the selected runs' base weights (8 bits, bfloat16, float32) go under the picker, hidden until a run recorded them
    assert.match(html, /<div id="runs"[^>]*><\/div><p id="run-weights" hidden><\/p><\/header>/);
  });

  const detail = (actionText: string, observationText: string): TrajectoryDetail => ({
    id: 12,
    runId: 2,
    iteration: 3,
    group: 0,
    indexInGroup: 1,
    taskId: 'calc:`x`',
    reward: 0,
    advantage: -1,
    success: false,
    publicPass: true,
    privatePass: false,
    termination: 'finished',
    turns: 1,
    outcome: {},
    turnList: [{ index: 0, actionText, action: {}, observationText, observation: {}, policy: {} }],
  });

  it('fences model output so it cannot break out, and puts inline fields in code spans', () => {
    const md = renderTrajectory(detail('```\n# Injected heading\n<script>x</script>', '<obs>7</obs>'), { maxTextLength: 0, runName: 'my run' });
    assert.match(md.split('**Action**')[1]!, /^\n\n````\n```\n# Injected heading/);
    assert.match(md, /task: `` calc:`x` ``/);
    assert.equal(md.split('\n')[0], '# Trajectory 12 — run 2 ` my run `, iteration 3, group 0 #1');
  });

  it('cuts a long field at maxTextLength with a note that says how much and where the whole text is', () => {
    const md = renderTrajectory(detail('ok', 'y'.repeat(50_000)), { maxTextLength: 1000 });
    assert.ok(md.length < 2000, String(md.length));
    assert.match(
      md,
      /\*… \[49,000 more characters not shown; `agent-rl trajectory 12` prints it whole; the setting agentRl\.maxTextLength sets the cut \(0 = none\)\]\*/,
    );
    assert.ok(renderTrajectory(detail('ok', 'y'.repeat(50_000)), { maxTextLength: 0 }).includes('y'.repeat(50_000)), '0 = no limit');
  });
});

describe('runs tree model, progress and status bar', () => {
  const traj = (group: number, i: number, reward: number): TrajectorySummary => ({
    id: group * 10 + i,
    iteration: 1,
    group,
    indexInGroup: i,
    taskId: `task-${group}`,
    reward,
    advantage: 0,
    success: reward > 0,
    publicPass: true,
    privatePass: reward > 0,
    termination: 'finished',
    turns: 2,
  });

  it('groups an iteration page by group, in order, keeping each group’s task', () => {
    const groups = groupTrajectories([traj(1, 0, 1), traj(0, 0, 0), traj(1, 1, 0), traj(0, 1, 1)]);
    assert.deepEqual(
      groups.map((g) => [g.group, g.taskId, g.trajectories.map((t) => t.indexInGroup)]),
      [
        [0, 'task-0', [0, 1]],
        [1, 'task-1', [0, 1]],
      ],
    );
  });

  it('describes runs; a turn’s tooltip is cut so a hover stays fast, with a note', () => {
    const run = {
      id: 1,
      name: 'r',
      status: 'running' as const,
      env: 'calculator',
      policy: 'transformer',
      method: 'grpo',
      methodLabel: 'positive-only GRPO (failures not pushed down)',
      seed: 1,
      iterationsPlanned: 40,
      iterationsDone: 3,
      latestRewardMean: 0.5,
      createdAt: '',
      finishedAt: null,
      error: null,
    };
    assert.equal(describeRun(run), '3/40 · reward 0.500 · calculator · positive-only GRPO (failures not pushed down)');
    // a fork's row says where it starts; its parent may have been deleted since
    const fork = { ...run, iterationsDone: 12, forkedFrom: { runId: 4, iteration: 10 } };
    assert.equal(describeRun(fork), '12/40 · reward 0.500 · calculator · positive-only GRPO (failures not pushed down) · forked from run 4 @ iteration 10');
    assert.match(runParts(fork).tooltip!, /\nforked from run 4 @ iteration 10: its iterations 11 on are its own, those before are its parent's$/);
    assert.match(describeRun({ ...fork, forkedFrom: { runId: null, iteration: 10 } }), /forked from a deleted run @ iteration 10$/);
    const parts = turnParts({ trajectoryId: 7, index: 0, action: 'print(1)', observation: 'z'.repeat(200_000) }, 10_000);
    assert.ok(parts.tooltipMarkdown!.length < 5000, String(parts.tooltipMarkdown!.length));
    assert.match(parts.tooltipMarkdown!, /198,000 more characters not shown; the inspector or `agent-rl trajectory 7` shows all/);
    assert.equal(parts.description!.length, 81, 'one line of 80 and an ellipsis');
  });

  const progress = (
    iteration: number,
    etaMs: number,
    extra: Partial<Extract<WorkerToHost, { type: 'progress' }>> = {},
  ): Extract<WorkerToHost, { type: 'progress' }> => ({
    type: 'progress',
    runId: 4,
    iteration,
    iterations: 100,
    rewardMean: 0.8125,
    successRate: 0.8,
    etaMs,
    loss: 0.12345,
    ...extra,
  });

  it('says what a run does from its first second, then its figures, and the ETA only once known', () => {
    const r: LiveRunView = { name: 'e2e $(trash) [x](command:y)', method: 'grpo', iterations: 100 };
    assert.equal(statusText(r), '$(sync~spin) Agent RL: e2e \\$(trash) [x] (command: y) · starting the worker');
    r.phase = { kind: 'loading' };
    assert.equal(activityText(r), 'loading the policy and the environment');
    r.runId = 4;
    r.phase = { kind: 'evaluating', iteration: 0 };
    assert.match(statusText(r), /^\$\(sync~spin\) Agent RL: run 4 · e2e .* · evaluating before training$/);
    r.phase = { kind: 'iteration', iteration: 1 };
    assert.equal(activityText(r), 'iteration 1/100');
    r.progress = progress(2, -1);
    assert.equal(activityText(r), '2/100 · reward 0.813 · success 80.0%', 'no ETA before three iterations');
    r.progress = progress(12, 5000);
    assert.equal(activityText(r), '12/100 · reward 0.813 · success 80.0% · ETA 5s');
    r.phase = { kind: 'evaluating', iteration: 12 };
    assert.equal(activityText(r), 'evaluating after iteration 12 · 12/100');
    assert.equal(formatEta(65_000), '1m05s');
  });

  it('SFT progress reports the model’s loss and token accuracy, not the demonstrations’ reward', () => {
    const r: LiveRunView = {
      name: 'sft',
      method: 'sft',
      iterations: 100,
      phase: { kind: 'iteration', iteration: 6 },
      progress: progress(5, 1000, { tokenAccuracy: 0.8712 }),
    };
    assert.equal(activityText(r), '5/100 · loss 0.1235 · token accuracy 87.1% · ETA 1s');
    assert.deepEqual(progressFigures('sft', { rewardMean: 1.1, successRate: 1, loss: 0.5 }), ['loss 0.5000'], 'no accuracy shown until the learner records it');
    assert.equal(describePhase({ kind: 'warm-start', from: '/ck' }, 10), 'loading the warm start checkpoint');
  });

  it('the ETA comes from iteration times only, once three are done', () => {
    assert.equal(remainingMs(2000, 2, 98), -1);
    assert.equal(remainingMs(3000, 3, 97), 97_000);
  });
});

describe('what Start Run and Re-run say', () => {
  it('a config that names another interpreter or a weaker level than the settings is named', () => {
    const mine = { python: '', sandbox: 'auto' };
    assert.deepEqual(sandboxOverrides({ maxExecutions: 2 }, mine), []);
    assert.deepEqual(sandboxOverrides({ sandbox: 'strict' }, mine), [], 'as strong as auto can be');
    assert.deepEqual(sandboxOverrides({ python: './py', sandbox: 'process' }, mine), [
      'the interpreter "./py" (agentRl.pythonPath: the default)',
      'the sandbox level "process" (agentRl.sandboxLevel: auto)',
    ]);
    assert.deepEqual(sandboxOverrides({ sandbox: 'network' }, { python: '', sandbox: 'process' }), [], 'stronger than the setting');
  });

  it('config problems and re-run notes reach notifications without link syntax', () => {
    const msg = configProblemMessage('a.agentrl.json', [
      { field: '[x](command:agentRl.deleteRun)', value: 1, message: 'is not a known config key', fix: 'remove it' },
      { field: 'b', value: 1, message: 'm', fix: 'f' },
    ]);
    assert.equal(
      msg,
      'Run config a.agentrl.json: [x] (command: agentRl.deleteRun) — is not a known config key. Fix: remove it (1 more in the Agent RL output)',
    );
    const rerun = rerunMessage(0, {
      observationText: '',
      same: true,
      level: 'strict',
      python: '/usr/bin/python3',
      notes: ['the run named the interpreter "/tmp/evil", which was not used'],
    });
    assert.match(
      rerun,
      /^Agent RL: re-run of turn 0 gives the same observation, at sandbox level strict\. Not taken from the stored run: the run named the interpreter "\/tmp\/evil", which was not used\.$/,
    );
  });
});

describe('the inspector shows the model’s whole action around its code', () => {
  it('splits at the last code block, keeping the text before and after', () => {
    const actionText = 'First I check:\n```python\nprint(1)\n```\nthen\n```python\nprint(2)\n```\ndone';
    const parts = actionParts({
      actionText,
      action: { kind: 'tool', name: 'execute_code', args: { code: 'print(2)\n' } },
      observationText: '',
      observation: {},
    });
    assert.deepEqual(parts, { before: 'First I check:\n```python\nprint(1)\n```\nthen\n```python\n', code: 'print(2)\n', after: '```\ndone' });
    assert.equal(
      actionParts({ actionText: 'FINAL ANSWER: 3', action: { kind: 'tool', name: 'finish', args: {} }, observationText: '', observation: {} }),
      undefined,
    );
  });
});
