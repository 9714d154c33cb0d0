// Pure helpers of the Runs tree (no vscode import, so plain-Node tests can load them): the labels,
// descriptions and tooltips of its rows. Stored text (run names, task ids, termination reasons,
// actions, observations, errors) is untrusted: labels get one line with invisible characters marked;
// turn tooltips are Markdown with every stored text in a fence it cannot close, cut so a hover stays fast.
import { fixed as formatFixed, percent } from '../../shared/format';
import type { FindingRecord } from '../../shared/health/findings';
import type { TrajectorySummary } from '../../shared/protocol/backendProtocol';
import type { IterationMetrics, RunSummary } from '../../shared/types';
import { clip, cutNote, fence, oneLine, showInvisibles, TOOLTIP_MAX_LENGTH, visibleText } from '../../shared/untrustedText';

/** Groups of one iteration's trajectories, in group order. Pure: tested without VS Code. */
export function groupTrajectories(items: readonly TrajectorySummary[]): { group: number; taskId: string; trajectories: TrajectorySummary[] }[] {
  const byGroup = new Map<number, TrajectorySummary[]>();
  for (const t of items) byGroup.set(t.group, [...(byGroup.get(t.group) ?? []), t]);
  return [...byGroup.entries()].sort((a, b) => a[0] - b[0]).map(([group, trajectories]) => ({ group, taskId: trajectories[0]!.taskId, trajectories }));
}

/** A number from the database, or '?' (a hand-edited database may hold anything). */
const fixed = (x: unknown, digits: number): string => formatFixed(x, digits, '?');

export function describeRun(r: RunSummary): string {
  return `${r.iterationsDone}/${r.iterationsPlanned}${r.latestRewardMean === null ? '' : ` · reward ${fixed(r.latestRewardMean, 3)}`} · ${oneLine(r.env, 40)} · ${oneLine(r.methodLabel, 60)}${lineage(r)}`;
}

/**
 * A forked run's lineage, as its row shows it: the tree lists the parent's iterations up to the fork
 * under the parent and the fork's own (from the next one) under the fork, so the row says where it starts.
 */
export function lineage(r: RunSummary): string {
  const f = r.forkedFrom;
  if (!f) return '';
  const parent = f.runId === null ? 'a deleted run' : `run ${f.runId}`;
  return ` · forked from ${parent} @ iteration ${fixed(f.iteration, 0)}`;
}

/** What a tree row shows. `tooltipMarkdown` is rendered untrusted, without HTML or theme icons. */
export interface ItemParts {
  readonly label: string;
  readonly description?: string;
  readonly tooltip?: string;
  readonly tooltipMarkdown?: string;
}

/**
 * The run row's health badge: its severe findings and warnings counted ("⚠ 1 severe, 2 warnings"), and
 * one tooltip line per finding (summaries may quote stored names: one line each, invisibles marked).
 * Info findings (a solved task's groups agreeing) earn no badge. Undefined when nothing to flag.
 */
export function healthBadge(findings: readonly FindingRecord[] | undefined): { readonly text: string; readonly tooltip: string } | undefined {
  const flagged = (findings ?? []).filter((f) => f.severity !== 'info');
  if (!flagged.length) return undefined;
  const severe = flagged.filter((f) => f.severity === 'severe').length;
  const warnings = flagged.length - severe;
  const parts = [...(severe ? [`${severe} severe`] : []), ...(warnings ? [`${warnings} warning${warnings === 1 ? '' : 's'}`] : [])];
  const lines = flagged.slice(0, 10).map((f) => `${f.severity} · ${oneLine(f.id, 40)}: ${oneLine(f.summary, 300)}`);
  return { text: `⚠ ${parts.join(', ')}`, tooltip: `Health:\n${lines.join('\n')}` };
}

export function runParts(r: RunSummary, findings?: readonly FindingRecord[]): ItemParts {
  const error = r.error ? `: ${visibleText(r.error, TOOLTIP_MAX_LENGTH)}` : '';
  const badge = healthBadge(findings);
  return {
    label: oneLine(r.name, 120),
    description: badge ? `${badge.text} · ${describeRun(r)}` : describeRun(r),
    tooltip:
      `${visibleText(r.name, TOOLTIP_MAX_LENGTH)} (run ${r.id}) — ${oneLine(r.status, 40)}${error}` +
      (r.forkedFrom ? `\n${lineage(r).slice(3)}: its iterations ${fixed(r.forkedFrom.iteration + 1, 0)} on are its own, those before are its parent's` : '') +
      (badge ? `\n${badge.tooltip}` : ''),
  };
}

export function iterationParts(m: IterationMetrics): ItemParts {
  return { label: `iteration ${m.iteration}`, description: `reward ${fixed(m.rewardMean, 3)} · success ${percent(m.successRate, 0, '?')}` };
}

export function groupParts(group: number, trajectories: readonly TrajectorySummary[]): ItemParts {
  const rewards = trajectories.map((t) => t.reward);
  return {
    label: `group ${group} · ${oneLine(trajectories[0]?.taskId ?? '', 80)}`,
    description: `rewards ${fixed(Math.min(...rewards), 2)}–${fixed(Math.max(...rewards), 2)}`,
    tooltip: visibleText(trajectories[0]?.taskId ?? '', TOOLTIP_MAX_LENGTH),
  };
}

export function trajectoryParts(t: TrajectorySummary): ItemParts {
  return {
    label: `${t.success ? '✓' : '✗'} #${t.indexInGroup} reward ${fixed(t.reward, 2)}`,
    description: `advantage ${fixed(t.advantage, 2)} · ${t.turns} turns · ${oneLine(t.termination, 40)}${t.excluded ? ` · not trained (${oneLine(t.excluded, 40)})` : ''}`,
  };
}

const firstLine = (s: string): string => s.split('\n').find((l) => l.trim() !== '') ?? '';

function tooltipBlock(title: string, text: string, max: number, trajectoryId: number): string {
  const c = clip(text, max);
  const note = c.cut > 0 ? `\n\n*${cutNote(c.cut, `the inspector or \`agent-rl trajectory ${trajectoryId}\` shows all`)}*` : '';
  return `**${title}**\n\n${fence(showInvisibles(c.text))}${note}`;
}

/** A turn: its action's first line, its observation's first line, both whole (up to `max`) on hover. */
export function turnParts(
  n: { readonly trajectoryId: number; readonly index: number; readonly action: string; readonly observation: string },
  maxTextLength: number,
): ItemParts {
  const max = maxTextLength > 0 ? Math.min(maxTextLength, TOOLTIP_MAX_LENGTH) : TOOLTIP_MAX_LENGTH;
  return {
    label: `${n.index}: ${oneLine(firstLine(n.action), 80)}`,
    description: oneLine(firstLine(n.observation), 80),
    tooltipMarkdown: `${tooltipBlock(`Action (turn ${n.index})`, n.action, max, n.trajectoryId)}\n\n---\n\n${tooltipBlock('Observation', n.observation, max, n.trajectoryId)}`,
  };
}

export function messageParts(text: string): ItemParts {
  return { label: oneLine(text, 300), tooltip: visibleText(text, TOOLTIP_MAX_LENGTH) };
}
