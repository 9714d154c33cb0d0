// The "Get Started with Agent RL" walkthrough (package.json contributes.walkthroughs, its pages in
// media/walkthrough/): the context keys its steps complete on, set when the thing is done, not when its
// button is clicked (a cancelled pick completes nothing). Run the default experiment: a run of this
// window completed; replay: agentRl.replaying (replayController); New Environment: the files written;
// Pick a Model…: a model saved (or agentRl.model already set). The dashboard's step completes on its command.
import * as vscode from 'vscode';
import type { LiveRuns } from './liveRuns';

/**
 * Where an editor a walkthrough button opens goes: beside the editor in view (the walkthrough stays in
 * view; a quick input before it returns the focus to the walkthrough, so the walkthrough's own
 * `toSide:` does not hold), or the active group when no editor is open.
 */
export function besideView(): vscode.ViewColumn {
  return vscode.window.tabGroups.activeTabGroup.activeTab ? vscode.ViewColumn.Beside : vscode.ViewColumn.Active;
}

export type WalkthroughKey = 'agentRl.hasFinishedRun' | 'agentRl.createdEnvironment' | 'agentRl.modelPicked';

/** Says a step's thing is done (VS Code keeps a completed step checked from then on). */
export function markWalkthroughStep(key: WalkthroughKey): void {
  void vscode.commands.executeCommand('setContext', key, true);
}

export function registerWalkthrough(context: vscode.ExtensionContext, live: LiveRuns): void {
  if (vscode.workspace.getConfiguration('agentRl').get<unknown>('model', '')) markWalkthroughStep('agentRl.modelPicked');
  context.subscriptions.push(
    live.onDidChange((r) => {
      if (r.outcome?.kind === 'finished' && r.outcome.status === 'completed') markWalkthroughStep('agentRl.hasFinishedRun');
    }),
  );
}
