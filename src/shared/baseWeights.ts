// How a run's language model held its weights: under LoRA the frozen base the adapters train over —
// 8-bit Q8_0 blocks (policyOptions.weightDtype "q8"), bfloat16 or float32 — and under full fine-tuning
// the trained weights themselves (float32).
// Recorded with the run (RuntimeInfo.baseWeights) and with its checkpoints (checkpoint.json's
// baseWeights), read back by the CLI's show, Show Runtime on a run, the inspector's policy line, the
// dashboard and model export. A stored value is untrusted: only the three names below are read, and
// every view prints this file's own words for them, never the stored text.
import { oneLine } from './untrustedText';

/** The engine's names (WeightDtype): q8 = Q8_0 blocks of 32 with a float16 scale each; bf16; f32 (also the tfjs decoder's). */
export type BaseWeights = 'q8' | 'bf16' | 'f32';

const NAMES: readonly BaseWeights[] = ['q8', 'bf16', 'f32'];

/** Whether a stored value is one of the three names (anything else: not recorded, shown as nothing). */
export function isBaseWeights(v: unknown): v is BaseWeights {
  return typeof v === 'string' && (NAMES as readonly string[]).includes(v);
}

/** The stored runtime record's (runtime_json's) base weights, where it names one of the three; undefined for a run recorded without it. */
export function storedBaseWeights(runtime: unknown): BaseWeights | undefined {
  if (typeof runtime !== 'object' || runtime === null) return undefined;
  const v = (runtime as { baseWeights?: unknown }).baseWeights;
  return isBaseWeights(v) ? v : undefined;
}

/** Short words for a line of a view: "8 bits (Q8_0)", "bfloat16", "float32". */
export function baseWeightsShort(w: BaseWeights): string {
  return w === 'q8' ? '8 bits (Q8_0)' : w === 'bf16' ? 'bfloat16' : 'float32';
}

/** The whole line the CLI's show and Show Runtime print: what held the weights, and for q8 how the products ran. */
export function baseWeightsLine(w: BaseWeights): string {
  if (w === 'q8') return 'base weights: 8 bits (Q8_0 blocks of 32, one float16 scale each; activations quantized to 8 bits per block of 32)';
  return `base weights: ${baseWeightsShort(w)}`;
}

/**
 * The dashboard's line on its selected runs' base weights, "base weights: run 3 8 bits (Q8_0) · run 5
 * bfloat16", from each series' stored value (a message's field: checked again here); undefined when no
 * selected run recorded one. Only run ids (numbers) and our own words: no stored text reaches it.
 */
export function baseWeightsNote(series: readonly { readonly run: { readonly id: number }; readonly baseWeights?: unknown }[]): string | undefined {
  const parts = series.flatMap((s) =>
    isBaseWeights(s.baseWeights) && Number.isInteger(s.run.id) ? [`run ${s.run.id} ${baseWeightsShort(s.baseWeights)}`] : [],
  );
  return parts.length > 0 ? `base weights: ${parts.join(' · ')}` : undefined;
}

/**
 * Show Runtime on a run (the Runs view's menu): what the stored run computed on and how its model held
 * its base weights, for the output channel. `compute` is stored text: one line, invisibles marked, cut;
 * the base weights our own words (absent: "not recorded").
 */
export function runRuntimeLines(runId: number, compute: string, baseWeights: BaseWeights | undefined): string[] {
  return [
    `run ${runId} computed on: ${compute === '' ? '(not recorded)' : oneLine(compute, 1000)}`,
    `run ${runId} ${baseWeights ? baseWeightsLine(baseWeights) : 'base weights: not recorded (a run from before they were, or a policy without a language model)'}`,
  ];
}
