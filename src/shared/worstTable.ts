// The inspector's worst-tokens table (pure, like the rest of its model in inspectorModel.ts): the
// shown trajectory's worst tokens by a measure, or those of its iteration or run that the host sent,
// as rows of cells (token, turn, position, sampled, trained, Δ, ratio, clip, advantage, KL, student − teacher) that the
// page sorts by a click on a column's header. Every number goes through format.ts, every stored text
// through untrustedText.ts.
import { sig } from './format';
import { clipText, clipTone, quoted, type Tone } from './inspectorModel';
import type { TrajectoryDetail, WorstToken } from './protocol/backendProtocol';
import type { WorstScope } from './protocol/webviewProtocol';
import { badness, worstRows, type TokenRow, type WorstBy } from './tokenStatsRows';
import { oneLine } from './untrustedText';

export type WorstColumnKey = 'trajectory' | 'token' | 'turn' | 'position' | 'sampled' | 'trained' | 'delta' | 'ratio' | 'clip' | 'advantage' | 'kl' | 'teacher';

export interface WorstColumn {
  readonly key: WorstColumnKey;
  readonly label: string;
  /** What the column holds (the header's hover). */
  readonly title: string;
  readonly numeric: boolean;
}

export interface WorstCell {
  readonly key: WorstColumnKey;
  readonly text: string;
  readonly tone: Tone;
  /** The cell's hover ('' for none). */
  readonly title: string;
  /** What a click on the column's header sorts by (undefined: no number, sorted last either way). */
  readonly sort: number | string | undefined;
}

export interface WorstRowView {
  /** Where the token is: a click opens it there. */
  readonly trajectoryId: number;
  readonly turn: number;
  readonly token: number;
  readonly cells: readonly WorstCell[];
}

export interface WorstTable {
  readonly by: WorstBy;
  readonly title: string;
  readonly columns: readonly WorstColumn[];
  /** The column the rows are sorted by (worst first until a header is clicked), and which way. */
  readonly sortedBy: WorstColumnKey;
  readonly direction: SortDirection;
  readonly rows: readonly WorstRowView[];
  /** Why there are no rows (none recorded, or the backend's error), when there are none. */
  readonly note?: string;
}

/** A table's sort order, as aria-sort names it. */
export type SortDirection = 'ascending' | 'descending';

export const WORST_TEXT: Record<WorstBy, string> = {
  mismatch: '|training − sampling log-prob|',
  logRatio: '|log π/π_old|',
  kl: 'KL to the reference',
  reverseKl: '|student − teacher log-prob|',
};
const SORTED_BY: Record<WorstBy, WorstColumnKey> = { mismatch: 'delta', logRatio: 'ratio', kl: 'kl', reverseKl: 'teacher' };

const COLUMNS: readonly WorstColumn[] = [
  { key: 'trajectory', label: 'trajectory', title: 'the trajectory (and iteration) the token is in', numeric: true },
  { key: 'token', label: 'token', title: 'the token’s text (its id on hover)', numeric: false },
  { key: 'turn', label: 'turn', title: 'the turn that generated it', numeric: true },
  { key: 'position', label: 'position', title: 'its index among the turn’s generated tokens', numeric: true },
  { key: 'sampled', label: 'sampled', title: 'log-prob when sampled', numeric: true },
  { key: 'trained', label: 'trained', title: 'log-prob the learner trained on', numeric: true },
  { key: 'delta', label: 'Δ', title: 'training − sampling log-prob before the update (train–inference mismatch); sorts by its size |Δ|', numeric: true },
  { key: 'ratio', label: 'ratio', title: 'π / π_old at the token’s first step; sorts by |log ratio|', numeric: true },
  { key: 'clip', label: 'clip', title: 'which clip held the token', numeric: false },
  { key: 'advantage', label: 'advantage', title: 'the trajectory’s advantage', numeric: true },
  { key: 'kl', label: 'KL', title: 'KL estimate to the reference', numeric: true },
  {
    key: 'teacher',
    label: 'student − teacher',
    title: 'log π_student − log π_teacher: the distillation teacher’s per-token reverse-KL term; sorts by its size',
    numeric: true,
  },
];

/** The columns of a table: the teacher's only where a distillation teacher scored some of its tokens (or it sorts by them). */
function columnsFor(rows: readonly TokenRow[], by: WorstBy, scoped: boolean): WorstColumn[] {
  const teacher = withTeacher(rows, by);
  return COLUMNS.filter((c) => (scoped || c.key !== 'trajectory') && (teacher || c.key !== 'teacher'));
}

const withTeacher = (rows: readonly TokenRow[], by: WorstBy): boolean => by === 'reverseKl' || rows.some((r) => r.reverseKl !== undefined);

function worstRow(
  r: TokenRow,
  where: { trajectoryId: number; iteration?: number },
  token: { text: string; title: string },
  advantage: number,
  teacher: boolean,
): WorstRowView {
  const cell = (key: WorstColumnKey, text: string, sort: number | string | undefined, tone: Tone = 'neutral', title = ''): WorstCell => ({
    key,
    text,
    tone,
    title,
    sort: typeof sort === 'number' && !Number.isFinite(sort) ? undefined : sort,
  });
  return {
    trajectoryId: where.trajectoryId,
    turn: r.turn,
    token: r.token,
    cells: [
      ...(where.iteration !== undefined ? [cell('trajectory', String(where.trajectoryId), where.trajectoryId, 'neutral', `iteration ${where.iteration}`)] : []),
      cell('token', token.text, token.text, 'neutral', token.title),
      cell('turn', String(r.turn), r.turn),
      cell('position', String(r.token), r.token),
      cell('sampled', sig(r.behaviour), r.behaviour),
      cell('trained', sig(r.logp), r.logp),
      cell('delta', sig(r.mismatch), badness(r, 'mismatch')),
      cell('ratio', sig(r.ratio), badness(r, 'logRatio')),
      cell('clip', clipText(r.clip), clipText(r.clip), clipTone(r.clip)),
      cell('advantage', sig(advantage), advantage, advantage > 0 ? 'good' : advantage < 0 ? 'bad' : 'neutral'),
      cell('kl', sig(r.kl), r.kl),
      ...(teacher
        ? [cell('teacher', sig(r.reverseKl), badness(r, 'reverseKl'), 'neutral', r.teacher === undefined ? '' : `teacher log-prob ${sig(r.teacher)}`)]
        : []),
    ],
  };
}

/** The shown trajectory's `limit` worst tokens by `by` (`pieces`: tokenPieces of `rows`); undefined when none has the number. */
export function trajectoryWorst(
  t: Pick<TrajectoryDetail, 'id' | 'advantage'>,
  rows: readonly TokenRow[],
  pieces: readonly string[],
  by: WorstBy,
  limit = 5,
): WorstTable | undefined {
  const index = new Map(rows.map((r, i) => [r, i]));
  const worst = worstRows(rows, by, limit);
  if (worst.length === 0) return undefined;
  return {
    by,
    title: `worst in this trajectory by ${WORST_TEXT[by]}`,
    columns: columnsFor(worst, by, false),
    sortedBy: SORTED_BY[by],
    direction: 'descending',
    rows: worst.map((r) =>
      worstRow(
        r,
        { trajectoryId: t.id },
        { text: quoted(pieces[index.get(r)!] ?? `#${r.id}`), title: `token id ${r.id}` },
        t.advantage,
        withTeacher(worst, by),
      ),
    ),
  };
}

/** The worst tokens of the iteration or run that the host sent (or why there are none). */
export function remoteWorst(iteration: number, scope: WorstScope, by: WorstBy, items: readonly WorstToken[], error?: string): WorstTable {
  const title = `worst of the ${scope === 'iteration' ? `iteration ${iteration}` : 'run'} by ${WORST_TEXT[by]}`;
  return {
    by,
    title,
    columns: columnsFor(items, by, true),
    sortedBy: SORTED_BY[by],
    direction: 'descending',
    rows: items.map((w) =>
      worstRow(
        w,
        { trajectoryId: w.trajectoryId, iteration: w.iteration },
        { text: `#${w.id}`, title: `token id ${w.id}` },
        w.advantage,
        withTeacher(items, by),
      ),
    ),
    ...(error !== undefined ? { note: `could not be read (${oneLine(String(error), 300)})` } : items.length === 0 ? { note: 'none recorded' } : {}),
  };
}

/** Where the inspector's worst tokens come from: the trajectory shown (in the page), or its iteration or run (asked of the host). */
export type WorstSource = 'trajectory' | WorstScope;

/** The scope selector's options. */
export function worstScopes(iteration: number): { readonly value: WorstSource; readonly label: string }[] {
  return [
    { value: 'trajectory', label: 'this trajectory' },
    { value: 'iteration', label: `iteration ${iteration}` },
    { value: 'run', label: 'the whole run' },
  ];
}

/** The measure selector's options (the worst tokens by which number). */
export const WORST_MEASURES: readonly { readonly value: WorstBy; readonly label: string }[] = [
  { value: 'mismatch', label: WORST_TEXT.mismatch },
  { value: 'logRatio', label: WORST_TEXT.logRatio },
  { value: 'kl', label: WORST_TEXT.kl },
];

/** The measures to offer for a trajectory: |student − teacher| too where a distillation teacher scored its tokens. */
export function worstMeasures(teacher: boolean): readonly { readonly value: WorstBy; readonly label: string }[] {
  return teacher ? [...WORST_MEASURES, { value: 'reverseKl', label: WORST_TEXT.reverseKl }] : WORST_MEASURES;
}

/**
 * The table sorted by `column` (a stable sort: ties keep their order; cells without a number last
 * either way). Text sorts by code point, so the order does not depend on the page's locale.
 */
export function sortWorst(table: WorstTable, column: WorstColumnKey, direction: SortDirection): WorstTable {
  const sign = direction === 'ascending' ? 1 : -1;
  const keyOf = (r: WorstRowView): number | string | undefined => r.cells.find((c) => c.key === column)?.sort;
  const rows = table.rows
    .map((r, i) => ({ r, i, k: keyOf(r) }))
    .sort((a, b) => {
      if (a.k === undefined || b.k === undefined) return a.k === b.k ? a.i - b.i : a.k === undefined ? 1 : -1;
      const d = typeof a.k === 'number' && typeof b.k === 'number' ? a.k - b.k : String(a.k) < String(b.k) ? -1 : String(a.k) > String(b.k) ? 1 : 0;
      return d !== 0 ? sign * d : a.i - b.i;
    })
    .map((x) => x.r);
  return { ...table, sortedBy: column, direction, rows };
}

/** What a click on `column`'s header does: the sorted column turns around; another sorts numbers largest first, text A–Z. */
export function nextWorstSort(table: Pick<WorstTable, 'columns' | 'sortedBy' | 'direction'>, column: WorstColumnKey): SortDirection {
  if (column === table.sortedBy) return table.direction === 'descending' ? 'ascending' : 'descending';
  return table.columns.find((c) => c.key === column)?.numeric ? 'descending' : 'ascending';
}
