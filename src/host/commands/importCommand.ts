// "Agent RL: Import Run…": a verl trainer.rollout_data_dir (folder picker) into the run database, by a
// forked import worker (the host never opens SQLite). A sibling `validation` folder and a config.yaml
// (or .hydra/config.yaml) next to the folder are picked up. "Import and follow" keeps reading while
// verl writes, with the views refreshed after every step, until Cancel.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isImporterToHost, type HostToImporter } from '../../shared/protocol/importProtocol';
import { forkNode } from '../processes/nodeProcess';

export interface ImportDeps {
  readonly nodePath: string | undefined;
  /** dist/importWorker.js */
  readonly script: string;
  readonly db: () => string;
  readonly output: vscode.OutputChannel;
  /** Refreshes the tree and the dashboard (throttled by the caller). */
  readonly refresh: () => void;
}

/** Validation folder and config found beside a rollout folder, if any. */
export function companions(rolloutDir: string): { validationDir?: string; configFile?: string } {
  const parent = path.dirname(rolloutDir);
  const validationDir = ['validation', 'val'].map((n) => path.join(parent, n)).find((d) => d !== rolloutDir && fs.existsSync(d) && fs.statSync(d).isDirectory());
  const configFile = [path.join(parent, '.hydra', 'config.yaml'), path.join(parent, 'config.yaml')].find((f) => fs.existsSync(f));
  return { ...(validationDir ? { validationDir } : {}), ...(configFile ? { configFile } : {}) };
}

async function importRun(deps: ImportDeps, children: Set<{ kill(): boolean }>): Promise<void> {
  if (!deps.nodePath) {
    void vscode.window.showErrorMessage('Agent RL needs a Node.js executable to import runs (VS Code’s own runtime cannot load SQLite). Set agentRl.nodePath.');
    return;
  }
  const picked = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: false, title: 'Agent RL: Import Run — verl trainer.rollout_data_dir', openLabel: 'Import' });
  const rolloutDir = picked?.[0]?.fsPath;
  if (!rolloutDir) return;
  const mode = await vscode.window.showQuickPick(
    [{ label: 'Import', follow: false, description: 'what the folder holds now' }, { label: 'Import and follow', follow: true, description: 'keep reading while verl writes (Cancel to stop)' }],
    { title: `Import ${path.basename(rolloutDir)}` },
  );
  if (!mode) return;
  const found = companions(rolloutDir);
  const start: HostToImporter = { type: 'start', db: deps.db(), rolloutDir, ...found, follow: mode.follow };
  deps.output.appendLine(`importing verl dumps from ${rolloutDir}${found.validationDir ? `, validation ${found.validationDir}` : ''}${found.configFile ? `, config ${found.configFile}` : ''} into ${start.db}`);
  const child = forkNode({ nodePath: deps.nodePath, script: deps.script, onStderr: (l) => deps.output.appendLine(l) });
  children.add(child);
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Agent RL: importing ${path.basename(rolloutDir)}`, cancellable: true }, (progress, token) =>
    new Promise<void>((resolve) => {
      let malformed = 0;
      token.onCancellationRequested(() => child.send({ type: 'stop' } satisfies HostToImporter));
      child.on('message', (msg: unknown) => {
        if (!isImporterToHost(msg)) return;
        if (msg.type === 'run') progress.report({ message: `run ${msg.runId} ${msg.created ? '(new)' : '(continued)'}` });
        if (msg.type === 'step') progress.report({ message: `step ${msg.step}: +${msg.added} trajectories` });
        if (msg.type === 'malformed') {
          malformed += 1;
          deps.output.appendLine(`${msg.file}:${msg.line}: malformed line skipped: ${msg.reason}`);
        }
        if (msg.type === 'finished') {
          const note = malformed ? ` ${malformed} malformed lines skipped (see the Agent RL output).` : '';
          void vscode.window.showInformationMessage(`Agent RL: run ${msg.runId} imported: ${msg.steps} steps, ${msg.trajectories} trajectories added.${note}`);
        }
        if (msg.type === 'failed') void vscode.window.showErrorMessage(`Agent RL: import failed: ${msg.error}`);
        deps.refresh();
      });
      child.on('exit', () => {
        children.delete(child);
        deps.refresh();
        resolve();
      });
      child.send(start);
    }));
}

export function registerImportCommand(context: vscode.ExtensionContext, deps: ImportDeps): void {
  const children = new Set<{ kill(): boolean }>();
  context.subscriptions.push({ dispose: () => children.forEach((c) => c.kill()) }, vscode.commands.registerCommand('agentRl.importRun', async () => {
    try {
      await importRun(deps, children);
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      deps.output.appendLine(`error: ${message}`);
      void vscode.window.showErrorMessage(message);
    }
  }));
}
