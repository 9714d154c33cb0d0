// The trajectory inspector panel: one panel, showing the trajectory last opened; the webview asks for
// siblings of the group by id.
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { isInspectorToHost, type InspectorData } from '../../shared/protocol/webviewProtocol';
import type { BackendClient } from '../processes/backendClient';
import { webviewPage } from './dashboardPage';

export class InspectorPanel {
  static current: InspectorPanel | undefined;
  private trajectoryId = 0;

  private constructor(private readonly panel: vscode.WebviewPanel, extensionUri: vscode.Uri, private readonly backend: BackendClient) {
    const w = panel.webview;
    w.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'dist'), vscode.Uri.joinPath(extensionUri, 'media')] };
    w.html = webviewPage({
      scriptUri: w.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'inspector.js')).toString(),
      styleUri: w.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'inspector.css')).toString(),
      cspSource: w.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
      title: 'Agent RL Trajectory',
      body: '<div id="root">Loading…</div>',
    });
    w.onDidReceiveMessage((msg: unknown) => {
      if (!isInspectorToHost(msg)) return;
      if (msg.type === 'open') this.trajectoryId = msg.trajectoryId;
      void this.push();
    });
    panel.onDidDispose(() => {
      if (InspectorPanel.current === this) InspectorPanel.current = undefined;
    });
  }

  static show(extensionUri: vscode.Uri, backend: BackendClient, trajectoryId: number): void {
    if (!InspectorPanel.current) {
      const panel = vscode.window.createWebviewPanel('agentRl.inspector', 'Agent RL Trajectory', vscode.ViewColumn.Active, { enableScripts: true, retainContextWhenHidden: true });
      InspectorPanel.current = new InspectorPanel(panel, extensionUri, backend);
    }
    InspectorPanel.current.trajectoryId = trajectoryId;
    InspectorPanel.current.panel.reveal();
    void InspectorPanel.current.push();
  }

  private async push(): Promise<void> {
    if (!this.trajectoryId) return;
    const detail = await this.backend.request('trajectory', { trajectoryId: this.trajectoryId });
    if (!detail) return;
    const page = await this.backend.request('trajectories', { runId: detail.runId, iteration: detail.iteration, offset: 0, limit: 1000 });
    const msg: InspectorData = { type: 'trajectory', detail, group: page.items.filter((x) => x.group === detail.group) };
    this.panel.title = `Trajectory ${detail.id}`;
    await this.panel.webview.postMessage(msg);
  }
}
