// The inspector's "re-scores" section: a trajectory's stored re-scores and scored edits beside its
// stored reward (issue 29, part 3). What it says comes from src/shared/inspectorModel.ts (rescoreView);
// this file only renders it, through el().
import { rescoreView } from '../src/shared/inspectorModel';
import type { Score, TrajectoryRescores } from '../src/shared/rescore';
import { el } from './dom';

/** The section, or undefined when the trajectory has neither re-scores nor edits. */
export function rescoreBlock(r: TrajectoryRescores | undefined, stored: Score): HTMLElement | undefined {
  const view = rescoreView(r, stored);
  if (!view) return undefined;
  const box = el('details', 'rescores');
  box.open = true;
  box.append(el('summary', 'rescores-title', view.title));
  for (const x of view.rescores) {
    const row = el('div', 'rescore', x.text);
    row.dataset.rescore = String(x.id);
    row.dataset.tone = x.tone;
    box.append(row);
  }
  for (const e of view.edits) {
    const row = el('div', 'rescore-edit');
    row.dataset.edit = String(e.id);
    const score = el('div', 'rescore-edit-score', e.score);
    score.dataset.tone = e.tone;
    row.append(score, el('pre', 'rescore-edit-text', e.text));
    box.append(row);
  }
  return box;
}
