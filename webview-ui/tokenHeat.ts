// The inspector's token heat map: every generated token coloured by a chosen column of what the
// learner saw (src/shared/tokenStatsRows.ts), a token's numbers as key/value rows, and the worst tokens
// of the trajectory — and, from the host, of its iteration and run — as tables whose rows open the
// token in context. What is shown comes from src/shared/inspectorModel.ts; this file only renders it
// (text through el(): textContent, invisibles marked).
import {
  defaultHeatMode,
  heatModes,
  teacherScored,
  heatPaint,
  tokenDetails,
  tokenDetailsTitle,
  tokenPieces,
  tokenSummary,
  turnTokensSummary,
  type HeatMode,
} from '../src/shared/inspectorModel';
import { remoteWorst, trajectoryWorst, worstMeasures, WORST_TEXT, worstScopes, type WorstSource, type WorstTable } from '../src/shared/worstTable';
import type { TrajectoryDetail, WorstToken } from '../src/shared/protocol/backendProtocol';
import type { TokenFocus, WorstScope } from '../src/shared/protocol/webviewProtocol';
import { tokenRows, type TokenRow, type WorstBy } from '../src/shared/tokenStatsRows';
import { chipList, el, highlight, keyValues, worstTableElement } from './dom';

export type { HeatMode };

export interface HeatMapHooks {
  /** Open another trajectory at a token (a worst-list entry elsewhere). */
  open(trajectoryId: number, focus: TokenFocus): void;
  /** Ask the host for the worst tokens of the iteration or run. */
  worst(scope: WorstScope, by: WorstBy): void;
}

/** The token heat map of one trajectory: its controls and lists (`header`) and each turn's token row (`turnView`). */
export class HeatMap {
  readonly rows: TokenRow[];
  /** Each row's token text, invisibles marked. */
  private readonly pieces: string[];
  private mode: HeatMode;
  private readonly spans = new Map<string, HTMLElement>();
  private readonly details = new Map<number, HTMLDetailsElement>();
  private readonly builders = new Map<number, (upTo?: number) => void>();
  /** The worst-token table shown, and what it shows. */
  private readonly worstBox = el('div', 'worst-lists');
  private worstSource: WorstSource = 'trajectory';
  private worstBy: WorstBy = 'mismatch';
  private readonly legend = el('span', 'heat-legend');

  constructor(
    private readonly t: TrajectoryDetail,
    private readonly maxTokens: number,
    private readonly hooks: HeatMapHooks,
    mode: HeatMode | undefined,
  ) {
    this.rows = tokenRows(t.turnList, t.tokenStats);
    this.pieces = tokenPieces(t, this.rows);
    this.mode = defaultHeatMode(t, this.rows, mode);
    // a trajectory a distillation teacher scored: its worst tokens are first those the teacher disagrees with most
    if (teacherScored(this.rows)) this.worstBy = 'reverseKl';
  }

  /** The controls, the summary and the trajectory's worst tokens (undefined: the turns generated no tokens). */
  header(onMode: (m: HeatMode) => void): HTMLElement | undefined {
    if (this.rows.length === 0) return undefined;
    const box = el('section', 'token-heat');
    box.append(el('h2', undefined, 'Tokens'), chipList('meta token-summary', tokenSummary(this.t, this.rows)));
    const label = el('label', 'heat-mode', 'colour tokens by ');
    const select = el('select');
    select.id = 'heat-mode';
    for (const m of heatModes(this.t.tokenStats !== undefined, teacherScored(this.rows))) {
      const o = el('option', undefined, m.label);
      o.value = m.value;
      o.disabled = m.disabled;
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
    if (this.t.tokenStats) {
      // one table of worst tokens: where from (this trajectory, its iteration, its run) and by which number
      const controls = el('div', 'worst-controls');
      const scope = this.selector('worst-scope', 'worst tokens of ', worstScopes(this.t.iteration), this.worstSource);
      const measure = this.selector('worst-measure', ' by ', worstMeasures(teacherScored(this.rows)), this.worstBy);
      const change = (): void => {
        this.worstSource = scope.select.value as WorstSource;
        this.worstBy = measure.select.value as WorstBy;
        this.showWorstChoice();
      };
      scope.select.addEventListener('change', change);
      measure.select.addEventListener('change', change);
      controls.append(scope.label, measure.label);
      box.append(controls, this.worstBox);
      this.showWorstChoice();
    }
    return box;
  }

  /** The trajectory shown (a late reply for another one is dropped). */
  get trajectoryId(): number {
    return this.t.id;
  }

  /** The worst tokens the host sent for the iteration or run (or why there are none); a reply for an earlier choice is dropped. */
  showWorst(scope: WorstScope, by: WorstBy, items: readonly WorstToken[], error?: string): void {
    if (scope !== this.worstSource || by !== this.worstBy) return;
    this.worstBox.replaceChildren(this.worstList(remoteWorst(this.t.iteration, scope, by, items, error), scope));
  }

  private selector<V extends string>(
    id: string,
    text: string,
    options: readonly { readonly value: V; readonly label: string }[],
    value: V,
  ): { label: HTMLLabelElement; select: HTMLSelectElement } {
    const label = el('label', 'worst-select', text);
    const select = el('select');
    select.id = id;
    for (const o of options) {
      const option = el('option', undefined, o.label);
      option.value = o.value;
      select.append(option);
    }
    select.value = value;
    label.append(select);
    return { label, select };
  }

  /** Shows the chosen worst tokens: the trajectory's at once, the iteration's or run's when the host answers. */
  private showWorstChoice(): void {
    const by = this.worstBy;
    if (this.worstSource === 'trajectory') {
      const table = trajectoryWorst(this.t, this.rows, this.pieces, by, 10);
      const list = table ? this.worstList(table, undefined) : el('div', 'worst-list');
      if (!table) list.append(el('div', 'worst-title', `no token of this trajectory has ${WORST_TEXT[by]}`));
      this.worstBox.replaceChildren(list);
      return;
    }
    const scope = this.worstSource;
    const waiting = el('div', `worst-list remote loading`);
    waiting.dataset.scope = scope;
    waiting.append(el('div', 'worst-title', `reading the worst of the ${scope === 'iteration' ? `iteration ${this.t.iteration}` : 'run'}…`));
    this.worstBox.replaceChildren(waiting);
    this.hooks.worst(scope, by);
  }

  private worstList(table: WorstTable, scope: WorstScope | undefined): HTMLElement {
    const list = el('div', `worst-list${scope ? ' remote' : ''}`);
    list.dataset.by = table.by;
    if (scope) list.dataset.scope = scope;
    list.append(el('div', 'worst-title', `${table.title}${table.note !== undefined ? `: ${table.note}` : ''}`));
    if (table.rows.length > 0)
      list.append(
        worstTableElement(table, 'worst-entry', (trajectoryId, turn, token) => {
          if (trajectoryId === this.t.id) this.focus({ turn, token });
          else this.hooks.open(trajectoryId, { turn, token });
        }),
      );
    return list;
  }

  /** A turn's generated tokens, coloured, built when opened (a long action has thousands). */
  turnView(turn: number): HTMLElement | undefined {
    const mine = this.rows.map((r, i) => ({ r, i })).filter((x) => x.r.turn === turn);
    if (mine.length === 0) return undefined;
    const box = el('details', 'tokens');
    box.dataset.turn = String(turn);
    box.append(
      el(
        'summary',
        undefined,
        turnTokensSummary(
          this.t.turnList[turn]?.policy,
          mine.map((x) => x.r),
        ),
      ),
    );
    const row = el('div', 'token-row');
    const info = el('div', 'token-detail', 'click a token for every number');
    let built = 0;
    const build = (upTo = 0): void => {
      // the first maxTextLength tokens (a long action has thousands), or up to a token asked for
      const want = this.maxTokens > 0 ? Math.min(mine.length, Math.max(this.maxTokens, upTo + 1)) : mine.length;
      if (built >= want) return;
      for (const { r, i } of mine.slice(built, want)) {
        const piece = this.pieces[i]!;
        const numbers = tokenDetails(r, piece, this.t.advantage);
        const span = el('span', `token${r.trained ? ' trained' : ''}`, piece);
        span.dataset.token = String(r.token);
        span.title = tokenDetailsTitle(numbers);
        span.addEventListener('click', () => {
          info.replaceChildren(keyValues('token-numbers', numbers));
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
    const paint = heatPaint(this.rows, this.mode, this.t.advantage);
    this.legend.textContent = paint.legend;
    this.rows.forEach((r, i) => {
      const span = this.spans.get(`${r.turn}:${r.token}`);
      if (span) span.style.background = paint.colours[i]!;
    });
  }
}
