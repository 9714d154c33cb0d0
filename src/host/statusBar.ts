// Status-bar item: the newest live run — named from the moment it is started, then what it is doing
// (loading, evaluating, iteration k with its figures and ETA) — and how the last one ended.
import * as vscode from 'vscode';
import type { LiveRun, LiveRuns } from './liveRuns';
import { activityTooltip, endedText, statusText } from './statusText';

export class RunStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('agentRl.status', vscode.StatusBarAlignment.Left, 50);
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly live: LiveRuns,
    private readonly runtimeLine: () => string,
  ) {
    this.item.name = 'Agent RL run';
    this.item.command = 'agentRl.openDashboard';
    this.subscription = live.onDidChange((r) => this.update(r));
  }

  private update(changed: LiveRun): void {
    // The newest run still going wins; a run that just ended shows its end until another one changes.
    const newest = this.live.all().at(-1);
    if (newest && newest !== changed && changed.outcome) return;
    const r = changed.outcome ? changed : (newest ?? changed);
    if (r.outcome) {
      const ended = endedText(r, r.outcome.kind === 'finished' ? r.outcome.status : 'failed');
      this.item.text = ended.text;
      this.item.tooltip = `${ended.tooltip}\n${this.runtimeLine()}`;
    } else {
      this.item.text = statusText(r);
      this.item.tooltip = `${activityTooltip(r)}\n${this.runtimeLine()}`;
    }
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
