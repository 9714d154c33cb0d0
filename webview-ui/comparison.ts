// Compare Runs' section of the dashboard page (its own module, so the charts' code and this one change
// apart): where the selected runs' configs differ, grouped by section, and the training tasks they all
// sampled, each run's reward and success on it; a click on a run's cell opens its latest trajectory of
// that task in the inspector. Shown for two or more selected runs. What it shows comes from
// src/shared/comparisonModel.ts; this file only renders it, through el().
import { comparisonView, type ComparisonView } from '../src/shared/comparisonModel';
import { isDashboardComparison, type DashboardComparison, type DashboardToHost } from '../src/shared/protocol/webviewProtocol';
import { count } from '../src/shared/format';
import { el } from './dom';
import { onHostMessage } from './vscodeApi';

/** The section, made once, between the run picker and the charts. */
function section(): HTMLElement {
  const found = document.getElementById('comparison');
  if (found) return found;
  const s = el('section');
  s.id = 'comparison';
  document.getElementById('charts')?.before(s);
  return s;
}

function header(runs: ComparisonView['runs'], first: string): HTMLTableRowElement {
  const tr = el('tr');
  tr.append(el('th', 'key', first));
  for (const r of runs) {
    const th = el('th', undefined, r.text);
    th.title = r.title;
    tr.append(th);
  }
  return tr;
}

/** The differences, a table body per section whose header row folds it (a button, aria-expanded). */
function differencesTable(v: ComparisonView): HTMLElement {
  if (v.differences.empty !== undefined) return el('p', 'empty-note', v.differences.empty);
  const table = el('table', 'compare differences');
  const thead = el('thead');
  thead.append(header(v.runs, 'setting'));
  table.append(thead);
  for (const s of v.differences.sections) {
    const body = el('tbody', 'section-rows');
    body.dataset.section = s.name;
    const head = el('tr', 'section');
    head.dataset.section = s.name;
    const th = el('th');
    th.colSpan = v.runs.length + 1;
    th.scope = 'rowgroup';
    const fold = el('button', 'fold', s.title);
    fold.type = 'button';
    fold.setAttribute('aria-expanded', 'true');
    fold.append(el('span', 'fold-count', ` (${count(s.rows.length)})`));
    const rows: HTMLTableRowElement[] = [];
    fold.addEventListener('click', () => {
      const open = fold.getAttribute('aria-expanded') !== 'true';
      fold.setAttribute('aria-expanded', String(open));
      for (const r of rows) r.hidden = !open;
    });
    th.append(fold);
    head.append(th);
    body.append(head);
    for (const d of s.rows) {
      const tr = el('tr');
      const key = el('td', 'key', d.key);
      key.title = d.title;
      tr.append(key);
      for (const value of d.values) tr.append(el('td', 'value', value));
      rows.push(tr);
      body.append(tr);
    }
    table.append(body);
  }
  return table;
}

function tasksTable(v: ComparisonView, post: (m: DashboardToHost) => void): HTMLElement {
  if (v.tasks.empty !== undefined) return el('p', 'empty-note', v.tasks.empty);
  const table = el('table', 'compare tasks');
  table.append(header(v.runs, 'task'));
  for (const t of v.tasks.rows) {
    const tr = el('tr');
    const task = el('td', 'key', t.task);
    task.title = t.title;
    tr.append(task);
    for (const c of t.cells) {
      const td = el('td');
      const open = el('button', 'open-trajectory', c.text);
      open.title = c.title;
      open.dataset.tone = c.tone;
      open.addEventListener('click', () => post({ type: 'openTrajectory', trajectoryId: c.trajectoryId }));
      td.append(open);
      tr.append(td);
    }
    table.append(tr);
  }
  return table;
}

function render(c: DashboardComparison, post: (m: DashboardToHost) => void): void {
  const v = comparisonView(c);
  const s = section();
  s.replaceChildren();
  s.hidden = v.hidden;
  if (s.hidden) return;
  s.append(el('h2', undefined, v.differences.title), differencesTable(v), el('h2', undefined, v.tasks.title), tasksTable(v, post));
}

/** Draws the comparison the host sends; `post` is the page's one channel to the host. */
export function startComparison(post: (m: DashboardToHost) => void): void {
  onHostMessage(isDashboardComparison, (c) => render(c, post));
}
