// End to end in a real VS Code (code-server) through the UI, as a user: the packaged .vsix is
// installed, a run is started from the Command Palette, the tree and status bar show it, the dashboard
// draws its real values, a run is cancelled from the progress notification, and a killed worker is
// reported as a failed run. Screenshots go to test/e2e/artifacts/.
// Run: npm run test:e2e (builds the .vsix and installs the harness first).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium } from 'playwright-core';
import { answer, CHROMIUM, CHROMIUM_ARGS, installExtension, makeDirs, pick, runCommand, startServer, webviewFrame, workerPids, writeSettings } from './harness.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const ROOT = path.resolve(HERE, '..', '..');
const OUT = path.join(HERE, 'artifacts');
const VSIX = process.env.E2E_VSIX || path.join(ROOT, 'agent-rl-workbench.vsix');

describe('Agent RL Workbench in a real VS Code', { timeout: 600_000 }, () => {
  let dirs, server, browser, page;

  before(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    assert.ok(fs.existsSync(VSIX), `no ${VSIX}: run npm run package first`);
    dirs = makeDirs();
    writeSettings(dirs, { 'agentRl.nodePath': process.execPath });
    // A config file the Start Run picker offers, for runs long enough to cancel and to kill.
    fs.writeFileSync(path.join(dirs.workspace, 'long.agentrl.json'), JSON.stringify({ env: 'binary-search', policy: 'table', iterations: 200000, evalEpisodes: 16 }, null, 2));
    // One SFT iteration on the code environment with demonstrations that first make a mistake: their
    // first turn ends in a real traceback from the sandbox, the second runs the fix, and the two-run
    // budget ends the episode before FINAL ANSWER, so each one is a failed episode with two code turns.
    fs.writeFileSync(path.join(dirs.workspace, 'code-demo.agentrl.json'), JSON.stringify({
      env: 'code', policy: 'transformer', method: 'sft', iterations: 1, groupsPerIteration: 1, groupSize: 2, evalEpisodes: 1,
      envOptions: { maxExecutions: 2 }, policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 1024, maxNewTokens: 16, minibatchSize: 2, mistakeRate: 1 },
    }, null, 2));
    // A verl run imported into the workspace database before the workbench opens (run 1).
    const verl = path.join(ROOT, 'test', 'fixtures', 'verl');
    const imported = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), 'import', 'verl', path.join(verl, 'rollout'), '--validation', path.join(verl, 'validation'),
      '--config', path.join(verl, 'config.yaml'), '--db', path.join(dirs.workspace, '.agent-rl', 'runs.sqlite')], { encoding: 'utf8' });
    assert.equal(imported.status, 0, imported.stderr);
    installExtension(dirs, VSIX);
    server = await startServer(dirs, path.join(OUT, 'code-server.log'));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, env: dirs.env });
    page = await (await browser.newContext({ viewport: { width: 1500, height: 900 } })).newPage();
    await page.goto(server.url);
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 90_000 });
  });

  after(async () => {
    if (page) await page.screenshot({ path: path.join(OUT, 'final.png') }).catch(() => {});
    await browser?.close();
    await server?.stop();
    if (dirs && !process.env.E2E_KEEP_TMP) fs.rmSync(dirs.base, { recursive: true, force: true });
  });

  const treeRows = () => page.locator('.part.sidebar .monaco-list-row');
  const runRow = (name) => treeRows().filter({ hasText: name }).first();

  it('shows the Agent RL activity-bar container and its Runs view', async () => {
    const item = page.locator('.part.activitybar a.action-label[aria-label="Agent RL"]');
    await item.waitFor({ state: 'visible', timeout: 90_000 });
    await item.click();
    await page.locator('.part.sidebar', { hasText: 'Runs' }).waitFor({ state: 'visible', timeout: 30_000 });
  });

  it('starts a run from the Command Palette; the tree and the status bar show it', async () => {
    await runCommand(page, 'Agent RL: Start Run');
    await pick(page, 'Binary search · table · GRPO');
    await answer(page, 'e2e-grpo');
    await runRow('e2e-grpo').waitFor({ state: 'visible', timeout: 60_000 });
    await page.locator('.part.sidebar .monaco-list-row', { hasText: 'e2e-grpo' }).filter({ hasText: '100/100' }).waitFor({ state: 'visible', timeout: 120_000 });
    await page.locator('.statusbar-item', { hasText: /Agent RL: run 2/ }).first().waitFor({ state: 'visible', timeout: 30_000 });
    await page.screenshot({ path: path.join(OUT, 'tree.png') });
  });

  it('opens the dashboard with curves drawn from the run’s real values', async () => {
    await runCommand(page, 'Agent RL: Open Dashboard');
    const frame = await webviewFrame(page, 'section[data-metric="reward"][data-points]');
    // 100 iterations × (mean, max) for the reward chart, and two evaluations (before and after)
    await frame.waitForFunction(() => document.querySelector('section[data-metric="reward"]')?.getAttribute('data-points') === '200', null, { timeout: 30_000 });
    assert.equal(await frame.getAttribute('section[data-metric="evaluation"]', 'data-points'), '2');
    assert.equal(await frame.locator('canvas').count(), 10);
    await page.screenshot({ path: path.join(OUT, 'dashboard.png') });
  });

  it('opens an imported verl run in the tree, the dashboard and the inspector: a tool response\'s traceback links to the code line', async () => {
    const run = runRow('qwen2.5-3b-code-grpo');
    await run.click();
    await treeRows().filter({ hasText: 'iteration 2' }).first().click();
    await treeRows().filter({ hasText: /group 0 · verl:/ }).first().click();
    await treeRows().filter({ hasText: '✓ #0 reward 1.00' }).first().click();
    const frame = await webviewFrame(page, 'a.line-link.innermost');
    assert.equal(await frame.getAttribute('a.line-link.innermost', 'data-target'), 't0-l2');
    assert.match(await frame.textContent('section[data-turn="0"] pre.obs'), /ZeroDivisionError/);
    await frame.click('a.line-link.innermost');
    await frame.waitForSelector('#t0-l2.hl', { timeout: 10_000 });
    assert.match(await frame.textContent('#t0-l2'), /return sum\(xs\) \/ len\(xs\)/);
    assert.match(await frame.textContent('.outcome-details'), /metrics: acc 1 · public_pass 1 · private_pass 1/);
    assert.match(await frame.textContent('.outcome-details'), /Write a Python function mean/);
    await page.screenshot({ path: path.join(OUT, 'inspector-verl.png') });
    await runCommand(page, 'Agent RL: Open Dashboard');
    const dash = await webviewFrame(page, 'input[data-run="1"]');
    await dash.check('input[data-run="1"]');
    // e2e-grpo's 100 iterations × (mean, max) and the imported run's 2 steps × (mean, max); its 2 validations
    await dash.waitForFunction(() => document.querySelector('section[data-metric="reward"]')?.getAttribute('data-points') === '204', null, { timeout: 30_000 });
    assert.equal(await dash.getAttribute('section[data-metric="evaluation"]', 'data-points'), '4');
    await page.screenshot({ path: path.join(OUT, 'dashboard-verl.png') });
    await run.click(); // collapse: the next tests pick rows of their own runs
  });

  it('opens a trajectory and follows a traceback link to the highlighted code line', async () => {
    await runCommand(page, 'Agent RL: Start Run');
    await pick(page, 'code-demo.agentrl.json');
    await answer(page, 'e2e-code');
    await page.locator('.notification-list-item', { hasText: 'run "e2e-code" completed' }).first().waitFor({ state: 'visible', timeout: 180_000 });
    await runCommand(page, 'Agent RL: Refresh Runs');
    await runRow('e2e-code').click();
    await treeRows().filter({ hasText: 'iteration 1' }).first().click();
    await treeRows().filter({ hasText: /^group 0/ }).first().click();
    await treeRows().filter({ hasText: '#0 reward' }).first().click();
    const frame = await webviewFrame(page, 'a.line-link.innermost');
    const target = await frame.getAttribute('a.line-link.innermost', 'data-target');
    assert.match(target, /^t0-l\d+$/);
    assert.match(await frame.textContent('section[data-turn="0"] pre.obs'), /NameError/);
    await frame.click('a.line-link.innermost');
    await frame.waitForSelector(`#${target}.hl`, { timeout: 10_000 });
    assert.match(await frame.textContent(`#${target}`), /print\(/, 'the failing line is the call with the wrong name');
    await page.screenshot({ path: path.join(OUT, 'inspector.png') });
  });

  it('replays a failed episode in the editor, steps to the next turn, and re-runs a turn in the sandbox', async () => {
    assert.match(await treeRows().filter({ hasText: '#0 reward' }).first().textContent(), /✗ #0 reward 0\.00/);
    // A context-menu item clicked while the menu is still opening can be lost: wait for it, and retry once.
    const tab = page.locator('.tab', { hasText: 'turn-0.py' });
    for (let attempt = 0; attempt < 2 && !(await tab.isVisible()); attempt++) {
      await treeRows().filter({ hasText: '#0 reward' }).first().click({ button: 'right' });
      const item = page.locator('.monaco-menu .action-label', { hasText: 'Replay Episode' }).first();
      await item.waitFor({ state: 'visible', timeout: 10_000 });
      await sleep(500);
      await item.click();
      await tab.waitFor({ state: 'visible', timeout: 15_000 }).catch(() => {});
    }
    await tab.waitFor({ state: 'visible', timeout: 15_000 });
    await page.locator('.view-line', { hasText: '_v2(' }).first().waitFor({ state: 'visible', timeout: 30_000 });
    await page.screenshot({ path: path.join(OUT, 'replay.png') });
    await runCommand(page, 'Agent RL: Replay: Re-run in Sandbox');
    await page.locator('.notification-list-item', { hasText: 're-run of turn 0 gives the same observation' }).first().waitFor({ state: 'visible', timeout: 60_000 });
    await runCommand(page, 'Agent RL: Replay: Next Turn');
    await page.locator('.tab', { hasText: 'turn-1.py' }).waitFor({ state: 'visible', timeout: 30_000 });
  });

  it('cancels a run from its progress notification', async () => {
    await runCommand(page, 'Agent RL: Start Run');
    await pick(page, 'long.agentrl.json');
    await answer(page, 'e2e-cancel');
    const toast = page.locator('.notification-list-item', { hasText: 'Agent RL: e2e-cancel' }).first();
    await toast.waitFor({ state: 'visible', timeout: 60_000 });
    await sleep(1500);
    await toast.locator('a.monaco-button, .monaco-button', { hasText: 'Cancel' }).first().click();
    await page.locator('.notification-list-item', { hasText: 'run "e2e-cancel" cancelled' }).first().waitFor({ state: 'visible', timeout: 60_000 });
  });

  it('reports a killed worker as a failed run and stays usable', async () => {
    await runCommand(page, 'Agent RL: Start Run');
    await pick(page, 'long.agentrl.json');
    await answer(page, 'e2e-killed');
    let pids = [];
    for (let i = 0; i < 100 && pids.length === 0; i++) {
      await sleep(200);
      pids = workerPids(dirs.extensions);
    }
    assert.equal(pids.length, 1, 'one worker running');
    await sleep(1500);
    process.kill(pids[0], 'SIGKILL');
    await page.locator('.notification-list-item', { hasText: /run "e2e-killed" failed: the worker was killed \(SIGKILL\)/ }).first().waitFor({ state: 'visible', timeout: 60_000 });
    await page.locator('.statusbar-item', { hasText: /Agent RL: run \d+ failed/ }).first().waitFor({ state: 'visible', timeout: 30_000 });
    await runCommand(page, 'Agent RL: Refresh Runs');
    const row = runRow('e2e-killed');
    await row.waitFor({ state: 'visible', timeout: 30_000 });
    assert.match((await row.getAttribute('aria-label')) ?? (await row.textContent()) ?? '', /e2e-killed/);
    await page.screenshot({ path: path.join(OUT, 'killed.png') });
  });
});
