// The extension's child processes, built from the settings: the query backend and the run manager,
// both needing a real Node (agentRl.nodePath, else `node` on PATH). Without a usable one, nothing
// throws: the Runs view's welcome text says why (context key agentRl.noNode), and every command that
// needs a process says the same with a button that opens the setting. Changing agentRl.nodePath or
// agentRl.databasePath rebuilds them; runs still going keep their old workers until they end.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { messageText, showInvisibles } from '../../shared/untrustedText';
import type { LiveRuns } from '../liveRuns';
import { databasePath, resolveNode } from '../settings';
import { BackendClient } from './backendClient';
import { RunManager } from './runManager';

export class HostProcesses implements vscode.Disposable {
  private current: { backend: BackendClient; runs: RunManager; nodePath: string } | undefined;
  private problem: string | undefined;
  private readonly retired: { dispose(): void }[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fired after the processes were rebuilt (a setting changed): views reload. */
  readonly onDidChange = this.changed.event;
  private readonly watch: vscode.Disposable;

  constructor(private readonly extensionPath: string, private readonly output: vscode.OutputChannel, private readonly live: LiveRuns) {
    this.build();
    if (this.problem) void this.explain();
    this.watch = vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('agentRl.nodePath') && !e.affectsConfiguration('agentRl.databasePath')) return;
      this.build();
      if (this.problem) void this.explain();
      this.changed.fire();
    });
  }

  private build(): void {
    if (this.current) {
      // Running workers belong to the old manager: keep it (and its backend) until the extension stops.
      if (this.live.all().length > 0) {
        this.retired.push(this.current.runs, this.current.backend);
      } else {
        this.current.runs.dispose();
        this.current.backend.dispose();
      }
    }
    this.current = undefined;
    const node = resolveNode();
    this.problem = 'problem' in node ? node.problem : undefined;
    void vscode.commands.executeCommand('setContext', 'agentRl.noNode', this.problem !== undefined);
    if ('problem' in node) {
      this.output.appendLine(node.problem);
      return;
    }
    const script = (name: string): string => path.join(this.extensionPath, 'dist', `${name}.js`);
    const onStderr = (line: string): void => this.output.appendLine(showInvisibles(line));
    const backend = new BackendClient({ nodePath: node.path, script: script('backend'), onStderr }, databasePath());
    const runs = new RunManager({
      fork: { nodePath: node.path, script: script('worker'), onStderr },
      backend,
      onMessage: (msg, handle) => {
        if (msg.type === 'log') this.output.appendLine(`[worker ${handle.pid ?? '?'}] ${showInvisibles(msg.message)}`);
        this.live.message(handle, msg);
      },
      // Also called for workers that died silently: the status bar and the tree must not stay "running".
      onOutcome: (outcome, handle) => {
        const runId = outcome.runId ?? handle.runId;
        this.output.appendLine(outcome.kind === 'finished' ? `run ${runId} ${outcome.status}` : `run ${runId ?? '(not started)'} failed: ${showInvisibles(outcome.reason)}`);
        this.live.ended(handle, outcome);
      },
    });
    this.current = { backend, runs, nodePath: node.path };
  }

  /** Why there are no processes, with a button that opens agentRl.nodePath. */
  async explain(): Promise<void> {
    const pick = await vscode.window.showErrorMessage(messageText(this.problem ?? 'Agent RL has no Node.js to run its processes.', 600), 'Open Setting');
    if (pick) await vscode.commands.executeCommand('workbench.action.openSettings', 'agentRl.nodePath');
  }

  backend(): BackendClient | undefined {
    return this.current?.backend;
  }

  runs(): RunManager | undefined {
    return this.current?.runs;
  }

  /** The backend, or undefined after telling the user why (commands call this instead of throwing). */
  requireBackend(): BackendClient | undefined {
    if (!this.current) void this.explain();
    return this.current?.backend;
  }

  /** The Node other workers (the importer) run on, or undefined after telling the user why. */
  requireNode(): string | undefined {
    if (!this.current) void this.explain();
    return this.current?.nodePath;
  }

  requireRuns(): RunManager | undefined {
    if (!this.current) void this.explain();
    return this.current?.runs;
  }

  dispose(): void {
    this.watch.dispose();
    this.changed.dispose();
    this.current?.runs.dispose();
    this.current?.backend.dispose();
    for (const r of this.retired) r.dispose();
  }
}
