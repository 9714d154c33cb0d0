// Activation stays thin: the output channel, the live-run event channel, the child processes (built
// from the settings; without a usable Node the views say why instead of failing), then one register
// call per feature, each owning its disposables.
import * as vscode from 'vscode';
import { registerImportCommand } from './host/commands/importCommand';
import { registerRescoreCommands } from './host/commands/rescoreCommands';
import { registerRunCommands } from './host/commands/runCommands';
import { registerRuntimeCommand } from './host/commands/runtimeCommand';
import { JudgeKey, registerJudgeKeyCommand } from './host/commands/judgeKeyCommand';
import { registerTrajectoryDocuments } from './host/commands/trajectoryDocument';
import { coalesce, LiveRuns } from './host/liveRuns';
import { HostProcesses } from './host/processes/hostProcesses';
import { registerReplay } from './host/replay/replayController';
import { maxTextLength } from './host/settings';
import { RunStatusBar } from './host/statusBar';
import { RunsTree, type RunsNode } from './host/views/runsTree';
import { registerWalkthrough } from './host/walkthrough';
import { registerDashboard } from './host/webviews/dashboardPanel';

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Agent RL');
  const live = new LiveRuns();
  const judgeKey = new JudgeKey(context.secrets);
  const processes = new HostProcesses(
    context.extensionPath,
    output,
    live,
    () => judgeKey.env(),
    () => judgeKey.isSet(),
  );
  const backend = () => processes.backend();
  const tree = new RunsTree(backend, maxTextLength);
  const view = vscode.window.createTreeView<RunsNode>('agentRl.runs', { treeDataProvider: tree, showCollapseAll: true });
  const reveal = (trajectoryId: number): void => {
    tree
      .reveal(view, trajectoryId)
      .catch((e: unknown) => output.appendLine(`could not reveal trajectory ${trajectoryId} in the tree: ${e instanceof Error ? e.message : String(e)}`));
  };
  const refreshTree = coalesce(() => tree.refresh(), 500);

  context.subscriptions.push(
    output,
    live,
    processes,
    view,
    new RunStatusBar(live, () => processes.runtimeLine()),
    live.onDidChange(refreshTree),
    live.onDidChangeStore(refreshTree),
    processes.onDidChange(() => tree.refresh()),
    vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration('agentRl.maxTextLength') && tree.refresh()),
  );
  registerRunCommands(context, { tree, processes, live, output, extensionUri: context.extensionUri, reveal });
  registerTrajectoryDocuments(context, backend);
  registerDashboard(context, { backend, requireBackend: () => processes.requireBackend(), live, reveal });
  registerReplay(context, { backend, requireBackend: () => processes.requireBackend(), output, reveal });
  registerWalkthrough(context, live);
  registerImportCommand(context, { processes, output, live });
  registerRescoreCommands(context, { processes, output });
  registerRuntimeCommand(context, { processes, output });
  registerJudgeKeyCommand(context, judgeKey);
}

export function deactivate(): void {
  // Disposables registered in activate() stop the workers and the backend.
}
