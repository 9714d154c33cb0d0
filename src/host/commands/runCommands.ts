// Commands: Start Run, Stop Run, Delete Run, Reveal Database, Open Trajectory, Refresh, Load more.
// Errors are caught here, at the command boundary, and shown with what to do.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { PRESETS } from '../../shared/presets';
import { ConfigError, validateRunConfig } from '../../shared/runConfig';
import type { BackendClient } from '../processes/backendClient';
import type { RunHandle, RunManager } from '../processes/runManager';
import { databasePath, sandboxSettings } from '../settings';
import type { RunsNode, RunsTree } from '../views/runsTree';
import { InspectorPanel } from '../webviews/inspectorPanel';
import { TRAJECTORY_SCHEME } from './trajectoryDocument';

export interface CommandDeps {
  readonly tree: RunsTree;
  readonly backend: () => BackendClient | undefined;
  readonly runs: () => RunManager | undefined;
  readonly live: Map<number, RunHandle>;
  readonly output: vscode.OutputChannel;
  readonly extensionUri: vscode.Uri;
}

async function pickConfig(): Promise<Record<string, unknown> | undefined> {
  const files = await vscode.workspace.findFiles('**/*.agentrl.json', '**/node_modules/**', 50);
  type Item = vscode.QuickPickItem & { config?: Record<string, unknown>; file?: vscode.Uri };
  const preferred = vscode.workspace.getConfiguration('agentRl').get<string>('defaultPreset', '');
  const presets = [...PRESETS].sort((a, b) => Number(b.id === preferred) - Number(a.id === preferred));
  const items: Item[] = [
    ...presets.map((p) => ({ label: p.label, description: p.description, config: { ...p.config } })),
    ...(files.length ? [{ label: 'Config files', kind: vscode.QuickPickItemKind.Separator } as Item] : []),
    ...files.map((f) => ({ label: path.basename(f.fsPath), description: vscode.workspace.asRelativePath(f), file: f })),
  ];
  const choice = await vscode.window.showQuickPick(items, { title: 'Agent RL: Start Run', placeHolder: 'Choose a preset or a *.agentrl.json config' });
  if (!choice) return undefined;
  if (choice.file) {
    const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(choice.file));
    const parsed = JSON.parse(text) as Record<string, unknown>;
    delete parsed.$schema;
    return parsed;
  }
  return choice.config;
}

export function registerRunCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const guard = (fn: (...args: never[]) => Promise<void> | void) => async (...args: never[]): Promise<void> => {
    try {
      await fn(...args);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      deps.output.appendLine(`error: ${message}`);
      void vscode.window.showErrorMessage(message);
    }
  };

  const startRun = async (): Promise<void> => {
    const runs = deps.runs();
    if (!runs) {
      const pick = await vscode.window.showErrorMessage('Agent RL needs a Node.js executable to run training (VS Code’s own runtime cannot load SQLite).', 'Open Settings');
      if (pick) await vscode.commands.executeCommand('workbench.action.openSettings', 'agentRl.nodePath');
      return;
    }
    const picked = await pickConfig();
    if (!picked) return;
    const env = picked.env as string | undefined;
    if (env === 'code') {
      const s = sandboxSettings();
      picked.envOptions = { sandbox: s.sandbox, ...(s.python ? { python: s.python } : {}), ...(picked.envOptions as object | undefined) };
    }
    let config;
    try {
      config = validateRunConfig(picked);
    } catch (e) {
      if (e instanceof ConfigError) {
        const first = e.issues[0]!;
        void vscode.window.showErrorMessage(`Run config: ${first.field} — ${first.message}. Fix: ${first.fix}`);
        deps.output.appendLine(e.message);
        return;
      }
      throw e;
    }
    const name = await vscode.window.showInputBox({ title: 'Run name', value: config.name, validateInput: (v) => (v.trim() === '' ? 'A run needs a name' : undefined) });
    if (name === undefined) return;
    const db = databasePath();
    deps.output.appendLine(`starting "${name}" (${config.env} · ${config.policy} · ${config.method}) in ${db}`);
    const handle = runs.start({ ...picked, name }, db);
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Agent RL: ${name}`, cancellable: true },
      async (progress, token) => {
        token.onCancellationRequested(() => handle.cancel());
        const listener = (e: { runId: number; text: string; increment: number }): void => {
          if (e.runId === handle.runId) progress.report({ message: e.text, increment: e.increment });
        };
        progressListeners.add(listener);
        const outcome = await handle.done;
        progressListeners.delete(listener);
        if (outcome.kind === 'failed') void vscode.window.showErrorMessage(`Agent RL: run "${name}" failed: ${outcome.reason}`);
        else void vscode.window.showInformationMessage(`Agent RL: run "${name}" ${outcome.status}.`);
        deps.tree.refresh();
      },
    );
  };

  const runIdOf = (n: RunsNode | undefined): number | undefined => (n?.kind === 'run' ? n.run.id : undefined);
  const stopRun = (n?: RunsNode): void => {
    const id = runIdOf(n) ?? [...deps.live.keys()].pop();
    const h = id === undefined ? undefined : deps.live.get(id);
    if (!h) {
      void vscode.window.showInformationMessage('Agent RL: no run of this window is running.');
      return;
    }
    h.cancel();
    deps.output.appendLine(`cancel requested for run ${id}`);
  };
  const deleteRun = async (n?: RunsNode): Promise<void> => {
    const id = runIdOf(n);
    const backend = deps.backend();
    if (id === undefined || !backend) return;
    if (deps.live.has(id)) throw new Error('Stop the run before deleting it.');
    const ok = await vscode.window.showWarningMessage(`Delete run ${id} and everything stored for it?`, { modal: true }, 'Delete');
    if (ok !== 'Delete') return;
    await backend.request('deleteRun', { runId: id });
    deps.tree.refresh();
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('agentRl.startRun', guard(startRun)),
    vscode.commands.registerCommand('agentRl.stopRun', guard(stopRun)),
    vscode.commands.registerCommand('agentRl.deleteRun', guard(deleteRun)),
    vscode.commands.registerCommand('agentRl.refresh', () => deps.tree.refresh()),
    vscode.commands.registerCommand('agentRl.exportRun', guard(async (n?: RunsNode) => {
      const backend = deps.backend();
      if (!backend) return;
      let id = runIdOf(n);
      if (id === undefined) {
        const runs = await backend.request('listRuns', {});
        const choice = await vscode.window.showQuickPick(runs.map((r) => ({ label: r.name, description: `run ${r.id} · ${r.status}`, id: r.id })), { title: 'Export which run?' });
        id = choice?.id;
      }
      if (id === undefined) return;
      const target = await vscode.window.showSaveDialog({ defaultUri: vscode.Uri.file(path.join(path.dirname(databasePath()), `run-${id}.json`)), filters: { JSON: ['json'] } });
      if (!target) return;
      const r = await backend.request('exportRun', { runId: id, file: target.fsPath });
      void vscode.window.showInformationMessage(`Agent RL: run ${id} exported to ${r.file} (${(r.bytes / 1024).toFixed(0)} KB).`);
    })),
    vscode.commands.registerCommand('agentRl.loadMore', (n: Extract<RunsNode, { kind: 'more' }>) => deps.tree.loadMore(n)),
    vscode.commands.registerCommand('agentRl.revealDatabase', guard(async () => {
      await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(databasePath()));
    })),
    vscode.commands.registerCommand('agentRl.openTrajectory', guard((n?: RunsNode) => {
      const backend = deps.backend();
      if (n?.kind !== 'trajectory' || !backend) return;
      InspectorPanel.show(deps.extensionUri, backend, n.trajectory.id);
    })),
    vscode.commands.registerCommand('agentRl.openTrajectoryText', guard(async (n?: RunsNode) => {
      if (n?.kind !== 'trajectory') return;
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: TRAJECTORY_SCHEME, path: `/trajectory-${n.trajectory.id}.md` }));
      await vscode.window.showTextDocument(doc, { preview: true });
    })),
  );
}

/** Progress text per run, fed by the worker messages (see extension.ts). */
export const progressListeners = new Set<(e: { runId: number; text: string; increment: number }) => void>();
