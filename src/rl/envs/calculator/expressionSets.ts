// The calculator's two task sets, training and held out, drawn with the same mix of expression depths.
//
// Why stratify: each split used to keep the first `count` distinct expressions of its own seed stream.
// Depth-1 expressions are few (300 at operands 0–9, about a fifth of them held out), so the 2000
// training tasks ran out of them at 12 % while the 200 held-out tasks, which need fewer, kept 27 %:
// held-out success was measured on easier tasks than training success, and the two were not
// comparable. Now every depth has one share in both splits: the generator's own share of that depth
// where both splits have enough distinct expressions for it, else the most the scarcer split can fill
// (the rest goes to the other depths in the generator's proportions). What stays as it was: the split
// by canonical call plan (isHeldOutExpr), each split's own fixed seed stream, distinct expressions,
// and the order in which they were drawn.
import { Rng } from '../../random';
import { depth, generate, isHeldOutExpr, parseExpr, render, type GeneratorOptions } from './expressions';

export type Split = 'train' | 'heldOut';

export interface ExpressionSets {
  readonly train: string[];
  readonly heldOut: string[];
  /** The generator's own share of each depth (of its draws, repeats included), by depth ascending. */
  readonly drawn: ReadonlyMap<number, number>;
}

/** Draws without a new distinct expression of a depth after which that depth counts as exhausted in a split. */
const EXHAUSTED_AFTER = 2000;
/** Draws (a stream of their own) that estimate the generator's share of each depth. */
const MIX_SAMPLE = 4000;
/** Tries per requested expression before a split gives up (as many as before the stratification). */
const TRIES_PER_TASK = 200;

/** Depth of an expression's text as parsed: "1+2+3+4" reads as ((1+2)+3)+4, depth 3, whatever tree drew it. */
export function textDepth(text: string): number {
  return depth(parseExpr(text));
}

/** Expressions per depth, by depth ascending. */
export function depthMix(expressions: readonly string[]): Map<number, number> {
  const mix = new Map<number, number>();
  for (const x of expressions) {
    const d = textDepth(x);
    mix.set(d, (mix.get(d) ?? 0) + 1);
  }
  return new Map([...mix].sort(([a], [b]) => a - b));
}

/** One split's distinct expressions by depth, drawn lazily from its own stream: growing it never changes what it already holds. */
class SplitPool {
  readonly byDepth = new Map<number, { text: string; at: number }[]>();
  private readonly seen = new Set<string>();
  private readonly misses = new Map<number, number>();
  private tries = 0;
  private readonly rng: Rng;

  constructor(
    private readonly split: Split,
    private readonly o: GeneratorOptions,
    seed: number,
    private readonly maxTries: number,
  ) {
    this.rng = Rng.stream(seed, `calculator/${split}`);
  }

  size(d: number): number {
    return this.byDepth.get(d)?.length ?? 0;
  }

  /** Draws until depth d holds k expressions or has run out (in this split, or of tries); returns how many it holds. */
  fill(d: number, k: number): number {
    while (this.size(d) < k && (this.misses.get(d) ?? 0) < EXHAUSTED_AFTER && this.tries < this.maxTries) this.draw();
    return this.size(d);
  }

  private draw(): void {
    const at = this.tries++;
    const text = render(generate(this.rng, this.o));
    const e = parseExpr(text);
    const d = depth(e);
    if (this.seen.has(text) || isHeldOutExpr(e) !== (this.split === 'heldOut')) {
      this.misses.set(d, (this.misses.get(d) ?? 0) + 1);
      return;
    }
    this.seen.add(text);
    this.misses.set(d, 0);
    const bucket = this.byDepth.get(d) ?? [];
    bucket.push({ text, at });
    this.byDepth.set(d, bucket);
  }
}

/** The generator's share of each text depth over MIX_SAMPLE draws of a stream of its own (the same for both splits). */
function drawnMix(o: GeneratorOptions, seed: number): Map<number, number> {
  const rng = Rng.stream(seed, 'calculator/depthMix');
  const counts = new Map<number, number>();
  for (let i = 0; i < MIX_SAMPLE; i++) {
    const d = depth(parseExpr(render(generate(rng, o))));
    counts.set(d, (counts.get(d) ?? 0) + 1);
  }
  return new Map([...counts].sort(([a], [b]) => a - b).map(([d, n]) => [d, n / MIX_SAMPLE]));
}

/** Whole counts summing to `total` in the given shares (largest remainder), none above what `room` allows. */
function apportion(total: number, shares: ReadonlyMap<number, number>, room: (d: number) => number): Map<number, number> {
  const out = new Map<number, number>();
  const rest: { d: number; frac: number }[] = [];
  let given = 0;
  for (const [d, r] of shares) {
    const exact = total * r;
    const n = Math.min(Math.floor(exact + 1e-9), room(d));
    out.set(d, n);
    given += n;
    rest.push({ d, frac: exact - n });
  }
  rest.sort((a, b) => b.frac - a.frac || a.d - b.d);
  for (const { d } of rest) {
    if (given >= total) break;
    if (out.get(d)! < room(d)) {
      out.set(d, out.get(d)! + 1);
      given++;
    }
  }
  return out;
}

/**
 * Distinct expressions of each split, the same share of each depth in both (within one task of
 * rounding), in the order each split's stream drew them. A split is shorter than asked only when its
 * distinct expressions run out at every depth (a tiny operand range); then both keep the same mix.
 */
export function expressionSets(counts: Readonly<Record<Split, number>>, o: GeneratorOptions, seed = 2026): ExpressionSets {
  const splits: Split[] = ['train', 'heldOut'];
  const pools = {
    train: new SplitPool('train', o, seed, counts.train * TRIES_PER_TASK),
    heldOut: new SplitPool('heldOut', o, seed, counts.heldOut * TRIES_PER_TASK),
  };
  const drawn = drawnMix(o, seed);
  // water-filling: a depth whose share some split cannot fill is capped at what the scarcer split
  // holds; the share left over goes to the uncapped depths in the generator's proportions, which may
  // cap another depth on the next pass (each pass caps one more or ends)
  const capped = new Map<number, number>();
  const shares = new Map<number, number>();
  for (let changed = true; changed;) {
    changed = false;
    const free = [...drawn.keys()].filter((d) => !capped.has(d));
    const left = 1 - [...capped.values()].reduce((a, b) => a + b, 0);
    const freeMass = free.reduce((a, d) => a + drawn.get(d)!, 0);
    shares.clear();
    for (const d of free) {
      const share = (left * drawn.get(d)!) / freeMass;
      const fits = Math.min(...splits.map((s) => pools[s].fill(d, Math.ceil(counts[s] * share - 1e-9)) / counts[s]));
      if (fits < share - 1e-12) {
        capped.set(d, fits);
        changed = true;
      } else shares.set(d, share);
    }
  }
  for (const [d, r] of capped) shares.set(d, r);
  // every depth capped (too few distinct expressions for the counts asked): keep the mix, shorten the splits
  const total = [...shares.values()].reduce((a, b) => a + b, 0);
  const mix = new Map([...shares].sort(([a], [b]) => a - b).map(([d, r]) => [d, total > 0 ? r / total : 0]));
  const pick = (s: Split): string[] => {
    const pool = pools[s];
    for (const [d, r] of mix) pool.fill(d, Math.ceil(counts[s] * r - 1e-9));
    const fits = Math.min(counts[s], ...[...mix].filter(([, r]) => r > 0).map(([d, r]) => Math.floor(pool.size(d) / r + 1e-9)));
    const quota = apportion(fits, mix, (d) => pool.size(d));
    return [...quota]
      .flatMap(([d, n]) => (pool.byDepth.get(d) ?? []).slice(0, n))
      .sort((a, b) => a.at - b.at)
      .map((x) => x.text);
  };
  return { train: pick('train'), heldOut: pick('heldOut'), drawn };
}
