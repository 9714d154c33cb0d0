// The dashboard webview: chart.js curves of every selected run, live while a run is going, restored
// on reopen and after a restart (webview state + a panel serializer). Strict CSP with a nonce; the
// page loads only our bundled script and stylesheet; run names reach it as data and are set with
// textContent.
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { isDashboardState, isDashboardToHost, type HostToDashboard, type RunSeries } from '../../shared/protocol/webviewProtocol';
import type { BackendClient } from '../processes/backendClient';
import { webviewPage } from './dashboardPage';

export const DASHBOARD_VIEW_TYPE = 'agentRl.dashboard';

export function dashboardHtml(webview: vscode.Webview, extensionUri: vscode.Uri, nonce: string): string {
  return webviewPage({
    scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'dashboard.js')).toString(),
    styleUri: webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'dashboard.css')).toString(),
    cspSource: webview.cspSource,
    nonce,
  });
}

async function loadSeries(backend: BackendClient, runIds: number[]): Promise<RunSeries[]> {
  const out: RunSeries[] = [];
  for (const runId of runIds) {
    const run = await backend.request('getRun', { runId });
    if (!run) continue;
    const iterations = [];
    for (let offset = 0; ; offset += 1000) {
      const page = await backend.request('iterations', { runId, offset, limit: 1000 });
      iterations.push(...page.items);
      if (iterations.length >= page.total || page.items.length === 0) break;
    }
    out.push({ run: run.summary, iterations, evaluations: run.evaluations });
  }
  return out;
}

export class DashboardPanel {
  static current: DashboardPanel | undefined;
  private selected: number[] = [];

  private constructor(private readonly panel: vscode.WebviewPanel, extensionUri: vscode.Uri, private readonly backend: () => BackendClient | undefined, state: unknown) {
    if (isDashboardState(state)) this.selected = state.selected;
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')] };
    panel.webview.html = dashboardHtml(panel.webview, extensionUri, crypto.randomBytes(16).toString('base64'));
    panel.webview.onDidReceiveMessage((msg: unknown) => {
      if (!isDashboardToHost(msg)) return;
      if (msg.type === 'select') this.selected = msg.runIds;
      void this.push();
    });
    panel.onDidDispose(() => {
      if (DashboardPanel.current === this) DashboardPanel.current = undefined;
    });
  }

  static show(extensionUri: vscode.Uri, backend: () => BackendClient | undefined, runId?: number): void {
    if (DashboardPanel.current) {
      if (runId !== undefined && !DashboardPanel.current.selected.includes(runId)) DashboardPanel.current.selected.push(runId);
      DashboardPanel.current.panel.reveal();
      void DashboardPanel.current.push();
      return;
    }
    const panel = vscode.window.createWebviewPanel(DASHBOARD_VIEW_TYPE, 'Agent RL Dashboard', vscode.ViewColumn.Active, { enableScripts: true, retainContextWhenHidden: true });
    DashboardPanel.current = new DashboardPanel(panel, extensionUri, backend, runId !== undefined ? { selected: [runId] } : undefined);
  }

  static revive(panel: vscode.WebviewPanel, extensionUri: vscode.Uri, backend: () => BackendClient | undefined, state: unknown): void {
    DashboardPanel.current = new DashboardPanel(panel, extensionUri, backend, state);
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
  }
}

export function registerDashboard(context: vscode.ExtensionContext, backend: () => BackendClient | undefined): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('agentRl.openDashboard', (node?: { kind?: string; run?: { id: number } }) => DashboardPanel.show(context.extensionUri, backend, node?.kind === 'run' ? node.run?.id : undefined)),
    vscode.commands.registerCommand('agentRl.compareRuns', () => DashboardPanel.show(context.extensionUri, backend)),
    vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, {
      deserializeWebviewPanel: (panel, state) => {
        DashboardPanel.revive(panel, context.extensionUri, backend, state);
        return Promise.resolve();
      },
    }),
  );
}
