// The extension's child processes, built from the settings: the query backend and the run manager, on
// the runtime resolveRuntime() picks and probes (agentRl.nodePath, else VS Code's own runtime, else
// `node` on PATH; runtime.ts). The probe runs in the background at activation; commands wait for it.
// Without a usable runtime nothing throws: the Runs view's welcome text says why (context key
// agentRl.noNode), and every command that needs a process says the same with a button that opens the
// setting. A candidate passed over (agentRl.nodePath at Node 20, say) is a warning that names it. Changing
// agentRl.nodePath or agentRl.databasePath rebuilds them; runs still going keep their old workers.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { messageText, showInvisibles } from '../../shared/untrustedText';
import { findingMessage } from '../commands/runMessages';
import type { LiveRuns } from '../liveRuns';
import { databasePath, openNodePathSetting, runtimeFacts } from '../settings';
import { BackendClient } from './backendClient';
import { RunManager } from './runManager';
import type { LlamaCppReport } from '../../shared/protocol/probeProtocol';
import { describeRuntime, probeLlamaCpp, resolveRuntime, type Runtime } from './runtime';

interface Built {
  readonly backend: BackendClient;
  readonly runs: RunManager;
  readonly runtime: Runtime;
}

export class HostProcesses implements vscode.Disposable {
  private current: Built | undefined;
  private problem: string | undefined;
  private rejected: readonly string[] = [];
  /** The resolution in flight (or done): commands await it. */
  private ready: Promise<void>;
  private generation = 0;
  private readonly retired: { dispose(): void }[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fired after the processes were (re)built: views reload. */
  readonly onDidChange = this.changed.event;
  private readonly watch: vscode.Disposable;
  private disposed = false;

  constructor(
    private readonly extensionPath: string,
    private readonly output: vscode.OutputChannel,
    private readonly live: LiveRuns,
    /** What a judged run's worker environment adds (the judge's key from SecretStorage); never handed to anything else. */
    private readonly workerEnv: () => Readonly<Record<string, string>> = () => ({}),
    /** Whether a judge key is stored (Start Run's judge step asks), without its value. */
    readonly judgeKeyStored: () => boolean = () => false,
  ) {
    this.ready = this.build();
    this.watch = vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('agentRl.nodePath') && !e.affectsConfiguration('agentRl.databasePath')) return;
      this.ready = this.build();
    });
  }

  private script(name: string): string {
    return path.join(this.extensionPath, 'dist', `${name}.js`);
  }

  private retire(): void {
    if (!this.current) return;
    // Running workers belong to the old manager: keep it (and its backend) until the extension stops.
    if (this.live.all().length > 0) {
      this.retired.push(this.current.runs, this.current.backend);
    } else {
      this.current.runs.dispose();
      this.current.backend.dispose();
    }
    this.current = undefined;
  }

  private async build(): Promise<void> {
    const generation = ++this.generation;
    this.retire();
    this.problem = undefined;
    void vscode.commands.executeCommand('setContext', 'agentRl.noNode', false);
    const resolution = await resolveRuntime(runtimeFacts(), this.script('probe'));
    if (generation !== this.generation || this.disposed) return; // a newer setting won
    this.rejected = resolution.rejected;
    for (const r of resolution.rejected) this.output.appendLine(showInvisibles(r));
    const runtime = resolution.runtime;
    if (!runtime) {
      this.problem = `Agent RL has no runtime for its processes. ${resolution.rejected.join(' ')}`;
      void vscode.commands.executeCommand('setContext', 'agentRl.noNode', true);
      void this.explain();
      this.changed.fire();
      return;
    }
    this.output.appendLine(`Agent RL runtime: ${showInvisibles(describeRuntime(runtime))}`);
    if (resolution.rejected.length > 0) {
      void vscode.window
        .showWarningMessage(messageText(`${resolution.rejected.join(' ')} Agent RL uses ${describeRuntime(runtime)}.`, 900), 'Open Setting')
        .then((pick) => {
          if (pick) void openNodePathSetting();
        });
    }
    const onStderr = (line: string): void => this.output.appendLine(showInvisibles(line));
    const backend = new BackendClient({ runtime, script: this.script('backend'), onStderr }, databasePath());
    const runs = new RunManager({
      fork: { runtime, script: this.script('worker'), onStderr, extraEnv: this.workerEnv },
      backend,
      onMessage: (msg, handle) => {
        if (msg.type === 'log') this.output.appendLine(`[worker ${handle.pid ?? '?'}] ${showInvisibles(msg.message)}`);
        if (msg.type === 'finding')
          void vscode.window.showWarningMessage(findingMessage(this.live.byRunId(msg.runId)?.name ?? `run ${msg.runId}`, msg.finding));
        this.live.message(handle, msg);
      },
      // Also called for workers that died silently: the status bar and the tree must not stay "running".
      onOutcome: (outcome, handle) => {
        const runId = outcome.runId ?? handle.runId;
        this.output.appendLine(
          outcome.kind === 'finished' ? `run ${runId} ${outcome.status}` : `run ${runId ?? '(not started)'} failed: ${showInvisibles(outcome.reason)}`,
        );
        this.live.ended(handle, outcome);
      },
      onStart: (handle) => this.output.appendLine(`[worker ${handle.pid ?? '?'}] started on ${showInvisibles(describeRuntime(runtime))}`),
    });
    this.current = { backend, runs, runtime };
    this.changed.fire();
  }

  /** Why there are no processes, with a button that opens agentRl.nodePath. */
  async explain(): Promise<void> {
    const pick = await vscode.window.showErrorMessage(messageText(this.problem ?? 'Agent RL has no runtime to run its processes.', 900), 'Open Setting');
    if (pick) await openNodePathSetting();
  }

  /** The backend if the processes are built (views call this and show nothing until they are). */
  backend(): BackendClient | undefined {
    return this.current?.backend;
  }

  /** The chosen runtime, its probe report, and the candidates passed over (Show Runtime, the status bar). */
  runtimeSummary(): { readonly runtime?: Runtime; readonly rejected: readonly string[]; readonly checking: boolean } {
    return { ...(this.current ? { runtime: this.current.runtime } : {}), rejected: this.rejected, checking: !this.current && this.problem === undefined };
  }

  /** Which llama.cpp build loads on the runtime (checked once per runtime, on first asking: Show Runtime). */
  llamaCpp(runtime: Runtime): Promise<LlamaCppReport> {
    if (this.llamaCppChecked?.runtime !== runtime) this.llamaCppChecked = { runtime, report: probeLlamaCpp(runtime, this.script('probe')) };
    return this.llamaCppChecked.report;
  }
  private llamaCppChecked: { readonly runtime: Runtime; readonly report: Promise<LlamaCppReport> } | undefined;

  /** One line naming the runtime, for the status bar's tooltip. */
  runtimeLine(): string {
    if (this.current) return `Runtime: ${describeRuntime(this.current.runtime)}`;
    return this.problem ? 'Runtime: none usable (Agent RL: Show Runtime)' : 'Runtime: being checked';
  }

  private async built(): Promise<Built | undefined> {
    // a setting changed while we waited: wait for the newer resolution too
    for (let r = this.ready; ; r = this.ready) {
      await r;
      if (r === this.ready) break;
    }
    if (!this.current) void this.explain();
    return this.current;
  }

  /** The backend, or undefined after telling the user why (commands call this instead of throwing). */
  async requireBackend(): Promise<BackendClient | undefined> {
    return (await this.built())?.backend;
  }

  /** The runtime other workers (the importer) run on, or undefined after telling the user why. */
  async requireRuntime(): Promise<Runtime | undefined> {
    return (await this.built())?.runtime;
  }

  async requireRuns(): Promise<RunManager | undefined> {
    return (await this.built())?.runs;
  }

  dispose(): void {
    this.disposed = true;
    this.watch.dispose();
    this.changed.dispose();
    this.current?.runs.dispose();
    this.current?.backend.dispose();
    for (const r of this.retired) r.dispose();
  }
}
