// An agent program's trajectory may train as several sequences (its segments, where it rewrote its
// history): the learner hears each segment's per-position numbers and joins them into the
// trajectory's one TokenStats, whose columns follow its trained tokens in order.
import type { TokenStats } from '../../shared/types';

/** One trajectory's token numbers from its segments' sequences, in order (the columns follow its trained tokens). */
export function joinTokenStats(segments: readonly TokenStats[]): TokenStats {
  if (segments.length === 1) return segments[0]!;
  const cat = <A extends Float32Array | Uint8Array>(pick: (p: TokenStats) => A | undefined, make: (n: number) => A): A | undefined => {
    const arrays = segments.map(pick);
    if (arrays.some((a) => a === undefined)) return undefined;
    const out = make(arrays.reduce((n, a) => n + a!.length, 0));
    let at = 0;
    for (const a of arrays) {
      out.set(a!, at);
      at += a!.length;
    }
    return out;
  };
  const f32 = (n: number): Float32Array => new Float32Array(n);
  const before = cat((p) => p.before, f32);
  const kl = cat((p) => p.kl, f32);
  const teacher = cat((p) => p.teacher, f32);
  const reverseKl = cat((p) => p.reverseKl, f32);
  return {
    stepsBefore: Math.max(...segments.map((p) => p.stepsBefore)),
    old: segments[0]!.old,
    lag: Math.max(...segments.map((p) => p.lag)),
    logp: cat((p) => p.logp, f32)!,
    ratio: cat((p) => p.ratio, f32)!,
    clipSide: cat(
      (p) => p.clipSide,
      (n) => new Uint8Array(n),
    )!,
    entropy: cat((p) => p.entropy, f32)!,
    ...(before ? { before } : {}),
    ...(kl ? { kl } : {}),
    ...(teacher && reverseKl ? { teacher, reverseKl } : {}),
  };
}
