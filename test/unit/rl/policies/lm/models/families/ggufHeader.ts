// A GGUF file's metadata and tensor directory, read back for the family tests (the layout in gguf.ts's
// opening comment: "GGUF", version, counts, typed key/values, then per tensor its name, dimensions
// innermost first, type and offset; data aligned to 32 bytes).
import * as fs from 'node:fs';

export interface GgufEntry {
  readonly name: string;
  /** Outermost first (the file stores them innermost first). */
  readonly shape: number[];
  readonly type: number;
  /** Absolute byte offset of the data in the file. */
  readonly at: number;
}

const SIZES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

export function readGgufHeader(file: string): { metadata: Map<string, unknown>; tensors: GgufEntry[] } {
  const b = fs.readFileSync(file);
  let p = 0;
  const u32 = (): number => ((p += 4), b.readUInt32LE(p - 4));
  const u64 = (): number => ((p += 8), Number(b.readBigUInt64LE(p - 8)));
  const str = (): string => {
    const n = u64();
    p += n;
    return b.toString('utf8', p - n, p);
  };
  const value = (type: number): unknown => {
    if (type === 8) return str();
    if (type === 9) {
      const of = u32();
      return Array.from({ length: u64() }, () => value(of));
    }
    const v = type === 4 ? b.readUInt32LE(p) : type === 6 ? b.readFloatLE(p) : type === 7 ? b[p] === 1 : type === 5 ? b.readInt32LE(p) : undefined;
    p += SIZES[type]!;
    return v;
  };
  if (b.toString('ascii', 0, 4) !== 'GGUF') throw new Error(`${file}: not GGUF`);
  p = 8;
  const nTensors = u64();
  const nMeta = u64();
  const metadata = new Map<string, unknown>();
  for (let i = 0; i < nMeta; i++) {
    const key = str();
    metadata.set(key, value(u32()));
  }
  const raw: { name: string; shape: number[]; type: number; offset: number }[] = [];
  for (let i = 0; i < nTensors; i++) {
    const name = str();
    const dims = Array.from({ length: u32() }, () => u64());
    raw.push({ name, shape: dims.reverse(), type: u32(), offset: u64() });
  }
  const data = Math.ceil(p / 32) * 32;
  return { metadata, tensors: raw.map((t) => ({ name: t.name, shape: t.shape, type: t.type, at: data + t.offset })) };
}
