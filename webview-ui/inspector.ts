// Trajectory inspector (runs inside the webview): task, group, advantage; every turn's whole action —
// the model's text around its code, the code with line numbers and highlighting — or tool call, and
// its observation; observations link back to what caused them (a traceback's line N highlights that
// line); the token heat map (tokenHeat.ts) colours every generated token by what the learner saw and
// lists the worst ones; the other trajectories of the group sit alongside. What the header, the
// outcome's details and the group say comes from src/shared/inspectorModel.ts. Everything from the
// trajectory is untrusted: set with textContent through el(), invisible and direction-changing
// characters shown as markers, and cut at agentRl.maxTextLength with a button that shows the rest.
import { agentRequestView, type AgentRequestView } from '../src/shared/agentRequestView';
import { count } from '../src/shared/format';
import { highlightPython } from '../src/shared/highlight';
import { groupRows, inspectorHeader, outcomeDetails } from '../src/shared/inspectorModel';
import { judgeExchangeView, type JudgeExchangeView } from '../src/shared/judgeExchangeView';
import { actionParts, observationLinks, type ObservationLink } from '../src/shared/linking';
import { isHostToInspector, type InspectorData, type InspectorToHost } from '../src/shared/protocol/webviewProtocol';
import { clip, showInvisibles } from '../src/shared/untrustedText';
import { chipList, el, highlight } from './dom';
import { HeatMap, type HeatMode } from './tokenHeat';
import { rescoreBlock } from './rescoreView';
import { onHostMessage, vscodeApi } from './vscodeApi';

const vscode = vscodeApi<InspectorToHost>();
let maxTextLength = 0;

/** The colour mode chosen last (kept across trajectories), and the heat map shown. */
let heatMode: HeatMode | undefined;
let heat: HeatMap | undefined;

/**
 * `render(text)` of the first maxTextLength characters, and a button that renders the whole text in its
 * place (the cut keeps a 200,000-character line from being laid out unless asked for).
 */
function cut(text: string, render: (shown: string) => HTMLElement): HTMLElement {
  const c = clip(text, maxTextLength);
  const shown = render(c.text);
  if (c.cut === 0) return shown;
  const wrap = el('div', 'cut');
  const more = el('button', 'show-all secondary-button', `Show all ${count(text.length)} characters (${count(c.cut)} more)`);
  more.type = 'button';
  more.addEventListener('click', () => wrap.replaceWith(render(text)));
  wrap.append(shown, more);
  return wrap;
}

/** The code by lines, numbered, highlighted: one span per token, its class from highlight.ts's fixed set, its text through el(). */
function codeBlock(turn: number, code: string): HTMLElement {
  const pre = el('pre', 'code');
  highlightPython(code.replace(/\n$/, '')).forEach((tokens, i) => {
    const row = el('div', 'line');
    row.id = `t${turn}-l${i + 1}`;
    row.dataset.line = String(i + 1);
    row.append(el('span', 'ln', String(i + 1)));
    for (const tok of tokens) row.append(el('span', `tok ${tok.cls}`, tok.text));
    pre.append(row);
  });
  return pre;
}

/** The model's whole action: the text around its code as it wrote it, the code highlighted. */
function actionBlock(turn: number, t: InspectorData['detail']['turnList'][number]): HTMLElement {
  const parts = actionParts(t);
  if (!parts) return cut(t.actionText, (s) => el('pre', 'code action', s));
  const box = el('div', 'action');
  if (parts.before !== '') box.append(cut(parts.before, (s) => el('pre', 'prose', s)));
  box.append(cut(parts.code, (s) => codeBlock(turn, s)));
  if (parts.after.trim() !== '') box.append(cut(parts.after, (s) => el('pre', 'prose', s)));
  return box;
}

/** An agent program's request above the turn that answered it: what it added to the context, and its tools. */
function requestBlock(view: AgentRequestView): HTMLElement {
  const box = el('details', 'agent-request');
  box.open = true;
  box.append(el('summary', undefined, view.heading));
  if (view.tools.length) box.append(el('div', 'meta', `tools: ${view.tools.map((t) => clip(t, 80).text).join(', ')}`));
  for (const m of view.messages) {
    const row = el('div', 'agent-message');
    row.dataset.role = clip(m.role, 40).text;
    row.append(
      el('span', 'detail-key', `${clip(m.role, 40).text}: `),
      cut(m.text, (shown) => el('pre', 'prose', shown)),
    );
    box.append(row);
  }
  return box;
}

/** The group's exchange with the judge (reward.judge): its outcome, the request's messages and the answer, as text. */
function judgeBlock(view: JudgeExchangeView): HTMLElement {
  const box = el('details', 'judge-exchange');
  box.append(el('summary', undefined, view.heading));
  for (const r of view.rows) {
    const row = el('div', 'detail');
    row.append(
      el('span', 'detail-key', `${r.label}: `),
      cut(r.text, (shown) => el(r.block ? 'pre' : 'span', r.block ? 'prose' : 'detail-value', shown)),
    );
    box.append(row);
  }
  return box;
}

/** The observation text with its links turned into buttons (links past a cut are left out with it). */
function observationText(text: string, links: ObservationLink[]): HTMLElement {
  const pre = el('pre', 'obs');
  const lineLinks = links
    .filter((l): l is Extract<ObservationLink, { kind: 'line' }> => l.kind === 'line' && l.end <= text.length)
    .sort((a, b) => a.start - b.start);
  let at = 0;
  for (const l of lineLinks) {
    pre.append(document.createTextNode(showInvisibles(text.slice(at, l.start))));
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
  pre.append(document.createTextNode(showInvisibles(text.slice(at))));
  return pre;
}

function observationBlock(text: string, links: ObservationLink[], turn: number): HTMLElement {
  const wrap = el('div', 'obs-wrap');
  wrap.append(cut(text, (shown) => observationText(shown, links)));
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

/**
 * The outcome's details (inspectorModel.ts): for an imported verl sample its prompt, ground truth and
 * the reward's extra keys as metrics; for our environments the verifier's notes.
 */
function detailsBlock(details: unknown): HTMLElement | undefined {
  const model = outcomeDetails(details);
  if (!model) return undefined;
  const box = el('details', 'outcome-details');
  box.open = true;
  box.append(el('summary', undefined, 'outcome details'));
  for (const r of model.rows) {
    const row = el('div', 'detail');
    row.dataset.key = r.key;
    row.append(
      el('span', 'detail-key', r.label),
      cut(r.value, (shown) => el(r.block ? 'pre' : 'span', 'detail-value', shown)),
    );
    box.append(row);
  }
  if (model.otherExtras !== undefined) box.append(cut(model.otherExtras, (shown) => el('div', 'detail', shown)));
  return box;
}

function render(d: InspectorData): void {
  maxTextLength = d.maxTextLength;
  const t = d.detail;
  const root = document.getElementById('root')!;
  root.replaceChildren();
  const header = inspectorHeader(t, d.compute, d.baseWeights);
  const head = el('header');
  head.append(el('h1', undefined, header.title));
  head.append(el('div', 'meta task', header.task));
  head.append(chipList('meta outcome', header.outcome));
  head.append(el('div', 'meta episode-stats', header.stats));
  // what sampled these tokens: the backend, the model and its chat template (and what of the template an
  // episode does not apply, e.g. a thinking template's rewriting of earlier turns)
  if (header.compute !== undefined) head.append(el('div', 'meta compute', header.compute));
  const details = detailsBlock(t.outcome.details);
  if (details) head.append(details);
  if (t.judge) head.append(judgeBlock(judgeExchangeView(t.judge, t.indexInGroup)));
  const rescores = rescoreBlock(d.rescores, t);
  if (rescores) head.append(rescores);
  heat = new HeatMap(
    t,
    maxTextLength,
    { open: (trajectoryId, focus) => vscode.post({ type: 'open', trajectoryId, focus }), worst: (scope, by) => vscode.post({ type: 'worst', scope, by }) },
    heatMode,
  );
  const tokens = heat.header((m) => (heatMode = m));
  if (tokens) head.append(tokens);
  root.append(head);
  const layout = el('div', 'layout');
  const turns = el('main', 'turns');
  t.turnList.forEach((turn, i) => {
    const sec = el('section', 'turn');
    sec.dataset.turn = String(i);
    sec.append(el('h2', undefined, `Turn ${turn.index}`));
    const request = agentRequestView(t.turnList, i);
    if (request) sec.append(requestBlock(request));
    const action = actionBlock(i, turn);
    action.id = `t${i}-action`;
    sec.append(action);
    const tokenRow = heat!.turnView(i);
    if (tokenRow) sec.append(tokenRow);
    sec.append(observationBlock(turn.observationText, observationLinks(t.turnList, i), i));
    turns.append(sec);
  });
  const side = el('aside', 'group');
  side.append(el('h2', undefined, `Group ${t.group}`));
  for (const g of groupRows(t.id, d.group)) {
    const a = el('a', `sibling${g.current ? ' current' : ''}`, g.text);
    a.dataset.tone = g.tone;
    a.href = '#';
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      vscode.post({ type: 'open', trajectoryId: g.id });
    });
    side.append(a);
  }
  layout.append(turns, side);
  root.append(layout);
  if (d.focus) heat.focus(d.focus);
}

onHostMessage(isHostToInspector, (m) => {
  if (m.type === 'trajectory') render(m);
  else if (heat?.trajectoryId === m.trajectoryId) heat.showWorst(m.scope, m.by, m.items, m.error);
});
vscode.post({ type: 'ready' });
