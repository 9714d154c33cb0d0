// The dashboard webview: chart.js curves of every selected run, live while a run is going, restored
// on reopen and after a restart (webview state + a panel serializer). It follows the user: a run
// started while it is open is ticked and drawn (agentRl.dashboard.followNewRuns), and Compare Runs
// opens it on exactly the runs picked in a multi-select quick pick. Strict CSP with a nonce; the page
// loads only our bundled script and stylesheet; run names reach it as data and are set with textContent.
// With two or more runs selected it also sends their comparison (runComparison.ts), and a click on a
// shared task's trajectory there opens it in the inspector.
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { isDashboardState, isDashboardToHost, type DashboardDrill, type HostToDashboard, type RunSeries } from '../../shared/protocol/webviewProtocol';
import type { WorstBy } from '../../shared/tokenStatsRows';
import { OPEN_TOKEN_COMMAND } from './inspectorPanel';
import { coalesce, type LiveRuns } from '../liveRuns';
import type { BackendClient } from '../processes/backendClient';
import { compareRunItems } from '../pickItems';
import { followNewRuns } from '../settings';
import { webviewPage } from './dashboardPage';
import { InspectorPanel } from './inspectorPanel';
import { loadComparison } from './runComparison';

export const DASHBOARD_VIEW_TYPE = 'agentRl.dashboard';
/** The page accepts at most this many selected runs (isDashboardToHost). */
const MAX_SELECTED = 20;
/** A drill-down's worst tokens and histogram bins. */
const DRILL_LIMIT = 20;
const DRILL_BINS = 20;

async function loadSeries(backend: BackendClient, runIds: readonly number[]): Promise<RunSeries[]> {
  const out: RunSeries[] = [];
  for (const runId of runIds) {
    const run = await backend.request('getRun', { runId });
    if (!run) continue;
    const iterations = [];
    // a page follows the iteration it is given (a fork's iterations start after its fork iteration)
    for (let after = 0; ;) {
      const page = await backend.request('iterations', { runId, offset: after, limit: 1000 });
      iterations.push(...page.items);
      const last = page.items[page.items.length - 1];
      if (!last || iterations.length >= page.total || page.items.length < 1000) break;
      after = last.iteration;
    }
    out.push({ run: run.summary, iterations, evaluations: run.evaluations, ...(run.baseWeights ? { baseWeights: run.baseWeights } : {}) });
  }
  // one request for every selected run's findings: each needs its stored trajectories for the episodes
  const health = out.length ? await backend.request('findings', { runIds: out.map((s) => s.run.id) }) : [];
  return out.map((s) => ({ ...s, findings: health.find((h) => h.runId === s.run.id)?.findings ?? [] }));
}

class DashboardPanel {
  private selected: number[] = [];
  /** The selection the page's comparison was last built for (rebuilt when it changes). */
  private compared = '';

  constructor(
    readonly panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    private readonly backend: () => BackendClient | undefined,
    state: unknown,
    private readonly openTrajectory: (trajectoryId: number) => void,
  ) {
    if (isDashboardState(state)) this.selected = state.selected.slice(0, MAX_SELECTED);
    const w = panel.webview;
    w.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')] };
    w.html = webviewPage({
      scriptUri: w.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'dashboard.js')).toString(),
      styleUri: w.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'dashboard.css')).toString(),
      cspSource: w.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
    });
    w.onDidReceiveMessage((msg: unknown) => {
      if (!isDashboardToHost(msg)) return;
      if (msg.type === 'drill') return void this.drill(msg.runId, msg.iteration, msg.by);
      if (msg.type === 'openToken') return void vscode.commands.executeCommand(OPEN_TOKEN_COMMAND, msg.trajectoryId, msg.focus);
      if (msg.type === 'openTrajectory') return this.openTrajectory(msg.trajectoryId);
      if (msg.type === 'ready') this.compared = ''; // a reloaded page has lost its comparison
      if (msg.type === 'select') this.selected = msg.runIds;
      void this.push();
    });
  }

  get selection(): readonly number[] {
    return this.selected;
  }

  /** Exactly these runs (Compare Runs). */
  select(runIds: readonly number[]): void {
    this.selected = runIds.slice(0, MAX_SELECTED);
    void this.push();
  }

  /** Ticks a run (Open Dashboard on a run, or a run that just started), keeping the others. */
  add(runId: number): void {
    if (!this.selected.includes(runId)) this.selected = [...this.selected, runId].slice(-MAX_SELECTED);
    void this.push();
  }

  /** An iteration's worst tokens by `by` and its mismatch histogram, for the page's drill-down. */
  private async drill(runId: number, iteration: number, by: WorstBy): Promise<void> {
    const b = this.backend();
    if (!b) return;
    let msg: DashboardDrill;
    try {
      const [items, histogram] = await Promise.all([
        b.request('worstTokens', { runId, iteration, by, limit: DRILL_LIMIT }),
        b.request('mismatchHistogram', { runId, iteration, bins: DRILL_BINS }),
      ]);
      msg = { type: 'drill', runId, iteration, by, items, histogram };
    } catch (e) {
      const empty = { edges: [], counts: [], tokens: 0, unknown: 0 };
      msg = { type: 'drill', runId, iteration, by, items: [], histogram: empty, error: e instanceof Error ? e.message : String(e) };
    }
    await this.panel.webview.postMessage(msg);
  }

  /** Sends every run and the selected runs' series (newest run selected when nothing is). */
  async push(): Promise<void> {
    const b = this.backend();
    if (!b) return;
    const runs = await b.request('listRuns', {});
    if (this.selected.length === 0 && runs[0]) this.selected = [runs[0].id];
    const series = await loadSeries(b, this.selected);
    const msg: HostToDashboard = { type: 'data', runs, series, selected: this.selected };
    await this.panel.webview.postMessage(msg);
    await this.pushComparison(b);
  }

  /** Compare Runs' section, when the selection changed since it was built. */
  private async pushComparison(b: BackendClient): Promise<void> {
    const key = this.selected.join(',');
    if (key === this.compared) return;
    this.compared = key;
    await this.panel.webview.postMessage(await loadComparison(b, this.selected));
  }
}

/** Multi-select of stored runs, searchable by name, environment, policy and method; undefined if dismissed. */
async function pickRuns(backend: BackendClient, selected: readonly number[]): Promise<number[] | undefined> {
  const runs = await backend.request('listRuns', {});
  if (runs.length === 0) {
    void vscode.window.showInformationMessage('Agent RL: no runs to compare yet. Start one with "Agent RL: Start Run" or `agent-rl train`.');
    return undefined;
  }
  const items = compareRunItems(runs, selected);
  const chosen = await vscode.window.showQuickPick(items, {
    title: 'Agent RL: Compare Runs',
    placeHolder: 'Tick the runs to compare; type to search by name, environment, policy or method',
    canPickMany: true,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!chosen) return undefined;
  if (chosen.length > MAX_SELECTED)
    void vscode.window.showWarningMessage(`Agent RL: the dashboard compares at most ${MAX_SELECTED} runs; showing the first ${MAX_SELECTED} picked.`);
  return chosen.map((c) => c.id);
}

export interface DashboardDeps {
  readonly backend: () => BackendClient | undefined;
  /** The backend, or undefined after saying why (no usable Node). */
  readonly requireBackend: () => Promise<BackendClient | undefined>;
  readonly live: LiveRuns;
  /** Selects a trajectory in the Runs tree (the inspector opened from a comparison calls it). */
  readonly reveal: (trajectoryId: number) => void;
}

export function registerDashboard(context: vscode.ExtensionContext, deps: DashboardDeps): void {
  let current: DashboardPanel | undefined;
  const adopt = (panel: vscode.WebviewPanel, state: unknown): DashboardPanel => {
    const inspect = (id: number): void => InspectorPanel.show({ extensionUri: context.extensionUri, backend: deps.backend, reveal: deps.reveal }, id);
    const d = new DashboardPanel(panel, context.extensionUri, deps.backend, state, inspect);
    panel.onDidDispose(() => {
      if (current === d) current = undefined;
    });
    current = d;
    return d;
  };
  const open = (): DashboardPanel => {
    if (current) {
      current.panel.reveal();
      return current;
    }
    return adopt(
      vscode.window.createWebviewPanel(DASHBOARD_VIEW_TYPE, 'Agent RL Dashboard', vscode.ViewColumn.Active, {
        enableScripts: true,
        retainContextWhenHidden: true,
      }),
      undefined,
    );
  };
  const pushSoon = coalesce(() => void current?.push(), 500);

  context.subscriptions.push(
    deps.live.onDidChange(pushSoon),
    deps.live.onDidChangeStore(pushSoon),
    deps.live.onDidStart((r) => {
      if (current && followNewRuns()) current.add(r.runId);
    }),
    vscode.commands.registerCommand('agentRl.openDashboard', async (node?: { kind?: string; run?: { id: number } }) => {
      if (!(await deps.requireBackend())) return;
      const d = open();
      if (node?.kind === 'run' && node.run) d.add(node.run.id);
      else void d.push();
    }),
    vscode.commands.registerCommand('agentRl.compareRuns', async () => {
      const backend = await deps.requireBackend();
      if (!backend) return;
      const runIds = await pickRuns(backend, current?.selection ?? []);
      if (runIds) open().select(runIds);
    }),
    vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
      deserializeWebviewPanel: (panel, state) => {
        adopt(panel, state);
        return Promise.resolve();
      },
    }),
  );
}
