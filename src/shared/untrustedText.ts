// One rule for text we did not write: model output, observations, task ids and prompts, run names,
// config keys and values, error messages, imported data. Used by the host, the webviews, the backend
// and the CLI (no vscode, no Node built-ins here).
// - Characters that change how the text around them reads without being seen (bidirectional
//   controls such as U+202E, zero-width and other format characters, control characters) are shown
//   as visible markers, ⟨U+202E⟩, as the editor does; newlines and tabs stay.
// - Long text is cut at a configurable length with a note saying how much was cut and how to see all.
// - Each kind of renderer gets it in the only form in which it cannot become markup or a command:
//   HTML escaped, Markdown inside code fences or code spans, notifications and quick picks with link
//   and icon syntax broken, JSON with the invisible characters as \u escapes.
import { count } from './format';

/** Default of agentRl.maxTextLength (characters per field shown; 0 = no limit). */
export const DEFAULT_MAX_TEXT_LENGTH = 10_000; // a few screens; a 200,000-character line took 11 s to show in a tooltip
/** Notifications, quick picks and the status bar are glances: the output channel or a view has the rest. */
export const MESSAGE_MAX_LENGTH = 300;
/** Tree tooltips show at most this much of each field (they are rebuilt on every hover). */
export const TOOLTIP_MAX_LENGTH = 2_000;

// Control (Cc) and format (Cf) characters — bidi embeddings, overrides and isolates, LRM/RLM/ALM,
// zero-width space/joiners, word joiner and invisible operators, BOM, soft hyphen, tag characters —
// lone surrogates (Cs: with the u flag only an unpaired half matches; JSON's \ud800 escapes bring
// them back from a stored record, and a terminal or a view shows each as an unexplained U+FFFD), line
// and paragraph separators, and the Hangul fillers that render as blank letters.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\u115F\u1160\u3164\uFFA0]/gu;

/** ⟨U+202E⟩ for one character. */
function codePointMarker(ch: string): string {
  return `⟨U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`;
}

/** Invisible and direction-changing characters as visible markers; \n and \t kept, \r\n read as \n. */
export function showInvisibles(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(INVISIBLE, (c) => (c === '\n' || c === '\t' ? c : codePointMarker(c)));
}

export interface Clipped {
  readonly text: string;
  /** Characters (UTF-16 code units) left out; 0 when the text was whole. */
  readonly cut: number;
}

/** The first `max` characters (never half of a surrogate pair); max ≤ 0 = no limit. */
export function clip(text: string, max: number): Clipped {
  if (max <= 0 || text.length <= max) return { text, cut: 0 };
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max;
  return { text: text.slice(0, end), cut: text.length - end };
}

/** "… [190,000 more characters not shown; HOW]". */
export function cutNote(cut: number, how?: string): string {
  return `… [${count(cut)} more characters not shown${how ? `; ${how}` : ''}]`;
}

/** Clipped, invisibles marked, with the cut note appended when something was cut. For plain-text views. */
export function visibleText(text: string, max: number, how?: string): string {
  const c = clip(text, max);
  return showInvisibles(c.text) + (c.cut > 0 ? `\n${cutNote(c.cut, how)}` : '');
}

/** One line for labels and table cells: invisibles marked, line breaks as ⏎, cut with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const c = clip(text, max);
  return showInvisibles(c.text).replace(/\n/g, '⏎').replace(/\t/g, ' ') + (c.cut > 0 ? '…' : '');
}

// ── HTML ────────────────────────────────────────────────────────────────────────────────────────────
const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

/** Escapes text for HTML content and quoted attributes. Webviews otherwise set untrusted text with textContent. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ENTITIES[c]!);
}

// ── Markdown ────────────────────────────────────────────────────────────────────────────────────────
const longestRun = (text: string, ch: string): number => Math.max(0, ...[...text.matchAll(new RegExp(`${ch}+`, 'g'))].map((m) => m[0].length));

/** A fenced block longer than any run of backticks in the text, so the text cannot close it. */
export function fence(text: string, lang = ''): string {
  const f = '`'.repeat(Math.max(3, longestRun(text, '`') + 1));
  return `${f}${lang}\n${text}\n${f}`;
}

/**
 * An inline code span of one line (oneLine: cut at `max` with an ellipsis): no link, autolink, image,
 * HTML, emphasis or heading can form inside one. Line breaks become ⏎ (a blank line would end the
 * paragraph and the span with it); the delimiter is longer than any backtick run inside, padded with
 * spaces so a leading or trailing backtick stays text.
 */
export function markdownCode(text: string, max = 500): string {
  const body = oneLine(text, max);
  const d = '`'.repeat(longestRun(body, '`') + 1);
  return `${d} ${body} ${d}`;
}

// ── Notifications, quick picks, status bar ──────────────────────────────────────────────────────────
/**
 * For notification messages, quick-pick items, input boxes and the status bar: one line, invisibles
 * marked, cut to `max`. VS Code turns `[label](https:|command:|file:…)` in a notification into a
 * clickable link and `$(name)` into an icon: the first gets a space before its parenthesis, the second a
 * backslash (VS Code's own icon escape); a bare `command:` URI gets a space after its colon.
 */
export function messageText(text: string, max = MESSAGE_MAX_LENGTH): string {
  return oneLine(text, max)
    .replace(/\]\s*\(/g, '] (')
    .replace(/\\?\$\(/g, '\\$(')
    .replace(/\b(command|javascript|vbscript|vscode|vscode-insiders):(?=\S)/gi, '$1: ');
}

// ── JSON ────────────────────────────────────────────────────────────────────────────────────────────
/** JSON.stringify with every invisible character escaped as \uXXXX: the same data, safe on a terminal. */
export function jsonText(value: unknown, indent?: number): string {
  // Outside strings the only such character is the newline of the indentation; inside, JSON.stringify
  // already escapes the control characters but leaves format characters such as U+202E as they are.
  const escape = (c: string): string => Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');
  return JSON.stringify(value, null, indent).replace(INVISIBLE, (c) => (c === '\n' ? c : escape(c)));
}
