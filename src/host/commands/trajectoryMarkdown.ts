// Markdown of one trajectory. Model output goes inside fences that it cannot close.
import type { TrajectoryDetail } from '../../shared/protocol/backendProtocol';

/** A fence longer than any run of backticks in the text, so model output cannot close it. */
export function fence(text: string, lang = ''): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const f = '`'.repeat(longest + 1);
  return `${f}${lang}\n${text}\n${f}`;
}

export function renderTrajectory(t: TrajectoryDetail): string {
  const lines = [
    `# Trajectory ${t.id} — run ${t.runId}, iteration ${t.iteration}, group ${t.group} #${t.indexInGroup}`,
    '',
    `- task: \`${t.taskId.replace(/`/g, "'")}\``,
    `- reward ${t.reward}, advantage ${t.advantage.toFixed(4)}, ${t.success ? 'success' : 'failure'} (${t.termination})`,
    `- public check ${t.publicPass ? 'passed' : 'failed'}, private verifier ${t.privatePass ? 'passed' : 'failed'}`,
    '',
  ];
  for (const turn of t.turnList) {
    lines.push(`## Turn ${turn.index}`, '', '**Action**', '', fence(turn.actionText), '', '**Observation**', '', fence(turn.observationText), '');
  }
  return lines.join('\n');
}

