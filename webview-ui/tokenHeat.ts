// The inspector's token heat map: every generated token coloured by a chosen column of what the
// learner saw (src/shared/tokenStatsRows.ts: behaviour log-prob, training log-prob before the update,
// their difference, π/π_old, the clip that held it, the advantage, the entropy, the KL to the
// reference), every column in a token's detail line, and the worst tokens of the trajectory — and, from
// the host, of its iteration and run — each a link to the token in context. Token texts are untrusted:
// set through el() only.
import type { TrajectoryDetail, WorstToken } from '../src/shared/protocol/backendProtocol';
import type { TokenFocus, WorstScope } from '../src/shared/protocol/webviewProtocol';
import { tokenNumber as fmt, tokenRows, worstRows, TOKEN_COLUMNS, type TokenColumn, type TokenRow, type WorstBy } from '../src/shared/tokenStatsRows';
import { clip, showInvisibles } from '../src/shared/untrustedText';
import { el, highlight } from './dom';

/** What a colour mode shows: a column, or the trajectory's advantage. */
export type HeatMode = TokenColumn | 'advantage';
const MODES: readonly HeatMode[] = ['behaviour', 'before', 'mismatch', 'ratio', 'clip', 'advantage', 'entropy', 'kl'];
const MODE_TEXT: Record<HeatMode, string> = { ...TOKEN_COLUMNS, advantage: 'the trajectory’s advantage' };
const WORST_TEXT: Record<WorstBy, string> = { mismatch: '|training − sampling log-prob|', logRatio: '|log π/π_old|', kl: 'KL to the reference' };

export interface HeatMapHooks {
  /** Open another trajectory at a token (a worst-list entry elsewhere). */
  open(trajectoryId: number, focus: TokenFocus): void;
  /** Ask the host for the worst tokens of the iteration or run. */
  worst(scope: WorstScope, by: WorstBy): void;
}

/** Every column of a token, as one line of text. */
export function tokenDetailText(r: TokenRow, piece: string, advantage: number): string {
  if (!r.trained)
    return `token ${JSON.stringify(piece)} (id ${r.id}) · log-prob when sampled ${fmt(r.behaviour)} · not trained (loss mask 0, or past the context window)`;
  return [
    `token ${JSON.stringify(piece)} (id ${r.id})`,
    `sampled ${fmt(r.behaviour)}`,
    `before the update ${fmt(r.before)}`,
    `mismatch ${fmt(r.mismatch)}`,
    `trained on ${fmt(r.logp)}`,
    `ratio ${fmt(r.ratio)}`,
    `clipped ${r.clip === 'none' || r.clip === undefined ? 'no' : r.clip}`,
    `advantage ${fmt(advantage)}`,
    `entropy ${fmt(r.entropy)}`,
    `KL ${fmt(r.kl)}`,
  ].join(' · ');
}

/** A token's value in a mode (undefined: unknown), and the colour scale's bound over the trajectory. */
function valueOf(r: TokenRow, mode: HeatMode, advantage: number): number | undefined {
  switch (mode) {
    case 'behaviour':
      return r.behaviour;
    case 'before':
      return r.before;
    case 'mismatch':
      return r.mismatch;
    case 'ratio':
      return r.ratio === undefined || r.ratio <= 0 ? undefined : Math.log(r.ratio);
    case 'clip':
      return r.clip === undefined ? undefined : ['none', 'low', 'high', 'dual'].indexOf(r.clip);
    case 'advantage':
      return r.trained ? advantage : undefined;
    case 'entropy':
      return r.entropy;
    case 'kl':
      return r.kl;
  }
}

/** Background of a token: red for high / positive, blue for negative; log-probs hot where unlikely. */
function colour(v: number | undefined, mode: HeatMode, bound: number): string {
  if (v === undefined) return '';
  const alpha = (x: number): number => Math.max(0, Math.min(1, x)) * 0.75;
  if (mode === 'behaviour' || mode === 'before') return `rgba(220, 60, 40, ${alpha(1 - Math.exp(v))})`;
  if (mode === 'clip') return ['', 'rgba(40, 110, 230, 0.6)', 'rgba(220, 60, 40, 0.6)', 'rgba(160, 60, 200, 0.6)'][v] ?? '';
  const x = bound > 0 ? v / bound : 0;
  return x >= 0 ? `rgba(220, 60, 40, ${alpha(x)})` : `rgba(40, 110, 230, ${alpha(-x)})`;
}

/** The token heat map of one trajectory: its controls and lists (`header`) and each turn's token row (`turnView`). */
export class HeatMap {
  readonly rows: TokenRow[];
  private mode: HeatMode;
  private readonly spans = new Map<string, HTMLElement>();
  private readonly details = new Map<number, HTMLDetailsElement>();
  private readonly builders = new Map<number, (upTo?: number) => void>();
  private readonly remote = el('div', 'worst-remote');
  private readonly legend = el('span', 'heat-legend');

  constructor(
    private readonly t: TrajectoryDetail,
    private readonly maxTokens: number,
    private readonly hooks: HeatMapHooks,
    mode: HeatMode | undefined,
  ) {
    this.rows = tokenRows(t.turnList, t.tokenStats);
    // until a mode is chosen: the mismatch where the trajectory has it, else what the clip acted on
    this.mode = !t.tokenStats ? 'behaviour' : (mode ?? (this.rows.some((r) => r.mismatch !== undefined) ? 'mismatch' : 'ratio'));
  }

  private piece(r: TokenRow, chars: readonly string[], count: number): string {
    // a whole action (the table, a scored candidate): its text
    if (r.action) return clip(this.t.turnList[r.turn]?.actionText ?? '', 200).text;
    const p = this.t.pieces?.[r.turn]?.[r.token];
    if (p !== undefined) return p;
    return chars.length === count ? (chars[r.token] ?? '') : `#${r.id}`;
  }

  /** The controls, the summary and the trajectory's worst tokens (undefined: the turns generated no tokens). */
  header(onMode: (m: HeatMode) => void): HTMLElement | undefined {
    if (this.rows.length === 0) return undefined;
    const box = el('section', 'token-heat');
    box.append(el('h2', undefined, 'Tokens'));
    const s = this.t.tokenStats;
    const trained = this.rows.filter((r) => r.trained).length;
    box.append(
      el(
        'div',
        'meta token-summary',
        s
          ? `${this.rows.length} generated tokens, ${trained} with the learner's numbers · first pass ${s.stepsBefore === 0 ? 'before any step of its update' : `after ${s.stepsBefore} step${s.stepsBefore === 1 ? '' : 's'} of its update`}${s.before ? '' : ` (training log-prob before the update unknown${s.old === 'behaviour' && s.stepsBefore > 0 ? '; algorithm.oldLogprobs "recompute" records it for every token' : ': a supervised objective'})`} · π_old: ${s.old === 'recomputed' ? 'recomputed before the update' : 'the behaviour log-probs'}${s.lag > 0 ? ` · sampled ${s.lag} policy version${s.lag === 1 ? '' : 's'} before the update: training − sampling log-prob is lag, not a mismatch` : ''} · numbers from the first epoch's pass`
          : `${this.rows.length} generated tokens · no learner numbers stored (not trained on: ${this.t.excluded ?? 'an evaluation, or a run stored before they were recorded'})`,
      ),
    );
    const label = el('label', 'heat-mode', 'colour tokens by ');
    const select = el('select');
    select.id = 'heat-mode';
    for (const m of MODES) {
      const o = el('option', undefined, MODE_TEXT[m]);
      o.value = m;
      o.disabled = !s && m !== 'behaviour';
      select.append(o);
    }
    select.value = this.mode;
    select.addEventListener('change', () => {
      this.mode = select.value as HeatMode;
      onMode(this.mode);
      this.recolour();
    });
    label.append(select);
    box.append(label, this.legend);
    if (s) {
      const lists = el('div', 'worst-lists');
      for (const by of ['mismatch', 'logRatio', 'kl'] as const) {
        const worst = worstRows(this.rows, by, 5);
        if (worst.length === 0) continue;
        const list = el('div', 'worst-list');
        list.dataset.by = by;
        list.append(el('div', 'worst-title', `worst in this trajectory by ${WORST_TEXT[by]}`));
        for (const r of worst)
          list.append(this.link(r, this.t.id, `turn ${r.turn} token ${r.token}`, by === 'mismatch' ? r.mismatch : by === 'kl' ? r.kl : Math.log(r.ratio!)));
        lists.append(list);
      }
      box.append(lists);
      const more = el('div', 'worst-more');
      for (const scope of ['iteration', 'run'] as const) {
        for (const by of ['mismatch', 'logRatio', 'kl'] as const) {
          const b = el('button', 'worst-ask', `worst of the ${scope === 'iteration' ? `iteration ${this.t.iteration}` : 'run'} by ${WORST_TEXT[by]}`);
          b.type = 'button';
          b.dataset.scope = scope;
          b.dataset.by = by;
          b.addEventListener('click', () => this.hooks.worst(scope, by));
          more.append(b);
        }
      }
      box.append(more, this.remote);
    }
    return box;
  }

  /** The trajectory shown (a late reply for another one is dropped). */
  get trajectoryId(): number {
    return this.t.id;
  }

  /** The worst tokens the host sent for the iteration or run (or why there are none). */
  showWorst(scope: WorstScope, by: WorstBy, items: readonly WorstToken[], error?: string): void {
    const list = el('div', 'worst-list remote');
    list.dataset.scope = scope;
    list.dataset.by = by;
    list.append(
      el(
        'div',
        'worst-title',
        `worst of the ${scope === 'iteration' ? `iteration ${this.t.iteration}` : 'run'} by ${WORST_TEXT[by]}${error !== undefined ? `: could not be read (${error})` : items.length === 0 ? ': none recorded' : ''}`,
      ),
    );
    for (const w of items)
      list.append(
        this.link(
          w,
          w.trajectoryId,
          `trajectory ${w.trajectoryId} (iteration ${w.iteration}) turn ${w.turn} token ${w.token}`,
          w.by === 'logRatio' ? Math.log(w.ratio!) : w.by === 'kl' ? w.kl : w.mismatch,
        ),
      );
    this.remote.replaceChildren(list);
  }

  private link(r: TokenRow, trajectoryId: number, where: string, value: number | undefined): HTMLElement {
    const a = el('a', 'worst-entry', `${fmt(value)} · ${where} (id ${r.id}, sampled ${fmt(r.behaviour, 3)})`);
    a.href = '#';
    a.dataset.trajectory = String(trajectoryId);
    a.dataset.turn = String(r.turn);
    a.dataset.token = String(r.token);
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      if (trajectoryId === this.t.id) this.focus({ turn: r.turn, token: r.token });
      else this.hooks.open(trajectoryId, { turn: r.turn, token: r.token });
    });
    return a;
  }

  /** A turn's generated tokens, coloured, built when opened (a long action has thousands). */
  turnView(turn: number, actionText: string): HTMLElement | undefined {
    const mine = this.rows.filter((r) => r.turn === turn);
    if (mine.length === 0) return undefined;
    const tk = this.t.turnList[turn]?.policy.tokens as { context?: unknown[] } | undefined;
    const context = Array.isArray(tk?.context) ? tk.context.length : 0;
    const trained = mine.filter((r) => r.trained).length;
    const box = el('details', 'tokens');
    box.dataset.turn = String(turn);
    box.append(el('summary', undefined, `tokens: ${context} context (mask 0), ${mine.length} generated, ${trained} with the learner's numbers`));
    const row = el('div', 'token-row');
    const info = el('div', 'token-detail', 'click a token for every number');
    const chars = [...actionText];
    let built = 0;
    const build = (upTo = 0): void => {
      // the first maxTextLength tokens (a long action has thousands), or up to a token asked for
      const want = this.maxTokens > 0 ? Math.min(mine.length, Math.max(this.maxTokens, upTo + 1)) : mine.length;
      if (built >= want) return;
      for (const r of mine.slice(built, want)) {
        const piece = this.piece(r, chars, mine.length);
        const span = el('span', `token${r.trained ? ' trained' : ''}`, piece);
        span.dataset.token = String(r.token);
        span.title = showInvisibles(tokenDetailText(r, piece, this.t.advantage));
        span.addEventListener('click', () => {
          info.textContent = showInvisibles(tokenDetailText(r, piece, this.t.advantage));
          for (const old of row.querySelectorAll('.picked')) old.classList.remove('picked');
          span.classList.add('picked');
        });
        this.spans.set(`${turn}:${r.token}`, span);
        row.append(span);
      }
      built = want;
      this.recolour();
    };
    this.builders.set(turn, build);
    this.details.set(turn, box);
    box.addEventListener('toggle', () => box.open && build());
    box.append(row, info);
    return box;
  }

  /** Opens the token's turn, shows its numbers and highlights it. */
  focus(f: TokenFocus): void {
    const box = this.details.get(f.turn);
    if (!box) return;
    box.open = true;
    this.builders.get(f.turn)?.(f.token);
    const span = this.spans.get(`${f.turn}:${f.token}`);
    if (!span) return;
    span.click();
    highlight(span);
  }

  private recolour(): void {
    const values = this.rows.map((r) => valueOf(r, this.mode, this.t.advantage));
    const bound = values.reduce<number>((m, v) => (v === undefined ? m : Math.max(m, Math.abs(v))), 0);
    const known = values.filter((v) => v !== undefined).length;
    this.legend.textContent =
      known === 0
        ? ' · no token of this trajectory has this number'
        : this.mode === 'behaviour' || this.mode === 'before'
          ? ' · red: unlikely (1 − p)'
          : this.mode === 'clip'
            ? ' · blue: low clip, red: high clip, purple: dual clip'
            : ` · red: positive, blue: negative, full colour at ±${bound.toPrecision(3)}${this.mode === 'ratio' ? ' (log ratio)' : ''}`;
    this.rows.forEach((r, i) => {
      const span = this.spans.get(`${r.turn}:${r.token}`);
      if (span) span.style.background = colour(values[i], this.mode, bound);
    });
  }
}
