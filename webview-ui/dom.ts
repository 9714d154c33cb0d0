// The one way the webview pages put text on screen: textContent (never HTML), with invisible and
// direction-changing characters shown as markers (src/shared/untrustedText.ts), and the few shapes the
// view models (src/shared/*Model.ts) hand over: chips, key/value rows, the worst-token table.
import { type Chip, type KeyValue } from '../src/shared/inspectorModel';
import { nextWorstSort, sortWorst, type WorstTable } from '../src/shared/worstTable';
import { opaqueColour } from '../src/shared/chartColour';
import { showInvisibles } from '../src/shared/untrustedText';

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = showInvisibles(text);
  return e;
}

/** Calls `f` when VS Code switches the colour theme (it sets the body's class: vscode-light, vscode-dark, vscode-high-contrast). */
export function onThemeChange(f: () => void): void {
  let last = document.body.className;
  new MutationObserver(() => {
    if (document.body.className === last) return;
    last = document.body.className;
    f();
  }).observe(document.body, { attributes: true, attributeFilter: ['class'] });
}

/** A theme colour (a --vscode-* variable) as the canvas needs it, read when drawn. */
export function themeColour(name: string, fallback: string): string {
  return getComputedStyle(document.body).getPropertyValue(name).trim() || fallback;
}

/** A theme colour for a chart's line or bar: the variable without its transparency (opaqueColour). */
export function chartColour(name: string, fallback: string): string {
  return opaqueColour(themeColour(name, fallback));
}

/** Marks `target` as the one highlighted element and scrolls it into view. */
export function highlight(target: HTMLElement): void {
  for (const old of document.querySelectorAll('.hl')) old.classList.remove('hl');
  target.classList.add('hl');
  target.scrollIntoView({ block: 'center' });
}

/** Chips in a box of class `cls`: each a label and a value, coloured by its tone (data-tone). */
export function chipList(cls: string, chips: readonly Chip[]): HTMLElement {
  const box = el('div', `chips ${cls}`);
  for (const c of chips) {
    const item = el('span', 'chip');
    item.dataset.key = c.key;
    item.dataset.tone = c.tone;
    item.append(el('span', 'chip-label', c.label), el('span', 'chip-value', c.value));
    box.append(item);
  }
  return box;
}

/** Key/value rows (a definition list) of class `cls`. */
export function keyValues(cls: string, rows: readonly KeyValue[]): HTMLElement {
  const dl = el('dl', `kv ${cls}`);
  for (const r of rows) {
    const dt = el('dt', undefined, r.label);
    const dd = el('dd', undefined, r.value);
    dt.dataset.key = r.key;
    dd.dataset.key = r.key;
    dd.dataset.tone = r.tone;
    dl.append(dt, dd);
  }
  return dl;
}

/**
 * A worst-token table: the model's columns and rows. A click on a column's header (a button; aria-sort
 * on the sorted one) sorts by it, a second click turns the order around. Each row's token cell is a link
 * of class `linkClass` (data-trajectory, data-turn, data-token) that calls `open`; the rows are in the
 * tab order one at a time (roving tabindex): ↑/↓ (Home/End) move between them, Enter opens the token.
 */
export function worstTableElement(t: WorstTable, linkClass: string, open: (trajectoryId: number, turn: number, token: number) => void): HTMLTableElement {
  const table = el('table', 'worst-table');
  table.dataset.by = t.by;
  table.setAttribute('aria-label', showInvisibles(t.title));
  const thead = el('thead');
  const body = el('tbody');
  table.append(thead, body);
  const draw = (view: WorstTable): void => {
    const head = el('tr');
    for (const c of view.columns) {
      const sorted = c.key === view.sortedBy;
      const th = el('th', `${c.numeric ? 'num' : ''}${sorted ? ' sorted' : ''}`.trim() || undefined);
      th.scope = 'col';
      th.dataset.column = c.key;
      if (sorted) th.setAttribute('aria-sort', view.direction);
      const sort = el('button', 'sort', c.label);
      sort.type = 'button';
      sort.title = `${c.title} — click to sort`;
      sort.append(el('span', 'sort-mark', sorted ? (view.direction === 'descending' ? ' ▾' : ' ▴') : ''));
      sort.addEventListener('click', () => {
        draw(sortWorst(view, c.key, nextWorstSort(view, c.key)));
        thead.querySelector<HTMLButtonElement>(`th[data-column="${c.key}"] button`)?.focus();
      });
      th.append(sort);
      head.append(th);
    }
    thead.replaceChildren(head);
    body.replaceChildren();
    view.rows.forEach((r, i) => {
      const tr = el('tr', 'worst-row');
      tr.tabIndex = i === 0 ? 0 : -1;
      for (const c of r.cells) {
        const numeric = view.columns.find((col) => col.key === c.key)?.numeric === true;
        const td = el('td', `${numeric ? 'num' : ''}${c.key === view.sortedBy ? ' sorted' : ''}`.trim() || undefined);
        td.dataset.column = c.key;
        td.dataset.tone = c.tone;
        if (c.title) td.title = showInvisibles(c.title);
        if (c.key === 'token') {
          const a = el('a', linkClass, c.text);
          a.href = '#';
          a.tabIndex = -1;
          a.dataset.trajectory = String(r.trajectoryId);
          a.dataset.turn = String(r.turn);
          a.dataset.token = String(r.token);
          // the row's click opens it (the link is the row's name for the e2e suite and a screen reader)
          a.addEventListener('click', (ev) => ev.preventDefault());
          td.append(a);
        } else td.textContent = showInvisibles(c.text);
        tr.append(td);
      }
      tr.addEventListener('click', () => open(r.trajectoryId, r.turn, r.token));
      tr.addEventListener('keydown', (ev) => {
        const rows = [...body.querySelectorAll<HTMLTableRowElement>('tr.worst-row')];
        const at = rows.indexOf(tr);
        const to = ev.key === 'ArrowDown' ? at + 1 : ev.key === 'ArrowUp' ? at - 1 : ev.key === 'Home' ? 0 : ev.key === 'End' ? rows.length - 1 : undefined;
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          open(r.trajectoryId, r.turn, r.token);
        } else if (to !== undefined && rows[to]) {
          ev.preventDefault();
          for (const row of rows) row.tabIndex = -1;
          rows[to].tabIndex = 0;
          rows[to].focus();
        }
      });
      tr.addEventListener('focus', () => {
        for (const row of body.querySelectorAll<HTMLTableRowElement>('tr.worst-row')) row.tabIndex = row === tr ? 0 : -1;
      });
      body.append(tr);
    });
  };
  draw(t);
  return table;
}
