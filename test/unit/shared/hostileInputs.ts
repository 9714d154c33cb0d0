// One table of hostile inputs — what a shared or imported database, a workspace config from a
// repository, or plain model output can hold — and the checks every renderer's output must pass. The
// renderer tests (untrustedText.test.ts) and the CLI integration test apply it to every place that shows
// stored text.
import MarkdownIt from 'markdown-it';
import { marked } from 'marked';

export interface Hostile {
  readonly name: string;
  readonly text: string;
}

export const HOSTILE: readonly Hostile[] = [
  { name: 'Markdown link to a command', text: '[click me](command:workbench.action.terminal.new)' },
  { name: 'Markdown link to a command with arguments and a title', text: 'see [run 1](command:agentRl.deleteRun?%7B%22kind%22%3A%22run%22%7D "Delete") now' },
  { name: 'autolinks', text: '<command:workbench.action.terminal.new> <https://evil.example/x> <mail@evil.example>' },
  { name: 'bare URLs and script URIs', text: 'open https://evil.example/login or www.evil.example, javascript:alert(1), command:agentRl.deleteRun' },
  { name: 'image', text: '![pixel](https://evil.example/p.png)' },
  { name: 'reference link', text: '[x][1]\n\n[1]: command:workbench.action.terminal.new' },
  { name: 'raw HTML image with a handler', text: '<img src=x onerror="alert(1)">' },
  { name: 'script element', text: '<script>alert(document.cookie)</script>' },
  { name: 'HTML block breaking out of a pre', text: '</pre></code><iframe src="command:workbench.action.terminal.new"></iframe>' },
  { name: 'heading, list and table after a blank line', text: 'x\n\n# Injected heading\n\n- item\n1. item\n\n| a | b |\n|---|---|\n| 1 | 2 |\n> quote' },
  { name: 'fence breakout', text: '```\n</pre><b>bold</b>\n````\n~~~\n```python' },
  { name: 'backtick runs', text: '` `` ``` `a`b``c' },
  { name: 'right-to-left override', text: 'invoice\u202Efdp.exe' },
  { name: 'bidi embeddings and isolates', text: 'a\u202Ab\u202Bc\u202Cd\u202De\u2066f\u2067g\u2068h\u2069i' },
  { name: 'direction marks', text: 'x\u200Ey\u200Fz\u061Cw' },
  { name: 'zero-width and invisible format characters', text: 'a\u200Bb\u200Cc\u200Dd\u2060e\u2061f\u2062g\u2063h\u2064i\uFEFFj\u00ADk' },
  { name: 'tag characters', text: 'flag\u{E0067}\u{E0062}\u{E007F}' },
  { name: 'Hangul fillers', text: 'name\u3164\u115F\u1160\uFFA0' },
  { name: 'terminal escapes', text: '\x1b[2J\x1b[31mred\x1b[0m \x1b]8;;https://evil.example\x07link\x1b]8;;\x07' },
  { name: 'carriage return overwrite and NUL, bell, DEL', text: 'safe text\rEVIL\x00\x07\x7F' },
  { name: 'line and paragraph separators', text: 'one\u2028two\u2029three' },
  { name: 'theme icons', text: '$(loading~spin) $(trash) \\$(x)' },
  { name: 'entities and quotes', text: '&lt;script&gt; &amp; "double" \'single\' `tick`' },
  { name: 'a 200,000-character line', text: 'A'.repeat(200_000) },
];

/** Characters that must never reach a renderer raw (\n and \t may). */
const RAW_INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029\u115F\u1160\u3164\uFFA0]/u;
export function rawInvisible(text: string): string | undefined {
  const m = RAW_INVISIBLE.exec(text.replace(/[\n\t]/g, ' '));
  return m ? `U+${m[0].codePointAt(0)!.toString(16).toUpperCase()} at ${m.index}` : undefined;
}

/** VS Code's notification link syntax (parseLinkedText in the workbench). */
export const NOTIFICATION_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/i;
/** An unescaped theme icon, $(name), as status bars and quick picks render it. */
export const ICON = /(^|[^\\])\$\([a-z0-9-]+(~[a-z0-9-]+)?\)/i;

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
