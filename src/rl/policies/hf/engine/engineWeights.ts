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

/**
 * A second set of float32 weights shaped like `w` (the rotary tables shared): a copy of its values (the
 * full fine-tuning reference) or zeros (their gradients). A tied head stays tied.
 */
export function weightsLike(mem: EngineMemory, a: HfArchitecture, w: EngineWeights, label: string, copy: boolean): EngineWeights {
  const matrix = (m: Matrix): Matrix => {
    if (m.dtype !== 'f32') throw new Error('weightsLike: full fine-tuning holds float32 weights');
    const ptr = mem.allocF32(m.rows * m.cols, label);
    if (copy) mem.u8.copyWithin(ptr, m.ptr, m.ptr + m.rows * m.cols * 4);
    else mem.zero(ptr, m.rows * m.cols * 4);
    return { ...m, ptr };
  };
  const vector = (p: number, n: number): number => {
    const ptr = mem.allocF32(n, label);
    if (copy) mem.u8.copyWithin(ptr, p, p + n * 4);
    else mem.zero(ptr, n * 4);
    return ptr;
  };
  const D = a.hidden;
  const embed = matrix(w.embed);
  const layers = w.layers.map((lw) => {
    const linear = Object.fromEntries(
      ENGINE_LINEARS.map((m) => {
        const lin = lw.linear[m];
        return [m, { module: lin.module, w: matrix(lin.w), ...(lin.bias !== undefined ? { bias: vector(lin.bias, lin.w.rows) } : {}) }];
      }),
    ) as Record<EngineLinear, LinearWeights>;
    return {
      inNorm: vector(lw.inNorm, D),
      postNorm: vector(lw.postNorm, D),
      linear,
      ...(lw.qNorm !== undefined && lw.kNorm !== undefined ? { qNorm: vector(lw.qNorm, a.headDim), kNorm: vector(lw.kNorm, a.headDim) } : {}),
    };
  });
  const finalNorm = vector(w.finalNorm, D);
  const head = w.head.ptr === w.embed.ptr ? embed : matrix(w.head);
  return { embed, head, finalNorm, layers, cos: w.cos, sin: w.sin };
}

/** One trained base tensor of full fine-tuning: where it lies in a weight set, and its layout as a variable. */
export interface BaseTensor {
  /** Its name in the checkpoint. */
  readonly name: string;
  /** The variable's shape: a linear layer's weight [in, out] (nn.Linear's transposed, as the tfjs decoder holds it), else as stored. */
  readonly shape: number[];
  /** The tensor in a weight set (a matrix [rows, cols] as stored, or a vector of `shape[0]`). */
  at(w: EngineWeights): { ptr: number; rows: number; cols: number };
  /** The variable is the stored matrix transposed. */
  readonly transposed: boolean;
}

/**
 * Every trained tensor of full fine-tuning, in the tfjs decoder's order and layouts (hfModel.ts: the
 * embedding; per layer the two norms, each linear's weight then its bias, the query and key norms, the
 * MLP; the final norm; an untied head last), so a checkpoint written on one loads on the other.
 */
export function baseTensors(a: HfArchitecture): BaseTensor[] {
  const out: BaseTensor[] = [];
  const D = a.hidden;
  const vec = (name: string, n: number, at: (w: EngineWeights) => number): void => {
    out.push({ name, shape: [n], transposed: false, at: (w) => ({ ptr: at(w), rows: 1, cols: n }) });
  };
  out.push({ name: 'model.embed_tokens.weight', shape: [a.vocabSize, D], transposed: false, at: (w) => w.embed });
  for (let l = 0; l < a.layers; l++) {
    const p = `model.layers.${l}.`;
    vec(`${p}input_layernorm.weight`, D, (w) => w.layers[l]!.inNorm);
    vec(`${p}post_attention_layernorm.weight`, D, (w) => w.layers[l]!.postNorm);
    const linear = (m: EngineLinear, module: string): void => {
      const [inDim, outDim] = linearShapeOf(a, m);
      out.push({ name: `${p}${module}.weight`, shape: [inDim, outDim], transposed: true, at: (w) => w.layers[l]!.linear[m].w });
      const bias = m === 'o_proj' ? outputBias(a) : (m === 'q_proj' || m === 'k_proj' || m === 'v_proj') && a.qkvBias;
      if (bias) vec(`${p}${module}.bias`, outDim, (w) => w.layers[l]!.linear[m].bias!);
    };
    linear('q_proj', 'self_attn.q_proj');
    linear('k_proj', 'self_attn.k_proj');
    linear('v_proj', 'self_attn.v_proj');
    linear('o_proj', 'self_attn.o_proj');
    if (a.qkNorm) {
      vec(`${p}self_attn.q_norm.weight`, a.headDim, (w) => w.layers[l]!.qNorm!);
      vec(`${p}self_attn.k_norm.weight`, a.headDim, (w) => w.layers[l]!.kNorm!);
    }
    linear('gate_proj', 'mlp.gate_proj');
    linear('up_proj', 'mlp.up_proj');
    linear('down_proj', 'mlp.down_proj');
  }
  vec('model.norm.weight', D, (w) => w.finalNorm);
  if (!a.tiedEmbeddings) out.push({ name: 'lm_head.weight', shape: [D, a.vocabSize], transposed: true, at: (w) => w.head });
  return out;
}

/** [in, out] of a linear layer. */
export function linearShapeOf(a: HfArchitecture, m: EngineLinear): [number, number] {
  const D = a.hidden,
    q = a.heads * a.headDim,
    kv = a.kvHeads * a.headDim,
    F = a.intermediate;
  switch (m) {
    case 'q_proj':
      return [D, q];
    case 'k_proj':
    case 'v_proj':
      return [D, kv];
    case 'o_proj':
      return [q, D];
    case 'gate_proj':
    case 'up_proj':
      return [D, F];
    case 'down_proj':
      return [F, D];
  }
}
