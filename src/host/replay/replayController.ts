// Inline replay of an episode in the editor: each turn's code opens as a read-only Python document
// (scheme agent-rl-replay), the observation is shown inline at the line it refers to (decoration +
// hover), Previous/Next step through the turns, and "Re-run in sandbox" executes the recorded code
// again now — with the user's interpreter and isolation level, never the stored run's — and says
// whether the observation differs from the stored one, and what the stored run had asked for instead.
// Without a tree row (the Command Palette, the walkthrough's button) it opens the newest run's newest
// failed episode that ran code (or asks for another run's when the newest has none) beside the editor
// in view, and selects it in the Runs view.
import * as vscode from 'vscode';
import type { TrajectoryDetail } from '../../shared/protocol/backendProtocol';
import type { BackendClient } from '../processes/backendClient';
import type { RunsNode } from '../views/runsTree';
import { codeOf } from '../../shared/linking';
import { messageText } from '../../shared/untrustedText';
import { failedEpisodeItems } from '../pickItems';
import { maxTextLength, sandboxSettings } from '../settings';
import { besideView } from '../walkthrough';
import { codeTurns, decorationText, inlineObservation, observationHover, rerunMessage, rerunOutput } from './replayModel';

export const REPLAY_SCHEME = 'agent-rl-replay';

interface State {
  trajectory: TrajectoryDetail;
  turns: number[];
  at: number;
}

export interface ReplayDeps {
  readonly backend: () => BackendClient | undefined;
  /** The backend, started if need be (undefined after telling the user why there is none). */
  readonly requireBackend: () => Promise<BackendClient | undefined>;
  readonly output: vscode.OutputChannel;
  /** Selects a trajectory in the Runs tree. */
  readonly reveal: (trajectoryId: number) => void;
}

/** How many of the newest runs Replay Episode without a tree row looks through. */
const RECENT_RUNS = 20;

/**
 * The trajectory Replay Episode opens without a tree row: the newest run's newest failed episode that
 * ran code; else one of another recent run's, picked; else none, and the user is told how to get one.
 */
async function latestFailedEpisode(b: BackendClient): Promise<number | undefined> {
  const runs = await b.request('failedCodeEpisodes', { limit: RECENT_RUNS });
  if (runs[0]?.trajectory) return runs[0].trajectory.id;
  const items = failedEpisodeItems(runs);
  if (items.length === 0) {
    const start = 'Start Run';
    const choice = await vscode.window.showInformationMessage(
      `Agent RL: no failed episode that ran code in ${runs.length === 0 ? 'the database yet' : `the newest ${runs.length === 1 ? 'run' : `${runs.length} runs`}`}. Replay steps through an episode's code in the editor: start a run on the Code environment (Code · transformer · SFT) or on a workspace environment with "toolFormat": "code".`,
      start,
    );
    if (choice === start) await vscode.commands.executeCommand('agentRl.startRun');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Agent RL: Replay Episode (the newest run has no failed episode that ran code)',
    placeHolder: "Another run's newest failed episode that ran code",
    matchOnDescription: true,
  });
  return pick?.trajectoryId;
}

export function registerReplay(context: vscode.ExtensionContext, deps: ReplayDeps): void {
  const { backend, output } = deps;
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

  /** `column`: where the first turn opens (beside the editor in view when no tree row was given). */
  const show = async (column?: vscode.ViewColumn): Promise<void> => {
    if (!state) return;
    const doc = await vscode.workspace.openTextDocument(uriOf(state));
    const editor = await vscode.window.showTextDocument(doc, { preview: false, ...(column !== undefined ? { viewColumn: column } : {}) });
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
      const b = n === undefined ? await deps.requireBackend() : backend();
      if (!b || (n !== undefined && n.kind !== 'trajectory')) return;
      let id: number | undefined;
      try {
        id = n?.kind === 'trajectory' ? n.trajectory.id : await latestFailedEpisode(b);
      } catch (e) {
        void vscode.window.showErrorMessage(`Agent RL: could not look for a failed episode: ${messageText(e instanceof Error ? e.message : String(e), 600)}`);
        return;
      }
      if (id === undefined) return;
      const t = await b.request('trajectory', { trajectoryId: id });
      if (!t) return;
      if (n === undefined) deps.reveal(t.id);
      const turns = codeTurns(t.turnList);
      if (turns.length === 0) {
        void vscode.window.showInformationMessage('Agent RL: this episode ran no code, so there is nothing to replay in the editor; open it in the inspector.');
        return;
      }
      state = { trajectory: t, turns, at: 0 };
      await show(n === undefined ? besideView() : undefined);
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
