// Token texts for the inspector's token view: each generated id decoded alone with the tokenizer the
// run sampled with, found from its stored config the way the worker built it (a warm start's
// checkpoint carries its tokenizer; a Hugging Face model folder or policyOptions.tokenizer holds
// tokenizer.json; else the character vocabulary). Reading a stored run's tokenizer is reading data: a
// tokenizer decodes ids, it runs nothing. One tokenizer per run is kept; a run whose tokenizer cannot
// be read shows ids instead (`undefined`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { characterHfTokenizer, HfTokenizer, tokenizerFromJSON, type Tokenizer } from '../rl/policies/lm/tokenizer';

const KEPT = 4;

export class RunTokenizers {
  private readonly cache = new Map<number, Tokenizer | undefined>();

  /** Each turn's generated ids decoded one by one (untrusted text), or undefined when the run's tokenizer is unknown. */
  pieces(runId: number, config: unknown, turns: readonly { readonly policy: Record<string, unknown> }[]): string[][] | undefined {
    const tokenizer = this.of(runId, config);
    if (!tokenizer) return undefined;
    return turns.map((t) => {
      const p: unknown = t.policy;
      const tk: unknown = typeof p === 'object' && p !== null ? (p as { tokens?: unknown }).tokens : undefined;
      const sampled: unknown = typeof tk === 'object' && tk !== null ? (tk as { sampled?: unknown }).sampled : undefined;
      const ids: unknown[] = Array.isArray(sampled) ? sampled : [];
      return ids.map((id) =>
        typeof id === 'number' && Number.isInteger(id) && id >= 0 && id < tokenizer.vocabSize ? tokenizer.decode([id]) : `#${String(id)}`,
      );
    });
  }

  private of(runId: number, config: unknown): Tokenizer | undefined {
    if (this.cache.has(runId)) return this.cache.get(runId);
    let t: Tokenizer | undefined;
    try {
      t = tokenizerOfConfig(config);
    } catch {
      t = undefined; // a moved or unreadable folder: the view shows ids
    }
    if (this.cache.size >= KEPT) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(runId, t);
    return t;
  }
}

/**
 * The tokenizer a transformer run's stored config names; undefined when it is not a transformer run or
 * a folder it names cannot be used as it stands (a relative path: it was relative to where the run was
 * started) — never another tokenizer in its place.
 */
export function tokenizerOfConfig(config: unknown): Tokenizer | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const c = config as { policy?: unknown; policyOptions?: unknown };
  if (c.policy !== 'transformer') return undefined;
  const o = (typeof c.policyOptions === 'object' && c.policyOptions !== null ? c.policyOptions : {}) as Record<string, unknown>;
  const named = (k: string): string | undefined => (typeof o[k] === 'string' && o[k] !== '' ? o[k] : undefined);
  const [init, model, tokenizer] = [named('init'), named('model'), named('tokenizer')];
  if ([init, model, tokenizer].some((p) => p !== undefined && !path.isAbsolute(p))) return undefined;
  if (init) {
    const manifest = JSON.parse(fs.readFileSync(path.join(init, 'checkpoint.json'), 'utf8')) as {
      tokenizer?: { kind: string; [k: string]: unknown };
      model?: { dir?: unknown };
    };
    if (manifest.tokenizer) return tokenizerFromJSON(manifest.tokenizer);
    if (typeof manifest.model?.dir === 'string') return HfTokenizer.fromDirectory(manifest.model.dir);
    return undefined;
  }
  const folder = model ?? tokenizer;
  // no folder: a fresh model's character vocabulary (the small GPT of earlier runs had the same ids)
  return folder ? HfTokenizer.fromDirectory(folder) : characterHfTokenizer();
}
