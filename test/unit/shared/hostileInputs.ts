// The hostile inputs — what a shared or imported database, a workspace config from a repository, or
// plain model output can hold: the matrix's payloads (test/helpers/hostileText.ts) — and the checks
// every renderer's output must pass. The renderer tests (untrustedText.test.ts) and the CLI integration
// test apply them to the renderers one by one; the matrix (test/integration/hostileMatrix.test.ts) to
// every field and every output.
import MarkdownIt from 'markdown-it';
import { marked } from 'marked';
import { PAYLOADS, rawCharacter } from '../../helpers/hostileText';

export interface Hostile {
  readonly name: string;
  readonly text: string;
}

/** Every payload of the hostile-text matrix (test/helpers/hostileText.ts): one list for every test. */
export const HOSTILE: readonly Hostile[] = PAYLOADS;

/** Characters that must never reach a renderer raw (\n and \t may): where the first one is, or undefined. */
export function rawInvisible(text: string): string | undefined {
  return rawCharacter(text);
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
