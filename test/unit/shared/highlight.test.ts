// The inspector's Python highlighting (src/shared/highlight.ts, highlight.js underneath): Python as
// Python — triple-quoted strings over several lines, f-strings, quotes inside comments — and model text
// that stays text: the tokens are the code itself, every character once and in order, each with a class
// from the fixed set, so the webview's one span per token (text through showInvisibles and textContent)
// is the only element made and shows what the rest of the inspector shows.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { highlightPython, TOKEN_CLASSES, type CodeToken, type TokenClass } from '../../../src/shared/highlight';
import { showInvisibles } from '../../../src/shared/untrustedText';
import { HOSTILE, rawInvisible } from './hostileInputs';

/** The line's text per class, e.g. { str: ['"""doc'], kw: ['return'] }. */
function byClass(line: readonly CodeToken[]): Partial<Record<TokenClass, string[]>> {
  const out: Partial<Record<TokenClass, string[]>> = {};
  for (const t of line) (out[t.cls] ??= []).push(t.text);
  return out;
}

/** What every result must be: the code's lines, nothing added or left out, classes from the fixed set. */
function assertExact(code: string, lines: CodeToken[][], where: string): void {
  const want = code.split('\n');
  assert.equal(lines.length, want.length, `${where}: one list per line`);
  assert.deepEqual(
    lines.map((l) => l.map((t) => t.text).join('')),
    want,
    `${where}: the tokens are the code`,
  );
  for (const [i, line] of lines.entries()) {
    // a pair (high then low surrogate) is never cut between two tokens; a lone surrogate may end or start one
    line.forEach((t, k) => {
      const next = line[k + 1];
      assert.ok(
        !(next && /[\uD800-\uDBFF]$/.test(t.text) && /^[\uDC00-\uDFFF]/.test(next.text)),
        `${where}: line ${i + 1}: a surrogate pair cut between tokens`,
      );
    });
    for (const t of line) {
      assert.ok((TOKEN_CLASSES as readonly string[]).includes(t.cls), `${where}: line ${i + 1}: class ${JSON.stringify(t.cls)}`);
      assert.notEqual(t.text, '', `${where}: line ${i + 1}: an empty token`);
      assert.ok(!t.text.includes('\n'), `${where}: line ${i + 1}: a token across lines`);
    }
    // shown token by token, the line reads as showInvisibles shows it whole (the rest of the inspector)
    assert.equal(line.map((t) => showInvisibles(t.text)).join(''), showInvisibles(want[i]!), `${where}: line ${i + 1} shown`);
  }
}

describe('the inspector highlights Python as Python', () => {
  it('a triple-quoted string in double quotes is one string over its lines, code after it is code again', () => {
    const code = 'def f(x):\n    """Doc with "quotes" and \'x\'\n    # not a comment\n    return not code\n    """\n    return x  # done';
    const lines = highlightPython(code);
    assertExact(code, lines, 'docstring');
    assert.deepEqual(byClass(lines[0]!).kw, ['def']);
    assert.deepEqual(byClass(lines[0]!).fn, ['f']);
    assert.deepEqual(
      lines[1]!.map((t) => t.cls),
      ['txt', 'str'],
    );
    assert.equal(lines[1]![1]!.text, '"""Doc with "quotes" and \'x\'');
    for (const i of [2, 3]) assert.deepEqual(lines[i], [{ text: code.split('\n')[i]!, cls: 'str' }], `line ${i + 1} is inside the string`);
    assert.deepEqual(byClass(lines[4]!).str, ['    """']);
    assert.deepEqual(byClass(lines[5]!), { txt: ['    ', ' x  '], kw: ['return'], com: ['# done'] });
  });

  it('a triple-quoted string in single quotes, with a prefix, over lines', () => {
    const code = "s = r'''a\\n\n'b' \"c\" # d\n'''\nt = 1";
    const lines = highlightPython(code);
    assertExact(code, lines, "'''");
    assert.deepEqual(byClass(lines[0]!).str, ["r'''a\\n"]);
    assert.deepEqual(lines[1], [{ text: '\'b\' "c" # d', cls: 'str' }]);
    assert.deepEqual(lines[2], [{ text: "'''", cls: 'str' }]);
    assert.deepEqual(byClass(lines[3]!), { txt: ['t = '], num: ['1'] });
  });

  it('an f-string: the text is a string, the {expression} is code', () => {
    const code = 'msg = f"{name!r} has {n + 1} items"';
    const [line] = highlightPython(code);
    assertExact(code, [line!], 'f-string');
    assert.deepEqual(byClass(line!).str, ['f"', ' has ', ' items"']);
    assert.ok(byClass(line!).txt!.includes('{name!r}'), JSON.stringify(line));
    assert.deepEqual(byClass(line!).num, ['1']);
    const multi = 'f"""a {b}\nc"""';
    const lines = highlightPython(multi);
    assertExact(multi, lines, 'triple-quoted f-string');
    assert.deepEqual(lines[1], [{ text: 'c"""', cls: 'str' }]);
  });

  it('a comment with quotes in it stays a comment and opens no string', () => {
    const code = 'x = 1  # it\'s "quoted" and """triple\ny = 2';
    const lines = highlightPython(code);
    assertExact(code, lines, 'comment');
    assert.deepEqual(byClass(lines[0]!).com, ['# it\'s "quoted" and """triple']);
    assert.deepEqual(byClass(lines[1]!), { txt: ['y = '], num: ['2'] });
  });

  it('keywords, literals, built-ins, numbers, classes and decorators', () => {
    const code = '@cache\nclass A(Base):\n    def m(self, n=0x1F):\n        return print(None, self.k, len([1.5e3]))';
    const lines = highlightPython(code);
    assertExact(code, lines, 'kinds');
    assert.deepEqual(byClass(lines[0]!).kw, ['@cache']);
    assert.deepEqual(byClass(lines[1]!).cls, ['A', 'Base']);
    assert.deepEqual(byClass(lines[2]!).fn, ['m']);
    assert.deepEqual(byClass(lines[2]!).kw, ['def']);
    assert.deepEqual(byClass(lines[2]!).num, ['0x1F']);
    assert.deepEqual(byClass(lines[3]!).fn, ['print', 'len']);
    assert.deepEqual(byClass(lines[3]!).kw, ['return', 'None', 'self']);
    assert.deepEqual(byClass(lines[3]!).num, ['1.5e3']);
  });

  it('keeps the lines the inspector numbers: empty lines, \\r\\n, a trailing newline', () => {
    for (const code of ['', '\n', 'a\n\nb', 'a = 1\r\nb = 2\r\n', '"""\n\n"""']) assertExact(code, highlightPython(code), JSON.stringify(code));
    assert.deepEqual(highlightPython(''), [[]]);
  });
});

describe('model text in the code stays text', () => {
  const HOSTILE_CODE: readonly { name: string; text: string }[] = [
    ...HOSTILE,
    { name: 'markup closing the span, in code', text: 'x = 1</span><script>alert(1)</script><span class="kw">' },
    {
      name: 'markup in a string and a comment',
      text: "s = \"</span><script>alert(1)</script>\"  # <img src=x onerror=alert(1)>\n'''</pre><iframe srcdoc=\"<script>x</script>\">'''",
    },
    {
      name: 'right-to-left override in a string and a comment',
      text: 'access = "user\u202E \u2066# admin\u2069 \u2066"  # ok\u202E\nif access != "none":\n    pass',
    },
    { name: 'terminal escapes in code', text: 'print("\x1b[2J\x1b[31mred\x1b[0m")\x1b]8;;https://evil.example\x07' },
    { name: 'astral format characters and emoji between tokens', text: '\u{E0067}x\u{E0062} = "\u{1F600}"\u{E007F}# \u{1F600}\u{E0067}' },
    { name: 'a 200,000-character line of code', text: `x = "${'a'.repeat(100_000)}" + ${'b'.repeat(100_000)}` },
    { name: 'an unterminated triple-quoted string of 200,000 characters', text: `"""${'q\n'.repeat(100_000)}` },
    { name: 'class-like text everywhere', text: 'kw = str(num) # com fn cls txt\n"tok kw hl"' },
  ];

  for (const h of HOSTILE_CODE) {
    it(h.name, () => {
      const started = Date.now();
      const lines = highlightPython(h.text);
      assert.ok(Date.now() - started < 5_000, `${h.name}: ${Date.now() - started} ms`);
      assertExact(h.text, lines, h.name);
      for (const line of lines)
        for (const t of line) assert.equal(rawInvisible(showInvisibles(t.text)), undefined, `${h.name}: a raw invisible character shown`);
    });
  }

  it('what highlight.js cannot finish comes back plain: f-strings nested 20,000 deep', () => {
    // highlight.js's HTML renderer recurses once per level and runs out of stack (its safe mode then
    // reports errorRaised); the tree walk here is iterative, but a failed highlight is shown plain.
    const code = 'f"{'.repeat(20_000);
    const lines = highlightPython(code);
    assertExact(code, lines, 'nested');
    assert.deepEqual(lines, [[{ text: code, cls: 'txt' }]]);
  });

  it('an RLO inside a string is shown as a marker inside that string’s token', () => {
    const lines = highlightPython('access = "user\u202E nimda"');
    const str = lines[0]!.find((t) => t.cls === 'str')!;
    assert.equal(showInvisibles(str.text), '"user⟨U+202E⟩ nimda"');
  });

  it('the only classes are the fixed set, whatever the code names', () => {
    const all = new Set(
      HOSTILE_CODE.flatMap((h) =>
        highlightPython(h.text)
          .flat()
          .map((t) => t.cls),
      ),
    );
    for (const c of all) assert.ok((TOKEN_CLASSES as readonly string[]).includes(c), c);
    assert.deepEqual([...TOKEN_CLASSES].sort(), ['cls', 'com', 'fn', 'kw', 'num', 'str', 'txt']);
  });
});
