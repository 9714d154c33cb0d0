// Reads Hugging Face weights in the safetensors format: an unsigned 64-bit little-endian header length,
// a JSON header ({ name: { dtype, shape, data_offsets: [begin, end] }, "__metadata__": {...} }), then
// the raw little-endian data. float32, float16 and bfloat16 are converted to float32 once, here. A
// checkpoint is one `model.safetensors` or shards listed by `model.safetensors.index.json`. Every error
// names the file and what is wrong in it.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { familyOf } from './families/familyOf';
import { readFully } from './fileChunks';
import type { TensorSpec } from './families/modelFamily';
import { ModelLoadError, type HfArchitecture } from './hfConfig';

export const SAFETENSORS_DTYPES = ['F32', 'F16', 'BF16'] as const;
export type SafetensorsDtype = (typeof SAFETENSORS_DTYPES)[number];

export interface StoredTensor {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  /** The file it lies in (shards name theirs). */
  readonly file: string;
  /** Byte range in the file (after the header). */
  readonly begin: number;
  readonly end: number;
}

interface HeaderEntry {
  dtype?: unknown;
  shape?: unknown;
  data_offsets?: unknown;
}

const BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };

/** Reads one file's header: its tensors (names, dtypes, shapes, byte ranges). */
export function safetensorsHeader(file: string): StoredTensor[] {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    throw new ModelLoadError(
      `${file}: cannot open (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}). Fix: point the model folder at a saved Hugging Face checkpoint`,
    );
  }
  try {
    const size = fs.fstatSync(fd).size;
    const lenBuf = Buffer.alloc(8);
    if (size < 8 || fs.readSync(fd, lenBuf, 0, 8, 0) !== 8) throw new ModelLoadError(`${file}: not a safetensors file (shorter than its 8-byte header length)`);
    const headerLength = Number(lenBuf.readBigUInt64LE(0));
    if (headerLength <= 0 || 8 + headerLength > size || headerLength > 100 * 2 ** 20)
      throw new ModelLoadError(`${file}: not a safetensors file (header length ${headerLength} for a file of ${size} bytes)`);
    const head = Buffer.alloc(headerLength);
    fs.readSync(fd, head, 0, headerLength, 8);
    let json: Record<string, HeaderEntry>;
    try {
      json = JSON.parse(head.toString('utf8')) as Record<string, HeaderEntry>;
    } catch (e) {
      throw new ModelLoadError(`${file}: the safetensors header is not JSON (${(e as Error).message})`);
    }
    if (!json || typeof json !== 'object' || Array.isArray(json)) throw new ModelLoadError(`${file}: the safetensors header is not a JSON object`);
    const dataStart = 8 + headerLength;
    const out: StoredTensor[] = [];
    for (const [name, entry] of Object.entries(json)) {
      if (name === '__metadata__') continue;
      if (!entry || typeof entry !== 'object') throw new ModelLoadError(`${file}: tensor ${name}'s header entry is not an object`);
      const dtype = entry.dtype as SafetensorsDtype;
      const shape = entry.shape as number[];
      const offsets = entry.data_offsets as number[];
      if (
        !Array.isArray(shape) ||
        !shape.every((d) => Number.isInteger(d) && d >= 0) ||
        !Array.isArray(offsets) ||
        offsets.length !== 2 ||
        !offsets.every((x) => Number.isInteger(x) && x >= 0) ||
        offsets[0]! > offsets[1]!
      ) {
        throw new ModelLoadError(`${file}: tensor ${name} has a malformed shape or data_offsets`);
      }
      const [b, e] = offsets as [number, number];
      if (dataStart + e > size)
        throw new ModelLoadError(`${file}: tensor ${name}'s data_offsets [${b}, ${e}] run past the end of the file (truncated download?)`);
      // a dtype we do not read is refused only if the model needs that tensor (readTensor)
      if (!SAFETENSORS_DTYPES.includes(dtype)) {
        out.push({ name, dtype, shape, file, begin: dataStart + b, end: dataStart + e });
        continue;
      }
      const count = shape.reduce((a, c) => a * c, 1);
      if (e - b !== count * BYTES[dtype]) {
        throw new ModelLoadError(
          `${file}: tensor ${name} (${dtype} ${shape.join('×')}) needs ${count * BYTES[dtype]} bytes but its data_offsets [${b}, ${e}] give ${e - b}${dataStart + e > size ? ' and run past the end of the file (truncated download?)' : ''}`,
        );
      }
      out.push({ name, dtype, shape, file, begin: dataStart + b, end: dataStart + e });
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

/** float16 bits → float32 value. */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

/** Converts raw little-endian bytes of one dtype to float32. */
export function toFloat32(bytes: Buffer, dtype: SafetensorsDtype): Float32Array {
  if (dtype === 'F32') {
    const out = new Float32Array(bytes.length / 4);
    new Uint8Array(out.buffer).set(bytes);
    return out;
  }
  const n = bytes.length / 2;
  const out = new Float32Array(n);
  if (dtype === 'BF16') {
    // bfloat16 is the top half of a float32
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) bits[i] = bytes.readUInt16LE(2 * i) << 16;
    return out;
  }
  const table = halfTable();
  for (let i = 0; i < n; i++) out[i] = table[bytes.readUInt16LE(2 * i)]!;
  return out;
}

let halves: Float32Array | undefined;
function halfTable(): Float32Array {
  if (!halves) {
    halves = new Float32Array(65536);
    for (let h = 0; h < 65536; h++) halves[h] = halfToFloat(h);
  }
  return halves;
}

/** Reads one tensor's bytes as stored. */
export function readTensorBytes(t: StoredTensor): Buffer {
  if (!SAFETENSORS_DTYPES.includes(t.dtype)) {
    throw new ModelLoadError(
      `${t.file}: tensor ${t.name} has dtype ${JSON.stringify(t.dtype)}; supported: ${SAFETENSORS_DTYPES.join(', ')}. Fix: save the model in float32, float16 or bfloat16 (quantised weights are not read)`,
    );
  }
  const fd = fs.openSync(t.file, 'r');
  try {
    const buf = Buffer.alloc(t.end - t.begin);
    readFully(
      fd,
      buf,
      t.begin,
      (got) => new ModelLoadError(`${t.file}: tensor ${t.name}: read ${got} of ${buf.length} bytes (the file changed or is truncated)`),
    );
    return buf;
  } finally {
    fs.closeSync(fd);
  }
}

/** Reads one tensor's data as float32. */
export function readTensor(t: StoredTensor): Float32Array {
  return toFloat32(readTensorBytes(t), t.dtype);
}

/**
 * The stored tensor a family spec names (under its name or an alternative), shape-checked against the
 * config; `check` runs between (the engine refuses dtypes it cannot read there). Errors name the file and the fix.
 */
export function specTensor(
  stored: ReadonlyMap<string, StoredTensor>,
  dir: string,
  spec: TensorSpec,
  a: HfArchitecture,
  check?: (t: StoredTensor) => void,
): StoredTensor {
  const alternatives = spec.alternatives ?? [];
  const found = [spec.name, ...alternatives].map((n) => stored.get(n)).find((t): t is StoredTensor => t !== undefined);
  if (!found)
    throw new ModelLoadError(
      `${dir}: the checkpoint has no tensor ${spec.name}${alternatives.length ? ` (nor ${alternatives.join(', ')})` : ''}; a ${a.modelType} model of this config.json needs it. Fix: check that config.json belongs to these weights`,
    );
  check?.(found);
  if (found.shape.join('×') !== spec.shape.join('×')) {
    throw new ModelLoadError(
      `${found.file}: tensor ${found.name} has shape ${found.shape.join('×')}, but config.json (hidden_size ${a.hidden}, heads ${a.heads}, kv heads ${a.kvHeads}, head width ${a.headDim}, vocab ${a.vocabSize}) needs ${spec.shape.join('×')}. Fix: check that config.json belongs to these weights`,
    );
  }
  return found;
}

/**
 * Every tensor of a checkpoint folder: `model.safetensors`, or the shards its
 * `model.safetensors.index.json` names (each shard's header is read; the index must cover them).
 */
export function checkpointTensors(dir: string): Map<string, StoredTensor> {
  const single = path.join(dir, 'model.safetensors');
  const index = path.join(dir, 'model.safetensors.index.json');
  const files: string[] = [];
  if (fs.existsSync(index)) {
    let map: Record<string, string>;
    try {
      map = (JSON.parse(fs.readFileSync(index, 'utf8')) as { weight_map?: Record<string, string> }).weight_map ?? {};
    } catch (e) {
      throw new ModelLoadError(`${index}: not valid JSON (${(e as Error).message})`);
    }
    const shards = [...new Set(Object.values(map))].sort();
    if (shards.length === 0) throw new ModelLoadError(`${index}: weight_map is empty. Fix: save the checkpoint again (save_pretrained)`);
    for (const s of shards) {
      if (path.basename(s) !== s) throw new ModelLoadError(`${index}: shard ${JSON.stringify(s)} is not a file name in the folder`);
      const f = path.join(dir, s);
      if (!fs.existsSync(f))
        throw new ModelLoadError(`${index} names ${s}, which is missing from ${dir}. Fix: copy every shard of the checkpoint into the folder`);
      files.push(f);
    }
  } else if (fs.existsSync(single)) {
    files.push(single);
  } else {
    const bins = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /\.(bin|pt|pth|gguf)$/.test(f)) : [];
    throw new ModelLoadError(
      `${dir}: no model.safetensors and no model.safetensors.index.json${bins.length ? ` (found ${bins.join(', ')}: only the safetensors format is read)` : ''}. Fix: save the model with save_pretrained(safe_serialization=True), or download the safetensors files of the checkpoint`,
    );
  }
  const all = new Map<string, StoredTensor>();
  for (const f of files) for (const t of safetensorsHeader(f)) all.set(t.name, t);
  return all;
}

/** float32 → bfloat16 bits, rounded to nearest even (NaN stays NaN). */
function toBfloat16(data: Float32Array): Uint16Array {
  const bits = new Uint32Array(data.buffer, data.byteOffset, data.length);
  const out = new Uint16Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const b = bits[i]!;
    out[i] = (b & 0x7fffffff) > 0x7f800000 ? (b >>> 16) | 0x40 : (b + 0x7fff + ((b >>> 16) & 1)) >>> 16;
  }
  return out;
}

/** Writes float32 tensors as one safetensors file (names sorted, the header padded to 8 bytes), stored as F32 or rounded to BF16. */
export function writeSafetensors(
  file: string,
  tensors: ReadonlyMap<string, { readonly data: Float32Array; readonly shape: readonly number[] }>,
  dtype: 'F32' | 'BF16' = 'F32',
): void {
  const names = [...tensors.keys()].sort();
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  const bytesOf = (n: string): Uint8Array => {
    const d = tensors.get(n)!.data;
    const v = dtype === 'BF16' ? toBfloat16(d) : d;
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  };
  let offset = 0;
  for (const n of names) {
    const t = tensors.get(n)!;
    const size = t.data.length * (dtype === 'BF16' ? 2 : 4);
    header[n] = { dtype, shape: t.shape, data_offsets: [offset, offset + size] };
    offset += size;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const head = Buffer.from(json, 'utf8');
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(head.length));
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, len);
    fs.writeSync(fd, head);
    for (const n of names) fs.writeSync(fd, bytesOf(n));
  } finally {
    fs.closeSync(fd);
  }
}

/** Every tensor the family's spec lists, read as float32 and shape-checked, in the spec's order (the tfjs decoder's weights). */
export function readFamilyTensors(dir: string, a: HfArchitecture): Map<string, { data: Float32Array; shape: number[] }> {
  const stored = checkpointTensors(dir);
  const out = new Map<string, { data: Float32Array; shape: number[] }>();
  for (const t of familyOf(a).tensors(a)) out.set(t.name, { data: readTensor(specTensor(stored, dir, t, a)), shape: [...t.shape] });
  return out;
}
