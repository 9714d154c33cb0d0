// The grammar of an environment's well-formed actions, for constrained decoding: a regular expression
// (a small subset: literals, escapes, classes and ranges, `.`, groups, `|`, `?`, `*`, `+`, `{m}`,
// `{m,n}`) compiled to a Thompson NFA over characters. The sampler advances a state set character by
// character and allows only tokens that keep the text a prefix of some action; the learner replays the
// same states to renormalise over the same tokens. Grammars are named (like STOP_TESTS), so that
// replica threads rebuild them from the name and nothing stored decides what runs. A row ends on the
// grammar only where nothing can follow, so a grammar should end every action with a terminator (the
// calculator's closing tags); elsewhere the stop strings and maxNewTokens end it.

/** A set of NFA states (sorted, ε-closed): where the text written so far may be in the pattern. */
export type GrammarState = readonly number[];

export interface ActionGrammar {
  readonly pattern: string;
  /** The state before any character of an action. */
  start(): GrammarState;
  /** The state after `text`, or undefined when no action begins with what has been written. */
  advance(state: GrammarState, text: string): GrammarState | undefined;
  /** Whether the text that led here is a whole action. */
  accepts(state: GrammarState): boolean;
  /** Whether some character can follow. */
  canContinue(state: GrammarState): boolean;
  /** The fewest characters that complete an action from here (0 when the text is one already). */
  shortestCompletion(state: GrammarState): number;
}

type CharTest = (c: string) => boolean;

type Node =
  | { readonly kind: 'char'; readonly test: CharTest }
  | { readonly kind: 'seq'; readonly items: readonly Node[] }
  | { readonly kind: 'alt'; readonly options: readonly Node[] }
  | { readonly kind: 'repeat'; readonly node: Node; readonly min: number; readonly max: number };

/** The largest `{m,n}` / unbounded-repeat expansion accepted (`*` and `+` need none: they loop). */
const MAX_REPEAT = 64;

class PatternError extends Error {
  constructor(pattern: string, at: number, what: string) {
    super(`action grammar ${JSON.stringify(pattern)}: ${what} at character ${at + 1}`);
  }
}

function parsePattern(pattern: string): Node {
  let i = 0;
  const fail = (what: string): never => {
    throw new PatternError(pattern, i, what);
  };
  const peek = (): string | undefined => pattern[i];
  const escape = (c: string): CharTest => {
    if (c === 'd') return (x) => x >= '0' && x <= '9';
    if (c === 's') return (x) => /\s/.test(x);
    if (c === 'w') return (x) => /\w/.test(x);
    if (c === 'n') return (x) => x === '\n';
    if (/[A-Za-z0-9]/.test(c)) fail(`unsupported escape \\${c}`);
    return (x) => x === c;
  };
  const charClass = (): CharTest => {
    i++; // [
    const negate = peek() === '^';
    if (negate) i++;
    const tests: CharTest[] = [];
    let first = true;
    while (peek() !== ']' || first) {
      first = false;
      let c = peek();
      if (c === undefined) fail('unclosed [');
      i++;
      if (c === '\\') {
        const e = peek() ?? fail('a trailing \\');
        i++;
        tests.push(escape(e));
        continue;
      }
      if (peek() === '-' && pattern[i + 1] !== undefined && pattern[i + 1] !== ']') {
        i++;
        const hi = pattern[i]!;
        i++;
        const lo = c!;
        if (hi < lo) fail(`range ${lo}-${hi} out of order`);
        tests.push((x) => x >= lo && x <= hi);
        continue;
      }
      c = c!;
      tests.push((x) => x === c);
    }
    i++; // ]
    return negate ? (x) => !tests.some((t) => t(x)) : (x) => tests.some((t) => t(x));
  };
  const atom = (): Node => {
    const c = peek();
    if (c === '(') {
      i++;
      if (pattern.startsWith('?:', i)) i += 2;
      const inner = alternation();
      if (peek() !== ')') fail('unclosed (');
      i++;
      return inner;
    }
    if (c === '[') return { kind: 'char', test: charClass() };
    if (c === '\\') {
      i++;
      const e = peek() ?? fail('a trailing \\');
      i++;
      return { kind: 'char', test: escape(e) };
    }
    if (c === '.') {
      i++;
      return { kind: 'char', test: (x) => x !== '\n' };
    }
    if (c === undefined || '*+?{'.includes(c)) fail('nothing to repeat');
    if (c === '^' || c === '$') fail('anchors are implied (the whole action must match); remove ^ and $');
    i++;
    return { kind: 'char', test: (x) => x === c };
  };
  const quantified = (): Node => {
    let node = atom();
    for (;;) {
      const c = peek();
      if (c === '?' || c === '*' || c === '+') {
        i++;
        node = { kind: 'repeat', node, min: c === '+' ? 1 : 0, max: c === '?' ? 1 : Infinity };
      } else if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i)) ?? fail('a { that is not {m}, {m,} or {m,n}');
        const min = Number(m[1]);
        const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
        if (max < min) fail(`{${min},${max}} out of order`);
        if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) fail(`a repeat count over ${MAX_REPEAT}`);
        i += m[0].length;
        node = { kind: 'repeat', node, min, max };
      } else return node;
    }
  };
  const sequence = (): Node => {
    const items: Node[] = [];
    while (peek() !== undefined && peek() !== '|' && peek() !== ')') items.push(quantified());
    return items.length === 1 ? items[0]! : { kind: 'seq', items };
  };
  const alternation = (): Node => {
    const options = [sequence()];
    while (peek() === '|') {
      i++;
      options.push(sequence());
    }
    return options.length === 1 ? options[0]! : { kind: 'alt', options };
  };
  const node = alternation();
  if (i < pattern.length) fail('an unmatched )');
  return node;
}

interface NfaState {
  readonly eps: number[];
  readonly edges: { readonly test: CharTest; readonly to: number }[];
}

/** Thompson construction: every fragment has one start and one end state. */
function buildNfa(root: Node): { states: NfaState[]; start: number; accept: number } {
  const states: NfaState[] = [];
  const state = (): number => states.push({ eps: [], edges: [] }) - 1;
  const build = (n: Node): { s: number; e: number } => {
    const s = state();
    switch (n.kind) {
      case 'char': {
        const e = state();
        states[s]!.edges.push({ test: n.test, to: e });
        return { s, e };
      }
      case 'seq': {
        let cur = s;
        for (const item of n.items) {
          const f = build(item);
          states[cur]!.eps.push(f.s);
          cur = f.e;
        }
        return { s, e: cur };
      }
      case 'alt': {
        const e = state();
        for (const o of n.options) {
          const f = build(o);
          states[s]!.eps.push(f.s);
          states[f.e]!.eps.push(e);
        }
        return { s, e };
      }
      case 'repeat': {
        let cur = s;
        for (let k = 0; k < n.min; k++) {
          const f = build(n.node);
          states[cur]!.eps.push(f.s);
          cur = f.e;
        }
        const e = state();
        states[cur]!.eps.push(e);
        if (n.max === Infinity) {
          const f = build(n.node);
          states[cur]!.eps.push(f.s);
          states[f.e]!.eps.push(cur);
        } else {
          for (let k = n.min; k < n.max; k++) {
            const f = build(n.node);
            states[cur]!.eps.push(f.s);
            states[f.e]!.eps.push(e);
            cur = f.e;
          }
        }
        return { s, e };
      }
    }
  };
  const f = build(root);
  return { states, start: f.s, accept: f.e };
}

/** Compiles a pattern; throws an error naming the pattern and the character at fault. */
export function compileActionGrammar(pattern: string): ActionGrammar {
  const { states, start, accept } = buildNfa(parsePattern(pattern));
  const closure = (from: Iterable<number>): GrammarState => {
    const seen = new Set<number>();
    const stack = [...from];
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (seen.has(s)) continue;
      seen.add(s);
      stack.push(...states[s]!.eps);
    }
    // only states that read a character, and the accepting one, matter from here on
    return [...seen].filter((s) => s === accept || states[s]!.edges.length > 0).sort((a, b) => a - b);
  };
  // fewest characters from each NFA state to the accepting one: a 0-1 breadth-first search backwards
  // (ε-moves cost 0, characters 1)
  const into: { from: number; cost: number }[][] = states.map(() => []);
  states.forEach((st, s) => {
    for (const t of st.eps) into[t]!.push({ from: s, cost: 0 });
    for (const e of st.edges) into[e.to]!.push({ from: s, cost: 1 });
  });
  const toAccept = new Array<number>(states.length).fill(Infinity);
  toAccept[accept] = 0;
  const deque = [accept];
  while (deque.length > 0) {
    const s = deque.shift()!;
    for (const { from, cost } of into[s]!) {
      if (toAccept[s]! + cost < toAccept[from]!) {
        toAccept[from] = toAccept[s]! + cost;
        if (cost === 0) deque.unshift(from);
        else deque.push(from);
      }
    }
  }
  const initial = closure([start]);
  return {
    pattern,
    start: () => initial,
    advance(state, text) {
      let cur = state;
      for (const c of text) {
        const next: number[] = [];
        for (const s of cur) for (const edge of states[s]!.edges) if (edge.test(c)) next.push(edge.to);
        if (next.length === 0) return undefined;
        cur = closure(next);
      }
      return cur;
    },
    accepts: (state) => state.includes(accept),
    canContinue: (state) => state.some((s) => states[s]!.edges.length > 0),
    shortestCompletion: (state) => Math.min(...state.map((s) => toAccept[s]!)),
  };
}

/**
 * A judge's answer for a group of `n` (train/judge/judgeAnswer.ts reads it): {"scores": {"t0": s, …}}
 * with exactly the ids t0 … t(n−1) in order, each score 0, 1 or a decimal 0.d to 0.ddd. For a local
 * checkpoint served as the judge (`agent-rl serve --grammar judge-scores-N`): a model too small to
 * follow the rubric still answers in the form the judge parses.
 */
function judgeScoresPattern(n: number): string {
  const score = String.raw`(0|1|0\.[0-9]{1,3})`;
  const entries = Array.from({ length: n }, (_, i) => `"t${i}": ${score}`).join(', ');
  return String.raw`\{"scores": \{` + entries + String.raw`\}\}`;
}

/**
 * The grammars environments name (StopSpec.grammar). The calculator's is its parser's well-formed
 * actions in the form its demonstrations write them: a call with a known operation and two integers,
 * or an answer with an integer (the parser also accepts spaces, and calls it cannot run).
 */
export const ACTION_GRAMMARS = {
  calculator: String.raw`<call>(add|sub|mul|div)\(-?[0-9]{1,12},-?[0-9]{1,12}\)</call>|<answer>\\boxed\{-?[0-9]{1,15}\}</answer>`,
  'judge-scores-2': judgeScoresPattern(2),
  'judge-scores-4': judgeScoresPattern(4),
  'judge-scores-8': judgeScoresPattern(8),
} as const satisfies Readonly<Record<string, string>>;
export type ActionGrammarName = keyof typeof ACTION_GRAMMARS;

const compiled = new Map<ActionGrammarName, ActionGrammar>();

export function namedGrammar(name: ActionGrammarName): ActionGrammar {
  let g = compiled.get(name);
  if (!g) {
    g = compileActionGrammar(ACTION_GRAMMARS[name]);
    compiled.set(name, g);
  }
  return g;
}
