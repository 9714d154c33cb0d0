// The trajectory inspector panel: one panel, showing the trajectory last opened (and revealing it in
// the Runs tree); the webview asks for siblings of the group by id.
import * as crypto from 'node:crypto';
import * as vscode from 'vscode';
import { isInspectorToHost, type InspectorData, type InspectorWorst, type TokenFocus, type WorstScope } from '../../shared/protocol/webviewProtocol';
import type { WorstBy } from '../../shared/tokenStatsRows';
import type { BackendClient } from '../processes/backendClient';
import { maxTextLength } from '../settings';
import { webviewPage } from './dashboardPage';

/** Internal command (not in the palette): opens a trajectory in the inspector at a token — (trajectoryId, focus). */
export const OPEN_TOKEN_COMMAND = 'agentRl.openTrajectoryAt';

export interface InspectorDeps {
  readonly extensionUri: vscode.Uri;
  readonly backend: () => BackendClient | undefined;
  /** Selects the shown trajectory in the Runs tree. */
  readonly reveal: (trajectoryId: number) => void;
}

export class InspectorPanel {
  private static current: InspectorPanel | undefined;
  private trajectoryId = 0;
  private focus: TokenFocus | undefined;
  /** The shown trajectory's run and iteration (the worst-token lists' scope). */
  private shown: { runId: number; iteration: number; trajectoryId: number } | undefined;

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly deps: InspectorDeps,
  ) {
    const w = panel.webview;
    w.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(deps.extensionUri, 'dist'), vscode.Uri.joinPath(deps.extensionUri, 'media')] };
    w.html = webviewPage({
      scriptUri: w.asWebviewUri(vscode.Uri.joinPath(deps.extensionUri, 'dist', 'webview', 'inspector.js')).toString(),
      styleUri: w.asWebviewUri(vscode.Uri.joinPath(deps.extensionUri, 'media', 'inspector.css')).toString(),
      cspSource: w.cspSource,
      nonce: crypto.randomBytes(16).toString('base64'),
      title: 'Agent RL Trajectory',
      body: '<div id="root">Loading…</div>',
    });
    w.onDidReceiveMessage((msg: unknown) => {
      if (!isInspectorToHost(msg)) return;
      if (msg.type === 'open') this.open(msg.trajectoryId, msg.focus);
      else if (msg.type === 'worst') void this.worst(msg.scope, msg.by);
      else void this.push();
    });
    panel.onDidDispose(() => {
      if (InspectorPanel.current === this) InspectorPanel.current = undefined;
    });
  }

  static show(deps: InspectorDeps, trajectoryId: number, focus?: TokenFocus): void {
    if (!InspectorPanel.current) {
      const panel = vscode.window.createWebviewPanel('agentRl.inspector', 'Agent RL Trajectory', vscode.ViewColumn.Active, {
        enableScripts: true,
        retainContextWhenHidden: true,
      });
      InspectorPanel.current = new InspectorPanel(panel, deps);
    }
    InspectorPanel.current.panel.reveal();
    InspectorPanel.current.open(trajectoryId, focus);
  }

  /** Shows the open trajectory again: a re-score or an edit of it was stored. */
  static refresh(): void {
    void InspectorPanel.current?.push();
  }

  private open(trajectoryId: number, focus?: TokenFocus): void {
    this.trajectoryId = trajectoryId;
    this.focus = focus;
    void this.push();
    this.deps.reveal(trajectoryId);
  }

  private async push(): Promise<void> {
    const backend = this.deps.backend();
    if (!this.trajectoryId || !backend) return;
    const detail = await backend.request('trajectory', { trajectoryId: this.trajectoryId });
    if (!detail) return;
    const [page, run] = await Promise.all([
      backend.request('trajectories', { runId: detail.runId, iteration: detail.iteration, offset: 0, limit: 1000 }),
      backend.request('getRun', { runId: detail.runId }),
    ]);
    const msg: InspectorData = {
      type: 'trajectory',
      detail,
      group: page.items.filter((x) => x.group === detail.group),
      maxTextLength: maxTextLength(),
      compute: run?.compute ?? '',
      ...(run?.baseWeights ? { baseWeights: run.baseWeights } : {}),
      ...(this.focus ? { focus: this.focus } : {}),
      ...(await this.rescores(backend)),
    };
    this.shown = { runId: detail.runId, iteration: detail.iteration, trajectoryId: detail.id };
    // a token is shown once: a refresh (a re-score stored, the page reloaded) does not jump back to it
    this.focus = undefined;
    this.panel.title = `Trajectory ${detail.id}`;
    await this.panel.webview.postMessage(msg);
  }

  /** The worst tokens of the shown trajectory's iteration or run, for the page's list (or the backend's error). */
  private async worst(scope: WorstScope, by: WorstBy): Promise<void> {
    const backend = this.deps.backend();
    const shown = this.shown;
    if (!shown || !backend) return;
    let msg: InspectorWorst;
    try {
      const items = await backend.request('worstTokens', {
        runId: shown.runId,
        ...(scope === 'iteration' ? { iteration: shown.iteration } : {}),
        by,
        limit: WORST_LIMIT,
      });
      msg = { type: 'worst', trajectoryId: shown.trajectoryId, scope, by, items };
    } catch (e) {
      msg = { type: 'worst', trajectoryId: shown.trajectoryId, scope, by, items: [], error: e instanceof Error ? e.message : String(e) };
    }
    await this.panel.webview.postMessage(msg);
  }

  /** The trajectory's re-scores and edits; none when the backend cannot say (the trajectory shows without them). */
  private async rescores(backend: BackendClient): Promise<Pick<InspectorData, 'rescores'>> {
    try {
      return { rescores: await backend.request('trajectoryRescores', { trajectoryId: this.trajectoryId }) };
    } catch {
      return {};
    }
  }
}

/** Entries of a worst-token list. */
const WORST_LIMIT = 20;
