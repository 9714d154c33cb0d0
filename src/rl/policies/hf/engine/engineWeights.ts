// A checkpoint's weights read from its safetensors files straight into the engine's memory: matrices as
// bfloat16 (8-interleaved rows, halving the memory and the bytes a product reads) or float32, norms
// and biases as float32, and the rotary tables for the policy's context. bfloat16 on disk is copied
// as it is; float32 becomes bfloat16 by rounding to nearest even when bfloat16 is asked; float16 is
// widened in JavaScript first. Shapes are checked against config.json, each error naming the file.
import * as fs from 'node:fs';
import { ModelLoadError, outputBias, ropeInverseFrequencies, type HfArchitecture } from '../hfConfig';
import { checkpointTensors, SAFETENSORS_DTYPES, toFloat32, type StoredTensor } from '../safetensors';
import type { EngineMemory } from './engineMemory';
import type { EngineKernels, Matrix } from './kernels';

export type WeightDtype = 'bf16' | 'f32';

export interface LinearWeights {
  /** Module path, e.g. model.layers.3.self_attn.q_proj. */
  readonly module: string;
  /** [out, in] as nn.Linear stores it. */
  readonly w: Matrix;
  readonly bias?: number;
}

export const ENGINE_LINEARS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;
export type EngineLinear = (typeof ENGINE_LINEARS)[number];

export interface LayerWeights {
  readonly inNorm: number;
  readonly postNorm: number;
  /** Qwen3: RMSNorm gains over each head's queries and keys [E]. */
  readonly qNorm?: number;
  readonly kNorm?: number;
  readonly linear: Readonly<Record<EngineLinear, LinearWeights>>;
}

export interface EngineWeights {
  readonly embed: Matrix;
  /** The output projection [V, D]: the embedding when tied. */
  readonly head: Matrix;
  readonly finalNorm: number;
  readonly layers: readonly LayerWeights[];
  /** [P, E/2] rotary tables. */
  readonly cos: number;
  readonly sin: number;
}

/** Bytes of the weights as the engine holds them (the plan's first line). */
export function weightBytes(a: HfArchitecture, dtype: WeightDtype, contextLength: number): number {
  const D = a.hidden,
    E = a.headDim,
    q = a.heads * E,
    kv = a.kvHeads * E,
    F = a.intermediate;
  const m = dtype === 'bf16' ? 2 : 4;
  const round = (b: number): number => Math.ceil(b / 64) * 64;
  let n = round(a.vocabSize * D * m) * (a.tiedEmbeddings ? 1 : 2) + round(D * 4);
  const perLayer =
    [D * q, D * kv, D * kv, q * D, D * F, D * F, F * D].reduce((s, x) => s + round(x * m), 0) +
    round(D * 4) * 2 +
    (a.qkvBias ? round(q * 4) + 2 * round(kv * 4) : 0) +
    (a.qkNorm ? 2 * round(E * 4) : 0) +
    (outputBias(a) ? round(D * 4) : 0);
  n += perLayer * a.layers;
  n += 2 * round(contextLength * (E / 2) * 4);
  return n;
}

/** Why the engine cannot run this architecture (undefined when it can). */
export function engineUnsupported(a: HfArchitecture): string | undefined {
  if (a.modelType === 'gpt2') return 'gpt2 (LayerNorm, GELU, learned positions) runs on tfjs ops';
  const dims: [string, number, number][] = [
    ['hidden_size', a.hidden, 8],
    ['intermediate_size', a.intermediate, 8],
    ['head width', a.headDim, 8],
    ['vocab_size', a.vocabSize, 4],
  ];
  for (const [name, v, m] of dims) if (v % m !== 0) return `${name} ${v} is not a multiple of ${m}`;
  return undefined;
}

function take(stored: Map<string, StoredTensor>, dir: string, name: string, shape: number[], a: HfArchitecture): StoredTensor {
  const t = stored.get(name);
  if (!t)
    throw new ModelLoadError(
      `${dir}: the checkpoint has no tensor ${name}; a ${a.modelType} model of this config.json needs it. Fix: check that config.json belongs to these weights`,
    );
  if (!SAFETENSORS_DTYPES.includes(t.dtype)) {
    throw new ModelLoadError(
      `${t.file}: tensor ${t.name} has dtype ${JSON.stringify(t.dtype)}; supported: ${SAFETENSORS_DTYPES.join(', ')}. Fix: save the model in float32, float16 or bfloat16 (quantised weights are not read)`,
    );
  }
  if (t.shape.join('×') !== shape.join('×')) {
    throw new ModelLoadError(
      `${t.file}: tensor ${name} has shape ${t.shape.join('×')}, but config.json (hidden_size ${a.hidden}, heads ${a.heads}, kv heads ${a.kvHeads}, head width ${a.headDim}, vocab ${a.vocabSize}) needs ${shape.join('×')}. Fix: check that config.json belongs to these weights`,
    );
  }
  return t;
}

/** Reads `len` bytes at `pos` of `file` into the engine's memory at `offset`; a short read is an error. */
function readInto(mem: EngineMemory, t: StoredTensor, offset: number, from: number, len: number): void {
  const fd = fs.openSync(t.file, 'r');
  try {
    const view = Buffer.from(mem.memory.buffer, offset, len);
    let done = 0;
    while (done < len) {
      const n = fs.readSync(fd, view, done, len - done, t.begin + from + done);
      if (n <= 0) throw new ModelLoadError(`${t.file}: tensor ${t.name} ends early (the file is truncated). Fix: download the checkpoint again`);
      done += n;
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** Float32 bytes converted per chunk when a matrix changes dtype on loading. */
const CONVERT_BYTES = 16 * 2 ** 20;

/** Rows of a [rows, cols] matrix converted at a time. */
export function convertRows(rows: number, cols: number): number {
  return Math.min(rows, Math.max(1, Math.floor(CONVERT_BYTES / (cols * 4))));
}

/** [rows, cols] of every matrix the engine reads (the plan's conversion scratch is the largest chunk). */
export function matrixShapes(a: HfArchitecture): [number, number][] {
  const D = a.hidden,
    q = a.heads * a.headDim,
    kv = a.kvHeads * a.headDim,
    F = a.intermediate;
  return [
    [a.vocabSize, D],
    [q, D],
    [kv, D],
    [D, q],
    [F, D],
    [D, F],
  ];
}

export function loadEngineWeights(
  mem: EngineMemory,
  k: EngineKernels,
  dir: string,
  a: HfArchitecture,
  dtype: WeightDtype,
  contextLength: number,
): EngineWeights {
  const stored = checkpointTensors(dir);
  const D = a.hidden,
    E = a.headDim,
    q = a.heads * E,
    kv = a.kvHeads * E,
    F = a.intermediate;

  const matrix = (name: string, rows: number, cols: number): Matrix => {
    const t = take(stored, dir, name, [rows, cols], a);
    const n = rows * cols;
    const ptr = mem.alloc(n * (dtype === 'bf16' ? 2 : 4), `weights ${name}`);
    if (dtype === 'bf16' && t.dtype === 'BF16') {
      readInto(mem, t, ptr, 0, n * 2);
      k.interleave8(ptr, n);
    } else if (dtype === 'f32' && t.dtype === 'F32') {
      readInto(mem, t, ptr, 0, n * 4);
    } else {
      // through float32, a chunk of rows at a time (scratch above the weights, given back after)
      const bytesPer = t.dtype === 'F32' ? 4 : 2;
      const chunkRows = convertRows(rows, cols);
      mem.scoped(() => {
        const raw = mem.alloc(chunkRows * cols * bytesPer, 'weights conversion');
        const f32 = t.dtype === 'F32' ? raw : mem.alloc(chunkRows * cols * 4, 'weights conversion');
        for (let r0 = 0; r0 < rows; r0 += chunkRows) {
          const r = Math.min(chunkRows, rows - r0);
          readInto(mem, t, raw, r0 * cols * bytesPer, r * cols * bytesPer);
          if (t.dtype !== 'F32') mem.f32.set(toFloat32(Buffer.from(mem.memory.buffer, raw, r * cols * bytesPer), t.dtype), f32 / 4);
          if (dtype === 'bf16') k.f32ToBf16(f32, ptr + r0 * cols * 2, r * cols);
          else mem.u8.copyWithin(ptr + r0 * cols * 4, f32, f32 + r * cols * 4);
        }
      });
    }
    return { ptr, rows, cols, dtype };
  };
  const vector = (name: string, n: number): number => {
    const t = take(stored, dir, name, [n], a);
    const ptr = mem.allocF32(n, `weights ${name}`);
    const bytes = n * (t.dtype === 'F32' ? 4 : 2);
    const buf = Buffer.alloc(bytes);
    const fd = fs.openSync(t.file, 'r');
    try {
      if (fs.readSync(fd, buf, 0, bytes, t.begin) !== bytes)
        throw new ModelLoadError(`${t.file}: tensor ${name} ends early (the file is truncated). Fix: download the checkpoint again`);
    } finally {
      fs.closeSync(fd);
    }
    mem.f32.set(toFloat32(buf, t.dtype), ptr / 4);
    return ptr;
  };

  const embed = matrix('model.embed_tokens.weight', a.vocabSize, D);
  const layers: LayerWeights[] = [];
  for (let l = 0; l < a.layers; l++) {
    const p = `model.layers.${l}.`;
    const lin = (m: string, out: number, inp: number, bias: boolean): LinearWeights => ({
      module: `${p}${m}`,
      w: matrix(`${p}${m}.weight`, out, inp),
      ...(bias ? { bias: vector(`${p}${m}.bias`, out) } : {}),
    });
    const inNorm = vector(`${p}input_layernorm.weight`, D);
    const postNorm = vector(`${p}post_attention_layernorm.weight`, D);
    const linear = {
      q_proj: lin('self_attn.q_proj', q, D, a.qkvBias),
      k_proj: lin('self_attn.k_proj', kv, D, a.qkvBias),
      v_proj: lin('self_attn.v_proj', kv, D, a.qkvBias),
      o_proj: lin('self_attn.o_proj', D, q, outputBias(a)),
      gate_proj: lin('mlp.gate_proj', F, D, false),
      up_proj: lin('mlp.up_proj', F, D, false),
      down_proj: lin('mlp.down_proj', D, F, false),
    };
    layers.push({
      inNorm,
      postNorm,
      linear,
      ...(a.qkNorm ? { qNorm: vector(`${p}self_attn.q_norm.weight`, E), kNorm: vector(`${p}self_attn.k_norm.weight`, E) } : {}),
    });
  }
  const finalNorm = vector('model.norm.weight', D);
  const head = a.tiedEmbeddings ? embed : matrix('lm_head.weight', a.vocabSize, D);
  // rotary tables: angle p·θ_i for positions p < P and i < E/2 (float64, then float32)
  const half = E / 2;
  const inv = ropeInverseFrequencies(a);
  const cos = mem.allocF32(contextLength * half, 'rotary tables');
  const sin = mem.allocF32(contextLength * half, 'rotary tables');
  for (let p = 0; p < contextLength; p++) {
    for (let i = 0; i < half; i++) {
      mem.f32[cos / 4 + p * half + i] = Math.cos(p * inv[i]!);
      mem.f32[sin / 4 + p * half + i] = Math.sin(p * inv[i]!);
    }
  }
  return { embed, head, finalNorm, layers, cos, sin };
}
