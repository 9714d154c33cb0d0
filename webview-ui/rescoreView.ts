// The inspector's "re-scores" section: a trajectory's stored re-scores and scored edits beside its
// stored reward (issue 29, part 3). Self-contained — its own element helper, one exported function —
// so the inspector calls it in one line. Everything shown is stored data: set with textContent, the
// reward label, errors and edited answers with invisible characters marked and cut.
import { errorHeadline, type Score, type TrajectoryRescores } from '../src/shared/rescore';
import { oneLine, showInvisibles } from '../src/shared/untrustedText';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  e.className = cls;
  if (text !== undefined) e.textContent = showInvisibles(text);
  return e;
}

const num = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : '?');

function scoreText(s: Score | null, error: string | null, stored: Score): string {
  if (!s) return `not scored: ${oneLine(errorHeadline(error ?? ''), 300)}`;
  const d = s.reward - stored.reward;
  const flip = s.success === stored.success ? '' : s.success ? ' · now a success' : ' · now a failure';
  return `reward ${num(s.reward)} (${d >= 0 ? '+' : ''}${num(d)} vs stored)${flip} · public ${s.publicPass ? 'pass' : 'fail'} · private ${s.privatePass ? 'pass' : 'fail'}`;
}

/** The section, or undefined when the trajectory has neither re-scores nor edits. */
export function rescoreBlock(r: TrajectoryRescores | undefined, stored: Score): HTMLElement | undefined {
  if (!r || (r.rescores.length === 0 && r.edits.length === 0)) return undefined;
  const box = el('details', 'rescores');
  box.open = true;
  box.append(el('summary', 'rescores-title', `re-scores (${r.rescores.length}) and edits (${r.edits.length}) — stored reward ${num(stored.reward)}`));
  for (const x of r.rescores) {
    const row = el('div', 'rescore');
    row.dataset.rescore = String(x.rescoreId);
    row.textContent = showInvisibles(
      `rescore ${x.rescoreId} with ${oneLine(x.reward.label, 100)} (${oneLine(x.createdAt, 30)}): ${scoreText(x.score, x.error, stored)}`,
    );
    box.append(row);
  }
  for (const e of r.edits) {
    const row = el('div', 'rescore-edit');
    row.dataset.edit = String(e.id);
    row.append(
      el('div', 'rescore-edit-score', `edit ${e.id} of turn ${e.turnIndex} with ${oneLine(e.reward.label, 100)}: ${scoreText(e.score, e.error, stored)}`),
      el(
        'pre',
        'rescore-edit-text',
        e.actionText.length > 2000 ? `${e.actionText.slice(0, 2000)}… (${e.actionText.length - 2000} more characters)` : e.actionText,
      ),
    );
    box.append(row);
  }
  return box;
}
