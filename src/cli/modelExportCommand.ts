// `agent-rl model export CHECKPOINT --out DIR`: a run's checkpoint as a Hugging Face folder any loader
// reads — its adapters merged into the base model's original weights (W + alpha/rank · A·B, read from
// the folder through float32), or under full fine-tuning its trained weights. Adapters a run trained over
// the engine's 8-bit base (weightDtype q8) merge into the original, unquantized weights, as QLoRA's merge
// does: the Q8_0 blocks were the run's copy of the base, never the model the user exports.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readCheckpoint, restoreCheckpoint } from '../rl/policies/lm/checkpoint';
import { writeHfFolder } from '../rl/policies/lm/models/hfFolder';
import { HfModel, type HfModelConfig } from '../rl/policies/lm/models/hfModel';
import { checkpointTensors } from '../rl/policies/lm/models/safetensors';
import type { BaseWeights } from '../shared/baseWeights';
import { showInvisibles } from '../shared/untrustedText';
import { defineCommand } from './command';
import { UsageError } from './usageError';

const MODEL_EXPORT_USAGE = `agent-rl model export CHECKPOINT --out DIR
  CHECKPOINT    a checkpoint a run on a Hugging Face model wrote (its adapters name their base folder)
  --out DIR     a new Hugging Face folder: the base's config and tokenizer files, and model.safetensors
                with the adapters merged into the folder's original weights (W + alpha/rank · A·B), in
                float32; adapters a run trained over the 8-bit base (weightDtype q8) merge into the
                original, unquantized weights as QLoRA's do, not into the Q8_0 blocks (the output says so)`;

/** `model export`: one of the model group's subcommands (modelCommand.ts). */
export const modelExportCommand = defineCommand({
  name: 'model export',
  summary: "a run's adapters merged into its base model, as a Hugging Face folder",
  usage: MODEL_EXPORT_USAGE,
  options: { out: { type: 'string' } },
  sets: [],
  positionals: { min: 1, max: 1, error: 'model export needs exactly one CHECKPOINT' },
  run: async ({ values: v, positionals }) => {
    if (v.out === undefined) throw new UsageError(`model export needs CHECKPOINT and --out DIR\n\n${MODEL_EXPORT_USAGE}`);
    const { written, merged } = await modelExport(path.resolve(positionals[0]!), path.resolve(v.out));
    process.stdout.write(showInvisibles(`${merged}\nwrote:\n${written.map((f) => `  ${f}`).join('\n')}\n`));
    return 0;
  },
});

/**
 * Merges a run's adapters into its base model and writes a folder any Hugging Face loader reads; `merged`
 * says into what. The base is always the folder's own weights read through float32 (the tfjs decoder's
 * loader), never the engine's: adapters trained over the 8-bit base (checkpoint.json's baseWeights
 * "q8") merge into the original, unquantized weights, as QLoRA's merge does.
 */
export async function modelExport(checkpoint: string, out: string): Promise<{ written: string[]; merged: string }> {
  const ck = readCheckpoint(checkpoint);
  const stored = ck.manifest.model as Partial<HfModelConfig>;
  if (stored.kind !== 'hf' || typeof stored.dir !== 'string')
    throw new UsageError(`${checkpoint}: this checkpoint is of the small GPT, not of a Hugging Face model; only those export`);
  if (fs.existsSync(out) && fs.readdirSync(out).length > 0) throw new UsageError(`--out ${out}: the folder is not empty. Fix: name a new folder`);
  const model = HfModel.load(stored.dir, {
    ...(stored.contextLength ? { contextLength: stored.contextLength } : {}),
    ...(stored.lora ? { lora: stored.lora } : {}),
  });
  try {
    restoreCheckpoint(ck, model);
    return { written: writeHfFolder(out, stored.dir, await model.mergedTensors()), merged: exportNote(stored.dir, stored.lora?.rank, ck.manifest.baseWeights) };
  } finally {
    model.dispose();
  }
}

/** What model export merged into what: the original weights (their stored dtypes), and for a q8 run that they are not the Q8_0 blocks it trained over. */
function exportNote(dir: string, rank: number | undefined, baseWeights: BaseWeights | undefined): string {
  if (rank === undefined) return `wrote the fine-tuned weights of the checkpoint (every weight trained) in float32, with ${dir}'s config and tokenizer`;
  const stored = [...new Set([...checkpointTensors(dir).values()].map((t) => t.dtype))].join(', ');
  const into = `merged the LoRA adapters (rank ${rank}) into the original weights of ${dir} (stored as ${stored}), written in float32`;
  return baseWeights === 'q8'
    ? `${into}: the run trained them over an 8-bit copy of the base (Q8_0 blocks), and the merge uses the original, unquantized weights, as QLoRA's does`
    : into;
}
