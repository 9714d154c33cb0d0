// Python highlighting for the inspector, by highlight.js (its core and its Python grammar only, bundled
// into the webview): triple-quoted strings over several lines, f-strings and their {expressions},
// prefixes such as rb'' and decorators as Python reads them. We never take highlight.js's HTML
// (`result.value`): we read the token tree it builds beside it (its emitter's root: raw text leaves
// under scope nodes) and turn it into lines of {text, cls}; the webview makes one span per token, with
// a class from the fixed set below and the text set through textContent after showInvisibles. Model
// text therefore never becomes markup or a class name, whatever highlight.js does with it.
// Everything here is pure (no DOM), so the unit tests run it in Node.
import hljsCore from 'highlight.js/lib/core';
import python from 'highlight.js/lib/languages/python';

/** The classes media/inspector.css colours (from the theme's variables); `txt` is not coloured. */
export const TOKEN_CLASSES = ['kw', 'str', 'num', 'com', 'fn', 'cls', 'txt'] as const;
export type TokenClass = (typeof TOKEN_CLASSES)[number];
export interface CodeToken {
  readonly text: string;
  readonly cls: TokenClass;
}

// highlight.js's scope names (its "scope reference") as the Python grammar emits them. A scope not
// listed (params, subst — an f-string's {expression} —, anything new) is plain text: the innermost
// scope decides, so the expression inside an f-string is not coloured as a string.
const CLASS_OF_SCOPE: Readonly<Record<string, TokenClass>> = {
  keyword: 'kw',
  literal: 'kw', // None, True, False
  'variable.language': 'kw', // self
  meta: 'kw', // decorators, the >>> prompt
  built_in: 'fn',
  type: 'fn',
  'title.function': 'fn',
  'title.class': 'cls',
  'title.class.inherited': 'cls',
  string: 'str',
  number: 'num',
  comment: 'com',
  doctag: 'com',
};

const hljs = hljsCore.newInstance();
hljs.registerLanguage('python', python);

/** A node of highlight.js's token tree (TokenTree in its core: a string is a leaf of raw source text). */
type TreeNode = string | { readonly scope?: unknown; readonly children: readonly unknown[] };
const isTreeNode = (n: unknown): n is TreeNode =>
  typeof n === 'string' || (typeof n === 'object' && n !== null && Array.isArray((n as { children?: unknown }).children));

/**
 * The leaves of the tree in source order, each with the class of its innermost scope; undefined when
 * the tree is not the shape we know (a future highlight.js), so the caller shows the code plain.
 * Iterative: a hostile f-string nested 100,000 deep must not overflow the stack.
 */
function leaves(root: unknown): CodeToken[] | undefined {
  if (!isTreeNode(root)) return undefined;
  const out: CodeToken[] = [];
  const stack: { node: TreeNode; cls: TokenClass }[] = [{ node: root, cls: 'txt' }];
  while (stack.length > 0) {
    const { node, cls } = stack.pop()!;
    if (typeof node === 'string') {
      out.push({ text: node, cls });
      continue;
    }
    // own keys only: a scope named like an Object.prototype member (toString) is plain text too
    const own = typeof node.scope !== 'string' ? cls : Object.hasOwn(CLASS_OF_SCOPE, node.scope) ? CLASS_OF_SCOPE[node.scope]! : 'txt';
    for (let i = node.children.length - 1; i >= 0; i--) {
      const child = node.children[i];
      if (!isTreeNode(child)) return undefined;
      stack.push({ node: child, cls: own });
    }
  }
  return out;
}

/** highlight.js's tokens for the code, or undefined when it failed or its tokens are not exactly the code. */
function tokens(code: string): CodeToken[] | undefined {
  let tree: unknown;
  try {
    const result = hljs.highlight(code, { language: 'python', ignoreIllegals: true });
    if (result.illegal || result.errorRaised) return undefined;
    tree = (result._emitter as unknown as { root?: unknown }).root;
  } catch {
    return undefined;
  }
  const list = leaves(tree);
  // Lossless or nothing: the tokens must be the code itself, every character once, in order.
  if (!list || list.reduce((n, t) => n + t.text.length, 0) !== code.length || list.map((t) => t.text).join('') !== code) return undefined;
  return list;
}

/**
 * The code's lines (split at \n, as many as `code.split('\n')`), each a list of tokens whose texts
 * joined are that line; adjacent tokens of one class are merged, and no token boundary falls inside a
 * surrogate pair (a marker such as ⟨U+E0067⟩ needs the whole character). Code highlight.js cannot
 * tokenize exactly comes back plain, one `txt` token per line.
 */
export function highlightPython(code: string): CodeToken[][] {
  const flat = tokens(code) ?? [{ text: code, cls: 'txt' as const }];
  const lines: CodeToken[][] = [[]];
  const push = (text: string, cls: TokenClass): void => {
    if (text === '') return;
    const line = lines[lines.length - 1]!;
    const last = line[line.length - 1];
    if (last && last.cls === cls) line[line.length - 1] = { text: last.text + text, cls };
    else line.push({ text, cls });
  };
  for (let i = 0; i < flat.length; i++) {
    const { cls } = flat[i]!;
    let { text } = flat[i]!;
    // a high surrogate at the end goes with the low surrogate that starts the next token
    const next = flat[i + 1];
    if (next && /[\uD800-\uDBFF]$/.test(text) && /^[\uDC00-\uDFFF]/.test(next.text)) {
      flat[i + 1] = { text: text.slice(-1) + next.text, cls: next.cls };
      text = text.slice(0, -1);
    }
    text.split('\n').forEach((part, j) => {
      if (j > 0) lines.push([]);
      push(part, cls);
    });
  }
  return lines;
}
