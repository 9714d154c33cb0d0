// A small Python highlighter: splits code into tokens with a class. The webview builds DOM nodes from
// them with textContent (no HTML strings), so highlighting cannot inject markup.
export type TokenClass = 'kw' | 'str' | 'num' | 'com' | 'fn' | 'txt';
export interface CodeToken {
  readonly text: string;
  readonly cls: TokenClass;
}

const KEYWORDS = new Set(['def', 'return', 'if', 'elif', 'else', 'for', 'while', 'in', 'not', 'and', 'or', 'import', 'from', 'as', 'class', 'try', 'except', 'finally', 'with', 'lambda', 'None', 'True', 'False', 'pass', 'break', 'continue', 'yield', 'raise', 'is', 'global', 'nonlocal', 'assert', 'del']);
const TOKEN = /(#[^\n]*)|("(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?)|(\b\d+(?:\.\d+)?\b)|([A-Za-z_]\w*)|(\s+|[^\w\s"'#]+)/g;

export function highlightLine(line: string): CodeToken[] {
  const out: CodeToken[] = [];
  for (const m of line.matchAll(TOKEN)) {
    const [text, com, str, num, word] = m;
    if (com) out.push({ text, cls: 'com' });
    else if (str) out.push({ text, cls: 'str' });
    else if (num) out.push({ text, cls: 'num' });
    else if (word) out.push({ text, cls: KEYWORDS.has(word) ? 'kw' : line.slice((m.index ?? 0) + word.length).startsWith('(') ? 'fn' : 'txt' });
    else out.push({ text, cls: 'txt' });
  }
  return out;
}
