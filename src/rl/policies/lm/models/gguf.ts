// A Hugging Face checkpoint written as GGUF (version 3), the format llama.cpp reads: the native rollout
// engine (node-llama-cpp) samples from it. The layout: "GGUF", version, tensor and metadata counts;
// metadata as typed key/values; each tensor's name, dimensions (innermost first), type and offset;
// then the data, every tensor aligned to 32 bytes. Tensors keep the checkpoint's dtype (bfloat16 stays
// bfloat16 byte for byte, so the sampler computes the trainer's weights), except 1-D ones (norms,
// biases), which llama.cpp reads as float32. With `weightDtype: 'q8'` every matrix is written as
// Q8_0 (GGML type 8) instead: exactly the tensors the engine holds as Q8_0 blocks at weightDtype "q8"
// (every 2-D tensor: the linear weights, the embedding rows and an untied head), quantized by
// q8Blocks' own quantizer and encoder from the same float32 values, so llama.cpp and the engine read
// identical blocks. Names, the architecture and which rows are permuted to llama.cpp's rotary layout
// (Llama's q and k; a permutation of rows, so it commutes with blocks along the columns) are the
// family spec's (families/: qwen2, qwen3, llama), as llama.cpp's own converter writes them; so is
// Llama 3's rope scaling, as the per-frequency factors of a `rope_freqs.weight` tensor.
// The vocabulary is the tokenizer.json's, padded to the model's rows; the workbench passes token ids in
// and reads ids out, so llama.cpp's tokenizer is never used, but it must load.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { FAMILIES, familyOf } from './families/familyOf';
import type { GgufFamily, ModelFamily } from './families/modelFamily';
import { ModelLoadError, readHfConfig, ropeInverseFrequencies, type HfArchitecture, type HfModelType } from './hfConfig';
import { writeFully } from './fileChunks';
import { encodeGgufQ8_0, ggufQ8_0Bytes, quantizeQ8 } from './q8Blocks';
import { checkpointTensors, readTensorBytes, specTensor, toFloat32, type StoredTensor } from './safetensors';

const ALIGN = 32;
/** GGUF metadata value types. */
const T = { u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11, f64: 12 } as const;
type Scalar = 'u32' | 'i32' | 'f32' | 'bool' | 'string' | 'u64';
export type GgufValue = { type: Scalar; value: number | boolean | string } | { type: 'array'; of: Scalar; values: readonly (number | string | boolean)[] };
/** GGML tensor types the writer emits. */
export const GGML = { F32: 0, F16: 1, Q8_0: 8, BF16: 30 } as const;
export type GgmlType = keyof typeof GGML;
const ELEMENT_BYTES: Record<Exclude<GgmlType, 'Q8_0'>, number> = { F32: 4, F16: 2, BF16: 2 };

/** Bytes of a tensor of `shape` (outermost first) in `type`: Q8_0 is 34 bytes per block of 32 along the innermost dimension. */
export function ggmlBytes(type: GgmlType, shape: readonly number[]): number {
  const n = shape.reduce((a, b) => a * b, 1);
  if (type !== 'Q8_0') return n * ELEMENT_BYTES[type];
  const cols = shape.at(-1) ?? 1;
  return ggufQ8_0Bytes(n / cols, cols);
}

export interface GgufTensor {
  readonly name: string;
  /** Row-major shape, outermost first (as PyTorch and safetensors write it). */
  readonly shape: readonly number[];
  readonly type: GgmlType;
  /** The tensor's bytes, little-endian, in `type`; produced when written, so a large checkpoint is never whole in memory. */
  readonly data: () => Uint8Array;
}

class Sink {
  private readonly chunks: Buffer[] = [];
  length = 0;
  put(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }
  u32(v: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.put(b);
  }
  u64(v: number | bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.put(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.put(b);
  }
  scalar(type: Scalar, v: number | boolean | string): void {
    switch (type) {
      case 'u32':
        return this.u32(v as number);
      case 'i32': {
        const b = Buffer.alloc(4);
        b.writeInt32LE(v as number);
        return this.put(b);
      }
      case 'f32': {
        const b = Buffer.alloc(4);
        b.writeFloatLE(v as number);
        return this.put(b);
      }
      case 'bool':
        return this.put(Buffer.from([v ? 1 : 0]));
      case 'string':
        return this.str(v as string);
      case 'u64':
        return this.u64(v as number);
    }
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

const pad = (n: number): number => (ALIGN - (n % ALIGN)) % ALIGN;

/** Writes a GGUF file: metadata in the order given, then the tensors (each produced, written and dropped in turn). */
export function writeGguf(file: string, metadata: readonly [string, GgufValue][], tensors: readonly GgufTensor[]): void {
  const head = new Sink();
  head.put(Buffer.from('GGUF', 'ascii'));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(metadata.length);
  for (const [key, v] of metadata) {
    head.str(key);
    if (v.type === 'array') {
      head.u32(T.array);
      head.u32(T[v.of]);
      head.u64(v.values.length);
      for (const x of v.values) head.scalar(v.of, x);
    } else {
      head.u32(T[v.type]);
      head.scalar(v.type, v.value);
    }
  }
  let offset = 0;
  for (const t of tensors) {
    head.str(t.name);
    head.u32(t.shape.length);
    for (const d of [...t.shape].reverse()) head.u64(d);
    head.u32(GGML[t.type]);
    head.u64(offset);
    offset += ggmlBytes(t.type, t.shape);
    offset += pad(offset);
  }
  head.put(Buffer.alloc(pad(head.length)));
  // written whole under a temporary name, then renamed: a reader never sees a part, and a failed write
  // (a tensor that throws, a full disk) removes its part rather than leaving it beside the cache
  const tmp = `${file}.${process.pid}.partial`;
  const fd = fs.openSync(tmp, 'w');
  try {
    try {
      writeFully(fd, head.bytes());
      for (const t of tensors) {
        const data = t.data();
        const want = ggmlBytes(t.type, t.shape);
        if (data.length !== want)
          throw new Error(`GGUF tensor ${t.name}: ${data.length} bytes for shape [${t.shape.join(', ')}] in ${t.type} (${want} expected)`);
        writeFully(fd, data);
        writeFully(fd, Buffer.alloc(pad(data.length)));
      }
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
}

// ---- a Hugging Face checkpoint as llama.cpp's model ----

/** float32 bytes of a stored tensor's bytes. */
function asF32(t: StoredTensor, raw: Buffer): Buffer {
  if (t.dtype === 'F32') return raw;
  const f = toFloat32(raw, t.dtype);
  return Buffer.from(f.buffer, f.byteOffset, f.byteLength);
}

/**
 * Llama's q and k rows from Hugging Face's rotary layout (the two halves of each head rotate together)
 * to llama.cpp's (adjacent pairs rotate together): row (h, half, i) moves to (h, i, half).
 */
function permuteRotary(raw: Buffer, rows: number, cols: number, heads: number, bytes: number): Buffer {
  const out = Buffer.alloc(raw.length);
  const dim = rows / heads,
    half = dim / 2,
    rowBytes = cols * bytes;
  for (let h = 0; h < heads; h++)
    for (let s = 0; s < 2; s++)
      for (let i = 0; i < half; i++)
        raw.copy(out, (h * dim + i * 2 + s) * rowBytes, (h * dim + s * half + i) * rowBytes, (h * dim + s * half + i + 1) * rowBytes);
  return out;
}

/**
 * llama.cpp's name for a Hugging Face tensor name in `family`, or undefined when llama.cpp has none (e.g.
 * rotary tables). Without a family: the name the GGUF families give it (they share llama.cpp's names).
 */
export function ggufTensorName(hf: string, family?: ModelFamily): string | undefined {
  if (family) return family.gguf?.tensorName(hf);
  for (const f of Object.values(FAMILIES)) {
    const name = f.gguf?.tensorName(hf);
    if (name) return name;
  }
  return undefined;
}

/** The family's GGUF description, or a refusal naming the family and the way out. */
function ggufOf(family: ModelFamily, what: string): GgufFamily {
  if (!family.gguf)
    throw new ModelLoadError(
      `${what}: llama.cpp does not run ${family.modelType} models here. Fix: sample this model on the engine or tfjs (rolloutEngine "engine")`,
    );
  return family.gguf;
}

interface TokenizerJson {
  model?: { type?: string; vocab?: Record<string, number> | [string, number][]; merges?: (string | [string, string])[] };
  added_tokens?: { id: number; content: string; special?: boolean }[];
}

/** The vocabulary as llama.cpp's "gpt2" tokenizer metadata, padded to `rows` tokens. */
function vocabularyMetadata(dir: string, rows: number, pre: string): [string, GgufValue][] {
  const file = path.join(dir, 'tokenizer.json');
  let tok: TokenizerJson;
  try {
    tok = JSON.parse(fs.readFileSync(file, 'utf8')) as TokenizerJson;
  } catch (e) {
    throw new ModelLoadError(`${file}: cannot read the tokenizer (${(e as Error).message}). Fix: the checkpoint folder needs its tokenizer.json`);
  }
  const tokens: string[] = new Array<string>(rows).fill('');
  const types: number[] = new Array<number>(rows).fill(0);
  const vocab = tok.model?.vocab ?? {};
  const entries: [string, number][] = Array.isArray(vocab) ? vocab.map(([t], i) => [t, i]) : Object.entries(vocab);
  for (const [t, id] of entries) if (id < rows) [tokens[id], types[id]] = [t, 1];
  for (const a of tok.added_tokens ?? []) if (a.id < rows) [tokens[a.id], types[a.id]] = [a.content, a.special ? 3 : 4];
  for (let i = 0; i < rows; i++) if (types[i] === 0) [tokens[i], types[i]] = [`[PAD${i}]`, 4];
  const merges = (tok.model?.merges ?? []).map((m) => (Array.isArray(m) ? m.join(' ') : m));
  return [
    ['tokenizer.ggml.model', { type: 'string', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'string', value: pre }],
    ['tokenizer.ggml.tokens', { type: 'array', of: 'string', values: tokens }],
    ['tokenizer.ggml.token_type', { type: 'array', of: 'i32', values: types }],
    ['tokenizer.ggml.merges', { type: 'array', of: 'string', values: merges }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
  ];
}

/** How the writer stores a checkpoint's matrices: as stored (bfloat16 stays bfloat16), or as Q8_0 blocks. */
export type GgufWeightDtype = 'stored' | 'q8';

/** Float32 values converted and quantized at a time when a matrix is written as Q8_0 (the rest stays raw). */
const Q8_CHUNK_VALUES = 4 * 2 ** 20;

/**
 * A [rows, cols] matrix's float32 values (rows after the rotary permutation) as GGUF Q8_0 bytes, a chunk
 * of rows at a time: q8Blocks' quantizeQ8 with float16 scales (the quantizer the engine's loader runs
 * as a wasm kernel, bit for bit) and encodeGgufQ8_0.
 */
function q8Bytes(values: (r0: number, r1: number) => Float32Array, rows: number, cols: number, name: string): Uint8Array {
  if (cols % 32 !== 0) throw new ModelLoadError(`GGUF ${name}: ${cols} columns are not a multiple of 32 (a Q8_0 block). Fix: policyOptions.weightDtype "bf16"`);
  const out = new Uint8Array(ggufQ8_0Bytes(rows, cols));
  const rowBytes = ggufQ8_0Bytes(1, cols);
  const chunk = Math.max(1, Math.floor(Q8_CHUNK_VALUES / cols));
  for (let r0 = 0; r0 < rows; r0 += chunk) {
    const r1 = Math.min(rows, r0 + chunk);
    out.set(encodeGgufQ8_0(quantizeQ8(values(r0, r1), r1 - r0, cols, 'weight')), r0 * rowBytes);
  }
  return out;
}

/**
 * Llama 3's rope scaling as llama.cpp's converter writes it: one factor per rotated pair that divides
 * the pair's frequency (1 for short wavelengths, `factor` for long ones, the smooth blend between),
 * i.e. the unscaled inverse frequency over the scaled one the engine and the tfjs decoder use.
 */
function ropeFreqFactors(arch: HfArchitecture): Float32Array {
  // the unscaled inverse frequency of pair i is 1 / θ^(2i / E), as in ropeInverseFrequencies
  return Float32Array.from(ropeInverseFrequencies(arch), (f, i) => 1 / arch.ropeTheta ** ((2 * i) / arch.headDim) / f);
}

/**
 * Writes `dir`'s checkpoint as a GGUF file llama.cpp loads (`file`): the stored dtypes (1-D tensors as
 * float32), or every matrix as Q8_0 (`weightDtype: 'q8'`: the blocks the engine holds at weightDtype
 * "q8"), or `weights` (trained values by Hugging Face name and layout, float32) in place of the stored
 * ones (as float32, or quantized at q8); llama.cpp's names and metadata. Returns the tensors written.
 * (Float16 or float32 matrices in place of bfloat16 ones were tried on this CPU: llama.cpp sampled no
 * faster.)
 */
export function writeCheckpointGguf(
  dir: string,
  file: string,
  o: { weights?: ReadonlyMap<string, { readonly data: Float32Array; readonly shape: readonly number[] }>; weightDtype?: GgufWeightDtype } = {},
): { tensors: number; bytes: number } {
  const arch = readHfConfig(dir);
  const stored = checkpointTensors(dir);
  const gguf = ggufOf(familyOf(arch), dir);
  const a = gguf.architecture;
  const q8 = o.weightDtype === 'q8';
  const meta: [string, GgufValue][] = [
    ['general.architecture', { type: 'string', value: a }],
    ['general.name', { type: 'string', value: path.basename(dir) }],
    ['general.alignment', { type: 'u32', value: ALIGN }],
    // llama.cpp's file type (llama_ftype): 7 = MOSTLY_Q8_0; the float files say nothing, as before
    ...(q8 ? ([['general.file_type', { type: 'u32', value: 7 }]] as [string, GgufValue][]) : []),
    [`${a}.block_count`, { type: 'u32', value: arch.layers }],
    [`${a}.context_length`, { type: 'u32', value: arch.maxPositions }],
    [`${a}.embedding_length`, { type: 'u32', value: arch.hidden }],
    [`${a}.feed_forward_length`, { type: 'u32', value: arch.intermediate }],
    [`${a}.attention.head_count`, { type: 'u32', value: arch.heads }],
    [`${a}.attention.head_count_kv`, { type: 'u32', value: arch.kvHeads }],
    [`${a}.attention.key_length`, { type: 'u32', value: arch.headDim }],
    [`${a}.attention.value_length`, { type: 'u32', value: arch.headDim }],
    [`${a}.rope.freq_base`, { type: 'f32', value: arch.ropeTheta }],
    [`${a}.attention.layer_norm_rms_epsilon`, { type: 'f32', value: arch.normEps }],
    ...(gguf.ropeDimensionCount ? ([[`${a}.rope.dimension_count`, { type: 'u32', value: arch.headDim }]] as [string, GgufValue][]) : []),
    ...vocabularyMetadata(dir, arch.vocabSize, gguf.pre),
  ];
  // llama.cpp reads Llama 3's rope scaling from a rope_freqs tensor in its llama architecture only
  if (arch.ropeScaling && a !== 'llama')
    throw new ModelLoadError(`${dir}: rope_scaling is not written to GGUF for ${a} models. Fix: sample this model on the engine (rolloutEngine "engine")`);
  const tensors: GgufTensor[] = [];
  // the spec's tensors that llama.cpp has (a tied head is the embedding: not written twice), by name
  const specs = familyOf(arch)
    .tensors(arch)
    .filter((t) => t.gguf !== undefined)
    .sort((x, y) => x.name.localeCompare(y.name, 'en', { numeric: true }));
  for (const spec of specs) {
    const t = specTensor(stored, dir, spec, arch);
    const name = spec.gguf!;
    const oneD = t.shape.length === 1;
    const [rows, cols] = [t.shape[0]!, t.shape[1] ?? 1];
    // trained weights given in memory (full fine-tuning) replace the stored ones, in float32
    const given = o.weights?.get(spec.name);
    if (given && given.data.length !== t.shape.reduce((x, y) => x * y, 1))
      throw new Error(`GGUF: trained ${t.name} has ${given.data.length} values for [${t.shape.join(', ')}]`);
    const type: GgmlType = oneD ? 'F32' : q8 ? 'Q8_0' : given ? 'F32' : t.dtype;
    const heads = spec.ggufRotaryHeads;
    tensors.push({
      name,
      shape: t.shape,
      type,
      data: () => {
        if (type === 'Q8_0') {
          // rows in llama.cpp's order (the given float32 values, or the stored bytes), widened to float32 a chunk at a time
          const bytes = given ? Buffer.from(given.data.buffer, given.data.byteOffset, given.data.byteLength) : readTensorBytes(t);
          const el = given || t.dtype === 'F32' ? 4 : 2;
          const ordered = heads ? permuteRotary(bytes, rows, cols, heads, el) : bytes;
          const rowsOf = (r0: number, r1: number): Float32Array => {
            const part = ordered.subarray(r0 * cols * el, r1 * cols * el);
            // a copy: the part's byte offset need not be a multiple of 4
            return el === 4 ? new Float32Array(part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength)) : toFloat32(part, t.dtype);
          };
          return q8Bytes(rowsOf, rows, cols, name);
        }
        if (given) {
          const bytes = Buffer.from(given.data.buffer, given.data.byteOffset, given.data.byteLength);
          return heads ? permuteRotary(bytes, rows, cols, heads, 4) : bytes;
        }
        const raw = readTensorBytes(t);
        const typed = type === t.dtype ? raw : asF32(t, raw);
        return heads ? permuteRotary(typed, rows, cols, heads, ELEMENT_BYTES[type]) : typed;
      },
    });
  }
  if (arch.ropeScaling) {
    const factors = ropeFreqFactors(arch);
    tensors.push({ name: 'rope_freqs.weight', shape: [factors.length], type: 'F32', data: () => new Uint8Array(factors.buffer) });
  }
  writeGguf(file, meta, tensors);
  return { tensors: tensors.length, bytes: fs.statSync(file).size };
}

/** One trained low-rank adapter as the engine holds it: a [in, rank] and b [rank, out], row-major; y += x·a·b · alpha/rank. */
export interface LoraTensor {
  /** The Hugging Face module, e.g. `model.layers.0.self_attn.q_proj`. */
  readonly module: string;
  readonly a: Float32Array;
  readonly b: Float32Array;
  readonly in: number;
  readonly out: number;
}

function transposeBytes(x: Float32Array, rows: number, cols: number): Uint8Array {
  const out = new Float32Array(x.length);
  for (let i = 0; i < rows; i++) for (let j = 0; j < cols; j++) out[j * rows + i] = x[i * cols + j]!;
  return new Uint8Array(out.buffer);
}

/**
 * Writes adapters as llama.cpp's LoRA adapter GGUF for a base of `modelType`: per module the tensors
 * `<base name>.lora_a` (PEFT's A, [rank, in]) and `.lora_b` (B, [out, rank]) in float32, with the alpha
 * (llama.cpp scales by alpha / rank). Llama's q and k adapters follow the base's rotary permutation (B's rows).
 */
export function writeLoraGguf(
  file: string,
  modelType: string,
  rank: number,
  alpha: number,
  adapters: readonly LoraTensor[],
  heads?: { q: number; kv: number },
): void {
  // familyOf refuses a model type it does not know
  const gguf = ggufOf(familyOf({ modelType: modelType as HfModelType }), 'GGUF adapter');
  const tensors: GgufTensor[] = [];
  for (const ad of adapters) {
    const name = gguf.tensorName(`${ad.module}.weight`);
    if (!name) throw new Error(`GGUF adapter: no llama.cpp tensor for ${ad.module}`);
    if (ad.a.length !== ad.in * rank || ad.b.length !== rank * ad.out)
      throw new Error(`GGUF adapter ${ad.module}: sizes ${ad.a.length} and ${ad.b.length} for [${ad.in}, ${rank}] and [${rank}, ${ad.out}]`);
    const rotary = gguf.rotaryHeads(`${ad.module}.weight`);
    tensors.push(
      { name: `${name}.lora_a`, shape: [rank, ad.in], type: 'F32', data: () => transposeBytes(ad.a, ad.in, rank) },
      {
        name: `${name}.lora_b`,
        shape: [ad.out, rank],
        type: 'F32',
        data: () => {
          const bt = Buffer.from(transposeBytes(ad.b, rank, ad.out));
          if (!rotary) return bt;
          const h = rotary === 'q' ? heads?.q : heads?.kv;
          if (!h) throw new Error(`GGUF adapter ${ad.module}: Llama's rotary permutation needs the head counts`);
          return permuteRotary(bt, ad.out, rank, h, 4);
        },
      },
    );
  }
  writeGguf(
    file,
    [
      ['general.architecture', { type: 'string', value: gguf.architecture }],
      ['general.type', { type: 'string', value: 'adapter' }],
      ['adapter.type', { type: 'string', value: 'lora' }],
      ['adapter.lora.alpha', { type: 'f32', value: alpha }],
    ],
    tensors,
  );
}
