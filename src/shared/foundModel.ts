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
  };
  /** Why the folder cannot be a policy (the loader's own message). */
  readonly problem?: string;
}

/** One line on whether seed 000's preset fits the model's memory plan, or why the folder cannot load. */
export function describeFit(m: FoundModel): string {
  if (m.problem) return `cannot load: ${m.problem}`;
  const s = m.seed000;
  if (!s) return '';
  return `${s.fits ? 'seed 000 fits' : 'seed 000 does NOT fit'} (${formatBytes(s.total)} of ${formatBytes(s.limit)} on ${s.on}${s.dtype === 'q8' ? ', weightDtype q8' : ''})`;
}
