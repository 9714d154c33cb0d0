// The Runs tree: runs → iterations → groups → trajectories → turns, loaded lazily from the backend,
// a page at a time ("Load more…" rows), refreshed from progress events.
import * as vscode from 'vscode';
import type { TrajectorySummary } from '../../shared/protocol/backendProtocol';
import type { IterationMetrics, RunSummary } from '../../shared/types';
import { describeRun, groupTrajectories } from './treeModel';
import type { BackendClient } from '../processes/backendClient';

export const PAGE = 100;

export type RunsNode =
  | { kind: 'run'; run: RunSummary }
  | { kind: 'iteration'; runId: number; metrics: IterationMetrics }
  | { kind: 'group'; runId: number; iteration: number; group: number; trajectories: TrajectorySummary[] }
  | { kind: 'trajectory'; runId: number; trajectory: TrajectorySummary }
  | { kind: 'turn'; trajectoryId: number; index: number; action: string; observation: string }
  | { kind: 'more'; parent: RunsNode; offset: number }
  | { kind: 'message'; text: string };

const STATUS_ICON: Record<string, string> = { running: 'sync~spin', completed: 'pass', failed: 'error', cancelled: 'circle-slash' };
const firstLine = (s: string, max = 80): string => {
  const line = s.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > max ? `${line.slice(0, max)}…` : line;
};

export class RunsTree implements vscode.TreeDataProvider<RunsNode> {
  private readonly changed = new vscode.EventEmitter<RunsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** Extra pages loaded per parent ("Load more…"). */
  private readonly pages = new Map<string, number>();

  constructor(private readonly backend: BackendClient) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  loadMore(node: Extract<RunsNode, { kind: 'more' }>): void {
    const key = keyOf(node.parent);
    this.pages.set(key, (this.pages.get(key) ?? 1) + 1);
    this.changed.fire(node.parent.kind === 'run' ? undefined : node.parent);
  }

  getTreeItem(n: RunsNode): vscode.TreeItem {
    switch (n.kind) {
      case 'run': {
        const item = new vscode.TreeItem(n.run.name, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = keyOf(n);
        item.description = describeRun(n.run);
        item.iconPath = new vscode.ThemeIcon(STATUS_ICON[n.run.status] ?? 'circle-outline');
        item.contextValue = `run.${n.run.status}`;
        item.tooltip = `${n.run.name} (run ${n.run.id}) — ${n.run.status}${n.run.error ? `: ${n.run.error}` : ''}`;
        return item;
      }
      case 'iteration': {
        const m = n.metrics;
        const item = new vscode.TreeItem(`iteration ${m.iteration}`, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = keyOf(n);
        item.description = `reward ${m.rewardMean.toFixed(3)} · success ${(100 * m.successRate).toFixed(0)}%`;
        return item;
      }
      case 'group': {
        const rewards = n.trajectories.map((t) => t.reward);
        const item = new vscode.TreeItem(`group ${n.group} · ${n.trajectories[0]?.taskId ?? ''}`, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = keyOf(n);
        item.description = `rewards ${Math.min(...rewards).toFixed(2)}–${Math.max(...rewards).toFixed(2)}`;
        return item;
      }
      case 'trajectory': {
        const t = n.trajectory;
        const item = new vscode.TreeItem(`${t.success ? '✓' : '✗'} #${t.indexInGroup} reward ${t.reward.toFixed(2)}`, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = keyOf(n);
        item.description = `advantage ${t.advantage.toFixed(2)} · ${t.turns} turns · ${t.termination}`;
        item.contextValue = t.success ? 'trajectory.success' : 'trajectory.failed';
        item.command = { command: 'agentRl.openTrajectory', title: 'Open Trajectory', arguments: [n] };
        return item;
      }
      case 'turn': {
        const item = new vscode.TreeItem(`${n.index}: ${firstLine(n.action)}`, vscode.TreeItemCollapsibleState.None);
        item.description = firstLine(n.observation);
        item.tooltip = new vscode.MarkdownString().appendCodeblock(n.action, 'text').appendMarkdown('\n---\n').appendCodeblock(n.observation, 'text');
        return item;
      }
      case 'more': {
        const item = new vscode.TreeItem('Load more…', vscode.TreeItemCollapsibleState.None);
        item.command = { command: 'agentRl.loadMore', title: 'Load more', arguments: [n] };
        return item;
      }
      case 'message':
        return new vscode.TreeItem(n.text, vscode.TreeItemCollapsibleState.None);
    }
  }

  async getChildren(n?: RunsNode): Promise<RunsNode[]> {
    try {
      if (!n) {
        const runs = await this.backend.request('listRuns', {});
        return runs.length === 0 ? [{ kind: 'message', text: 'No runs yet: "Agent RL: Start Run" or agent-rl train' }] : runs.map((run) => ({ kind: 'run', run }));
      }
      const limit = PAGE * (this.pages.get(keyOf(n)) ?? 1);
      switch (n.kind) {
        case 'run': {
          const page = await this.backend.request('iterations', { runId: n.run.id, offset: 0, limit });
          const rows: RunsNode[] = page.items.map((metrics) => ({ kind: 'iteration', runId: n.run.id, metrics }));
          return page.total > page.items.length ? [...rows, { kind: 'more', parent: n, offset: page.items.length }] : rows;
        }
        case 'iteration': {
          const page = await this.backend.request('trajectories', { runId: n.runId, iteration: n.metrics.iteration, offset: 0, limit: Math.max(limit, 1000) });
          return groupTrajectories(page.items).map((g) => ({ kind: 'group', runId: n.runId, iteration: n.metrics.iteration, group: g.group, trajectories: g.trajectories }));
        }
        case 'group':
          return n.trajectories.map((trajectory) => ({ kind: 'trajectory', runId: n.runId, trajectory }));
        case 'trajectory': {
          const t = await this.backend.request('trajectory', { trajectoryId: n.trajectory.id });
          return (t?.turnList ?? []).map((turn) => ({ kind: 'turn', trajectoryId: n.trajectory.id, index: turn.index, action: turn.actionText, observation: turn.observationText }));
        }
        default:
          return [];
      }
    } catch (e) {
      return [{ kind: 'message', text: `Could not load: ${e instanceof Error ? e.message : String(e)}` }];
    }
  }
}

function keyOf(n: RunsNode): string {
  switch (n.kind) {
    case 'run':
      return `run:${n.run.id}`;
    case 'iteration':
      return `it:${n.runId}:${n.metrics.iteration}`;
    case 'group':
      return `g:${n.runId}:${n.iteration}:${n.group}`;
    case 'trajectory':
      return `t:${n.trajectory.id}`;
    case 'turn':
      return `turn:${n.trajectoryId}:${n.index}`;
    case 'more':
      return `more:${keyOf(n.parent)}`;
    case 'message':
      return `msg:${n.text}`;
  }
}
