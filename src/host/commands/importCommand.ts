// "Agent RL: Import Run…": a verl trainer.rollout_data_dir (folder picker) into the run database, by a
// forked import worker (the host never opens SQLite). A sibling `validation` folder and a config.yaml
// (or .hydra/config.yaml) next to the folder are picked up. "Import and follow" keeps reading while
// verl writes, with the views refreshed after every step, until Cancel.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { isImporterToHost, type HostToImporter } from '../../shared/protocol/importProtocol';
import { messageText, showInvisibles } from '../../shared/untrustedText';
import {
  importErrorLine,
  importFailedMessage,
  importFinishedMessage,
  importPickTitle,
  importProgressTitle,
  importStartLine,
  malformedLine,
} from './importMessages';
import type { LiveRuns } from '../liveRuns';
import type { HostProcesses } from '../processes/hostProcesses';
import { forkNode } from '../processes/nodeProcess';
import { databasePath } from '../settings';

export interface ImportDeps {
  /** The Node the import worker runs on (or, without one, the explanation with its button). */
  readonly processes: HostProcesses;
  readonly output: vscode.OutputChannel;
  /** Told after every step, so the tree and the dashboard reload (they throttle it). */
  readonly live: LiveRuns;
}

/** Validation folder and config found beside a rollout folder, if any. */
export function companions(rolloutDir: string): { validationDir?: string; configFile?: string } {
  const parent = path.dirname(rolloutDir);
  const validationDir = ['validation', 'val']
    .map((n) => path.join(parent, n))
    .find((d) => d !== rolloutDir && fs.existsSync(d) && fs.statSync(d).isDirectory());
  const configFile = [path.join(parent, '.hydra', 'config.yaml'), path.join(parent, 'config.yaml')].find((f) => fs.existsSync(f));
  return { ...(validationDir ? { validationDir } : {}), ...(configFile ? { configFile } : {}) };
}

async function importRun(deps: ImportDeps, script: string, children: Set<{ kill(): boolean }>): Promise<void> {
  const runtime = await deps.processes.requireRuntime();
  if (!runtime) return;
  const picked = await vscode.window.showOpenDialog({
    canSelectFolders: true,
    canSelectFiles: false,
    canSelectMany: false,
    title: 'Agent RL: Import Run — verl trainer.rollout_data_dir',
    openLabel: 'Import',
  });
  const rolloutDir = picked?.[0]?.fsPath;
  if (!rolloutDir) return;
  const mode = await vscode.window.showQuickPick(
    [
      { label: 'Import', follow: false, description: 'what the folder holds now' },
      { label: 'Import and follow', follow: true, description: 'keep reading while verl writes (Cancel to stop)' },
    ],
    { title: importPickTitle(rolloutDir) },
  );
  if (!mode) return;
  const found = companions(rolloutDir);
  const start: HostToImporter = { type: 'start', db: databasePath(), rolloutDir, ...found, follow: mode.follow };
  deps.output.appendLine(importStartLine(rolloutDir, found, start.db));
  const child = forkNode({ runtime, script, onStderr: (l) => deps.output.appendLine(showInvisibles(l)) });
  children.add(child);
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: importProgressTitle(rolloutDir), cancellable: true },
    (progress, token) =>
      new Promise<void>((resolve) => {
        let malformed = 0;
        token.onCancellationRequested(() => child.send({ type: 'stop' } satisfies HostToImporter));
        child.on('message', (msg: unknown) => {
          if (!isImporterToHost(msg)) return;
          if (msg.type === 'run') progress.report({ message: `run ${msg.runId} ${msg.created ? '(new)' : '(continued)'}` });
          if (msg.type === 'step') progress.report({ message: `step ${msg.step}: +${msg.added} trajectories` });
          if (msg.type === 'malformed') {
            malformed += 1;
            deps.output.appendLine(malformedLine(msg));
          }
          if (msg.type === 'finished') void vscode.window.showInformationMessage(importFinishedMessage(msg, malformed));
          if (msg.type === 'failed') void vscode.window.showErrorMessage(importFailedMessage(msg.error));
          deps.live.touched();
        });
        child.on('exit', () => {
          children.delete(child);
          deps.live.touched();
          resolve();
        });
        child.send(start);
      }),
  );
}

export function registerImportCommand(context: vscode.ExtensionContext, deps: ImportDeps): void {
  const script = path.join(context.extensionPath, 'dist', 'importWorker.js');
  const children = new Set<{ kill(): boolean }>();
  context.subscriptions.push(
    { dispose: () => children.forEach((c) => c.kill()) },
    vscode.commands.registerCommand('agentRl.importRun', async () => {
      try {
        await importRun(deps, script, children);
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        deps.output.appendLine(importErrorLine(message));
        void vscode.window.showErrorMessage(messageText(message));
      }
    }),
  );
}
