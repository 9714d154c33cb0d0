// A checkpoint found on the user's machine (rl/policies/lm/models/modelCache.ts finds them; the CLI's model
// list and Start Run's model step show them): plain data that crosses the backend's boundary.
import { bytes as formatBytes } from './format';

/** A checkpoint found in the Hugging Face cache or a named folder (rl/policies/lm/models/modelCache.ts), described without reading a weight. */
export interface FoundModel {
  /** ORG/NAME for a cache entry, else the folder's name. */
  readonly name: string;
  readonly dir: string;
  /** The cache root or the named folder it was found under. */
  readonly foundIn: string;
  /** The snapshot's revision (a cache entry), and whether refs/main points at it. */
  readonly revision?: string;
  readonly main?: boolean;
  readonly modelType?: string;
  readonly parameters?: number;
  readonly dtypes?: string;
  /** Seed 000's preset (LoRA rank 8, 1,024-token contexts, 12 rows sampled at once) on the backend. */
  readonly seed000?: {
    readonly fits: boolean;
    readonly total: number;
    readonly limit: number;
    readonly on: string;
    /** On the engine: the weights' dtype of the plan (q8 where bfloat16 does not fit and Q8_0 blocks do). */
    readonly dtype?: string;
    /** On the engine: the preset's plan at each weight dtype a LoRA run can ask for (q8 left out where the model's widths are not whole Q8_0 blocks). */
    readonly plans?: readonly Seed000Plan[];
  };
  /** Why the folder cannot be a policy (the loader's own message). */
  readonly problem?: string;
}

/** Seed 000's preset planned with the weights held one way (policyOptions.weightDtype). */
export interface Seed000Plan {
  readonly dtype: 'q8' | 'bf16';
  readonly fits: boolean;
  /** Bytes the plan needs. */
  readonly total: number;
}

/** One line on whether seed 000's preset fits the model's memory plan, or why the folder cannot load. */
export function describeFit(m: FoundModel): string {
  if (m.problem) return `cannot load: ${m.problem}`;
  return m.seed000 ? describeSeed000(m.seed000) : '';
}

/**
 * Seed 000's preset against the memory: on the engine at q8 and at bfloat16, "seed 000 preset: fits at q8
 * (3.65 GiB), not at bfloat16 (5.41 GiB) — of 4.00 GiB on the wasm engine; use weightDtype q8
 * (--weight-dtype q8)", the advice only where q8 alone fits; elsewhere the one plan the backend has.
 */
export function describeSeed000(s: NonNullable<FoundModel['seed000']>): string {
  if (!s.plans || s.plans.length === 0)
    return `${s.fits ? 'seed 000 fits' : 'seed 000 does NOT fit'} (${formatBytes(s.total)} of ${formatBytes(s.limit)} on ${s.on}${s.dtype === 'q8' ? ', weightDtype q8' : ''})`;
  const name = (d: Seed000Plan['dtype']): string => (d === 'q8' ? 'q8' : 'bfloat16');
  const parts = s.plans.map((p, i) => `${p.fits ? 'fits' : i === 0 ? 'does not fit' : 'not'} at ${name(p.dtype)} (${formatBytes(p.total)})`);
  const onlyQ8 = s.plans.some((p) => p.dtype === 'q8' && p.fits) && !s.plans.some((p) => p.dtype !== 'q8' && p.fits);
  return `seed 000 preset: ${parts.join(', ')} — of ${formatBytes(s.limit)} on ${s.on}${onlyQ8 ? '; use weightDtype q8 (--weight-dtype q8)' : ''}`;
}
