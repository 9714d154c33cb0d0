// The registry of model families by model_type (what a new family needs: modelFamily.ts's opening
// comment), and what follows from a family's tensors alone: the parameter count and the LoRA targets.
import { ModelLoadError, type HfArchitecture, type HfModelType } from '../hfConfig';
import { gpt2 } from './gpt2';
import { llama } from './llama';
import { tensorSize, type ModelFamily } from './modelFamily';
import { qwen2 } from './qwen2';
import { qwen3 } from './qwen3';

export const FAMILIES: Readonly<Record<HfModelType, ModelFamily>> = { qwen2, qwen3, llama, gpt2 };

/** The family of a parsed config (hfConfig has refused any other model_type already). */
export function familyOf(a: Pick<HfArchitecture, 'modelType'>): ModelFamily {
  const f = (FAMILIES as Partial<Record<string, ModelFamily>>)[a.modelType];
  if (!f) throw new ModelLoadError(`model_type ${JSON.stringify(a.modelType)} has no family spec; known: ${Object.keys(FAMILIES).join(', ')}`);
  return f;
}

/** Parameters of the architecture: the sum of its tensors' sizes (a tied head is the embedding, counted once). */
export function parameterCount(a: HfArchitecture): number {
  return familyOf(a)
    .tensors(a)
    .reduce((n, t) => n + tensorSize(t), 0);
}

/** The module names LoRA adapts for `targets` ("all-linear": every linear layer of the family). */
export function loraModules(a: Pick<HfArchitecture, 'modelType'>, targets: readonly string[]): readonly string[] {
  return targets.includes('all-linear') ? familyOf(a).loraTargets : targets;
}

/** Refuses target names that are not linear layers of the architecture (a typo would train fewer layers silently). */
export function checkLoraTargets(a: Pick<HfArchitecture, 'modelType'>, targets: readonly string[]): void {
  const known = familyOf(a).loraTargets;
  const unknown = targets.filter((t) => t !== 'all-linear' && !known.includes(t));
  if (unknown.length > 0 || targets.length === 0) {
    throw new ModelLoadError(
      `policyOptions.loraTargets: ${unknown.length ? `${unknown.map((t) => JSON.stringify(t)).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a linear layer of a ${a.modelType} model` : 'no layers given'}. Fix: use some of ${known.join(', ')}, or all-linear`,
    );
  }
}
