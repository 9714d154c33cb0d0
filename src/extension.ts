// Activation stays thin: resolve settings, create the lazily started backend and the run manager,
// then one register call per feature, each owning its disposables.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { registerImportCommand } from './host/commands/importCommand';
import { registerRunCommands, progressListeners } from './host/commands/runCommands';
import { registerTrajectoryDocuments } from './host/commands/trajectoryDocument';
import { BackendClient } from './host/processes/backendClient';
import { RunManager, type RunHandle } from './host/processes/runManager';
import { registerReplay } from './host/replay/replayController';
import { databasePath, nodePath } from './host/settings';
import { RunStatusBar } from './host/statusBar';
import { RunsTree } from './host/views/runsTree';
import { DashboardPanel, registerDashboard } from './host/webviews/dashboardPanel';

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Agent RL');
  const node = nodePath();
  const script = (name: string): string => path.join(context.extensionPath, 'dist', `${name}.js`);
  const onStderr = (line: string): void => output.appendLine(line);
  const backend = node ? new BackendClient({ nodePath: node, script: script('backend'), onStderr }, databasePath()) : undefined;
  const tree = new RunsTree(backend!);
  const status = new RunStatusBar();
  const live = new Map<number, RunHandle>();
  let refreshTimer: NodeJS.Timeout | undefined;
  const refreshSoon = (): void => {
    refreshTimer ??= setTimeout(() => {
      refreshTimer = undefined;
      tree.refresh();
      void DashboardPanel.current?.push();
    }, 500);
  };
  const runs = node && backend
    ? new RunManager({
        fork: { nodePath: node, script: script('worker'), onStderr },
        backend,
        onMessage: (msg, handle) => {
          if (msg.type === 'started') live.set(msg.runId, handle);
          if (msg.type === 'progress') {
            status.update(msg);
            for (const l of progressListeners) l({ runId: msg.runId, text: `iteration ${msg.iteration}/${msg.iterations} · reward ${msg.rewardMean.toFixed(3)}`, increment: 100 / msg.iterations });
          }
          if (msg.type === 'log') output.appendLine(`[worker ${handle.pid ?? '?'}] ${msg.message}`);
          if (msg.type !== 'heartbeat') refreshSoon();
        },
        // Also called for workers that died silently: the status bar and the tree must not stay "running".
        onOutcome: (outcome, handle) => {
          const runId = outcome.runId ?? handle.runId;
          if (runId !== undefined) live.delete(runId);
          status.finished(runId ?? 0, outcome.kind === 'finished' ? outcome.status : 'failed');
          output.appendLine(outcome.kind === 'finished' ? `run ${runId} ${outcome.status}` : `run ${runId ?? '(not started)'} failed: ${outcome.reason}`);
          refreshSoon();
        },
      })
    : undefined;
  if (!node) output.appendLine('No Node.js found: set agentRl.nodePath to a node executable (VS Code’s own runtime cannot load SQLite).');

  context.subscriptions.push(output, status, vscode.window.registerTreeDataProvider('agentRl.runs', tree), { dispose: () => runs?.dispose() }, { dispose: () => backend?.dispose() });
  registerRunCommands(context, { tree, backend: () => backend, runs: () => runs, live, output, extensionUri: context.extensionUri });
  registerTrajectoryDocuments(context, () => backend);
  registerDashboard(context, () => backend);
  registerReplay(context, () => backend, output);
  registerImportCommand(context, { nodePath: node, script: script('importWorker'), db: databasePath, output, refresh: refreshSoon });
}

export function deactivate(): void {
  // Disposables registered in activate() stop the workers and the backend.
}
