// Status-bar item: the newest live run's iteration, reward and ETA; hidden when nothing runs.
import * as vscode from 'vscode';
import type { WorkerToHost } from '../shared/protocol/workerProtocol';
import { statusText } from './statusText';

export class RunStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentRl.status', vscode.StatusBarAlignment.Left, 50);

  constructor() {
    this.item.name = 'Agent RL run';
    this.item.command = 'agentRl.openDashboard';
  }

  update(p: Extract<WorkerToHost, { type: 'progress' }>): void {
    this.item.text = statusText(p);
    this.item.tooltip = `Iteration ${p.iteration} of ${p.iterations}; success ${(100 * p.successRate).toFixed(1)}%. Click for the dashboard.`;
    this.item.show();
  }

  finished(runId: number, status: string): void {
    this.item.text = `$(${status === 'completed' ? 'pass' : 'error'}) Agent RL: run ${runId} ${status}`;
    this.item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}
