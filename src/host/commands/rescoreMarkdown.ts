// Markdown of a stored re-score (pure): the summary figures, then every trajectory whose new score
// differs from its stored one (or could not be scored), largest difference first. Stored text — the
// run name, task ids, the reward file's path, errors — goes into code spans it cannot close
// (untrustedText.ts), so no link, image or heading forms from it.
import { fixed } from '../../shared/format';
import { errorHeadline, REWARD_EPSILON, type RescoreItem, type RescoreReport, type Score } from '../../shared/rescore';
import { markdownCode } from '../../shared/untrustedText';

const f3 = (x: number): string => fixed(x, 3, '?');
const flags = (s: Score): string => `${s.success ? '✓' : '✗'} ${s.publicPass ? 'pub' : '—'}/${s.privatePass ? 'priv' : '—'}`;

/** Items whose score changed (reward, success or a check) or that could not be scored, largest |Δ| first. */
export function differingItems(items: readonly RescoreItem[]): RescoreItem[] {
  const delta = (it: RescoreItem): number => (it.new ? Math.abs(it.new.reward - it.old.reward) : Infinity);
  return items
    .filter(
      (it) =>
        it.new === null ||
        Math.abs(it.new.reward - it.old.reward) > REWARD_EPSILON ||
        it.new.success !== it.old.success ||
        it.new.publicPass !== it.old.publicPass ||
        it.new.privatePass !== it.old.privatePass,
    )
    .sort((a, b) => delta(b) - delta(a) || a.trajectoryId - b.trajectoryId);
}

/** At most this many rows in the table (the CLI's --json has them all). */
const MAX_ROWS = 500;

export function renderRescore(r: RescoreReport, runName: string): string {
  const s = r.summary;
  const scope = r.trajectoryId !== null ? `trajectory ${r.trajectoryId}` : `iterations ${r.iterationFrom}..${r.iterationTo}`;
  const lines = [
    `# Re-score ${r.id} — run ${r.runId} ${markdownCode(runName)}, ${scope}`,
    '',
    `- reward: ${markdownCode(r.reward.label)}${r.reward.file ? ` at ${markdownCode(r.reward.file, 1000)}` : ''}${r.reward.sha256 ? `, sha256 ${markdownCode(r.reward.sha256, 16)}` : ''}`,
    `- trajectories re-scored: ${s.scored} of ${s.trajectories}${s.errors > 0 ? ` (${s.errors} could not be scored)` : ''}, in ${fixed(r.wallMs / 1000, 1)} s`,
    `- rewards changed: ${s.changed}; mean reward ${f3(s.oldMean)} → ${f3(s.newMean)}`,
    `- success flips: ${s.toSuccess} to success, ${s.toFailure} to failure`,
    `- high-reward outliers (reward > mean + 3 sd of its iteration): ${s.outliers.length === 0 ? 'none' : s.outliers.map((o) => `${o.trajectoryId} (${f3(o.reward)})`).join(', ')}`,
    `- public pass, private fail: ${s.publicPassPrivateFail.length === 0 ? 'none' : `${s.publicPassPrivateFail.length}: ${s.publicPassPrivateFail.slice(0, 50).join(', ')}`}`,
    '',
    'The stored trajectories are unchanged; this re-score is stored beside them.',
    '',
  ];
  const rows = differingItems(r.items);
  if (rows.length === 0) {
    lines.push('Every re-scored trajectory scores as it was stored.');
    return lines.join('\n');
  }
  lines.push(
    `## Where the new scores differ (${rows.length})`,
    '',
    '| trajectory | iteration | group | task | old | new | Δ | old flags | new flags |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const it of rows.slice(0, MAX_ROWS)) {
    const task = markdownCode(it.taskId, 60).replace(/\|/g, '\\|');
    if (!it.new) {
      lines.push(
        `| ${it.trajectoryId} | ${it.iteration} | ${it.group} #${it.indexInGroup} | ${task} | ${f3(it.old.reward)} | error | | ${flags(it.old)} | ${markdownCode(errorHeadline(it.error ?? ''), 300).replace(/\|/g, '\\|')} |`,
      );
      continue;
    }
    const d = it.new.reward - it.old.reward;
    lines.push(
      `| ${it.trajectoryId} | ${it.iteration} | ${it.group} #${it.indexInGroup} | ${task} | ${f3(it.old.reward)} | ${f3(it.new.reward)} | ${d >= 0 ? '+' : ''}${f3(d)} | ${flags(it.old)} | ${flags(it.new)} |`,
    );
  }
  if (rows.length > MAX_ROWS)
    lines.push('', `*${rows.length - MAX_ROWS} more rows: \`agent-rl rescore\` with --json, or the rescore_results table, has them all*`);
  return lines.join('\n');
}
