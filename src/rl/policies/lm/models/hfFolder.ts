// Trained weights as a Hugging Face checkpoint folder: model.safetensors in float32 (the checkpoint's
// own tensor names and layouts), config.json with torch_dtype float32 and the rest as it was, and the
// base folder's tokenizer and generation files, so any loader of the format (and the workbench, as
// policyOptions.model) reads it. `model export` writes one from adapters merged into their base; a run
// with full fine-tuning writes one beside every checkpoint.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { writeSafetensors } from './safetensors';

/** The files copied from the base folder when present (config.json is rewritten). */
const COPIED = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'special_tokens_map.json'] as const;

/** Writes the folder into `out` (created if missing); returns the files written. */
export function writeHfFolder(
  out: string,
  baseDir: string,
  tensors: ReadonlyMap<string, { readonly data: Float32Array; readonly shape: readonly number[] }>,
): string[] {
  fs.mkdirSync(out, { recursive: true });
  const written = [path.join(out, 'model.safetensors')];
  writeSafetensors(written[0]!, tensors);
  for (const f of COPIED) {
    const from = path.join(baseDir, f);
    if (!fs.existsSync(from)) continue;
    const to = path.join(out, f);
    if (f === 'config.json') {
      // float32 weights now; the rest of the config as it was
      const cfg = JSON.parse(fs.readFileSync(from, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(to, `${JSON.stringify({ ...cfg, torch_dtype: 'float32' }, null, 2)}\n`);
    } else {
      fs.copyFileSync(from, to);
    }
    written.push(to);
  }
  return written;
}
