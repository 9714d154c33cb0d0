// Inline replay of an episode in the editor: each turn's code opens as a read-only Python document
// (scheme agent-rl-replay), the observation is shown inline at the line it refers to (decoration +
// hover), Previous/Next step through the turns, and "Re-run in sandbox" executes the recorded code
// again now — with the user's interpreter and isolation level, never the stored run's — and says
// whether the observation differs from the stored one, and what the stored run had asked for instead.
import * as vscode from 'vscode';
import type { TrajectoryDetail } from '../../shared/protocol/backendProtocol';
import type { BackendClient } from '../processes/backendClient';
import type { RunsNode } from '../views/runsTree';
import { codeOf } from '../../shared/linking';
import { messageText } from '../../shared/untrustedText';
import { maxTextLength, sandboxSettings } from '../settings';
import { codeTurns, decorationText, inlineObservation, observationHover, rerunMessage, rerunOutput } from './replayModel';

export const REPLAY_SCHEME = 'agent-rl-replay';

interface State {
  trajectory: TrajectoryDetail;
  turns: number[];
  at: number;
}

export function registerReplay(context: vscode.ExtensionContext, backend: () => BackendClient | undefined, output: vscode.OutputChannel): void {
  const hover = (turn: number, full: string): vscode.MarkdownString => {
    const md = new vscode.MarkdownString(observationHover(turn, full, maxTextLength()));
    md.isTrusted = false;
    md.supportHtml = false;
    return md;
  };
  let state: State | undefined;
  const decoration = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    after: { margin: '0 0 0 2em', color: new vscode.ThemeColor('editorError.foreground') },
  });
  const uriOf = (s: State): vscode.Uri => vscode.Uri.from({ scheme: REPLAY_SCHEME, path: `/trajectory-${s.trajectory.id}/turn-${s.turns[s.at]}.py` });

  const show = async (): Promise<void> => {
    if (!state) return;
    const doc = await vscode.workspace.openTextDocument(uriOf(state));
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    const obs = inlineObservation(state.trajectory.turnList, state.turns[state.at]!);
    if (obs) {
      const line = Math.min(obs.line, doc.lineCount) - 1;
      editor.setDecorations(decoration, [
        {
          range: doc.lineAt(line).range,
          hoverMessage: hover(state.turns[state.at]!, obs.full),
          renderOptions: { after: { contentText: decorationText(obs) } },
        },
      ]);
      editor.revealRange(doc.lineAt(line).range, vscode.TextEditorRevealType.InCenter);
    }
    void vscode.commands.executeCommand('setContext', 'agentRl.replaying', true);
    vscode.window.setStatusBarMessage(
      `Agent RL replay: trajectory ${state.trajectory.id}, turn ${state.turns[state.at]} (${state.at + 1}/${state.turns.length})`,
      5000,
    );
  };

  context.subscriptions.push(
    decoration,
    vscode.workspace.registerTextDocumentContentProvider(REPLAY_SCHEME, {
      provideTextDocumentContent: (uri) => {
        const m = /trajectory-(\d+)\/turn-(\d+)\.py$/.exec(uri.path);
        const turn = state && m && state.trajectory.id === Number(m[1]) ? state.trajectory.turnList[Number(m[2])] : undefined;
        return turn ? (codeOf(turn) ?? '') : '# this replay is no longer open';
      },
    }),
    vscode.commands.registerCommand('agentRl.replayEpisode', async (n?: RunsNode) => {
      const b = backend();
      if (n?.kind !== 'trajectory' || !b) return;
      const t = await b.request('trajectory', { trajectoryId: n.trajectory.id });
      if (!t) return;
      const turns = codeTurns(t.turnList);
      if (turns.length === 0) {
        void vscode.window.showInformationMessage('Agent RL: this episode ran no code, so there is nothing to replay in the editor; open it in the inspector.');
        return;
      }
      state = { trajectory: t, turns, at: 0 };
      await show();
    }),
    vscode.commands.registerCommand('agentRl.replayNext', async () => {
      if (state && state.at < state.turns.length - 1) state.at += 1;
      await show();
    }),
    vscode.commands.registerCommand('agentRl.replayPrevious', async () => {
      if (state && state.at > 0) state.at -= 1;
      await show();
    }),
    vscode.commands.registerCommand('agentRl.replayRerun', async () => {
      const b = backend();
      if (!state || !b) return;
      const turn = state.turns[state.at]!;
      try {
        const r = await b.request('rerun', { trajectoryId: state.trajectory.id, turn, ...sandboxSettings() });
        for (const line of rerunOutput(state.trajectory.id, turn, r)) output.appendLine(line);
        const message = rerunMessage(turn, r);
        void (r.notes.length > 0 ? vscode.window.showWarningMessage(message) : vscode.window.showInformationMessage(message));
      } catch (e) {
        void vscode.window.showErrorMessage(`Agent RL: re-run failed: ${messageText(e instanceof Error ? e.message : String(e), 600)}`);
      }
    }),
  );
}
