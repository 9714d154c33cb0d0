// A trajectory's per-token numbers (TokenStats) as one BLOB: the learner's columns as float32, read
// back without parsing. 4·(3…7) + 1 bytes a trained token (the columns present) + a 16-byte header.
//   header  u8 format (1) · u8 flags (1 before, 2 kl, 4 π_old recomputed, 8 teacher) · u16 0 · u32 stepsBefore · u32 n · u32 lag
//   then    [before] logp ratio entropy [kl] [teacher reverseKl]   n float32 each, little-endian
//           clipSide                                              n u8
// Flag 8 (a distillation teacher's two columns) came with schema version 9; a BLOB without it reads as before.
import { badness, tokenRows, type TokenStatsJson, type WorstBy } from '../shared/tokenStatsRows';
import type { TokenStats, Turn } from '../shared/types';

const FORMAT = 1;
const HEADER = 16;
const BEFORE = 1;
const KL = 2;
const RECOMPUTED = 4;
const TEACHER = 8;

/** The columns as JSON for the views (null where a value is not finite). */
export function tokenStatsJson(s: TokenStats): TokenStatsJson {
  const arr = (a: Float32Array): (number | null)[] => Array.from(a, (v) => (Number.isFinite(v) ? v : null));
  return {
    stepsBefore: s.stepsBefore,
    old: s.old,
    lag: s.lag,
    ...(s.before ? { before: arr(s.before) } : {}),
    logp: arr(s.logp),
    ratio: arr(s.ratio),
    clipSide: Array.from(s.clipSide),
    entropy: arr(s.entropy),
    ...(s.kl ? { kl: arr(s.kl) } : {}),
    ...(s.teacher && s.reverseKl ? { teacher: arr(s.teacher), reverseKl: arr(s.reverseKl) } : {}),
  };
}

/**
 * The stored form of a trajectory's numbers, and the largest values the worst-token lists sort by
 * (absent: no such column): any of a trajectory's worst tokens is within its own largest, so a run's
 * N worst tokens lie in the N trajectories with the largest.
 */
export function encodeTokenStats(
  s: TokenStats,
  turns: readonly Pick<Turn, 'policy'>[],
): { data: Buffer; positions: number; maxAbsMismatch?: number; maxAbsLogRatio?: number; maxKl?: number; maxAbsReverseKl?: number } {
  const n = s.logp.length;
  const cols = { before: s.before, ratio: s.ratio, clipSide: s.clipSide, entropy: s.entropy, kl: s.kl, teacher: s.teacher, reverseKl: s.reverseKl };
  for (const [name, col] of Object.entries(cols)) {
    if (col && col.length !== n) throw new Error(`token statistics: ${name} has ${col.length} positions, logp ${n}`);
  }
  if ((s.teacher === undefined) !== (s.reverseKl === undefined)) {
    throw new Error(
      `token statistics: teacher and reverseKl come together (the teacher's log-prob and student − teacher), got only ${s.teacher ? 'teacher' : 'reverseKl'}`,
    );
  }
  const teacher = s.teacher && s.reverseKl ? [s.teacher, s.reverseKl] : [];
  const floats = [...(s.before ? [s.before] : []), s.logp, s.ratio, s.entropy, ...(s.kl ? [s.kl] : []), ...teacher];
  const data = Buffer.alloc(HEADER + 4 * n * floats.length + n);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  view.setUint8(0, FORMAT);
  view.setUint8(1, (s.before ? BEFORE : 0) | (s.kl ? KL : 0) | (s.old === 'recomputed' ? RECOMPUTED : 0) | (teacher.length > 0 ? TEACHER : 0));
  view.setUint32(4, s.stepsBefore, true);
  view.setUint32(8, n, true);
  view.setUint32(12, s.lag, true);
  let at = HEADER;
  for (const col of floats) {
    for (let i = 0; i < n; i++, at += 4) view.setFloat32(at, col[i]!, true);
  }
  data.set(s.clipSide, at);
  const rows = tokenRows(turns, tokenStatsJson(s));
  const max = (by: WorstBy): { v?: number } => {
    let v: number | undefined;
    for (const r of rows) {
      const b = badness(r, by);
      if (b !== undefined && (v === undefined || b > v)) v = b;
    }
    return v === undefined ? {} : { v };
  };
  const [mm, lr, kl, rk] = [max('mismatch').v, max('logRatio').v, max('kl').v, max('reverseKl').v];
  return {
    data,
    positions: n,
    ...(mm !== undefined ? { maxAbsMismatch: mm } : {}),
    ...(lr !== undefined ? { maxAbsLogRatio: lr } : {}),
    ...(kl !== undefined ? { maxKl: kl } : {}),
    ...(rk !== undefined ? { maxAbsReverseKl: rk } : {}),
  };
}

export class TokenStatsFormatError extends Error {
  constructor(message: string) {
    super(`stored token statistics: ${message} (written by another version?). Fix: none needed to read the run; the token view leaves them out`);
    this.name = 'TokenStatsFormatError';
  }
}

/**
 * Reads what encodeTokenStats wrote; a BLOB of another shape is a TokenStatsFormatError, never a wrong
 * column. `positions`: the count the row says it holds (a BLOB claiming another is refused, so a crafted
 * row cannot make the reader build arrays of any size it likes).
 */
export function decodeTokenStats(data: Uint8Array, positions?: number): TokenStats {
  if (data.byteLength < HEADER) throw new TokenStatsFormatError(`${data.byteLength} bytes, shorter than the header`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (view.getUint8(0) !== FORMAT) throw new TokenStatsFormatError(`format ${view.getUint8(0)}`);
  const flags = view.getUint8(1);
  if ((flags & ~(BEFORE | KL | RECOMPUTED | TEACHER)) !== 0 || view.getUint16(2, true) !== 0) throw new TokenStatsFormatError(`unknown flags ${flags}`);
  const stepsBefore = view.getUint32(4, true);
  const n = view.getUint32(8, true);
  const lag = view.getUint32(12, true);
  if (positions !== undefined && n !== positions) throw new TokenStatsFormatError(`${n} positions where the row says ${positions}`);
  const columns = 3 + (flags & BEFORE ? 1 : 0) + (flags & KL ? 1 : 0) + (flags & TEACHER ? 2 : 0);
  if (data.byteLength !== HEADER + 4 * n * columns + n) throw new TokenStatsFormatError(`${data.byteLength} bytes for ${n} positions × ${columns} columns`);
  let at = HEADER;
  const next = (): Float32Array => {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++, at += 4) out[i] = view.getFloat32(at, true);
    return out;
  };
  const before = flags & BEFORE ? next() : undefined;
  const logp = next();
  const ratio = next();
  const entropy = next();
  const kl = flags & KL ? next() : undefined;
  const teacher = flags & TEACHER ? next() : undefined;
  const reverseKl = flags & TEACHER ? next() : undefined;
  const clipSide = Uint8Array.from(data.subarray(at, at + n));
  return {
    stepsBefore,
    old: flags & RECOMPUTED ? 'recomputed' : 'behaviour',
    lag,
    ...(before ? { before } : {}),
    logp,
    ratio,
    clipSide,
    entropy,
    ...(kl ? { kl } : {}),
    ...(teacher && reverseKl ? { teacher, reverseKl } : {}),
  };
}
