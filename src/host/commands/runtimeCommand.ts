// Agent RL: Show Runtime — which runtime the worker and the backend run on (agentRl.nodePath, VS Code's
// own, or `node` on PATH), what its probe found, which llama.cpp build loads there (or why none), and the
// candidates passed over with why; from a run's menu in the Runs view, also what that run computed on
// and how its model held its base weights (8 bits, bfloat16, float32: the stored run's); and the command
// behind the Runs view's "Set agentRl.nodePath" link.
import * as vscode from 'vscode';
import { runRuntimeLines } from '../../shared/baseWeights';
import { messageText, showInvisibles } from '../../shared/untrustedText';
import type { HostProcesses } from '../processes/hostProcesses';
import { describeLlamaCppReport, describeRuntime } from '../processes/runtime';
import { openNodePathSetting } from '../settings';
import type { RunsNode } from '../views/runsTree';

export function registerRuntimeCommand(
  context: vscode.ExtensionContext,
  deps: { readonly processes: HostProcesses; readonly output: vscode.OutputChannel },
): void {
  context.subscriptions.push(
    vscode.commands.registerCommand('agentRl.openNodePathSetting', openNodePathSetting),
    vscode.commands.registerCommand('agentRl.showRuntime', async (node?: RunsNode) => {
      const first = deps.processes.runtimeSummary();
      if (first.checking) deps.output.appendLine('Agent RL is still checking its runtime…');
      const runtime = await deps.processes.requireRuntime();
      if (!runtime) return; // requireRuntime said why
      const { rejected } = deps.processes.runtimeSummary();
      const line = `Agent RL runtime: ${describeRuntime(runtime)}; ${describeLlamaCppReport(await deps.processes.llamaCpp(runtime))}`;
      deps.output.appendLine(showInvisibles(line));
      for (const r of rejected) deps.output.appendLine(showInvisibles(`passed over: ${r}`));
      // from a run's menu: what that run computed on and how its model held its base weights, as stored
      if (node?.kind === 'run') {
        const backend = await deps.processes.requireBackend();
        const run = backend ? await backend.request('getRun', { runId: node.run.id }) : null;
        if (run) for (const l of runRuntimeLines(node.run.id, run.compute, run.baseWeights)) deps.output.appendLine(showInvisibles(l));
      }
      deps.output.show(true);
      void vscode.window.showInformationMessage(
        messageText(`${line}${rejected.length ? ` (${rejected.length} passed over: see the Agent RL output)` : ''}`, 900),
      );
    }),
  );
}
