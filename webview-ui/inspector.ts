// Trajectory inspector (runs inside the webview): task, group, advantage; every turn's code (line
// numbers, highlighted) or tool call and its observation; observations link back to what caused them
// (a traceback's line N highlights that line); the token view shows trained tokens (loss mask 1) with
// their log-probs; the other trajectories of the group sit alongside. Everything from the trajectory
// is untrusted and set with textContent.
import { highlightLine } from '../src/shared/highlight';
import { codeOf, observationLinks, type ObservationLink } from '../src/shared/linking';
import { isInspectorData, type InspectorData } from '../src/shared/protocol/webviewProtocol';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void };
const vscode = acquireVsCodeApi();

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function highlight(target: HTMLElement): void {
  for (const old of document.querySelectorAll('.hl')) old.classList.remove('hl');
  target.classList.add('hl');
  target.scrollIntoView({ block: 'center' });
}

function codeBlock(turn: number, code: string): HTMLElement {
  const pre = el('pre', 'code');
  code.replace(/\n$/, '').split('\n').forEach((line, i) => {
    const row = el('div', 'line');
    row.id = `t${turn}-l${i + 1}`;
    row.dataset.line = String(i + 1);
    row.append(el('span', 'ln', String(i + 1)));
    for (const tok of highlightLine(line)) row.append(el('span', `tok ${tok.cls}`, tok.text));
    pre.append(row);
  });
  return pre;
}

/** The observation text with its links turned into buttons. */
function observationBlock(text: string, links: ObservationLink[], turn: number): HTMLElement {
  const pre = el('pre', 'obs');
  const lineLinks = links.filter((l): l is Extract<ObservationLink, { kind: 'line' }> => l.kind === 'line').sort((a, b) => a.start - b.start);
  let at = 0;
  for (const l of lineLinks) {
    pre.append(document.createTextNode(text.slice(at, l.start)));
    const a = el('a', `link line-link${l.innermost ? ' innermost' : ''}`, text.slice(l.start, l.end));
    a.href = '#';
    a.dataset.target = `t${l.turn}-l${l.line}`;
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      const target = document.getElementById(`t${l.turn}-l${l.line}`);
      if (target) highlight(target);
    });
    pre.append(a);
    at = l.end;
  }
  pre.append(document.createTextNode(text.slice(at)));
  const wrap = el('div', 'obs-wrap');
  wrap.append(pre);
  for (const l of links) {
    if (l.kind === 'call') {
      const a = el('a', 'link call-link', '↖ result of this turn’s call');
      a.href = '#';
      a.addEventListener('click', (ev) => {
        ev.preventDefault();
        highlight(document.getElementById(`t${turn}-action`)!);
      });
      wrap.append(a);
    }
    if (l.kind === 'cause') wrap.append(el('div', 'cause', `caused by turn ${l.turn}: ${l.reason}`));
  }
  return wrap;
}

function tokenView(policy: Record<string, unknown>, actionText: string): HTMLElement | undefined {
  const tk = policy.tokens as { context?: number[]; sampled?: number[]; logprobs?: number[] } | undefined;
  if (!tk?.sampled) return undefined;
  const box = el('details', 'tokens');
  box.append(el('summary', undefined, `tokens: ${tk.context?.length ?? 0} context (mask 0), ${tk.sampled.length} generated (mask 1, trained)`));
  const chars = [...actionText];
  const row = el('div', 'token-row');
  tk.sampled.forEach((id, i) => {
    const lp = tk.logprobs?.[i] ?? 0;
    const t = el('span', 'token trained', chars.length === tk.sampled!.length ? chars[i] : `#${id}`);
    t.title = `id ${id}, log-prob ${lp.toFixed(4)} (p = ${Math.exp(lp).toFixed(3)})`;
    t.style.opacity = String(0.35 + 0.65 * Math.exp(lp));
    row.append(t);
  });
  box.append(row);
  return box;
}

/**
 * The outcome's details as plain text: for an imported verl sample its prompt, ground truth and the
 * reward's extra keys as metrics; for our environments the verifier's notes.
 */
function detailsBlock(details: unknown): HTMLElement | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const d = details as Record<string, unknown>;
  const box = el('details', 'outcome-details');
  box.open = true;
  box.append(el('summary', undefined, 'outcome details'));
  for (const [k, v] of Object.entries(d)) {
    if (k === 'extras' && 'metrics' in d) continue; // the numeric extras are the metrics; the rest is shown below
    const text = k === 'metrics' && typeof v === 'object' && v !== null ? Object.entries(v).map(([m, x]) => `${m} ${String(x)}`).join(' · ') : typeof v === 'string' ? v : JSON.stringify(v);
    const row = el('div', 'detail');
    row.dataset.key = k;
    row.append(el('span', 'detail-key', `${k}: `), el(typeof v === 'string' && v.includes('\n') ? 'pre' : 'span', 'detail-value', text));
    box.append(row);
  }
  const extras = d.extras as Record<string, unknown> | undefined;
  const other = extras && 'metrics' in d ? Object.entries(extras).filter(([, x]) => typeof x !== 'number' && typeof x !== 'boolean') : [];
  if (other.length) box.append(el('div', 'detail', `other extras: ${other.map(([k, x]) => `${k} ${JSON.stringify(x)}`).join(' · ')}`));
  return box;
}

function render(d: InspectorData): void {
  const t = d.detail;
  const root = document.getElementById('root')!;
  root.replaceChildren();
  const head = el('header');
  head.append(el('h1', undefined, `Trajectory ${t.id}`));
  head.append(el('div', 'meta', `task ${t.taskId} · run ${t.runId} · iteration ${t.iteration} · group ${t.group} #${t.indexInGroup}`));
  head.append(el('div', 'meta', `reward ${t.reward} · advantage ${t.advantage.toFixed(4)} · ${t.success ? 'success' : 'failure'} (${t.termination}) · public ${t.publicPass ? 'pass' : 'fail'} · private ${t.privatePass ? 'pass' : 'fail'}`));
  const details = detailsBlock(t.outcome.details);
  if (details) head.append(details);
  root.append(head);
  const layout = el('div', 'layout');
  const turns = el('main', 'turns');
  t.turnList.forEach((turn, i) => {
    const sec = el('section', 'turn');
    sec.dataset.turn = String(i);
    sec.append(el('h2', undefined, `Turn ${turn.index}`));
    const code = codeOf(turn);
    const action = code !== undefined ? codeBlock(i, code) : el('pre', 'code action', turn.actionText);
    action.id = `t${i}-action`;
    sec.append(action);
    const tokens = tokenView(turn.policy, turn.actionText);
    if (tokens) sec.append(tokens);
    sec.append(observationBlock(turn.observationText, observationLinks(t.turnList, i), i));
    turns.append(sec);
  });
  const side = el('aside', 'group');
  side.append(el('h2', undefined, `Group ${t.group}`));
  for (const g of d.group) {
    const a = el('a', `sibling${g.id === t.id ? ' current' : ''}`, `${g.success ? '✓' : '✗'} #${g.indexInGroup} reward ${g.reward.toFixed(2)} adv ${g.advantage.toFixed(2)} · ${g.turns} turns`);
    a.href = '#';
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      vscode.postMessage({ type: 'open', trajectoryId: g.id });
    });
    side.append(a);
  }
  layout.append(turns, side);
  root.append(layout);
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  if (isInspectorData(event.data)) render(event.data);
});
vscode.postMessage({ type: 'ready' });
