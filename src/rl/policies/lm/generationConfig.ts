// The end-of-sequence tokens of a checkpoint: tokenizer_config.json's eos_token first (an instruct
// model's end of turn: <|im_end|>, <|eot_id|>), then generation_config.json's eos_token_id (a number or
// a list). Generation stops at any of them; the first ends a scored candidate.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HfTokenizer } from './tokenizer';
import { ModelLoadError } from './models/hfConfig';

export function generationEos(dir: string, tokenizer: HfTokenizer): number[] {
  const file = path.join(dir, 'generation_config.json');
  const ids: number[] = [];
  if (fs.existsSync(file)) {
    let g: { eos_token_id?: unknown };
    try {
      g = JSON.parse(fs.readFileSync(file, 'utf8')) as { eos_token_id?: unknown };
    } catch (e) {
      throw new ModelLoadError(`${file}: not valid JSON (${(e as Error).message})`);
    }
    const e = g.eos_token_id;
    for (const id of Array.isArray(e) ? e : [e]) if (Number.isInteger(id)) ids.push(id as number);
  }
  const eosToken = tokenizer.tokenizerConfig.eos_token;
  const text = typeof eosToken === 'string' ? eosToken : (eosToken as { content?: unknown } | undefined)?.content;
  if (typeof text === 'string') {
    const id = tokenizer.tokenId(text);
    if (id !== undefined) {
      const at = ids.indexOf(id);
      if (at >= 0) ids.splice(at, 1);
      ids.unshift(id);
    }
  }
  return ids.filter((id) => id < tokenizer.vocabSize);
}
