// Compare Runs' section of the dashboard page (its own module, so the charts' code and this one change
// apart): where the selected runs' configs differ, key path by key path, and the training tasks they
// all sampled, each run's reward and success on it; a click on a run's cell opens its latest trajectory
// of that task in the inspector. Shown for two or more selected runs. All text is set with textContent.
import { showConfigValue } from '../src/shared/configDiff';
import type { SharedTask } from '../src/shared/protocol/backendProtocol';
import { isDashboardComparison, type DashboardComparison, type DashboardToHost } from '../src/shared/protocol/webviewProtocol';
import { oneLine, showInvisibles } from '../src/shared/untrustedText';
import { onHostMessage } from './vscodeApi';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

const num = (x: unknown, digits: number): string => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(digits) : '?');

/** The section, made once, between the run picker and the charts. */
function section(): HTMLElement {
  const found = document.getElementById('comparison');
  if (found) return found;
  const s = el('section');
  s.id = 'comparison';
  document.getElementById('charts')?.before(s);
  return s;
}

function header(runs: DashboardComparison['runs'], first: string): HTMLTableRowElement {
  const tr = el('tr');
  tr.append(el('th', undefined, first));
  for (const r of runs) {
    const th = el('th', undefined, `${oneLine(String(r.name), 40)} (run ${String(r.id)})`);
    th.title = showInvisibles(`${String(r.name)} (run ${String(r.id)})`);
    tr.append(th);
  }
  return tr;
}

function differencesTable(c: DashboardComparison): HTMLElement {
  if (c.differences.length === 0) return el('p', 'empty-note', 'The configs are the same.');
  const table = el('table', 'compare');
  table.append(header(c.runs, 'setting'));
  for (const d of c.differences) {
    const tr = el('tr');
    tr.append(el('td', 'key', oneLine(String(d.path), 80)));
    for (const v of Array.isArray(d.values) ? d.values : []) tr.append(el('td', undefined, showInvisibles(showConfigValue(v))));
    table.append(tr);
  }
  return table;
}

function tasksTable(c: DashboardComparison, post: (m: DashboardToHost) => void): HTMLElement {
  if (c.sharedTasks.length === 0) return el('p', 'empty-note', 'No training task was sampled by every selected run.');
  const table = el('table', 'compare');
  table.append(header(c.runs, 'task'));
  for (const t of c.sharedTasks) {
    const tr = el('tr');
    const task = el('td', 'key', oneLine(String(t.taskId), 60));
    task.title = showInvisibles(String(t.taskId));
    tr.append(task);
    const runs: SharedTask['runs'] = Array.isArray(t.runs) ? t.runs : []; // the guard checks the lists, not each entry
    for (const r of runs) {
      const td = el('td');
      const open = el('button', 'open-trajectory', `reward ${num(r.rewardMean, 2)} · success ${num(100 * r.successRate, 0)}% · ${num(r.episodes, 0)} ep.`);
      open.title = `Open run ${String(r.runId)}'s latest trajectory of this task (${String(r.trajectoryId)}) in the inspector`;
      open.addEventListener('click', () => post({ type: 'openTrajectory', trajectoryId: Number(r.trajectoryId) }));
      td.append(open);
      tr.append(td);
    }
    table.append(tr);
  }
  return table;
}

function render(c: DashboardComparison, post: (m: DashboardToHost) => void): void {
  const s = section();
  s.replaceChildren();
  s.hidden = c.runs.length < 2;
  if (s.hidden) return;
  s.append(
    el('h2', undefined, `Config differences (${c.differences.length})`),
    differencesTable(c),
    el('h2', undefined, `Tasks every run sampled (${c.sharedTasks.length} shown, the most different rewards first)`),
    tasksTable(c, post),
  );
}

/** Draws the comparison the host sends; `post` is the page's one channel to the host. */
export function startComparison(post: (m: DashboardToHost) => void): void {
  onHostMessage(isDashboardComparison, (c) => render(c, post));
}
