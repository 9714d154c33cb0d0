// Commands: Start Run (and a preset by id: the walkthrough's button), Pick a Model…, Stop Run, Resume Run, Fork Run from Here (forkRun.ts), Delete Run, Export Run, Reveal Database, Open Trajectory (as text),
// Refresh, Load more. Errors are caught here, at the command boundary, and shown with what to do;
// commands that need the backend say why there is none (no usable Node) instead of throwing.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { count } from '../../shared/format';
import { judgeTarget } from '../../shared/judgeTarget';
import { messageText, showInvisibles } from '../../shared/untrustedText';
import { exportRunItems } from '../pickItems';
import { databasePath, sandboxSettings } from '../settings';
import type { RunsNode } from '../views/runsTree';
import { InspectorPanel, OPEN_TOKEN_COMMAND } from '../webviews/inspectorPanel';
import type { CommandDeps } from './commandDeps';
import { forkRun } from './forkRun';
import { newEnvironment } from './newEnvironment';
import { pickModelCommand } from './pickModelCommand';
import { confirmJudgeOf, followRun, startRun } from './startRun';
import { TRAJECTORY_SCHEME } from './trajectoryDocument';

export function registerRunCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  const guard =
    (fn: (...args: never[]) => Promise<void> | void) =>
    async (...args: never[]): Promise<void> => {
      try {
        await fn(...args);
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        deps.output.appendLine(`error: ${showInvisibles(message)}`);
        void vscode.window.showErrorMessage(messageText(message, 600));
      }
    };

  const runIdOf = (n: RunsNode | undefined): number | undefined => (n?.kind === 'run' ? n.run.id : undefined);
  const stopRun = (n?: RunsNode): void => {
    const id = runIdOf(n);
    const run = id === undefined ? deps.live.all().at(-1) : deps.live.byRunId(id);
    if (!run) {
      void vscode.window.showInformationMessage('Agent RL: no run of this window is running.');
      return;
    }
    run.handle.cancel();
    deps.output.appendLine(`cancel requested for run ${run.runId ?? '(starting)'}`);
  };
  const resumeRun = async (n?: RunsNode): Promise<void> => {
    const runs = await deps.processes.requireRuns();
    const backend = await deps.processes.requireBackend();
    if (!runs || !backend || n?.kind !== 'run') return;
    const { run } = n;
    if (deps.live.byRunId(run.id)) throw new Error(`Run ${run.id} is running in this window.`);
    const stored = await backend.request('getRun', { runId: run.id });
    if (!stored) throw new Error(`Run ${run.id} is no longer in the database.`);
    // a stored judge is asked about as a config file's is: the database may be the workspace's own
    if (!(await confirmJudgeOf(stored.config, `run ${run.id} in the database`, 'resume it again'))) return;
    deps.output.appendLine(`resuming run ${run.id} "${showInvisibles(run.name)}" from its last resume point`);
    // the stored run's interpreter and sandbox level are never used: a code run continues with the user's
    const judged = judgeTarget(stored.config) !== undefined;
    followRun(deps, runs.resume(run.id, databasePath(), sandboxSettings(), judged), {
      name: run.name,
      method: run.method,
      iterations: run.iterationsPlanned,
    });
    deps.tree.refresh();
  };
  const deleteRun = async (n?: RunsNode): Promise<void> => {
    const id = runIdOf(n);
    const backend = await deps.processes.requireBackend();
    if (id === undefined || !backend) return;
    if (deps.live.byRunId(id)) throw new Error('Stop the run before deleting it.');
    const ok = await vscode.window.showWarningMessage(`Delete run ${id} and everything stored for it?`, { modal: true }, 'Delete');
    if (ok !== 'Delete') return;
    await backend.request('deleteRun', { runId: id });
    deps.tree.refresh();
  };
  const exportRun = async (n?: RunsNode): Promise<void> => {
    const backend = await deps.processes.requireBackend();
    if (!backend) return;
    let id = runIdOf(n);
    if (id === undefined) {
      const runs = await backend.request('listRuns', {});
      const choice = await vscode.window.showQuickPick(exportRunItems(runs), { title: 'Export which run?', matchOnDescription: true });
      id = choice?.id;
    }
    if (id === undefined) return;
    const target = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.file(path.join(path.dirname(databasePath()), `run-${id}.json`)),
      filters: { JSON: ['json'] },
    });
    if (!target) return;
    const r = await backend.request('exportRun', { runId: id, file: target.fsPath });
    void vscode.window.showInformationMessage(messageText(`Agent RL: run ${id} exported to ${r.file} (${count(r.bytes / 1024)} KB).`, 600));
  };

  context.subscriptions.push(
    vscode.commands.registerCommand(
      'agentRl.startRun',
      // a preset id from a command link (the walkthrough: ["default"]); the palette and the view title pass none
      guard((preset?: unknown) => startRun(deps, typeof preset === 'string' ? { preset } : undefined)),
    ),
    vscode.commands.registerCommand(
      'agentRl.pickModel',
      guard(() => pickModelCommand(deps)),
    ),
    vscode.commands.registerCommand('agentRl.newEnvironment', guard(newEnvironment)),
    vscode.commands.registerCommand('agentRl.stopRun', guard(stopRun)),
    vscode.commands.registerCommand('agentRl.resumeRun', guard(resumeRun)),
    vscode.commands.registerCommand(
      'agentRl.forkRun',
      guard((n?: RunsNode) => forkRun(deps, n)),
    ),
    vscode.commands.registerCommand('agentRl.deleteRun', guard(deleteRun)),
    vscode.commands.registerCommand('agentRl.exportRun', guard(exportRun)),
    vscode.commands.registerCommand('agentRl.refresh', () => deps.tree.refresh()),
    vscode.commands.registerCommand('agentRl.loadMore', (n: Extract<RunsNode, { kind: 'more' }>) => deps.tree.loadMore(n)),
    vscode.commands.registerCommand(
      'agentRl.revealDatabase',
      guard(async () => {
        await vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(databasePath()));
      }),
    ),
    vscode.commands.registerCommand(
      'agentRl.openTrajectory',
      guard(async (n?: RunsNode) => {
        if (n?.kind !== 'trajectory' || !(await deps.processes.requireBackend())) return;
        InspectorPanel.show({ extensionUri: deps.extensionUri, backend: () => deps.processes.backend(), reveal: deps.reveal }, n.trajectory.id);
      }),
    ),
    vscode.commands.registerCommand(
      OPEN_TOKEN_COMMAND,
      guard(async (trajectoryId?: unknown, focus?: unknown) => {
        if (typeof trajectoryId !== 'number' || !(await deps.processes.requireBackend())) return;
        const f = focus as { turn?: unknown; token?: unknown } | undefined;
        const at = typeof f?.turn === 'number' && typeof f.token === 'number' ? { turn: f.turn, token: f.token } : undefined;
        InspectorPanel.show({ extensionUri: deps.extensionUri, backend: () => deps.processes.backend(), reveal: deps.reveal }, trajectoryId, at);
      }),
    ),
    vscode.commands.registerCommand(
      'agentRl.openTrajectoryText',
      guard(async (n?: RunsNode) => {
        if (n?.kind !== 'trajectory') return;
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: TRAJECTORY_SCHEME, path: `/trajectory-${n.trajectory.id}.md` }));
        await vscode.window.showTextDocument(doc, { preview: true });
      }),
    ),
  );
}
