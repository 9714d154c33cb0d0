// The sampler's draw in the engine's threads (issue 50, item 6): rows of a step's logits are copied into
// engine memory a few at a time (the rows of a decoding step, so within the memory plan), masked there
// when a grammar constrains them, and the kernels (scripts/kernels/drawWat.mjs) compute each row's
// normaliser — max z·inv and Σ exp(z·inv − max) — and walk its cumulative distribution with the
// uniform the main thread drew, rows split over the threads. The float64 arithmetic and its order are
// sampleRow's (src/rl/policies/lm/sampler.ts) and exp is V8's own (fdlibm), so the tokens and the
// log-probs are bit for bit those of the JavaScript path. Shapes: n rows, V vocabulary; float32 logits.
import type { DrawnRow, RowDraw } from '../policyModel';
import type { EngineMemory } from './engineMemory';
import type { EngineKernels } from './kernels';

/**
 * Draws `rows` of `logits` [B, V] at 1/temperature `inv`, `maxRows` rows at a time in engine memory:
 * a row with a uniform walks its distribution, one without takes its first maximum; every row's
 * log-normaliser is max + Math.log(sum), computed here as logSumExp computes it.
 */
export function drawRows(
  mem: EngineMemory,
  k: EngineKernels,
  logits: Float32Array,
  V: number,
  rows: readonly RowDraw[],
  inv: number,
  maxRows: number,
): DrawnRow[] {
  if (V <= 0 || logits.length % V !== 0) throw new Error(`engine draw: ${logits.length} logits are not whole rows of ${V}`);
  const out: DrawnRow[] = [];
  const step = Math.max(1, maxRows);
  for (let r0 = 0; r0 < rows.length; r0 += step) {
    const part = rows.slice(r0, r0 + step);
    const n = part.length;
    mem.scoped(() => {
      const z = mem.allocF32(n * V, 'draw logits');
      const norm = mem.alloc(n * 24, 'draw normalisers'); // [n, 3] float64: max, sum, argmax
      const lse = mem.alloc(n * 8, 'draw log-normalisers');
      const u = mem.alloc(n * 8, 'draw uniforms');
      const tok = mem.alloc(n * 4, 'draw tokens');
      part.forEach((r, i) => {
        if (r.row < 0 || (r.row + 1) * V > logits.length) throw new Error(`engine draw: row ${r.row} is outside the ${logits.length / V} rows of the logits`);
        const at = z / 4 + i * V;
        mem.f32.set(logits.subarray(r.row * V, (r.row + 1) * V), at);
        r.mask?.(mem.f32.subarray(at, at + V));
      });
      k.drawNorm(z, V, n, V, inv, norm);
      const f64 = new Float64Array(mem.memory.buffer, norm, n * 3);
      const lseOf = new Float64Array(mem.memory.buffer, lse, n);
      const uOf = new Float64Array(mem.memory.buffer, u, n);
      const tokens = part.map((r, i) => {
        lseOf[i] = f64[3 * i]! + Math.log(f64[3 * i + 1]!);
        // a row without a uniform stops at its first token (u < 0), and keeps its argmax
        uOf[i] = r.u ?? -1;
        return f64[3 * i + 2]!;
      });
      if (part.some((r) => r.u !== undefined)) {
        k.drawWalk(z, V, n, V, inv, lse, u, tok);
        part.forEach((r, i) => {
          if (r.u !== undefined) tokens[i] = mem.i32[tok / 4 + i]!;
        });
      }
      part.forEach((_, i) => out.push({ token: tokens[i]!, lse: lseOf[i]! }));
    });
  }
  return out;
}
