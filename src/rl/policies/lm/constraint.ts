// Constrained decoding over any tokenizer's vocabulary: an environment's action grammar (a character
// NFA, envs/actionGrammar.ts) becomes a token-level automaton. Its states are the grammar's state sets
// reachable from the start by whole tokens; a token is allowed at a state when its text (one character
// of the character vocabulary, or a BPE piece spanning several grammar steps) keeps the action a
// prefix of the grammar. The vocabulary is walked as a sorted trie of the tokens' texts, so a state's
// scan visits only the prefixes that stay alive. With a chat model the template's end-of-turn token is
// the grammar's end: allowed once the action is whole, and the action ends with it; without one, the
// action ends where nothing can extend it. Budgets count tokens: with `budget` tokens left to write
// (maxNewTokens, or the room left in the context) a token is allowed only if a whole action (and its
// end-of-turn token) still fits after it, from exact shortest completions in tokens over the automaton;
// where not even the shortest fits, the grammar alone applies (the episode is out of room either way).
// The behaviour log-prob is renormalised over the allowed tokens, and the learner recomputes the same
// sets from the sampled ids (`allowedSets`), so the ratio, the KL to the reference and the entropy are
// all over the distribution the sampler drew from. Special tokens and pieces that are not whole
// characters (a byte-level piece of a multi-byte character) are never part of an action.
import { namedGrammar, type ActionGrammar, type ActionGrammarName, type GrammarState } from '../../envs/actionGrammar';
import { ModelLoadError } from './models/hfConfig';
import type { Tokenizer } from './tokenizer';

/** A state of the token automaton (its index). */
export type ConstraintState = number;

interface Node {
  /** Allowed token ids, ascending. */
  readonly allowed: Int32Array;
  /** Per allowed token: the state after it. */
  readonly next: Int32Array;
  /** Per allowed token: the tokens it and the shortest completion after it take. */
  needs: Int32Array;
  /** The largest of `needs`: a budget at least this large allows every token. */
  most: number;
  /** Allowed ids under a smaller budget, by budget. */
  readonly byBudget: Map<number, Int32Array>;
}

/** Distinct grammar states a constraint may hold before it is refused (a grammar that large is a mistake). */
const MAX_STATES = 50_000;

/** The vocabulary as tokens sorted by their text's characters (code points): a trie walked by ranges. */
interface Vocabulary {
  /** Per sorted entry: the token id and its characters. */
  readonly ids: Int32Array;
  readonly chars: readonly (readonly string[])[];
}

const vocabularies = new WeakMap<Tokenizer, Vocabulary>();

function vocabularyOf(tokenizer: Tokenizer): Vocabulary {
  let v = vocabularies.get(tokenizer);
  if (v) return v;
  const special = new Set(tokenizer.specialIds?.() ?? []);
  const entries: { id: number; chars: string[] }[] = [];
  for (let id = 0; id < tokenizer.vocabSize; id++) {
    if (special.has(id)) continue;
    const piece = tokenizer.decode([id]);
    // special and unknown tokens write nothing an action is made of; nor does part of a character
    if (piece === '' || piece.includes('\uFFFD')) continue;
    entries.push({ id, chars: Array.from(piece) });
  }
  entries.sort((a, b) => {
    const n = Math.min(a.chars.length, b.chars.length);
    for (let i = 0; i < n; i++) if (a.chars[i] !== b.chars[i]) return a.chars[i]! < b.chars[i]! ? -1 : 1;
    return a.chars.length - b.chars.length || a.id - b.id;
  });
  v = { ids: Int32Array.from(entries, (e) => e.id), chars: entries.map((e) => e.chars) };
  vocabularies.set(tokenizer, v);
  return v;
}

const namedConstraints = new WeakMap<Tokenizer, Map<string, TokenConstraint>>();

export class TokenConstraint {
  private readonly nodes: Node[] = [];
  /** The state after the end-of-turn token (or none): nothing follows. */
  private readonly ended: number;

  /**
   * The constraint of a named grammar over a tokenizer, with the end-of-turn ids of a chat model,
   * made once per (tokenizer, grammar, ends): building the automaton scans the vocabulary per state.
   */
  static named(name: ActionGrammarName, tokenizer: Tokenizer, end: readonly number[] = []): TokenConstraint {
    let byName = namedConstraints.get(tokenizer);
    if (!byName) namedConstraints.set(tokenizer, (byName = new Map<string, TokenConstraint>()));
    const key = `${name}|${end.join(',')}`;
    let c = byName.get(key);
    if (!c) byName.set(key, (c = new TokenConstraint(namedGrammar(name), tokenizer, end, name)));
    return c;
  }

  /**
   * `end`: the ids that close an action (a chat model's end of turn), allowed once the action is whole
   * and required to end it; empty: the action ends where nothing can extend it.
   */
  constructor(
    readonly grammar: ActionGrammar,
    private readonly tokenizer: Tokenizer,
    private readonly end: readonly number[] = [],
    /** Its name in ACTION_GRAMMARS, when it has one. */
    readonly name?: ActionGrammarName,
  ) {
    const vocab = vocabularyOf(tokenizer);
    const endIds = Int32Array.from(new Set(end)).sort();
    // the automaton, breadth first from the start: states interned by their grammar state set
    const index = new Map<string, number>();
    const sets: GrammarState[] = [];
    const intern = (s: GrammarState): number => {
      const key = s.join(',');
      let id = index.get(key);
      if (id === undefined) {
        if (sets.length >= MAX_STATES)
          throw new ModelLoadError(
            `policyOptions.constrainedDecoding: the grammar ${JSON.stringify(grammar.pattern)} has more than ${MAX_STATES.toLocaleString('en')} states over this vocabulary. Fix: a smaller grammar, or set constrainedDecoding to false`,
          );
        id = sets.length;
        index.set(key, id);
        sets.push(s);
      }
      return id;
    };
    const steps = new Map<string, GrammarState | null>();
    const step = (s: GrammarState, c: string): GrammarState | undefined => {
      const key = `${s.join(',')}|${c}`;
      let to = steps.get(key);
      if (to === undefined) steps.set(key, (to = grammar.advance(s, c) ?? null));
      return to ?? undefined;
    };
    intern(grammar.start());
    const ENDED = -1;
    const edges: { id: number; to: number }[][] = [];
    for (let s = 0; s < sets.length; s++) {
      const out: { id: number; to: number }[] = [];
      // a token is allowed when every character of it keeps the text a prefix of an action: walk the
      // sorted vocabulary as a trie, entries [lo, hi) sharing `depth` characters, in grammar state `g`
      const walk = (lo: number, hi: number, depth: number, g: GrammarState): void => {
        let i = lo;
        while (i < hi && vocab.chars[i]!.length === depth) out.push({ id: vocab.ids[i++]!, to: intern(g) });
        while (i < hi) {
          const c = vocab.chars[i]![depth]!;
          let j = i + 1;
          while (j < hi && vocab.chars[j]![depth] === c) j++;
          const to = step(g, c);
          if (to) walk(i, j, depth + 1, to);
          i = j;
        }
      };
      const g = sets[s]!;
      // the whole vocabulary at depth 0: every entry has at least one character
      walk(0, vocab.ids.length, 0, g);
      if (endIds.length > 0 && grammar.accepts(g)) for (const id of endIds) out.push({ id, to: ENDED });
      edges.push(out.sort((a, b) => a.id - b.id));
    }
    this.ended = sets.length;
    // fewest tokens to a whole action from each state: a breadth-first search backwards from where an
    // action is complete (after the end-of-turn token, or an accepting state when there is none)
    const n = sets.length + 1;
    const into: number[][] = Array.from({ length: n }, () => []);
    edges.forEach((out, s) => {
      const seen = new Set<number>();
      for (const e of out) {
        const to = e.to === ENDED ? this.ended : e.to;
        if (!seen.has(to)) {
          seen.add(to);
          into[to]!.push(s);
        }
      }
    });
    const dist = new Array<number>(n).fill(Infinity);
    const queue: number[] = [];
    if (endIds.length > 0) {
      dist[this.ended] = 0;
      queue.push(this.ended);
    } else {
      sets.forEach((g, s) => {
        if (grammar.accepts(g)) {
          dist[s] = 0;
          queue.push(s);
        }
      });
    }
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      for (const from of into[s]!) {
        if (dist[from] === Infinity) {
          dist[from] = dist[s]! + 1;
          queue.push(from);
        }
      }
    }
    for (const out of edges) {
      const next = Int32Array.from(out, (e) => (e.to === ENDED ? this.ended : e.to));
      const needs = Int32Array.from(next, (to) => Math.min(1 + dist[to]!, 2 ** 30));
      this.nodes.push({ allowed: Int32Array.from(out, (e) => e.id), next, needs, most: Math.max(0, ...needs), byBudget: new Map() });
    }
    this.nodes.push({ allowed: new Int32Array(0), next: new Int32Array(0), needs: new Int32Array(0), most: 0, byBudget: new Map() });
    if (this.nodes[0]!.allowed.length === 0) {
      throw new ModelLoadError(
        `policyOptions.constrainedDecoding: no token of the tokenizer can begin an action of the grammar ${JSON.stringify(grammar.pattern)}. Fix: set it to false`,
      );
    }
  }

  /** States of the automaton (its size: tests, and the record of a run). */
  get size(): number {
    return this.nodes.length;
  }

  start(): ConstraintState {
    return 0;
  }

  /** The ids that may be drawn at `state` with `budget` tokens left to write (Infinity: no limit). */
  allowed(state: ConstraintState, budget = Infinity): Int32Array {
    const n = this.nodes[state]!;
    if (budget >= n.most) return n.allowed;
    let got = n.byBudget.get(budget);
    if (!got) {
      got = n.allowed.filter((_, k) => n.needs[k]! <= budget);
      // not even the shortest action fits: the grammar alone (the action will be cut, out of room)
      if (got.length === 0) got = n.allowed;
      n.byBudget.set(budget, got);
    }
    return got;
  }

  /** The state after `token`, or undefined when the grammar does not allow it here. */
  advance(state: ConstraintState, token: number): ConstraintState | undefined {
    const n = this.nodes[state]!;
    let lo = 0,
      hi = n.allowed.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const v = n.allowed[mid]!;
      if (v === token) return n.next[mid];
      if (v < token) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  /** Whether the action written up to `state` is over: closed by the end-of-turn token, or (without one) nothing can extend it. */
  finished(state: ConstraintState): boolean {
    return this.nodes[state]!.allowed.length === 0;
  }

  /** Sets disallowed entries of a logits row to −∞ in place (the row must be the sampler's own copy). */
  maskRow(row: Float32Array, state: ConstraintState, budget = Infinity): void {
    const allowed = this.allowed(state, budget);
    let k = 0;
    for (let i = 0; i < row.length; i++) {
      if (k < allowed.length && allowed[k] === i) k++;
      else row[i] = -Infinity;
    }
  }

  /**
   * The allowed sets of one action's ids, position by position (what the sampler allowed before each,
   * with `budget` tokens to write at the start); throws when an id falls outside them (the action was
   * not sampled under this grammar and budget).
   */
  allowedSets(ids: readonly number[], budget = Infinity): Int32Array[] {
    let state: ConstraintState | undefined = this.start();
    return ids.map((id, i) => {
      const here = this.allowed(state!, budget - i);
      state = here.includes(id) ? this.advance(state!, id) : undefined;
      if (state === undefined) {
        throw new Error(
          `policyOptions.constrainedDecoding: token ${i + 1} of an action flagged as sampled under the grammar (${JSON.stringify(this.tokenizer.decode([id]))}) is outside it: the trajectory was not sampled with this grammar and tokenizer. Fix: train it with the settings it was sampled with`,
        );
      }
      return here;
    });
  }
}
