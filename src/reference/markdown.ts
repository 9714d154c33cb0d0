// The Markdown the reference pages are written in: table cells and code spans that any text survives
// (a pipe, a backtick, an HTML tag, an underscore in a name), fenced blocks no line can close early,
// and the heading anchors GitHub makes, so pages can link to each other's sections.

/** Characters that start inline Markdown (or end a table cell); each is written with a backslash. */
const INLINE_SPECIALS = /[\\`*_[\]<>|~&]/g;

/** Plain text as one table cell (or one line of prose): no markup takes effect, no line break ends the row. */
export function cell(text: string): string {
  return text
    .replace(/\s*\r?\n\s*/g, ' ')
    .replace(INLINE_SPECIALS, (c) => `\\${c}`)
    .trim();
}

/** Text as an inline code span that shows it exactly; a pipe is escaped so that it stays inside its table cell. */
export function code(text: string): string {
  const flat = text.replace(/\r?\n/g, ' ');
  const longest = Math.max(0, ...[...flat.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') || (flat.startsWith(' ') && flat.endsWith(' ') && flat.trim() !== '') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`.replace(/\|/g, '\\|');
}

/** A fenced code block around `text`, its fence longer than any run of backticks inside. */
export function codeBlock(text: string, info = 'text'): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${text.replace(/\s+$/, '')}\n${fence}`;
}

/** A table: header cells and rows of cells already escaped (cell(), code()). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.map((c) => (c === '' ? ' ' : c)).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

/**
 * The anchor GitHub gives a heading with this text (github-slugger): lower case, every character but
 * letters, marks, digits, connector punctuation (the underscore), spaces and hyphens dropped, spaces
 * made hyphens. A repeated slug gets -1, -2, … on the page (see uniqueSlugs).
 */
export function githubSlug(headingText: string): string {
  return headingText
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings in order, a repeated one numbered as GitHub numbers it (github-slugger's occurrences). */
export function uniqueSlugs(headingTexts: readonly string[]): string[] {
  const occurrences = new Map<string, number>();
  return headingTexts.map((t) => {
    const base = githubSlug(t);
    let slug = base;
    while (occurrences.has(slug)) {
      const n = (occurrences.get(base) ?? 0) + 1;
      occurrences.set(base, n);
      slug = `${base}-${n}`;
    }
    occurrences.set(slug, 0);
    return slug;
  });
}
