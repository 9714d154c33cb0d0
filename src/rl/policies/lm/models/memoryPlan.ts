// What a Hugging Face model will need before anything is loaded: float32 weights, the trainable part
// with its gradients and AdamW moments, the KL reference, one training micro-batch's activations and
// logits, and the sampler's KV cache; against what the chosen backend can hold. A plan that does not
// fit is refused with the numbers and the ways out.
import * as os from 'node:os';
import { bytes as formatBytes } from '../../../../shared/format';
import { familyOf, loraModules, parameterCount } from './families/familyOf';
import { ModelLoadError, type HfArchitecture } from './hfConfig';
import { prefillRowsOf, type LoraOptions } from './hfModel';

const GiB = 2 ** 30;

export interface MemoryLine {
  readonly what: string;
  readonly bytes: number;
}

export interface MemoryPlan {
  readonly lines: readonly MemoryLine[];
  readonly total: number;
  readonly limit: number;
  /** Where the limit comes from. */
  readonly limitOf: string;
  readonly fits: boolean;
  readonly trainable: number;
  readonly microBatchPositions: number;
}

export interface PlanOptions {
  readonly lora?: LoraOptions;
  readonly contextLength: number;
  /** Padded positions per forward and backward pass. */
  readonly microBatchPositions: number;
  /** Rows sampled at once (episodes in flight). */
  readonly sampleRows: number;
  /** tfjs backend name: wasm, cpu, tensorflow, webgpu. */
  readonly backend: string;
}

/** Trainable parameters of LoRA adapters on the targeted linear layers: rank × (in + out) for each linear weight of the family's spec whose module is a target. */
export function loraParameterCount(a: HfArchitecture, lora: LoraOptions): number {
  const targets = loraModules(a, lora.targets);
  let n = 0;
  for (const t of familyOf(a).tensors(a)) {
    if (t.role !== 'linear' || !targets.some((m) => t.name.endsWith(`.${m}.weight`))) continue;
    n += lora.rank * (t.shape[0]! + t.shape[1]!);
  }
  return n;
}

/** The memory a backend can hold: wasm's 32-bit address space, else the machine's memory. */
export function backendLimit(backend: string): { bytes: number; of: string } {
  if (backend === 'wasm') return { bytes: 4 * GiB, of: "tfjs-backend-wasm's 4 GiB address space" };
  const total = os.totalmem();
  return { bytes: Math.floor(total * 0.8), of: `80 % of this machine's ${(total / GiB).toFixed(1)} GiB (backend ${backend})` };
}

export function planMemory(a: HfArchitecture, o: PlanOptions): MemoryPlan {
  const params = parameterCount(a);
  const D = a.hidden,
    F = a.intermediate,
    V = a.vocabSize,
    L = a.layers;
  const trainable = o.lora ? loraParameterCount(a, o.lora) : params;
  const N = o.microBatchPositions;
  // a micro-batch never splits a sequence: a pass is at least one full-length sequence
  const T = o.contextLength;
  const Nt = Math.max(N, T);
  // forward-only log-prob passes (reference, π_old) take twice the positions, and hold four [N, V] tensors
  const Nl = Math.max(2 * N, T);
  const lines: MemoryLine[] = [{ what: `weights (${params.toLocaleString('en')} parameters, float32)`, bytes: params * 4 }];
  if (o.lora && a.tiedEmbeddings) lines.push({ what: 'output head (the tied embedding transposed once)', bytes: V * D * 4 });
  lines.push({
    what: `trainable ${o.lora ? `LoRA adapters (rank ${o.lora.rank})` : 'weights'}: gradients, accumulated gradients, AdamW moments`,
    bytes: trainable * 4 * 4,
  });
  lines.push({
    what: o.lora ? 'KL reference (the base weights shared; a frozen copy of the adapters)' : 'KL reference (a frozen copy of every weight)',
    bytes: (o.lora ? trainable : params) * 4,
  });
  // saved for the backward pass per layer: norms, projections, rotations, MLP, attention scores and probabilities
  const perLayer = Nt * (14 * D + 4 * F) * 4 + 2 * Nt * T * a.heads * 4;
  lines.push({ what: `activations of one micro-batch (${Nt} positions${Nt > N ? ': one whole sequence' : ''}, ${L} layers)`, bytes: perLayer * L });
  if (!o.lora)
    lines.push({
      what: `trained embeddings' one-hot lookups of one micro-batch (${Nt} × ${V.toLocaleString('en')} and their gradients)`,
      // learned positions: a second one-hot lookup, into the position table
      bytes: Nt * V * 4 * (familyOf(a).positions === 'learned' ? 3 : 2),
    });
  lines.push({
    what: `logits of a pass (${Math.max(Nt, Nl)} × ${V.toLocaleString('en')}: logits, log-softmax, one-hot targets, their gradients)`,
    bytes: Math.max(5 * Nt, 4 * Nl) * V * 4,
  });
  lines.push({
    what: `sampling KV cache (${o.sampleRows} rows × ${o.contextLength} positions)`,
    bytes: o.sampleRows * o.contextLength * L * 2 * a.kvHeads * a.headDim * 4,
  });
  const rows = prefillRowsOf(a, T);
  lines.push({
    what: `prefill attention of ${rows} row(s) (heads × ${T}² scores and probabilities, one layer at a time)`,
    bytes: rows * a.heads * T * T * 4 * 2,
  });
  const total = lines.reduce((n, l) => n + l.bytes, 0);
  const limit = backendLimit(o.backend);
  return { lines, total, limit: limit.bytes, limitOf: limit.of, fits: total <= limit.bytes, trainable, microBatchPositions: N };
}

/** The plan at the largest micro-batch (a power of two, 2048 down to 64) that fits, else the smallest one's plan. */
export function fittingPlan(a: HfArchitecture, o: Omit<PlanOptions, 'microBatchPositions'> & { microBatchPositions?: number }): MemoryPlan {
  if (o.microBatchPositions && o.microBatchPositions > 0) return planMemory(a, { ...o, microBatchPositions: o.microBatchPositions });
  let plan = planMemory(a, { ...o, microBatchPositions: 2048 });
  for (let n = 1024; !plan.fits && n >= 64; n /= 2) plan = planMemory(a, { ...o, microBatchPositions: n });
  return plan;
}

export { formatBytes };

/** The plan as lines of text (model check, refusals). */
export function describePlan(p: MemoryPlan): string {
  return [
    ...p.lines.map((l) => `  ${formatBytes(l.bytes).padStart(10)}  ${l.what}`),
    `  ${formatBytes(p.total).padStart(10)}  total, of ${formatBytes(p.limit)} (${p.limitOf})`,
  ].join('\n');
}

/** Throws, before anything is loaded, when the plan cannot fit: the numbers and the ways out. */
export function assertFits(p: MemoryPlan, dir: string, o: { lora: boolean; backend: string }): void {
  if (p.fits) return;
  const ways = [
    ...(o.lora ? [] : ['LoRA (policyOptions.loraRank 8): only the adapters get gradients and optimizer state, and the reference shares the base weights']),
    'a smaller micro-batch (policyOptions.microBatchPositions) or contextLength',
    ...(o.backend === 'wasm' ? ["the tfjs-node or tfjs-node-gpu backend (npm install @tensorflow/tfjs-node), whose memory is the machine's"] : []),
    'a smaller checkpoint',
  ];
  throw new ModelLoadError(`policyOptions.model: ${dir} does not fit the ${o.backend} backend:\n${describePlan(p)}\nWays out: ${ways.join('; ')}.`);
}
