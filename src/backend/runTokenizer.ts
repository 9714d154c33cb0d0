// Token texts for the inspector's token view: each generated id decoded alone with the tokenizer the
// run sampled with, found from its stored config the way the worker built it (a warm start's
// checkpoint carries its tokenizer; a Hugging Face model folder or policyOptions.tokenizer holds
// tokenizer.json; else the character tokenizer). Reading a stored run's tokenizer is reading data: a
// tokenizer decodes ids, it runs nothing. One tokenizer per run is kept; a run whose tokenizer cannot
// be read shows ids instead (`undefined`).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CharTokenizer, HfTokenizer, tokenizerFromJSON, type Tokenizer } from '../rl/policies/transformer/tokenizer';

const KEPT = 4;

export class RunTokenizers {
  private readonly cache = new Map<number, Tokenizer | undefined>();

  /** Each turn's generated ids decoded one by one (untrusted text), or undefined when the run's tokenizer is unknown. */
  pieces(runId: number, config: unknown, turns: readonly { readonly policy: Record<string, unknown> }[]): string[][] | undefined {
    const tokenizer = this.of(runId, config);
    if (!tokenizer) return undefined;
    return turns.map((t) => {
      const tk = t.policy.tokens as { sampled?: unknown } | undefined;
      const ids = Array.isArray(tk?.sampled) ? tk.sampled : [];
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

/** The tokenizer a transformer run's stored config names (undefined: not a transformer run, or a relative path). */
export function tokenizerOfConfig(config: unknown): Tokenizer | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const c = config as { policy?: unknown; policyOptions?: Record<string, unknown> };
  if (c.policy !== 'transformer') return undefined;
  const o = c.policyOptions ?? {};
  const dir = (k: string): string | undefined => (typeof o[k] === 'string' && o[k] !== '' && path.isAbsolute(o[k]) ? o[k] : undefined);
  const init = dir('init');
  if (init) {
    const manifest = JSON.parse(fs.readFileSync(path.join(init, 'checkpoint.json'), 'utf8')) as {
      tokenizer?: { kind: string; [k: string]: unknown };
      model?: { dir?: unknown };
    };
    if (manifest.tokenizer) return tokenizerFromJSON(manifest.tokenizer);
    if (typeof manifest.model?.dir === 'string') return HfTokenizer.fromDirectory(manifest.model.dir);
    return undefined;
  }
  const folder = dir('model') ?? dir('tokenizer');
  if (folder) return HfTokenizer.fromDirectory(folder);
  if (typeof o.model === 'string' && o.model !== '') return undefined;
  return new CharTokenizer();
}
