// "Re-score with Reward File…" (on a run or a trajectory) and "Edit Final Answer and Score…" (on a
// trajectory). The work runs in the backend process — the reward file in its sandbox — never in the
// extension host; the host picks the reward file, waits with a progress notification and shows the
// result: a re-score as a read-only Markdown document (rescoreMarkdown.ts), an edit as a message and in
// the inspector, which lists a trajectory's re-scores and edits beside its stored reward.
import * as path from 'node:path';
import * as vscode from 'vscode';
import { fixed } from '../../shared/format';
import { messageText, showInvisibles } from '../../shared/untrustedText';
import type { BackendClient } from '../processes/backendClient';
import type { HostProcesses } from '../processes/hostProcesses';
import { sandboxSettings } from '../settings';
import type { RunsNode } from '../views/runsTree';
import { InspectorPanel } from '../webviews/inspectorPanel';
import { resendMessage, resendOutput } from '../replay/replayModel';
import { renderRescore } from './rescoreMarkdown';

export const RESCORE_SCHEME = 'agent-rl-rescore';
/** A re-score replays every stored episode through the environment: minutes for a large run. */
const RESCORE_TIMEOUT_MS = 60 * 60_000;

export interface RescoreDeps {
  readonly processes: HostProcesses;
  readonly output: vscode.OutputChannel;
}

/** The reward a workspace run's stored config names (a .py file resolved against its root), else undefined. */
export function storedRewardFile(config: unknown): { env: string; file?: string; builtin?: string } {
  const c = typeof config === 'object' && config !== null ? (config as { env?: unknown; envOptions?: unknown }) : {};
  const env = typeof c.env === 'string' ? c.env : '?';
  if (env !== 'workspace' || typeof c.envOptions !== 'object' || c.envOptions === null) return { env };
  const o = c.envOptions as { reward?: unknown; root?: unknown };
  if (typeof o.reward !== 'string') return { env };
  if (!o.reward.endsWith('.py')) return { env, builtin: o.reward };
  return { env, file: path.resolve(typeof o.root === 'string' ? o.root : '', o.reward) };
}

/** The workspace's folders: a stored run's tools and reward run only from inside one. */
function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

/** Which reward to score with: null = the run's own (file as it is now, or built-in verifier); undefined = cancelled. */
async function pickReward(backend: BackendClient, runId: number): Promise<string | null | undefined> {
  const run = await backend.request('getRun', { runId });
  if (!run) throw new Error(`Run ${runId} is not in the database.`);
  const stored = storedRewardFile(run.config);
  if (stored.env !== 'workspace') return null; // a built-in environment's verifier is its code: nothing to choose
  const own = stored.file
    ? { label: `Current reward file: ${messageText(path.basename(stored.file), 80)}`, description: messageText(stored.file, 300), value: null }
    : { label: `Built-in reward: ${messageText(stored.builtin ?? '?', 80)}`, value: null };
  const pick = await vscode.window.showQuickPick([own, { label: 'Choose another reward file…', value: 'choose' }], { title: `Re-score run ${runId} with` });
  if (!pick) return undefined;
  if (pick.value === null) return null;
  const chosen = await vscode.window.showOpenDialog({
    canSelectMany: false,
    filters: { Python: ['py'] },
    ...(stored.file ? { defaultUri: vscode.Uri.file(path.dirname(stored.file)) } : {}),
    title: 'Reward file: a .py file defining reward(task, trajectory)',
  });
  return chosen?.[0]?.fsPath;
}

export function registerRescoreCommands(context: vscode.ExtensionContext, deps: RescoreDeps): void {
  const guard =
    (fn: (n?: RunsNode) => Promise<void>) =>
    async (n?: RunsNode): Promise<void> => {
      try {
        await fn(n);
      } catch (e) {
        const message = e instanceof Error ? e.message : String(e);
        deps.output.appendLine(`error: ${showInvisibles(message)}`);
        void vscode.window.showErrorMessage(messageText(message, 600));
      }
    };

  const rescore = async (n?: RunsNode): Promise<void> => {
    if (n?.kind !== 'run' && n?.kind !== 'trajectory') return;
    const backend = await deps.processes.requireBackend();
    if (!backend) return;
    const trajectoryId = n.kind === 'trajectory' ? n.trajectory.id : null;
    const runId = n.kind === 'run' ? n.run.id : (await backend.request('trajectory', { trajectoryId: n.trajectory.id }))?.runId;
    if (runId === undefined) throw new Error(`Trajectory ${trajectoryId} is not in the database.`);
    const rewardFile = await pickReward(backend, runId);
    if (rewardFile === undefined) return;
    const title = `Agent RL: re-scoring ${trajectoryId !== null ? `trajectory ${trajectoryId}` : `run ${runId}`}`;
    const report = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () =>
      backend.request('rescore', { runId, trajectoryId, rewardFile, ...sandboxSettings(), folders: workspaceFolders() }, RESCORE_TIMEOUT_MS),
    );
    deps.output.appendLine(
      `rescore ${report.id} of run ${runId}: ${report.summary.scored} re-scored, ${report.summary.changed} changed, ${report.summary.errors} errors (${showInvisibles(report.reward.label)})`,
    );
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: RESCORE_SCHEME, path: `/rescore-${report.id}.md` }));
    await vscode.window.showTextDocument(doc, { preview: true });
    InspectorPanel.refresh();
  };

  const edit = async (n?: RunsNode): Promise<void> => {
    if (n?.kind !== 'trajectory') return;
    const backend = await deps.processes.requireBackend();
    if (!backend) return;
    const t = await backend.request('trajectory', { trajectoryId: n.trajectory.id });
    const last = t?.turnList.at(-1);
    if (!t || !last) throw new Error(`Trajectory ${n.trajectory.id} has no turns: there is no final answer to edit.`);
    const text = await vscode.window.showInputBox({
      title: `Edit the final answer of trajectory ${t.id} (turn ${last.index}) and score the copy`,
      prompt: 'The stored trajectory is not changed: the edited copy is stored as an edit.',
      value: last.actionText,
    });
    if (text === undefined) return;
    const rewardFile = await pickReward(backend, t.runId);
    if (rewardFile === undefined) return;
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Agent RL: scoring the edited trajectory ${t.id}` },
      () => backend.request('editFinalAnswer', { trajectoryId: t.id, text, rewardFile, ...sandboxSettings(), folders: workspaceFolders() }, RESCORE_TIMEOUT_MS),
    );
    const score = r.edit.score;
    const line = score
      ? `edited trajectory ${t.id}: reward ${fixed(score.reward, 3)} (stored ${fixed(r.old.reward, 3)}), ${score.success ? 'success' : 'failure'} (stored ${r.old.success ? 'success' : 'failure'})`
      : `edited trajectory ${t.id} could not be scored: ${r.edit.error ?? ''}`;
    deps.output.appendLine(showInvisibles(line));
    void (score
      ? vscode.window.showInformationMessage(messageText(`Agent RL: ${line}`, 600))
      : vscode.window.showWarningMessage(messageText(`Agent RL: ${line}`, 600)));
    InspectorPanel.refresh();
  };

  /** An agent program's request (a turn of a run of env "agent") sent again to the run's saved checkpoint, in the backend. */
  const resend = async (n?: RunsNode): Promise<void> => {
    if (n?.kind !== 'turn') return;
    const backend = await deps.processes.requireBackend();
    if (!backend) return;
    const r = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Agent RL: sending turn ${n.index}'s request to the policy again` },
      () => backend.request('resendRequest', { trajectoryId: n.trajectoryId, turn: n.index, greedy: false }, RESCORE_TIMEOUT_MS),
    );
    for (const line of resendOutput(r)) deps.output.appendLine(line);
    void vscode.window.showInformationMessage(resendMessage(r));
  };

  context.subscriptions.push(
    vscode.commands.registerCommand('agentRl.rescore', guard(rescore)),
    vscode.commands.registerCommand('agentRl.resendRequest', guard(resend)),
    vscode.commands.registerCommand('agentRl.editFinalAnswer', guard(edit)),
    vscode.workspace.registerTextDocumentContentProvider(RESCORE_SCHEME, {
      provideTextDocumentContent: async (uri) => {
        const id = Number(/rescore-(\d+)/.exec(uri.path)?.[1]);
        const b = deps.processes.backend();
        if (!b) return 'Agent RL has no backend: set agentRl.nodePath to a Node.js executable.';
        if (!Number.isFinite(id)) return `Not a re-score: ${uri.path}`;
        const report = await b.request('rescoreReport', { rescoreId: id });
        if (!report) return `Re-score ${id} is not in the database.`;
        const run = await b.request('getRun', { runId: report.runId });
        return renderRescore(report, run?.summary.name ?? '?');
      },
    }),
  );
}
