// Every kind of hostile text the workbench can be handed — by a shared or imported database, a verl
// dump, a workspace task file, a reward's returned dict, a tool, a config, a model folder — and the
// checks every output must pass: no raw control, format (bidi, zero-width) or escape character reaches a
// terminal or a view; Markdown gets no structure from data; notifications get no live link or icon.
// The matrix test (test/integration/hostileMatrix.test.ts) plants each payload in every field it finds.
import MarkdownIt from 'markdown-it';
import { marked } from 'marked';

export interface Payload {
  readonly name: string;
  readonly text: string;
}

const ESC = '\x1b';
const BEL = '\x07';
const ST = `${ESC}\\`;
/** Every C0 control but \n and \t (those two are kept by every view); \r is the overwrite trick. */
const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i))
  .filter((c) => c !== '\n' && c !== '\t')
  .join('');
/** Every C1 control, U+0080–U+009F: 8-bit CSI (U+009B), OSC (U+009D), DCS (U+0090), ST (U+009C), NEL (U+0085). */
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).join('');

export const PAYLOADS: readonly Payload[] = [
  { name: "the issue's sample: RLO, an OSC 0 title, CSI colours", text: `run\u202Eevil${ESC}]0;PWNED${BEL}${ESC}[31mRED${ESC}[0m` },
  { name: 'right-to-left override', text: 'invoice\u202Efdp.exe' },
  { name: 'bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069)', text: 'a\u202Ab\u202Bc\u202Cd\u202De\u202Ef\u2066g\u2067h\u2068i\u2069j' },
  { name: 'direction marks', text: 'x\u200Ey\u200Fz\u061Cw' },
  { name: 'zero-width and invisible format characters', text: 'a\u200Bb\u200Cc\u200Dd\u2060e\u2061f\u2062g\u2063h\u2064i\uFEFFj\u00ADk\u180El' },
  { name: 'tag characters', text: 'flag\u{E0067}\u{E0062}\u{E007F}' },
  { name: 'Hangul fillers', text: 'name\u3164\u115F\u1160\uFFA0' },
  { name: 'line and paragraph separators', text: 'one\u2028two\u2029three' },
  { name: 'every C0 control (NUL, BEL, BS, CR, ESC, …; not \\n or \\t)', text: `c0:${C0}:end` },
  { name: 'carriage return overwrite', text: 'safe text\rEVIL' },
  { name: 'every C1 control (8-bit CSI, OSC, DCS, NEL, …)', text: `c1:${C1}:end` },
  { name: 'CSI sequences: colours, clear screen, cursor moves', text: `${ESC}[2J${ESC}[H${ESC}[31mred${ESC}[0m ${ESC}[1A${ESC}[K${ESC}[?25l hidden cursor` },
  {
    name: 'OSC sequences: window title, hyperlink, clipboard write',
    text: `${ESC}]0;PWNED${BEL}${ESC}]8;;https://evil.example${ST}link${ESC}]8;;${ST}${ESC}]52;c;cm0gLXJmIH4=${BEL}`,
  },
  { name: 'DCS sequences: terminfo query, tmux passthrough', text: `${ESC}P+q544e${ST}${ESC}Ptmux;${ESC}${ESC}]0;x${BEL}${ST}` },
  { name: '8-bit CSI and OSC', text: '\u009B31mred\u009B0m \u009D0;PWNED\u009C' },
  { name: 'Markdown link to a command', text: '[click me](command:workbench.action.terminal.new)' },
  { name: 'Markdown link to a command with arguments and a title', text: 'see [run 1](command:agentRl.deleteRun?%7B%22kind%22%3A%22run%22%7D "Delete") now' },
  { name: 'autolinks', text: '<command:workbench.action.terminal.new> <https://evil.example/x> <mail@evil.example>' },
  { name: 'bare URLs and script URIs', text: 'open https://evil.example/login or www.evil.example, javascript:alert(1), command:agentRl.deleteRun' },
  { name: 'image', text: '![pixel](https://evil.example/p.png)' },
  { name: 'reference link', text: '[x][1]\n\n[1]: command:workbench.action.terminal.new' },
  { name: 'theme icons', text: '$(loading~spin) $(trash) \\$(x) $(alert)' },
  { name: 'raw HTML image with a handler', text: '<img src=x onerror="alert(1)">' },
  { name: 'script element', text: '<script>alert(document.cookie)</script>' },
  { name: 'HTML block breaking out of a pre', text: '</pre></code><iframe src="command:workbench.action.terminal.new"></iframe>' },
  { name: 'heading, list, table and quote after a blank line', text: 'x\n\n# Injected heading\n\n- item\n1. item\n\n| a | b |\n|---|---|\n| 1 | 2 |\n> quote' },
  { name: 'fence breakout', text: '```\n</pre><b>bold</b>\n````\n~~~\n```python' },
  { name: 'backtick runs', text: '` `` ``` `a`b``c' },
  { name: 'entities and quotes', text: '&lt;script&gt; &amp; "double" \'single\' `tick`' },
  { name: 'lone surrogates', text: 'hi\uD800lo \uDFFF mid \uDBFF\uDBFF end\uD83D' },
  { name: 'a 200,000-character line', text: 'A'.repeat(200_000) },
];

/** Short payloads, for outputs that show a field whole (no cut): all of them in one field at once. */
export const COMBINED: Payload = {
  name: 'every payload under 1,000 characters, one per line',
  text: PAYLOADS.filter((p) => p.text.length < 1000)
    .map((p) => p.text)
    .join('\n'),
};
export const LONG: Payload = PAYLOADS.find((p) => p.text.length >= 100_000)!;

/**
 * Characters that must never reach a terminal or a view raw (\n and \t may): controls (Cc, C0 and C1:
 * ESC starts every escape sequence), format characters (Cf: bidi controls, zero-width characters, tag
 * characters), lone surrogates (Cs), line/paragraph separators, the blank Hangul fillers.
 */
const RAW = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029\u115F\u1160\u3164\uFFA0]/u;

/** Where the first raw character is, with the text around it; undefined when there is none. */
export function rawCharacter(text: string): string | undefined {
  const m = RAW.exec(text.replace(/[\n\t]/g, ' '));
  if (!m) return undefined;
  const around = text.slice(Math.max(0, m.index - 40), m.index + 20).replace(/[^\x20-\x7e\u00a0-\u200a\u2010-\u2027\u2030-\u205f\u2070-\uffef]/gu, '·');
  return `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} at ${m.index} (…${around}…)`;
}

/** SQLite keeps text as UTF-8: a lone surrogate is stored, and read back, as U+FFFD (as TextEncoder does). */
export function asStored(text: string): string {
  return text.replace(/\p{Cs}/gu, '\uFFFD'); // with the u flag, \p{Cs} matches lone surrogates only
}

/** VS Code's notification link syntax (parseLinkedText in the workbench). */
export const NOTIFICATION_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;
/** An unescaped theme icon, $(name), as status bars, quick picks and notifications render it. */
export const ICON = /(^|[^\\])\$\([a-z0-9-]+(~[a-z0-9-]+)?\)/gi;

/** VS Code's Markdown preview: markdown-it with raw HTML and linkify on. */
const preview = new MarkdownIt({ html: true, linkify: true });

/** Token types of a Markdown document, nested tokens included, as the preview parses it. */
export function markdownStructure(md: string): string[] {
  const out: string[] = [];
  for (const t of preview.parse(md, {})) {
    out.push(t.type);
    for (const c of t.children ?? []) out.push(c.type);
  }
  return out.filter((t) => t !== 'text' && t !== 'softbreak');
}

/** Markdown as a hover or a tooltip renders it (VS Code's MarkdownString uses marked). */
export function hoverHtml(md: string): string {
  return marked.parse(md, { async: false });
}

/** HTML elements a Markdown rendering may produce from our own markup; anything else came from the data. */
export const DANGEROUS_HTML = /<(a|img|script|iframe|h[1-6]|table|blockquote|ul|ol|li|b|svg|object|embed|style|link|meta|form|input|button)\b/i;

/** The same text with every character but line breaks replaced: what a renderer's structure must not tell apart from `text`. */
export function benign(text: string): string {
  return text.replace(/[^\n]/g, 'x'); // code units: the same length, so the same cut
}
