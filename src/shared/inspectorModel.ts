// What the trajectory inspector shows (pure: webview-ui/inspector.ts, tokenHeat.ts and rescoreView.ts
// render it, tests check it in Node): the header's lines and outcome chips, the outcome's details as
// key/value rows, the group's other trajectories, the token heat map's summary chips, colour modes,
// colours and legend, a token's numbers as key/value rows, the worst tokens as tables (token, turn,
// position, sampled, trained, Δ, ratio, clip, advantage, KL: worstTable.ts), and the re-scores. Every number goes
// through format.ts; every stored text through untrustedText.ts (oneLine for a label, a cell or a
// chip; showInvisibles for a block the page cuts at agentRl.maxTextLength), so what the page sets with
// textContent is already inert.
import { baseWeightsShort, type BaseWeights } from './baseWeights';
import { BLOCKED_KINDS, episodeStats } from './episodeStats';
import { absoluteTime, count, duration, fixed, MISSING, sig, signed } from './format';
import type { TrajectoryDetail, TrajectorySummary } from './protocol/backendProtocol';
import { errorHeadline, type Score, type TrajectoryRescores } from './rescore';
import { TOKEN_COLUMNS, type TokenColumn, type TokenRow } from './tokenStatsRows';
import { clip, oneLine, showInvisibles } from './untrustedText';

/** What a value means, for its colour: the page maps each tone to a theme colour. */
export type Tone = 'neutral' | 'good' | 'bad' | 'warn' | 'info' | 'muted';

/** A labelled value shown as a chip (a summary of several facts). */
export interface Chip {
  /** Stable name (the chip's data-key). */
  readonly key: string;
  readonly label: string;
  readonly value: string;
  readonly tone: Tone;
}

/** One row of a key/value list. */
export interface KeyValue {
  readonly key: string;
  readonly label: string;
  readonly value: string;
  readonly tone: Tone;
}

const chip = (key: string, label: string, value: string, tone: Tone = 'neutral'): Chip => ({ key, label, value, tone });
const plural = (n: number, word: string): string => `${count(n)} ${word}${n === 1 ? '' : 's'}`;

// ── Header ──────────────────────────────────────────────────────────────────────────────────────────

export interface InspectorHeader {
  readonly title: string;
  /** Task, run, iteration, group: one line (`.meta.task`). */
  readonly task: string;
  /** Reward, advantage, success and why it ended, the public and private checks, whether it was trained on. */
  readonly outcome: readonly Chip[];
  /** The episode's acceptance metrics (`.episode-stats`), counted the way the trainer counts them. */
  readonly stats: string;
  /** What sampled the tokens and how the model held its base weights (`.meta.compute`); undefined when neither is known. */
  readonly compute?: string;
}

/** Generated tokens of a stored turn (its policy record is untrusted: anything but an array counts 0). */
function sampledCount(policy: unknown): number {
  const tokens = typeof policy === 'object' && policy !== null ? (policy as Record<string, unknown>).tokens : undefined;
  const sampled = typeof tokens === 'object' && tokens !== null ? (tokens as Record<string, unknown>).sampled : undefined;
  return Array.isArray(sampled) ? sampled.length : 0;
}

/** The policy versions that sampled the episode's turns, as "version 4" or "versions 3–4" (stored data: numbers only). */
function versionsText(turns: readonly { readonly policy: unknown }[]): string | undefined {
  const vs = turns
    .map((u) => (typeof u.policy === 'object' && u.policy !== null ? (u.policy as Record<string, unknown>).policyVersion : undefined))
    .filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  if (vs.length === 0) return undefined;
  const lo = Math.min(...vs);
  const hi = Math.max(...vs);
  return lo === hi ? `sampled by policy version ${lo}` : `sampled by policy versions ${lo}–${hi}`;
}

/** "policy: <compute> · base weights 8 bits (Q8_0)": the stored compute string cut to one line, then the base in our words. */
function policyLine(compute: string, baseWeights: BaseWeights | undefined): string {
  const parts = [...(compute !== '' ? [oneLine(compute, 1000)] : []), ...(baseWeights ? [`base weights ${baseWeightsShort(baseWeights)}`] : [])];
  return `policy: ${parts.join(' · ')}`;
}

/**
 * The header of trajectory `t`; `compute` is its run's stored compute string ('' if unknown), and
 * `baseWeights` how the run's model held its base weights (validated to one of three names; absent: not
 * recorded), said in our own words after the compute string.
 */
export function inspectorHeader(t: TrajectoryDetail, compute: string, baseWeights?: BaseWeights): InspectorHeader {
  const stats = episodeStats(
    t.turnList.map((u) => ({
      actionText: u.actionText,
      action: u.action,
      observationText: u.observationText,
      observation: u.observation,
      sampledTokens: sampledCount(u.policy),
    })),
  );
  const toolsUsed = stats.toolCalls > 0 || stats.envSteps === 0;
  const blocked = BLOCKED_KINDS.filter((k) => stats.blocked[k] > 0).map((k) => `${count(stats.blocked[k])} ${k}`);
  const versions = versionsText(t.turnList);
  const pass = (ok: boolean): string => (ok ? 'pass' : 'fail');
  return {
    title: `Trajectory ${t.id}`,
    task: `task ${oneLine(String(t.taskId), 500)} · run ${t.runId} · iteration ${t.iteration} · group ${t.group} #${t.indexInGroup}`,
    outcome: [
      chip('reward', 'reward', fixed(t.reward, 2)),
      chip('advantage', 'advantage', sig(t.advantage), typeof t.advantage === 'number' && t.advantage > 0 ? 'good' : t.advantage < 0 ? 'bad' : 'neutral'),
      chip('outcome', t.success ? 'success' : 'failure', oneLine(String(t.termination), 200), t.success ? 'good' : 'bad'),
      chip('public', 'public', pass(t.publicPass), t.publicPass ? 'good' : 'bad'),
      chip('private', 'private', pass(t.privatePass), t.privatePass ? 'good' : 'bad'),
      ...(t.excluded ? [chip('excluded', 'left out of the update', oneLine(String(t.excluded), 100), 'warn')] : []),
    ],
    stats: [
      plural(stats.turns, 'turn'),
      ...(stats.tokens > 0 ? [`${count(stats.tokens)} generated tokens`] : []),
      // an OpenEnv episode's turns are its server's steps: counted as such, and no tool counts beside them
      ...(stats.envSteps > 0 ? [`${count(stats.envSteps)} environment steps`] : []),
      ...(toolsUsed ? [`${count(stats.toolCalls)} tool calls`] : []),
      ...(stats.toolMs > 0 ? [`${duration(stats.toolMs)} in tools`] : []),
      `${count(stats.formatErrors)} format errors`,
      ...(toolsUsed ? [`${count(stats.badToolCalls)} bad tool calls`] : []),
      `${count(stats.repeatedActions)} repeated actions`,
      `blocked by the sandbox: ${blocked.length > 0 ? blocked.join(', ') : 'nothing'}`,
      ...(versions !== undefined ? [versions] : []),
    ].join(' · '),
    ...(compute !== '' || baseWeights ? { compute: policyLine(compute, baseWeights) } : {}),
  };
}

// ── The outcome's details ───────────────────────────────────────────────────────────────────────────

export interface DetailRow {
  /** The detail's key, one line (the row's data-key). */
  readonly key: string;
  /** "key: ". */
  readonly label: string;
  /** The whole value, invisibles marked (the page cuts it at agentRl.maxTextLength). */
  readonly value: string;
  /** A multi-line string: shown as a block. */
  readonly block: boolean;
}

export interface OutcomeDetails {
  readonly rows: readonly DetailRow[];
  /** The reward's extras that are not numbers, when its metrics are shown (one line of `key value`s). */
  readonly otherExtras?: string;
}

const valueText = (x: unknown): string => (typeof x === 'number' ? sig(x) : typeof x === 'string' ? x : (JSON.stringify(x) ?? String(x)));

/**
 * The outcome's details: for an imported verl sample its prompt, ground truth and the reward's extra
 * keys as metrics; for our environments the verifier's notes. Undefined when there are none.
 */
export function outcomeDetails(details: unknown): OutcomeDetails | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const d = details as Record<string, unknown>;
  const rows: DetailRow[] = [];
  for (const [k, v] of Object.entries(d)) {
    if (k === 'extras' && 'metrics' in d) continue; // the numeric extras are the metrics; the rest is shown below
    const text =
      k === 'metrics' && typeof v === 'object' && v !== null
        ? Object.entries(v)
            .map(([m, x]) => `${m} ${valueText(x)}`)
            .join(' · ')
        : valueText(v);
    rows.push({ key: oneLine(k, 100), label: `${oneLine(k, 100)}: `, value: showInvisibles(text), block: typeof v === 'string' && v.includes('\n') });
  }
  const extras = d.extras;
  const other =
    typeof extras === 'object' && extras !== null && 'metrics' in d
      ? Object.entries(extras).filter(([, x]) => typeof x !== 'number' && typeof x !== 'boolean')
      : [];
  return {
    rows,
    ...(other.length ? { otherExtras: showInvisibles(`other extras: ${other.map(([k, x]) => `${k} ${JSON.stringify(x) ?? String(x)}`).join(' · ')}`) } : {}),
  };
}

// ── The group ───────────────────────────────────────────────────────────────────────────────────────

export interface SiblingRow {
  readonly id: number;
  readonly current: boolean;
  readonly text: string;
  readonly tone: Tone;
}

/** The group's trajectories, the shown one marked. */
export function groupRows(currentId: number, group: readonly TrajectorySummary[]): SiblingRow[] {
  return group.map((g) => ({
    id: g.id,
    current: g.id === currentId,
    text: `${g.success ? '✓' : '✗'} #${g.indexInGroup} reward ${fixed(g.reward, 2)} adv ${sig(g.advantage)} · ${plural(g.turns, 'turn')}`,
    tone: g.success ? 'good' : 'bad',
  }));
}

// ── Token heat map ──────────────────────────────────────────────────────────────────────────────────

/**
 * Each row's token as text, invisibles marked: a whole action's text (the table, a scored candidate),
 * the piece the run's tokenizer decoded, the action's character when the turn's tokens are its
 * characters, else `#id`.
 */
export function tokenPieces(t: Pick<TrajectoryDetail, 'turnList' | 'pieces'>, rows: readonly TokenRow[]): string[] {
  const perTurn = new Map<number, number>();
  for (const r of rows) perTurn.set(r.turn, (perTurn.get(r.turn) ?? 0) + 1);
  const chars = new Map<number, string[]>();
  return rows.map((r) => {
    const text = String(t.turnList[r.turn]?.actionText ?? '');
    if (r.action) return showInvisibles(clip(text, 200).text);
    const p: unknown = t.pieces?.[r.turn]?.[r.token];
    if (typeof p === 'string') return showInvisibles(p);
    if (!chars.has(r.turn)) chars.set(r.turn, [...text]);
    const c = chars.get(r.turn)!;
    return c.length === perTurn.get(r.turn) ? showInvisibles(c[r.token] ?? '') : `#${r.id}`;
  });
}

/** A distillation teacher's line: how many tokens it scored and their mean student − teacher (none without a teacher). */
function teacherChips(rows: readonly TokenRow[]): Chip[] {
  const values = rows.flatMap((r) => (r.reverseKl === undefined ? [] : [r.reverseKl]));
  if (values.length === 0) return [];
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return [
    chip(
      'teacher',
      'teacher',
      `scored ${plural(values.length, 'token')}: mean student − teacher log-prob ${sig(mean)} nats (the reverse KL the update descended)`,
    ),
  ];
}

/** The token summary: how many tokens, what the learner's numbers are and what they mean. */
export function tokenSummary(t: Pick<TrajectoryDetail, 'tokenStats' | 'excluded'>, rows: readonly TokenRow[]): Chip[] {
  const s = t.tokenStats;
  const generated = chip('generated', 'generated tokens', count(rows.length));
  if (!s)
    return [
      generated,
      chip(
        'learner',
        'learner numbers',
        `none stored (not trained on: ${oneLine(String(t.excluded ?? 'an evaluation, or a run stored before they were recorded'), 200)})`,
        'muted',
      ),
    ];
  const steps = typeof s.stepsBefore === 'number' ? s.stepsBefore : 0;
  const lag = typeof s.lag === 'number' ? s.lag : 0;
  return [
    generated,
    chip('trained', "with the learner's numbers", count(rows.filter((r) => r.trained).length)),
    chip(
      'firstPass',
      'first pass',
      steps === 0 ? 'before any step of its update' : `after ${plural(steps, 'step')} of its update`,
      steps === 0 ? 'neutral' : 'warn',
    ),
    ...(s.before
      ? []
      : [
          chip(
            'before',
            'training log-prob before the update',
            s.old === 'behaviour' && steps > 0 ? 'unknown (algorithm.oldLogprobs "recompute" records it for every token)' : 'unknown: a supervised objective',
            'muted',
          ),
        ]),
    chip('old', 'π_old', s.old === 'recomputed' ? 'recomputed before the update' : 'the behaviour log-probs'),
    ...teacherChips(rows),
    ...(lag > 0
      ? [chip('lag', 'sampled', `${plural(lag, 'policy version')} before the update: training − sampling log-prob is lag, not a mismatch`, 'warn')]
      : []),
    chip('epoch', 'numbers from', "the first epoch's pass", 'muted'),
  ];
}

/** What a colour mode shows: a column, or the trajectory's advantage. */
export type HeatMode = TokenColumn | 'advantage';
export const HEAT_MODES: readonly HeatMode[] = ['behaviour', 'before', 'mismatch', 'ratio', 'clip', 'advantage', 'entropy', 'kl', 'reverseKl', 'teacher'];
/** The modes only a trajectory a distillation teacher scored has (offered only there). */
const TEACHER_MODES: ReadonlySet<HeatMode> = new Set(['reverseKl', 'teacher']);
const MODE_TEXT: Record<HeatMode, string> = { ...TOKEN_COLUMNS, advantage: 'the trajectory’s advantage' };

/** Whether a distillation teacher scored these tokens (method distill, or GRPO with a teacher term). */
export const teacherScored = (rows: readonly TokenRow[]): boolean => rows.some((r) => r.reverseKl !== undefined);

/**
 * The colour modes to offer: without the learner's numbers only the sampling log-prob has values; the
 * teacher's two only where a teacher scored the tokens (a run without one would show them empty).
 */
export function heatModes(learnerNumbers: boolean, teacher = false): { readonly value: HeatMode; readonly label: string; readonly disabled: boolean }[] {
  return HEAT_MODES.filter((m) => teacher || !TEACHER_MODES.has(m)).map((m) => ({
    value: m,
    label: MODE_TEXT[m],
    disabled: !learnerNumbers && m !== 'behaviour',
  }));
}

/**
 * The mode shown until one is chosen: student − teacher where a teacher scored the tokens (the signal
 * distillation trains on), else the mismatch where the trajectory has it, else what the clip acted on.
 * A teacher's mode chosen on another trajectory does not carry to one without a teacher.
 */
export function defaultHeatMode(t: Pick<TrajectoryDetail, 'tokenStats'>, rows: readonly TokenRow[], chosen: HeatMode | undefined): HeatMode {
  if (!t.tokenStats) return 'behaviour';
  const teacher = teacherScored(rows);
  if (chosen !== undefined && (teacher || !TEACHER_MODES.has(chosen))) return chosen;
  return teacher ? 'reverseKl' : rows.some((r) => r.mismatch !== undefined) ? 'mismatch' : 'ratio';
}

const CLIP_SIDES = ['none', 'low', 'high', 'dual'] as const;

/** A token's value in a mode (undefined: unknown). */
function heatValue(r: TokenRow, mode: HeatMode, advantage: number): number | undefined {
  switch (mode) {
    case 'ratio':
      return r.ratio === undefined || r.ratio <= 0 ? undefined : Math.log(r.ratio);
    case 'clip':
      return r.clip === undefined ? undefined : CLIP_SIDES.indexOf(r.clip);
    case 'advantage':
      return r.trained && Number.isFinite(advantage) ? advantage : undefined;
    default:
      return r[mode];
  }
}

// the theme's chart colours (webview CSS variables), mixed with transparency by how hot a token is
const themed =
  (name: string) =>
  (a: number): string =>
    `color-mix(in srgb, var(--vscode-charts-${name}) ${Math.round(a * 100)}%, transparent)`;
const RED = themed('red');
const BLUE = themed('blue');
const CLIP_COLOURS = ['', BLUE(0.6), RED(0.6), themed('purple')(0.6)];

/**
 * Every token's background in a mode ('' = none) and the legend: red for high or positive, blue for
 * negative; log-probs hot where unlikely; the clip by side. The scale's bound is the trajectory's largest |value|.
 */
export function heatPaint(rows: readonly TokenRow[], mode: HeatMode, advantage: number): { readonly colours: string[]; readonly legend: string } {
  const values = rows.map((r) => heatValue(r, mode, advantage));
  const bound = values.reduce<number>((m, v) => (v === undefined ? m : Math.max(m, Math.abs(v))), 0);
  const alpha = (x: number): number => Math.max(0, Math.min(1, x)) * 0.75;
  const colours = values.map((v) => {
    if (v === undefined) return '';
    if (mode === 'behaviour' || mode === 'before' || mode === 'teacher') return RED(alpha(1 - Math.exp(v)));
    if (mode === 'clip') return CLIP_COLOURS[v] ?? '';
    const x = bound > 0 ? v / bound : 0;
    return x >= 0 ? RED(alpha(x)) : BLUE(alpha(-x));
  });
  const legend = !values.some((v) => v !== undefined)
    ? ' · no token of this trajectory has this number'
    : mode === 'behaviour' || mode === 'before'
      ? ' · red: unlikely (1 − p)'
      : mode === 'teacher'
        ? ' · red: unlikely to the teacher (1 − p_teacher)'
        : mode === 'clip'
          ? ' · blue: low clip, red: high clip, purple: dual clip'
          : mode === 'reverseKl'
            ? ` · red: the student likelier than the teacher (pushed down), blue: the teacher likelier (pushed up), full colour at ±${sig(bound)} nats`
            : ` · red: positive, blue: negative, full colour at ±${sig(bound)}${mode === 'ratio' ? ' (log ratio)' : ''}`;
  return { colours, legend };
}

/** A turn's line above its tokens: context and generated counts. */
export function turnTokensSummary(policy: unknown, rows: readonly TokenRow[]): string {
  const tokens = typeof policy === 'object' && policy !== null ? (policy as Record<string, unknown>).tokens : undefined;
  const context =
    typeof tokens === 'object' && tokens !== null && Array.isArray((tokens as Record<string, unknown>).context)
      ? (tokens as { context: unknown[] }).context.length
      : 0;
  return `tokens: ${count(context)} context (mask 0), ${count(rows.length)} generated, ${count(rows.filter((r) => r.trained).length)} with the learner's numbers`;
}

/** A token's clip as a cell or a row says it, and its tone (worstTable.ts shows it too). */
export const clipText = (c: TokenRow['clip']): string => (c === undefined ? MISSING : c === 'none' ? 'no' : c);
export const clipTone = (c: TokenRow['clip']): Tone => (c === 'low' ? 'info' : c === 'high' ? 'bad' : c === 'dual' ? 'warn' : 'neutral');
/** A token's text in quotes, one line. */
export const quoted = (piece: string): string => oneLine(JSON.stringify(piece), 300);

/** Every number of a token, one key/value row each. */
export function tokenDetails(r: TokenRow, piece: string, advantage: number): KeyValue[] {
  const row = (key: string, label: string, value: string, tone: Tone = 'neutral'): KeyValue => ({ key, label, value, tone });
  const head = [row('token', 'token', quoted(piece)), row('id', 'id', String(r.id)), row('sampled', 'log-prob when sampled', sig(r.behaviour))];
  if (!r.trained) return [...head, row('trained', 'trained', 'no (loss mask 0, or past the context window)', 'muted')];
  return [
    ...head,
    row('before', 'before the update', sig(r.before)),
    row('mismatch', 'mismatch (Δ)', sig(r.mismatch)),
    row('logp', 'trained on', sig(r.logp)),
    row('ratio', 'ratio π/π_old', sig(r.ratio)),
    row('clip', 'clipped', clipText(r.clip), clipTone(r.clip)),
    row('advantage', 'advantage', sig(advantage), advantage > 0 ? 'good' : advantage < 0 ? 'bad' : 'neutral'),
    row('entropy', 'entropy', sig(r.entropy)),
    row('kl', 'KL', sig(r.kl)),
    ...(r.teacher !== undefined || r.reverseKl !== undefined
      ? [row('teacher', 'teacher log-prob', sig(r.teacher)), row('reverseKl', 'student − teacher', sig(r.reverseKl), teacherTone(r.reverseKl))]
      : []),
  ];
}

/** student − teacher: positive (the teacher finds the token less likely: pushed down) bad, negative good. */
const teacherTone = (x: number | undefined): Tone => (x === undefined || x === 0 ? 'neutral' : x > 0 ? 'bad' : 'good');

/** The same numbers as one tooltip: a line per row. */
export function tokenDetailsTitle(rows: readonly KeyValue[]): string {
  return rows.map((r) => `${r.label}: ${r.value}`).join('\n');
}

// ── Re-scores ───────────────────────────────────────────────────────────────────────────────────────

export interface RescoreView {
  readonly title: string;
  readonly rescores: readonly { readonly id: number; readonly text: string; readonly tone: Tone }[];
  readonly edits: readonly { readonly id: number; readonly score: string; readonly tone: Tone; readonly text: string }[];
}

const f3 = (x: number): string => fixed(x, 3, '?');
/** A stored time: local "2025-01-02 13:45:07" when it is an ISO time, else the stored text on one line. */
const when = (x: unknown): string => (typeof x === 'string' && /^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(x) ? absoluteTime(x) : oneLine(String(x), 30));

function scoreText(s: Score | null, error: string | null, stored: Score): { text: string; tone: Tone } {
  if (!s) return { text: `not scored: ${oneLine(errorHeadline(String(error ?? '')), 300)}`, tone: 'warn' };
  const flip = s.success === stored.success ? '' : s.success ? ' · now a success' : ' · now a failure';
  return {
    text: `reward ${f3(s.reward)} (${signed(s.reward - stored.reward, f3, '?')} vs stored)${flip} · public ${s.publicPass ? 'pass' : 'fail'} · private ${s.privatePass ? 'pass' : 'fail'}`,
    tone: s.success === stored.success ? 'neutral' : s.success ? 'good' : 'bad',
  };
}

/** A trajectory's stored re-scores and scored edits beside its stored reward; undefined when it has neither. */
export function rescoreView(r: TrajectoryRescores | undefined, stored: Score): RescoreView | undefined {
  if (!r || (r.rescores.length === 0 && r.edits.length === 0)) return undefined;
  return {
    title: `re-scores (${count(r.rescores.length)}) and edits (${count(r.edits.length)}) — stored reward ${f3(stored.reward)}`,
    rescores: r.rescores.map((x) => {
      const s = scoreText(x.score, x.error, stored);
      return { id: x.rescoreId, text: `rescore ${x.rescoreId} with ${oneLine(String(x.reward.label), 100)} (${when(x.createdAt)}): ${s.text}`, tone: s.tone };
    }),
    edits: r.edits.map((e) => {
      const s = scoreText(e.score, e.error, stored);
      const c = clip(String(e.actionText), 2000);
      return {
        id: e.id,
        score: `edit ${e.id} of turn ${e.turnIndex} with ${oneLine(String(e.reward.label), 100)}: ${s.text}`,
        tone: s.tone,
        text: showInvisibles(c.text) + (c.cut > 0 ? `… (${count(c.cut)} more characters)` : ''),
      };
    }),
  };
}
