// Seeded pseudo-random numbers. Every random draw in the engine goes through an Rng so a run is a
// pure function of (config, seed). Streams are derived by name so adding draws to one stream
// (say, the verifier's) never shifts another (the policy's sampling).

/** FNV-1a (32-bit) of a text's UTF-16 code units, from `basis` (FNV's offset basis unless given). */
export function fnv1a(text: string, basis = 0x811c9dc5): number {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** FNV-1a over the string, mixed with the seed: a stable 32-bit stream id. */
function hash32(seed: number, label: string): number {
  return fnv1a(label, 0x811c9dc5 ^ seed);
}

/** sfc32: small, fast, passes PractRand to large sizes; 128-bit state seeded through splitmix32. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = (): number => {
      // splitmix32
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** An independent stream for a named purpose, derived from a seed. */
  static stream(seed: number, label: string): Rng {
    return new Rng(hash32(seed, label));
  }

  uint32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform in [0, 1) with 53 bits. */
  next(): number {
    const hi = this.uint32() >>> 5; // 27 bits
    const lo = this.uint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** The generator's whole state (four 32-bit words): a checkpoint stores it, `fromState` continues the stream exactly. */
  state(): [number, number, number, number] {
    // as unsigned words: the generator's arithmetic only ever sees their 32 bits
    return [this.a >>> 0, this.b >>> 0, this.c >>> 0, this.d >>> 0];
  }

  /** A generator that continues exactly where the one whose `state()` this is stopped. */
  static fromState(state: readonly number[]): Rng {
    if (state.length !== 4 || !state.every((x) => Number.isInteger(x) && x >= 0 && x <= 0xffffffff)) {
      throw new Error(`Rng.fromState: expected four 32-bit words, got ${JSON.stringify(state)}`);
    }
    const r = new Rng(0);
    [r.a, r.b, r.c, r.d] = state as [number, number, number, number];
    return r;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Index drawn from a probability vector (sums to 1 up to rounding; the last index absorbs it). */
  categorical(probs: ArrayLike<number>): number {
    const u = this.next();
    let acc = 0;
    for (let i = 0; i < probs.length; i++) {
      acc += probs[i] ?? 0;
      if (u < acc) return i;
    }
    return probs.length - 1;
  }
}
