// A read-only Markdown document per trajectory (task, group, advantage, every turn's action and
// observation), served from the backend. Model output is shown inside fenced blocks, never as markup.
import * as vscode from 'vscode';
import type { BackendClient } from '../processes/backendClient';
import { renderTrajectory } from './trajectoryMarkdown';

export const TRAJECTORY_SCHEME = 'agent-rl-trajectory';

export function registerTrajectoryDocuments(context: vscode.ExtensionContext, backend: () => BackendClient | undefined): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(TRAJECTORY_SCHEME, {
      provideTextDocumentContent: async (uri) => {
        const id = Number(/trajectory-(\d+)/.exec(uri.path)?.[1]);
        const b = backend();
        if (!b || !Number.isFinite(id)) return 'No backend: set agentRl.nodePath.';
        const t = await b.request('trajectory', { trajectoryId: id });
        return t ? renderTrajectory(t) : `Trajectory ${id} is not in the database.`;
      },
    }),
  );
}
