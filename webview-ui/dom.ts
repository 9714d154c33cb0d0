// The one way the webview pages put text on screen: textContent (never HTML), with invisible and
// direction-changing characters shown as markers (src/shared/untrustedText.ts), and the few shapes the
// view models (src/shared/*Model.ts) hand over: chips, key/value rows, the worst-token table.
import type { Chip, KeyValue, WorstTable } from '../src/shared/inspectorModel';
import { showInvisibles } from '../src/shared/untrustedText';

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = showInvisibles(text);
  return e;
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
 * A worst-token table: the model's columns and rows, the sorted column marked; each row's token cell
 * is a link of class `linkClass` (data-trajectory, data-turn, data-token) that calls `open`.
 */
export function worstTableElement(t: WorstTable, linkClass: string, open: (trajectoryId: number, turn: number, token: number) => void): HTMLTableElement {
  const table = el('table', 'worst-table');
  table.dataset.by = t.by;
  const head = el('tr');
  for (const c of t.columns) {
    const th = el('th', `${c.numeric ? 'num' : ''}${c.key === t.sortedBy ? ' sorted' : ''}`.trim() || undefined, c.label);
    th.title = c.title;
    th.dataset.column = c.key;
    head.append(th);
  }
  const thead = el('thead');
  thead.append(head);
  const body = el('tbody');
  for (const r of t.rows) {
    const tr = el('tr');
    for (const c of r.cells) {
      const numeric = t.columns.find((col) => col.key === c.key)?.numeric === true;
      const td = el('td', `${numeric ? 'num' : ''}${c.key === t.sortedBy ? ' sorted' : ''}`.trim() || undefined);
      td.dataset.column = c.key;
      td.dataset.tone = c.tone;
      if (c.title) td.title = showInvisibles(c.title);
      if (c.key === 'token') {
        const a = el('a', linkClass, c.text);
        a.href = '#';
        a.dataset.trajectory = String(r.trajectoryId);
        a.dataset.turn = String(r.turn);
        a.dataset.token = String(r.token);
        a.addEventListener('click', (ev) => {
          ev.preventDefault();
          open(r.trajectoryId, r.turn, r.token);
        });
        td.append(a);
      } else td.textContent = showInvisibles(c.text);
      tr.append(td);
    }
    body.append(tr);
  }
  table.append(thead, body);
  return table;
}
