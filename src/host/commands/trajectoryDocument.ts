// A read-only Markdown document per trajectory (task, group, advantage, every turn's action and
// observation), served from the backend. Stored text is shown inside code spans and fences it cannot
// close, never as markup (trajectoryMarkdown.ts).
import * as vscode from 'vscode';
import type { BackendClient } from '../processes/backendClient';
import { maxTextLength } from '../settings';
import { renderTrajectory } from './trajectoryMarkdown';

export const TRAJECTORY_SCHEME = 'agent-rl-trajectory';

export function registerTrajectoryDocuments(context: vscode.ExtensionContext, backend: () => BackendClient | undefined): void {
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(TRAJECTORY_SCHEME, {
      provideTextDocumentContent: async (uri) => {
        const id = Number(/trajectory-(\d+)/.exec(uri.path)?.[1]);
        const b = backend();
        if (!b) return 'Agent RL has no backend: set agentRl.nodePath to a Node.js executable.';
        if (!Number.isFinite(id)) return `Not a trajectory: ${uri.path}`;
        const t = await b.request('trajectory', { trajectoryId: id });
        if (!t) return `Trajectory ${id} is not in the database.`;
        const run = await b.request('getRun', { runId: t.runId });
        return renderTrajectory(t, { maxTextLength: maxTextLength(), ...(run ? { runName: run.summary.name } : {}) });
      },
    }),
  );
}
