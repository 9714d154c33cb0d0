// The Runs tree: runs → iterations → groups → trajectories → turns, loaded lazily from the backend,
// a page at a time ("Load more…" rows), refreshed from progress events. getParent lets the inspector
// reveal its trajectory (loading the page that holds its iteration first). With no backend (no usable
// Node) or no runs, the tree is empty and the view's welcome text says why.
import * as vscode from 'vscode';
import { storedRequest } from '../../shared/agentRequestView';
import type { FindingRecord } from '../../shared/health/findings';
import type { TrajectorySummary } from '../../shared/protocol/backendProtocol';
import type { IterationMetrics, RunSummary } from '../../shared/types';
import type { BackendClient } from '../processes/backendClient';
import { groupParts, groupTrajectories, iterationParts, messageParts, runParts, trajectoryParts, turnParts, type ItemParts } from './treeModel';

export const PAGE = 100;
/** Runs, newest first, whose row shows a health badge. */
const BADGED_RUNS = 20;

export type RunsNode =
  | { kind: 'run'; run: RunSummary; findings?: readonly FindingRecord[] }
  | { kind: 'iteration'; runId: number; metrics: IterationMetrics }
  | { kind: 'group'; runId: number; iteration: number; group: number; trajectories: TrajectorySummary[] }
  | { kind: 'trajectory'; runId: number; trajectory: TrajectorySummary }
  | { kind: 'turn'; trajectoryId: number; index: number; action: string; observation: string; request: boolean }
  | { kind: 'more'; parent: RunsNode; offset: number }
  | { kind: 'message'; text: string };

const STATUS_ICON: Record<string, string> = { running: 'sync~spin', completed: 'pass', failed: 'error', cancelled: 'circle-slash' };

/** Markdown from stored text, rendered untrusted: no command links, no HTML, no theme icons. */
function untrustedMarkdown(value: string): vscode.MarkdownString {
  const md = new vscode.MarkdownString(value, false);
  md.isTrusted = false;
  md.supportHtml = false;
  return md;
}

function item(parts: ItemParts, state: vscode.TreeItemCollapsibleState, id?: string): vscode.TreeItem {
  const it = new vscode.TreeItem(parts.label, state);
  if (id) it.id = id;
  if (parts.description !== undefined) it.description = parts.description;
  if (parts.tooltipMarkdown !== undefined) it.tooltip = untrustedMarkdown(parts.tooltipMarkdown);
  else if (parts.tooltip !== undefined) it.tooltip = parts.tooltip;
  return it;
}

export class RunsTree implements vscode.TreeDataProvider<RunsNode> {
  private readonly changed = new vscode.EventEmitter<RunsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  /** Extra pages loaded per parent ("Load more…"). */
  private readonly pages = new Map<string, number>();

  constructor(
    private readonly backend: () => BackendClient | undefined,
    private readonly maxTextLength: () => number,
  ) {}

  refresh(): void {
    this.changed.fire(undefined);
  }

  loadMore(node: Extract<RunsNode, { kind: 'more' }>): void {
    const key = keyOf(node.parent);
    this.pages.set(key, (this.pages.get(key) ?? 1) + 1);
    this.changed.fire(node.parent.kind === 'run' ? undefined : node.parent);
  }

  getTreeItem(n: RunsNode): vscode.TreeItem {
    const { Collapsed, None } = vscode.TreeItemCollapsibleState;
    switch (n.kind) {
      case 'run': {
        const it = item(runParts(n.run, n.findings), Collapsed, keyOf(n));
        it.iconPath = new vscode.ThemeIcon(STATUS_ICON[n.run.status] ?? 'circle-outline');
        it.contextValue = `run.${n.run.status}`;
        return it;
      }
      case 'iteration': {
        const it = item(iterationParts(n.metrics), Collapsed, keyOf(n));
        it.contextValue = 'iteration'; // Fork Run from Here
        return it;
      }
      case 'group':
        return item(groupParts(n.group, n.trajectories), Collapsed, keyOf(n));
      case 'trajectory': {
        const it = item(trajectoryParts(n.trajectory), Collapsed, keyOf(n));
        it.contextValue = n.trajectory.success ? 'trajectory.success' : 'trajectory.failed';
        it.command = { command: 'agentRl.openTrajectory', title: 'Open Trajectory', arguments: [n] };
        return it;
      }
      case 'turn': {
        const it = item(turnParts(n, this.maxTextLength()), None, keyOf(n));
        // an agent program's request: Send This Request to the Policy Again
        if (n.request) it.contextValue = 'turn.request';
        return it;
      }
      case 'more': {
        const it = new vscode.TreeItem('Load more…', None);
        it.command = { command: 'agentRl.loadMore', title: 'Load more', arguments: [n] };
        return it;
      }
      case 'message':
        return item(messageParts(n.text), None);
    }
  }

  async getChildren(n?: RunsNode): Promise<RunsNode[]> {
    const backend = this.backend();
    if (!backend) return []; // the welcome text names agentRl.nodePath
    try {
      if (!n) {
        const runs = await backend.request('listRuns', {});
        // the badge of the newest runs only: each run's findings read all its iterations, and the tree is
        // listed again after every iteration of a live run
        const health = runs.length ? await backend.request('findings', { runIds: runs.slice(0, BADGED_RUNS).map((r) => r.id) }).catch(() => []) : [];
        return runs.map((run) => ({ kind: 'run', run, findings: health.find((h) => h.runId === run.id)?.findings }));
      }
      const limit = PAGE * (this.pages.get(keyOf(n)) ?? 1);
      switch (n.kind) {
        case 'run': {
          const page = await backend.request('iterations', { runId: n.run.id, offset: 0, limit });
          const rows: RunsNode[] = page.items.map((metrics) => ({ kind: 'iteration', runId: n.run.id, metrics }));
          return page.total > page.items.length ? [...rows, { kind: 'more', parent: n, offset: page.items.length }] : rows;
        }
        case 'iteration':
          return (await this.groups(backend, n.runId, n.metrics.iteration)).map((g) => ({
            kind: 'group',
            runId: n.runId,
            iteration: n.metrics.iteration,
            group: g.group,
            trajectories: g.trajectories,
          }));
        case 'group':
          return n.trajectories.map((trajectory) => ({ kind: 'trajectory', runId: n.runId, trajectory }));
        case 'trajectory': {
          const t = await backend.request('trajectory', { trajectoryId: n.trajectory.id });
          const turns = t?.turnList ?? [];
          return turns.map((turn, i) => ({
            kind: 'turn',
            trajectoryId: n.trajectory.id,
            index: turn.index,
            action: turn.actionText,
            observation: turn.observationText,
            request: typeof storedRequest(turns, i) !== 'string',
          }));
        }
        default:
          return [];
      }
    } catch (e) {
      return [{ kind: 'message', text: `Could not load: ${e instanceof Error ? e.message : String(e)}` }];
    }
  }

  private async groups(backend: BackendClient, runId: number, iteration: number): Promise<ReturnType<typeof groupTrajectories>> {
    const page = await backend.request('trajectories', { runId, iteration, offset: 0, limit: 1000 });
    return groupTrajectories(page.items);
  }

  /** The parent of a node (TreeView.reveal walks up with it); rebuilt from the backend when asked. */
  async getParent(n: RunsNode): Promise<RunsNode | undefined> {
    const backend = this.backend();
    if (!backend) return undefined;
    switch (n.kind) {
      case 'run':
      case 'message':
        return undefined;
      case 'more':
        return n.parent;
      case 'iteration': {
        const run = await backend.request('getRun', { runId: n.runId });
        return run ? { kind: 'run', run: run.summary } : undefined;
      }
      case 'group': {
        // Iterations are stored consecutively from 1: the page after n.iteration - 1 starts with it.
        const metrics = (await backend.request('iterations', { runId: n.runId, offset: n.iteration - 1, limit: 1 })).items[0];
        return metrics ? { kind: 'iteration', runId: n.runId, metrics } : undefined;
      }
      case 'trajectory': {
        const g = (await this.groups(backend, n.runId, n.trajectory.iteration)).find((x) => x.group === n.trajectory.group);
        return g ? { kind: 'group', runId: n.runId, iteration: n.trajectory.iteration, group: g.group, trajectories: g.trajectories } : undefined;
      }
      case 'turn': {
        const t = await backend.request('trajectory', { trajectoryId: n.trajectoryId });
        return t ? { kind: 'trajectory', runId: t.runId, trajectory: t } : undefined;
      }
    }
  }

  /** Selects a trajectory in the tree, loading the page of iterations that holds it. */
  async reveal(view: vscode.TreeView<RunsNode>, trajectoryId: number): Promise<void> {
    const t = await this.backend()?.request('trajectory', { trajectoryId });
    if (!t) return;
    const key = runKey(t.runId);
    const pages = Math.ceil(t.iteration / PAGE);
    if ((this.pages.get(key) ?? 1) < pages) this.pages.set(key, pages);
    await view.reveal({ kind: 'trajectory', runId: t.runId, trajectory: t }, { select: true, focus: false, expand: false });
  }
}

const runKey = (id: number): string => `run:${id}`;

function keyOf(n: RunsNode): string {
  switch (n.kind) {
    case 'run':
      return runKey(n.run.id);
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
