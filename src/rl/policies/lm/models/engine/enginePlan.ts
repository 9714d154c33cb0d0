// The engine's memory plan: every region the engine takes, line by line, with the allocator's own
// 64-byte rounding — the weights as held (bfloat16, float32 or Q8_0 blocks), the three adapter sets, and the
// largest of a training pass (the layer inputs kept for the backward pass, the head over vocabulary
// chunks, one layer recomputed with its gradients), a forward-only pass and a sampling session (the KV
// cache of the batch, prefill and decoding). Its total is the size of the engine's memory, so the
// engine can never take more than was planned: a test runs each pass on Qwen2.5-0.5B's shapes and
// compares the allocator's high-water mark with this. The plan also picks the engine's address mode
// (engineAddress.ts): wasm32 while it fits 4 GiB, memory64 past that where the runtime has it.
import { parameterCount } from '../families/familyOf';
import type { HfArchitecture } from '../hfConfig';
import type { LoraOptions } from '../hfModel';
import { formatBytes, type MemoryLine, type MemoryPlan } from '../memoryPlan';
import { q8Layout } from '../q8Blocks';
import { addressLimit, chooseAddressMode, memory64Limit, memory64Support, type AddressChoice, type AddressMode, type Memory64Support } from './engineAddress';
import { convertRows, ENGINE_LINEARS, linearShapeOf, matrixShapes, weightBytes, type WeightDtype } from './engineWeights';

const R = (bytes: number): number => Math.ceil(bytes / 64) * 64;
const f32 = (n: number): number => R(n * 4);

export interface EnginePlanOptions {
  /** Absent: full fine-tuning (float32 weights, a frozen copy as the reference, and their gradients). */
  readonly lora?: LoraOptions;
  readonly contextLength: number;
  /** Packed positions per training or log-prob pass (≥ the context length: a sequence is never split). */
  readonly positionsPerPass: number;
  /** Rows sampled at once, and the longest prompt plus new tokens of a row. */
  readonly sampleRows: number;
  readonly threads: number;
  readonly dtype: WeightDtype;
  /** Forward passes and sampling only (model check): no layer inputs kept, no backward pass. */
  readonly inference?: boolean;
  /** The address mode to plan for; absent: chosen from the total (engineAddress.chooseAddressMode). */
  readonly address?: AddressMode;
  /** What this runtime supports (tests stand in for a runtime without 64-bit memories); absent: probed. */
  readonly memory64?: Memory64Support;
  /** A training pass keeps every layer's intermediates instead of recomputing them in the backward pass. */
  readonly keepActivations?: boolean;
}

export interface EnginePlan extends MemoryPlan {
  readonly dtype: WeightDtype;
  readonly positionsPerPass: number;
  readonly sampleRows: number;
  readonly parts: { readonly persistent: number; readonly training: number; readonly forward: number; readonly sampling: number };
  /** wasm32 or memory64, and why (also in limitOf, so describePlan says it). */
  readonly address: AddressChoice;
  /** The training pass keeps every layer's intermediates (no recompute in the backward pass). */
  readonly keepsActivations: boolean;
}

/** Vocabulary columns per head chunk for `rows` positions (decoder.chunkColumns). */
export function chunkColumns(V: number, rows: number): number {
  const c = Math.floor((8 * 2 ** 20) / Math.max(1, rows) / 64) * 64;
  return Math.max(64, Math.min(V, c));
}

/** Bytes of the blocks of x [M, K] quantized on the fly before a product over q8 weights (0 otherwise). */
function blocksBytes(q8: boolean, M: number, K: number): number {
  return q8 ? R(q8Layout(M, K).bytes) : 0;
}

/** Float32 scratch of a backward product through q8 weights: the largest rows dequantized at once (decoder.dequantScratch). */
function dequantBytes(q8: boolean, shapes: readonly [number, number][], rowsCap = Infinity): number {
  return q8 ? f32(Math.max(...shapes.map(([rows, cols]) => Math.min(rowsCap, convertRows(rows, cols)) * cols))) : 0;
}

/** [out, in] of the engine's linear layers (the family spec's layer-0 weights). */
function linearShapes(a: HfArchitecture): [number, number][] {
  return ENGINE_LINEARS.map((m) => {
    const [inDim, out] = linearShapeOf(a, m);
    return [out, inDim];
  });
}

/** One layer's intermediates for N positions in `segs` segments of length `len` (decoder.layer); q8: one buffer of input blocks. */
function layerBytes(a: HfArchitecture, N: number, segs: number, len: number, r: number, threads: number, keep: boolean, q8: boolean): number {
  const D = a.hidden,
    E = a.headDim,
    qd = a.heads * E,
    kd = a.kvHeads * E,
    F = a.intermediate;
  const t = keep ? ENGINE_LINEARS.length * f32(N * r) : f32(N * r); // kept per linear, else one at a time
  let b = f32(N * D) + f32(N) + f32(N * qd) + 2 * f32(N * kd);
  if (a.qkNorm) b += f32(N * a.heads) + f32(N * a.kvHeads) + (keep ? f32(N * qd) + f32(N * kd) : 0);
  b += f32(N * qd) + R(segs * a.heads * 16) + (keep ? R(segs * a.heads * len * len * 4) : 0) + f32(len * threads);
  b += f32(N * D) + (keep ? f32(N * D) : 0) + f32(N * D) + f32(N) + 3 * f32(N * F);
  return b + t + blocksBytes(q8, N, Math.max(D, qd, F));
}

/** What a backward pass adds to a kept layer (decoder.layerBwd), at its peak. */
function layerBwdBytes(a: HfArchitecture, N: number, segs: number, len: number, r: number, threads: number, q8: boolean): number {
  const D = a.hidden,
    E = a.headDim,
    qd = a.heads * E,
    kd = a.kvHeads * E,
    F = a.intermediate;
  return (
    f32(N * F) * 2 +
    f32(N * D) +
    f32(N * qd) * 2 +
    f32(N * kd) * 2 +
    R(segs * a.kvHeads * 16) +
    f32(len * threads) +
    (a.qkNorm ? f32(N * qd) + f32(N * kd) : 0) +
    f32(N * D) +
    f32(N * r) +
    dequantBytes(q8, linearShapes(a))
  );
}

/** The head at M scored rows (decoder.head), kept or not, and its backward pass (decoder.headBwd). */
function headBytes(a: HfArchitecture, M: number, q8: boolean): { kept: number; transient: number; backward: number } {
  const D = a.hidden;
  const C = chunkColumns(a.vocabSize, M);
  const kept = f32(M * D) * 2 + f32(M) + R(M * 4) + f32(M * 6) + f32(M) + blocksBytes(q8, M, D);
  const backward = f32(M) + f32(M * D) * 2 + f32(M * C) + blocksBytes(q8, M, D) + dequantBytes(q8, [[a.vocabSize, D]], C);
  return { kept, transient: f32(M * C), backward };
}

export function planEngineMemory(a: HfArchitecture, o: EnginePlanOptions): EnginePlan {
  const D = a.hidden,
    L = a.layers,
    r = o.lora?.rank ?? 0,
    P = o.contextLength,
    N = o.positionsPerPass;
  const lines: MemoryLine[] = [];
  const push = (what: string, bytes: number): number => {
    lines.push({ what, bytes });
    return bytes;
  };
  const weights = weightBytes(a, o.dtype, P);
  const q8 = o.dtype === 'q8';
  const layer = (n: number, sg: number, len: number, keep: boolean): number => layerBytes(a, n, sg, len, r, o.threads, keep, q8);
  const lora = o.lora;
  const adapterBytes = lora
    ? ENGINE_LINEARS.filter((m) => lora.targets.includes('all-linear') || lora.targets.includes(m)).reduce((s, m) => {
        const [inDim, out] = linearShapeOf(a, m);
        return s + f32(inDim * r) + f32(r * out);
      }, 0) * L
    : 0;
  // full fine-tuning: the reference's copy and the gradients of every weight (the rotary tables are shared)
  const fullBytes = lora ? 0 : 2 * (weights - 2 * f32(P * (a.headDim / 2)));
  const trainable = lora ? adapterBytes / 4 : parameterCount(a);
  // a pass is one sequence of the full context at the least, or several shorter ones
  const segs = Math.max(1, Math.floor(N / P));
  const pack = R(N * 4) * 2;
  // training: the stream kept per layer, the head kept at every position, then the backward pass
  const head = headBytes(a, N, q8);
  const keptInputs = f32((L + 1) * N * D);
  const keepAll = !!o.keepActivations && !o.inference;
  // kept: every layer's intermediates stay from the forward pass (hfEngine.score), so a layer's backward
  // pass adds only its gradients' buffers; else it recomputes the layer first
  const layersKept = keepAll ? L * layer(N, segs, P, true) : 0;
  const layerPeak = (keepAll ? 0 : layer(N, segs, P, true)) + layerBwdBytes(a, N, segs, P, r, o.threads, q8);
  const training =
    pack +
    keptInputs +
    layersKept +
    Math.max(keepAll ? 0 : layer(N, segs, P, false), head.kept + Math.max(head.transient, f32(N * D) + Math.max(head.backward, layerPeak)));
  const forward = pack + f32(N * D) + Math.max(layer(N, segs, P, false), head.kept + head.transient);
  // sampling: the batch's KV cache, then a prefill of up to N positions or a decoding step
  const B = o.sampleRows;
  const cache = 2 * f32(L * B * a.kvHeads * P * a.headDim);
  const prefillRows = Math.min(B, Math.max(1, segs));
  // a prefill packs as many rows as fit N positions (short prompts: up to N segments); its head runs
  // prefillRows rows at a time
  const prefill =
    pack +
    R(N * 4) +
    f32(N * D) +
    Math.max(
      layer(N, Math.min(B, N), P, false),
      f32(prefillRows * D) * 2 + f32(prefillRows) + blocksBytes(q8, prefillRows, D) + f32(prefillRows * a.vocabSize),
    );
  const step =
    R(B * 4) * 3 + f32(B * D) + Math.max(layer(B, 0, 0, false) + f32(P * o.threads), f32(B * D) * 2 + f32(B) + blocksBytes(q8, B, D) + f32(B * a.vocabSize));
  const sampling = cache + R(B * 4) + Math.max(prefill, step);
  // loading: a float32 checkpoint held as bfloat16 (or a float16 one) goes through float32 a chunk of
  // rows at a time (engineWeights.ts); the stored dtype is config.json's torch_dtype
  const stored = a.torchDtype === 'float32' ? 4 : 2;
  const converts = q8 || (o.dtype === 'bf16' && a.torchDtype !== 'bfloat16') || (o.dtype === 'f32' && a.torchDtype !== 'float32');
  const chunk = Math.max(...matrixShapes(a).map(([rows, cols]) => convertRows(rows, cols) * cols));
  const conversion = converts ? R(chunk * stored) + (stored === 4 ? 0 : f32(chunk)) : 0;
  const persistent = 4096 + weights + 3 * adapterBytes + fullBytes;
  const held = {
    bf16: 'bfloat16, 8-interleaved rows',
    f32: 'float32',
    q8: 'Q8_0 blocks of 32 with float16 scales: every linear weight, the head and the embedding rows',
  }[o.dtype];
  push(`weights (${held}; norms, biases and the rotary tables in float32)`, weights);
  if (lora) push(`LoRA adapters (rank ${r}): the policy's, the frozen reference's, and the policy's gradients`, 3 * adapterBytes);
  else push("full fine-tuning: the frozen reference's copy of every weight and their gradients (float32)", fullBytes);
  push('control block of the threads', 4096);
  const pass = Math.max(o.inference ? 0 : training, forward, sampling, conversion);
  const which = pass === training ? 'a training pass' : pass === forward ? 'a forward pass' : pass === sampling ? 'a sampling session' : 'converting weights';
  const rows = `${B} row${B === 1 ? '' : 's'}`;
  push(
    o.inference
      ? `largest pass (${which}): forward ${formatBytes(forward)} (${N.toLocaleString('en')} positions, the head over vocabulary chunks); sampling ${formatBytes(sampling)} — KV cache of ${rows} × ${P} positions (${formatBytes(cache)})`
      : `largest pass (${which}): training ${formatBytes(training)} — ${N.toLocaleString('en')} packed positions, the ${L + 1} layer inputs kept (${formatBytes(keptInputs)}), ${keepAll ? `every layer's intermediates kept (${formatBytes(layersKept)}), a layer's gradients (${formatBytes(layerPeak)})` : `one layer recomputed with its gradients (${formatBytes(layerPeak)})`}, the head over vocabulary chunks; forward-only ${formatBytes(forward)}; sampling ${formatBytes(sampling)} — KV cache of ${rows} × ${P} positions (${formatBytes(cache)})`,
    pass,
  );
  const total = persistent + pass;
  const auto = chooseAddressMode(total, o.memory64 ?? memory64Support());
  const address: AddressChoice =
    o.address === undefined || o.address === auto.mode
      ? auto
      : { mode: o.address, why: o.address === 'wasm32' ? 'wasm32, as asked' : 'memory64, as asked (the runtime has it)' };
  const limit = addressLimit(address.mode);
  return {
    lines,
    total,
    limit,
    limitOf: `one engine memory: ${address.why}`,
    fits: total <= limit,
    address,
    keepsActivations: keepAll,
    trainable,
    microBatchPositions: N,
    dtype: o.dtype,
    positionsPerPass: N,
    sampleRows: B,
    parts: { persistent, training, forward, sampling },
  };
}

/** Packed positions per pass the fitting plan starts from: more gain little, and the memory is the user's. */
const POSITIONS_TARGET = 4096;

/**
 * The plan at the most positions per pass that fits (8, 4, 2 or 1 contexts, at most 4096 positions
 * unless one context is longer; or `positions` when given), with bfloat16 weights unless float32 ones
 * are asked for, the checkpoint is float32 and they fit, or every weight is trained (float32 only).
 */
export function fittingEnginePlan(
  a: HfArchitecture,
  o: Omit<EnginePlanOptions, 'positionsPerPass' | 'dtype'> & { positions?: number; dtype?: WeightDtype | 'auto' },
): EnginePlan {
  // full fine-tuning updates the weights in place: float32 only (q8 is LoRA's only, configRules refuses it
  // with full fine-tuning); q8 only where asked
  const dtypes: WeightDtype[] =
    !o.lora || o.dtype === 'f32' ? ['f32'] : o.dtype === 'bf16' || o.dtype === 'q8' ? [o.dtype] : a.torchDtype === 'float32' ? ['f32', 'bf16'] : ['bf16'];
  const sizes =
    o.positions && o.positions > 0
      ? [Math.max(o.positions, o.contextLength)]
      : [8, 4, 2, 1].map((k) => k * o.contextLength).filter((n, i, all) => n <= Math.max(o.contextLength, POSITIONS_TARGET) || i === all.length - 1);
  // every plan that fits wasm32's 4 GiB first (what was chosen before 64-bit memories, and the faster
  // kernels: docs/runs/memory64/), then, where the runtime has them, the same order on a 64-bit memory
  const support = o.memory64 ?? memory64Support();
  const modes: AddressMode[] = support.ok ? ['wasm32', 'memory64'] : ['wasm32'];
  for (const address of modes) {
    for (const dtype of dtypes) {
      for (const positionsPerPass of sizes) {
        const plan = planEngineMemory(a, { ...o, dtype, positionsPerPass, address, memory64: support });
        if (!plan.fits) continue;
        // where a wasm32 plan has room within its 4 GiB, the training pass keeps every layer's
        // intermediates instead of recomputing them; a 64-bit plan does not grow for it (its memory is
        // the machine's, and it already took a 64-bit memory to fit at all). The larger plan is taken only
        // within the machine's share too (memory64Limit: three quarters of its memory): keeping is a speed-up,
        // not worth a small machine's memory
        if (address === 'wasm32' && !o.inference) {
          const kept = planEngineMemory(a, { ...o, dtype, positionsPerPass, address, memory64: support, keepActivations: true });
          if (kept.fits && kept.total <= memory64Limit()) return kept;
        }
        return plan;
      }
    }
  }
  // nothing fits: the smallest plan, with the address mode (and its reason) chosen from its total
  return planEngineMemory(a, { ...o, dtype: dtypes[dtypes.length - 1]!, positionsPerPass: sizes[sizes.length - 1]!, memory64: support });
}
