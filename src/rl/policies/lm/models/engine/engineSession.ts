// A sampling session on the engine: prompts prefilled into a KV cache sized to the batch (groups of
// rows packed within the plan's positions per prefill), then one token of every row per step, a few
// rows at a time (rows never meet in decoding, so a step's memory is the plan's for those rows
// however many the cache holds); the sampler's draw over a step's logits runs in the engine's threads
// (engineDraw.ts). The session holds the engine (its memory is a stack) until disposed.
// Shapes: B rows, L layers, K key/value heads, E head width, V vocabulary, cap positions per row.
import { breathe, type AdapterSet, type Decoder, type Pack } from './decoder';
import type { DrawnRow, RowDraw } from '../policyModel';
import { drawRows } from './engineDraw';
import type { EngineMemory } from './engineMemory';

/** A batch being decoded: the last logits [B, V] and one step at a time. */
export interface DecodeSession {
  readonly logits: Float32Array;
  step(tokens: readonly number[]): Promise<Float32Array>;
  /** The sampler's draw over rows of `logits` (a step's) in the engine's threads, a step's rows at a time (engineDraw.ts). */
  drawRows(logits: Float32Array, rows: readonly RowDraw[], inv: number): DrawnRow[];
  dispose(): void;
}

/** What a session runs on: one role's decoder and adapters, the engine's memory, and its lock. */
export interface SessionContext {
  readonly decoder: Decoder;
  readonly adapters: AdapterSet;
  readonly mem: EngineMemory;
  readonly contextLength: number;
  /** Hands the engine back: at dispose, or when opening fails. */
  readonly unlock: () => void;
  /** Whether the engine was closed (a step then refuses). */
  readonly closed: () => boolean;
}

/**
 * Prefills `prompts` (each ≥ 1 token) into a KV cache of `capacity` positions per row, in groups of
 * rows within `positionsPerPrefill`, and returns the session: the last logits of each row and a step
 * over the next token of every row, `rowsPerStep` rows at a time.
 */
export async function openSession(
  c: SessionContext,
  prompts: readonly (readonly number[])[],
  capacity: number,
  positionsPerPrefill: number,
  rowsPerStep: number,
): Promise<DecodeSession> {
  const { decoder: d, adapters: ad, mem, unlock } = c;
  const { D, K, E, V } = d;
  const L = d.arch.layers,
    B = prompts.length;
  const cap = Math.max(1, Math.min(capacity, c.contextLength));
  const mark = mem.mark();
  try {
    const plane = B * K * cap * E;
    const kc = mem.allocF32(L * plane, 'KV cache keys');
    const vc = mem.allocF32(L * plane, 'KV cache values');
    const lens = mem.alloc(B * 4, 'decode lengths');
    const logits = new Float32Array(B * V);
    // the plan's head rows of a prefill (sequences of a whole context per pass) and of a step (its rows)
    const prefillLogitRows = Math.max(1, Math.min(B, Math.floor(positionsPerPrefill / c.contextLength)));
    const S = Math.max(1, Math.min(B, rowsPerStep));
    for (let b0 = 0; b0 < B;) {
      let b1 = b0 + 1,
        n = prompts[b0]!.length;
      while (b1 < B && n + prompts[b1]!.length <= positionsPerPrefill) n += prompts[b1++]!.length;
      await mem.scopedAsync(async () => {
        const group = prompts.slice(b0, b1);
        const pack = d.pack(group, 'prefill');
        const rows = mem.alloc(pack.N * 4, 'prefill rows');
        pack.segments.forEach((s, i) => mem.i32.fill(b0 + i, rows / 4 + s.start, rows / 4 + s.start + s.len));
        const X = mem.allocF32(pack.N * D, 'prefill stream');
        d.embed(pack, X);
        for (let l = 0; l < L; l++) {
          d.layer(l, X, pack, ad, false, { kc: kc + l * plane * 4, vc: vc + l * plane * 4, cap, rows });
          await breathe();
        }
        logits.set(
          d.logitsOf(
            X,
            pack.segments.map((s) => s.start + s.len - 1),
            prefillLogitRows,
          ),
          b0 * V,
        );
      });
      for (let b = b0; b < b1; b++) mem.i32[lens / 4 + b] = prompts[b]!.length;
      b0 = b1;
    }
    // a step: S rows at a time through every layer (rows never meet in decoding), so its memory is the
    // plan's for S rows however many rows the cache holds
    const rowPlane = K * cap * E * 4;
    const step = async (tokens: readonly number[]): Promise<Float32Array> => {
      if (c.closed()) throw new Error('HfEngine: used after close()');
      const out = new Float32Array(B * V);
      for (let r0 = 0; r0 < B; r0 += S) {
        const n = Math.min(S, B - r0);
        await mem.scopedAsync(async () => {
          const pos = mem.alloc(n * 4, 'decode positions');
          const rows = mem.alloc(n * 4, 'decode rows');
          const ids = mem.alloc(n * 4, 'decode ids');
          const at0 = lens + r0 * 4;
          for (let i = 0; i < n; i++) {
            // a finished row still steps (its token ignored): its position is held at the last column
            const at = Math.min(mem.i32[at0 / 4 + i]!, cap - 1);
            mem.i32[pos / 4 + i] = at;
            mem.i32[rows / 4 + i] = i;
            mem.i32[ids / 4 + i] = tokens[r0 + i] ?? 0;
            mem.i32[at0 / 4 + i] = at + 1;
          }
          const pack: Pack = { N: n, ids, pos, segments: [] };
          const X = mem.allocF32(n * D, 'decode stream');
          d.embed(pack, X);
          for (let l = 0; l < L; l++) {
            const cache = { kc: kc + l * plane * 4 + r0 * rowPlane, vc: vc + l * plane * 4 + r0 * rowPlane, cap, rows, lens: at0 };
            d.layer(l, X, pack, ad, false, cache);
            if (l % 8 === 7) await breathe();
          }
          out.set(
            d.logitsOf(
              X,
              Array.from({ length: n }, (_, i) => i),
            ),
            r0 * V,
          );
        });
      }
      return out;
    };
    let open = true;
    return {
      logits,
      step,
      drawRows: (z, rows, inv) => {
        if (!open || c.closed()) throw new Error('HfEngine: a draw on a closed session');
        return drawRows(mem, d.k, z, V, rows, inv, S);
      },
      dispose: () => {
        if (!open) return;
        open = false;
        mem.release(mark);
        unlock();
      },
    };
  } catch (e) {
    mem.release(mark);
    unlock();
    throw e;
  }
}
