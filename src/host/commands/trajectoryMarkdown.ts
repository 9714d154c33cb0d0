// Markdown of one trajectory (pure). Every stored text — run name, task id, termination reason, each
// turn's action and observation — goes into a code span or a fence it cannot close (untrustedText.ts),
// so no link, image, HTML or heading can form from it, in the editor or in the preview; long fields
// are cut with a note that says how much and how to see all.
import { fixed } from '../../shared/format';
import type { TrajectoryDetail } from '../../shared/protocol/backendProtocol';
import { clip, cutNote, fence, markdownCode, showInvisibles } from '../../shared/untrustedText';

export interface TrajectoryMarkdownOptions {
  /** agentRl.maxTextLength: characters shown per field (0 = no limit). */
  readonly maxTextLength: number;
  readonly runName?: string;
}

/** Where the whole text is, for the note under a cut field. */
export function fullTextHint(trajectoryId: number): string {
  return `\`agent-rl trajectory ${trajectoryId}\` prints it whole; the setting agentRl.maxTextLength sets the cut (0 = none)`;
}

function block(text: string, o: TrajectoryMarkdownOptions, trajectoryId: number): string[] {
  const c = clip(text, o.maxTextLength);
  return [fence(showInvisibles(c.text)), ...(c.cut > 0 ? ['', `*${cutNote(c.cut, fullTextHint(trajectoryId))}*`] : [])];
}

const num = (x: unknown, digits?: number): string => (typeof x === 'number' ? (digits === undefined ? String(x) : fixed(x, digits)) : markdownCode(String(x)));

export function renderTrajectory(t: TrajectoryDetail, o: TrajectoryMarkdownOptions): string {
  const run = o.runName === undefined ? `run ${num(t.runId)}` : `run ${num(t.runId)} ${markdownCode(o.runName)}`;
  const lines = [
    `# Trajectory ${num(t.id)} — ${run}, iteration ${num(t.iteration)}, group ${num(t.group)} #${num(t.indexInGroup)}`,
    '',
    `- task: ${markdownCode(t.taskId)}`,
    `- reward ${num(t.reward)}, advantage ${num(t.advantage, 4)}, ${t.success ? 'success' : 'failure'} (${markdownCode(t.termination)})`,
    `- public check ${t.publicPass ? 'passed' : 'failed'}, private verifier ${t.privatePass ? 'passed' : 'failed'}`,
    '',
  ];
  for (const turn of t.turnList) {
    lines.push(
      `## Turn ${num(turn.index)}`,
      '',
      '**Action**',
      '',
      ...block(turn.actionText, o, t.id),
      '',
      '**Observation**',
      '',
      ...block(turn.observationText, o, t.id),
      '',
    );
  }
  return lines.join('\n');
}
