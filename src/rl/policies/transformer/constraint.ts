// Constrained decoding over a tokenizer's vocabulary: at each step of an action only the tokens whose
// text keeps the action a prefix of the environment's grammar may be drawn, and the behaviour log-prob
// is renormalised over them. The learner recomputes the same allowed sets from the sampled ids
// (`allowedSets`), so the ratio, the KL to the reference and the entropy are all over the distribution
// the sampler drew from. States are cached by their NFA state set: a vocabulary is scanned once per
// distinct state, not once per step. With a budget (the tokens the row may still write: maxNewTokens
// or the room left in the context), a token is allowed only if an action can still be completed
// within it, so an action is never cut in the middle — unless not even the shortest action fits, and
// then the grammar alone applies (the episode is out of room either way). Budgets count characters as
// tokens: exact for the character tokenizer, the only one constrained decoding is offered with.
import { namedGrammar, type ActionGrammar, type ActionGrammarName, type GrammarState } from '../../envs/actionGrammar';
import { ModelLoadError } from '../hf/hfConfig';
import type { Tokenizer } from './tokenizer';

interface Node {
  /** Allowed token ids, ascending. */
  readonly allowed: Int32Array;
  /** Per allowed token: the tokens it and the shortest completion after it take. */
  readonly needs: Int32Array;
  /** The largest of `needs`: a budget at least this large allows every token. */
  readonly most: number;
  /** Allowed ids under a smaller budget, by budget. */
  readonly byBudget: Map<number, Int32Array>;
  readonly next: Map<number, GrammarState>;
  /** Nothing can be written from here (a whole action, or text no token can extend): the row stops. */
  readonly final: boolean;
}

const namedConstraints = new WeakMap<Tokenizer, Map<ActionGrammarName, TokenConstraint>>();

export class TokenConstraint {
  private readonly pieces: string[];
  private readonly nodes = new Map<string, Node>();

  /**
   * The constraint of a named grammar over a tokenizer (what crosses to a replica thread is the name),
   * made once per tokenizer: its cache of grammar states is what saves the vocabulary scans.
   */
  static named(name: ActionGrammarName, tokenizer: Tokenizer): TokenConstraint {
    let byName = namedConstraints.get(tokenizer);
    if (!byName) namedConstraints.set(tokenizer, (byName = new Map<ActionGrammarName, TokenConstraint>()));
    let c = byName.get(name);
    if (!c) byName.set(name, (c = new TokenConstraint(namedGrammar(name), tokenizer, name)));
    return c;
  }

  constructor(
    readonly grammar: ActionGrammar,
    tokenizer: Tokenizer,
    /** Its name in ACTION_GRAMMARS (a grammar built from a pattern has none, and cannot be sent to a replica). */
    readonly name?: ActionGrammarName,
  ) {
    this.pieces = Array.from({ length: tokenizer.vocabSize }, (_, id) => tokenizer.decode([id]));
    if (this.node(grammar.start()).allowed.length === 0) {
      throw new ModelLoadError(
        `policyOptions.constrainedDecoding: no token of the tokenizer can begin an action of the grammar ${JSON.stringify(grammar.pattern)}. Fix: set it to false, or use the character tokenizer`,
      );
    }
  }

  start(): GrammarState {
    return this.grammar.start();
  }

  private node(state: GrammarState): Node {
    const key = state.join(',');
    let n = this.nodes.get(key);
    if (!n) {
      const allowed: number[] = [];
      const next = new Map<number, GrammarState>();
      this.pieces.forEach((piece, id) => {
        if (piece === '') return; // special and unknown tokens write nothing an action can be made of
        const to = this.grammar.advance(state, piece);
        if (to) {
          allowed.push(id);
          next.set(id, to);
        }
      });
      const needs = Int32Array.from(allowed, (id) => 1 + this.grammar.shortestCompletion(next.get(id)!));
      n = { allowed: Int32Array.from(allowed), needs, most: Math.max(0, ...needs), byBudget: new Map(), next, final: allowed.length === 0 };
      this.nodes.set(key, n);
    }
    return n;
  }

  /** The ids that may be drawn at `state` with `budget` tokens left to write (Infinity: no limit). */
  allowed(state: GrammarState, budget = Infinity): Int32Array {
    const n = this.node(state);
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
  advance(state: GrammarState, token: number): GrammarState | undefined {
    return this.node(state).next.get(token);
  }

  /** Whether no token can extend the action written up to `state` (complete, as a grammar with tokens for every character has it). */
  finished(state: GrammarState): boolean {
    return this.node(state).final;
  }

  /**
   * Sets disallowed entries of a logits row to −∞ in place (the row must be the sampler's own copy).
   */
  maskRow(row: Float32Array, state: GrammarState, budget = Infinity): void {
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
    let state: GrammarState | undefined = this.start();
    return ids.map((id, i) => {
      const here = this.allowed(state!, budget - i);
      state = here.includes(id) ? this.advance(state!, id) : undefined;
      if (!state) {
        throw new Error(
          `policyOptions.constrainedDecoding: token ${i + 1} of an action flagged as sampled under the grammar (${JSON.stringify(this.pieces[id])}) is outside it: the trajectory was not sampled with this grammar and tokenizer. Fix: train it with the settings it was sampled with`,
        );
      }
      return here;
    });
  }
}
