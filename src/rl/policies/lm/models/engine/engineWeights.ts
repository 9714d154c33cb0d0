// A checkpoint's weights read from its safetensors files straight into the engine's memory: matrices as
// bfloat16 (8-interleaved rows, halving the memory and the bytes a product reads) or float32, norms
// and biases as float32, and the rotary tables for the policy's context. bfloat16 on disk is copied
// as it is; float32 becomes bfloat16 by rounding to nearest even when bfloat16 is asked; float16 is
// widened in JavaScript first. With 'q8' every matrix — each decoder linear weight, the output head and
// the embedding rows (a tied head is the embedding, and the rows are the largest single tensor of the
// small models, 136 MB of Qwen2.5-0.5B's 494 MB at q8) — is quantized ONCE here into Q8_0 blocks with
// float16 scales (GGUF's, ../q8Blocks.ts), through float32 a chunk of rows at a time. Names and shapes are the family spec's (families/), checked against
// the stored tensors, each error naming the file.
import * as fs from 'node:fs';
import { familyOf } from '../families/familyOf';
import { tensorSize, variableOrder, type LayerModules, type ModelFamily, type TensorSpec } from '../families/modelFamily';
import { ModelLoadError, ropeInverseFrequencies, type HfArchitecture } from '../hfConfig';
import { readFully } from '../fileChunks';
import { checkpointTensors, SAFETENSORS_DTYPES, specTensor, toFloat32, type StoredTensor } from '../safetensors';
import type { EngineMemory } from './engineMemory';
import { q8Layout } from '../q8Blocks';
import { q8Of, type EngineKernels, type Matrix } from './kernels';

export type WeightDtype = 'bf16' | 'f32' | 'q8';

/** Bytes of a [rows, cols] matrix held in `dtype` (q8: the engine's Q8_0 layout, values then scales). */
export function matrixBytes(rows: number, cols: number, dtype: WeightDtype): number {
  return dtype === 'q8' ? q8Layout(rows, cols).bytes : rows * cols * (dtype === 'bf16' ? 2 : 4);
}

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

/** Bytes of the weights as the engine holds them (the plan's first line): the spec's matrices in `dtype`, its vectors in float32, the rotary tables; each region rounded to the allocator's 64 bytes. */
export function weightBytes(a: HfArchitecture, dtype: WeightDtype, contextLength: number): number {
  const round = (b: number): number => Math.ceil(b / 64) * 64;
  let n = 0;
  for (const t of familyOf(a).tensors(a)) n += round(t.shape.length === 2 ? matrixBytes(t.shape[0]!, t.shape[1]!, dtype) : tensorSize(t) * 4);
  return n + 2 * round(contextLength * (a.headDim / 2) * 4);
}

/** The engine's linear layers of one layer: module paths by the engine's names (a family it runs has separate q/k/v and a gate). */
export function engineModules(m: LayerModules): Readonly<Record<EngineLinear, string>> {
  if ('fused' in m.qkv || !m.gate) throw new Error(`engine: layer ${m.o} has a fused q/k/v projection or no gate; engineUnsupported refuses such a family`);
  return { q_proj: m.qkv.q, k_proj: m.qkv.k, v_proj: m.qkv.v, o_proj: m.o, gate_proj: m.gate, up_proj: m.up, down_proj: m.down };
}

/** What of the family the engine lacks: it runs RMSNorm, rotary positions, separate q/k/v and SwiGLU. */
function missingSteps(f: ModelFamily): string[] {
  const probe = f.names.layer(0);
  return [
    ...(f.norm !== 'rmsnorm' ? ['LayerNorm'] : []),
    ...(f.mlp !== 'swiglu' ? ['GELU'] : []),
    ...(f.positions !== 'rotary' ? ['learned positions'] : []),
    ...('fused' in probe.qkv ? ['fused q/k/v'] : []),
    ...(f.linearLayout !== 'out-in' ? ['Conv1D weights'] : []),
  ];
}

/** Why the engine cannot run this architecture (undefined when it can). */
export function engineUnsupported(a: HfArchitecture): string | undefined {
  const missing = missingSteps(familyOf(a));
  if (missing.length > 0) return `${a.modelType} (${missing.join(', ')}) runs on tfjs ops`;
  const dims: [string, number, number][] = [
    ['hidden_size', a.hidden, 8],
    ['intermediate_size', a.intermediate, 8],
    ['head width', a.headDim, 8],
    ['vocab_size', a.vocabSize, 4],
  ];
  for (const [name, v, m] of dims) if (v % m !== 0) return `${name} ${v} is not a multiple of ${m}`;
  return undefined;
}

/** Why the engine cannot hold this architecture's matrices as Q8_0 blocks (every input width a multiple of 32), or undefined. */
export function engineQ8Unsupported(a: HfArchitecture): string | undefined {
  const bad = matrixShapes(a).find(([, cols]) => cols % 32 !== 0);
  return bad ? `a [${bad[0]}, ${bad[1]}] matrix has ${bad[1]} columns, not a multiple of 32 (a Q8_0 block)` : undefined;
}

/** The stored tensor of a spec entry, refused when its dtype is one the engine does not read. */
function take(stored: Map<string, StoredTensor>, dir: string, spec: TensorSpec, a: HfArchitecture): StoredTensor {
  return specTensor(stored, dir, spec, a, (t) => {
    if (!SAFETENSORS_DTYPES.includes(t.dtype)) {
      throw new ModelLoadError(
        `${t.file}: tensor ${t.name} has dtype ${JSON.stringify(t.dtype)}; supported: ${SAFETENSORS_DTYPES.join(', ')}. Fix: save the model in float32, float16 or bfloat16 (quantised weights are not read)`,
      );
    }
  });
}

/** Reads `len` bytes at `pos` of `file` into the engine's memory at `offset` (in chunks: a tensor may pass 2 GiB); a short read is an error. */
function readInto(mem: EngineMemory, t: StoredTensor, offset: number, from: number, len: number): void {
  const fd = fs.openSync(t.file, 'r');
  try {
    readFully(
      fd,
      Buffer.from(mem.memory.buffer, offset, len),
      t.begin + from,
      () => new ModelLoadError(`${t.file}: tensor ${t.name} ends early (the file is truncated). Fix: download the checkpoint again`),
    );
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
  return familyOf(a)
    .tensors(a)
    .filter((t) => t.shape.length === 2)
    .map((t) => [t.shape[0]!, t.shape[1]!]);
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
  const family = familyOf(a);
  const specs = new Map(family.tensors(a).map((t) => [t.name, t]));
  const spec = (name: string): TensorSpec => {
    const t = specs.get(name);
    if (!t) throw new Error(`engine: the ${a.modelType} family spec lists no tensor ${name}`);
    return t;
  };

  const matrix = (name: string): Matrix => {
    const s = spec(name);
    const [rows, cols] = s.shape as [number, number];
    const t = take(stored, dir, s, a);
    const n = rows * cols;
    const ptr = mem.alloc(matrixBytes(rows, cols, dtype), `weights ${name}`);
    if (dtype === 'q8' && cols % 32 !== 0)
      throw new ModelLoadError(`${t.file}: tensor ${name} has ${cols} columns, not a multiple of 32 (a Q8_0 block). Fix: policyOptions.weightDtype "bf16"`);
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
          else if (dtype === 'q8') {
            // rows [r0, r0 + r) of the blocks: the operand of the whole matrix shifted by r0 rows
            const whole = q8Of({ ptr, rows, cols, dtype });
            const { paddedCols, blocksPerRow } = whole.layout;
            k.quantizeQ8(f32, cols, { q: whole.q + r0 * paddedCols, s: whole.s + r0 * blocksPerRow * 4, layout: whole.layout }, 'weight', r);
          } else mem.u8.copyWithin(ptr + r0 * cols * 4, f32, f32 + r * cols * 4);
        }
      });
    }
    return { ptr, rows, cols, dtype };
  };
  const vector = (name: string): number => {
    const s = spec(name);
    const n = s.shape[0]!;
    const t = take(stored, dir, s, a);
    const ptr = mem.allocF32(n, `weights ${name}`);
    const bytes = n * (t.dtype === 'F32' ? 4 : 2);
    const buf = Buffer.alloc(bytes);
    const fd = fs.openSync(t.file, 'r');
    try {
      readFully(fd, buf, t.begin, () => new ModelLoadError(`${t.file}: tensor ${name} ends early (the file is truncated). Fix: download the checkpoint again`));
    } finally {
      fs.closeSync(fd);
    }
    mem.f32.set(toFloat32(buf, t.dtype), ptr / 4);
    return ptr;
  };

  const embed = matrix(family.names.embed);
  const layers: LayerWeights[] = [];
  for (let l = 0; l < a.layers; l++) {
    const m = family.names.layer(l);
    const modules = engineModules(m);
    const lin = (module: string): LinearWeights => ({
      module,
      w: matrix(`${module}.weight`),
      ...(specs.has(`${module}.bias`) ? { bias: vector(`${module}.bias`) } : {}),
    });
    const inNorm = vector(`${m.attnNorm}.weight`);
    const postNorm = vector(`${m.mlpNorm}.weight`);
    const linear = Object.fromEntries(ENGINE_LINEARS.map((k) => [k, lin(modules[k])])) as Record<EngineLinear, LinearWeights>;
    layers.push({
      inNorm,
      postNorm,
      linear,
      ...(a.qkNorm ? { qNorm: vector(`${m.qNorm!}.weight`), kNorm: vector(`${m.kNorm!}.weight`) } : {}),
    });
  }
  const finalNorm = vector(`${family.names.finalNorm}.weight`);
  const head = a.tiedEmbeddings ? embed : matrix(family.names.head);
  const E = a.headDim;
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
 * Every trained tensor of full fine-tuning, in the tfjs decoder's order and layouts (the family spec's
 * variableOrder: the embedding; per layer the two norms, each linear's weight then its bias, the query
 * and key norms, the MLP; the final norm; an untied head last), so a checkpoint written on one loads on
 * the other.
 */
export function baseTensors(a: HfArchitecture): BaseTensor[] {
  const family = familyOf(a);
  const tensors = family.tensors(a);
  const byName = new Map(tensors.map((t) => [t.name, t]));
  // where each named tensor lies in a weight set
  const at = new Map<string, (w: EngineWeights) => { ptr: number; rows: number; cols: number }>();
  const vec = (name: string, n: number, ptr: (w: EngineWeights) => number): void => {
    at.set(name, (w) => ({ ptr: ptr(w), rows: 1, cols: n }));
  };
  at.set(family.names.embed, (w) => w.embed);
  at.set(family.names.head, (w) => w.head);
  vec(`${family.names.finalNorm}.weight`, a.hidden, (w) => w.finalNorm);
  for (let l = 0; l < a.layers; l++) {
    const m = family.names.layer(l);
    vec(`${m.attnNorm}.weight`, a.hidden, (w) => w.layers[l]!.inNorm);
    vec(`${m.mlpNorm}.weight`, a.hidden, (w) => w.layers[l]!.postNorm);
    if (m.qNorm) vec(`${m.qNorm}.weight`, a.headDim, (w) => w.layers[l]!.qNorm!);
    if (m.kNorm) vec(`${m.kNorm}.weight`, a.headDim, (w) => w.layers[l]!.kNorm!);
    const modules = engineModules(m);
    for (const k of ENGINE_LINEARS) {
      at.set(`${modules[k]}.weight`, (w) => w.layers[l]!.linear[k].w);
      const bias = byName.get(`${modules[k]}.bias`);
      if (bias) vec(bias.name, bias.shape[0]!, (w) => w.layers[l]!.linear[k].bias!);
    }
  }
  return variableOrder(tensors).map((t) => {
    const where = at.get(t.name);
    if (!where) throw new Error(`engine: no place in the weights for ${t.name}`);
    const linear = t.role === 'linear' || t.role === 'head';
    // a linear weight (and the untied head) as the tfjs decoder holds it: [in, out], nn.Linear's transposed
    return { name: t.name, shape: linear ? [t.shape[1]!, t.shape[0]!] : [...t.shape], transposed: linear, at: where };
  });
}

/** [in, out] of a linear layer (the family spec's layer-0 weight, stored [out, in]). */
export function linearShapeOf(a: HfArchitecture, m: EngineLinear): [number, number] {
  const name = `${engineModules(familyOf(a).names.layer(0))[m]}.weight`;
  const t = familyOf(a)
    .tensors(a)
    .find((x) => x.name === name);
  if (!t) throw new Error(`engine: the ${a.modelType} family spec lists no tensor ${name}`);
  return [t.shape[1]!, t.shape[0]!];
}
