// `agent-rl model new --out DIR`: a fresh checkpoint folder with random weights (transformers'
// initialisation, seeded) from the flags — the model a run trains from scratch, or a test's fixture.
import * as path from 'node:path';
import { ModelLoadError } from '../rl/policies/lm/models/hfConfig';
import { parameterCount } from '../rl/policies/lm/models/families/familyOf';
import { NEW_MODEL_ARCHITECTURES, NEW_MODEL_FILES, writeNewCheckpoint, type NewModelArchitecture, type NewModelSpec } from '../rl/policies/lm/newCheckpoint';
import { count } from '../shared/format';
import { showInvisibles } from '../shared/untrustedText';
import { defineCommand } from './command';
import { UsageError } from './usageError';

const MODEL_NEW_USAGE = `agent-rl model new --out DIR [--arch qwen3|qwen2|llama] [--layers N] [--hidden N] [--heads N] [--kv-heads N]
                 [--head-dim N] [--intermediate N] [--untied-head] [--context N] [--rope-theta N] [--tokenizer DIR|char]
                 [--seed N] [--dtype float32|bfloat16]
  a fresh checkpoint folder with random weights (transformers' initialisation, seeded): config.json,
  model.safetensors, tokenizer.json, tokenizer_config.json, generation_config.json. Defaults: qwen3, 2 layers,
  width 64, 4 heads, MLP 8/3 × width (a multiple of 8), tied head, 2048 positions, rope θ 10,000, the character tokenizer
  (every character one token, written as a Hugging Face tokenizer.json), seed 0, float32`;

const NEW_MODEL_OPTIONS = Object.fromEntries(
  ['arch', 'layers', 'hidden', 'heads', 'kv-heads', 'head-dim', 'intermediate', 'context', 'rope-theta', 'tokenizer', 'seed', 'dtype'].map(
    (k) => [k, { type: 'string' }] as const,
  ),
) as Record<string, { readonly type: 'string' }>;

export const modelNewCommand = defineCommand({
  name: 'model new',
  summary: 'a fresh checkpoint folder with random weights',
  usage: MODEL_NEW_USAGE,
  options: { ...NEW_MODEL_OPTIONS, out: { type: 'string' }, 'untied-head': { type: 'boolean' } },
  sets: [],
  positionals: { min: 0, max: 0, error: 'model new takes no folder positionally; use --out DIR' },
  run: ({ values: v }) => {
    if (v.out === undefined) throw new UsageError(`model new needs --out DIR\n\n${MODEL_NEW_USAGE}`);
    return modelNew(v, path.resolve(v.out));
  },
});

/** `model new`: writes a fresh checkpoint folder from the flags. */
function modelNew(v: Readonly<Record<string, string | boolean | undefined>>, out: string): number {
  const int = (flag: string, fallback?: number): number | undefined => {
    const raw = v[flag];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${flag} ${String(raw)}: use a whole number ≥ 1`);
    return n;
  };
  const arch = (v.arch ?? 'qwen3') as NewModelArchitecture;
  if (!NEW_MODEL_ARCHITECTURES.includes(arch)) throw new UsageError(`--arch ${String(v.arch)}: use one of ${NEW_MODEL_ARCHITECTURES.join(', ')}`);
  const dtype = (v.dtype ?? 'float32') as NewModelSpec['dtype'];
  if (dtype !== 'float32' && dtype !== 'bfloat16') throw new UsageError(`--dtype ${String(v.dtype)}: use float32 or bfloat16`);
  const spec: NewModelSpec = {
    architecture: arch,
    layers: int('layers', 2)!,
    hidden: int('hidden', 64)!,
    heads: int('heads', 4)!,
    ...(v['kv-heads'] !== undefined ? { kvHeads: int('kv-heads')! } : {}),
    ...(v['head-dim'] !== undefined ? { headDim: int('head-dim')! } : {}),
    ...(v.intermediate !== undefined ? { intermediate: int('intermediate')! } : {}),
    tiedHead: v['untied-head'] !== true,
    maxPositions: int('context', 2048)!,
    ...(v['rope-theta'] !== undefined ? { ropeTheta: int('rope-theta')! } : {}),
    tokenizer: typeof v.tokenizer === 'string' && v.tokenizer !== 'char' ? path.resolve(v.tokenizer) : 'char',
    seed: v.seed === undefined ? 0 : (int('seed') ?? 0),
    dtype,
  };
  const flags: Record<keyof NewModelSpec, string> = {
    architecture: '--arch',
    layers: '--layers',
    hidden: '--hidden',
    heads: '--heads',
    kvHeads: '--kv-heads',
    headDim: '--head-dim',
    intermediate: '--intermediate',
    tiedHead: '--untied-head',
    maxPositions: '--context',
    ropeTheta: '--rope-theta',
    tokenizer: '--tokenizer',
    seed: '--seed',
    dtype: '--dtype',
  };
  let a;
  try {
    a = writeNewCheckpoint(out, spec, (f) => flags[f]);
  } catch (e) {
    if (e instanceof ModelLoadError) throw new UsageError(e.message);
    throw e;
  }
  process.stdout.write(
    `${showInvisibles(
      [
        `wrote ${out}`,
        `  ${a.modelType}, ${a.layers} layers, width ${a.hidden}, ${a.heads} heads (${a.kvHeads} key/value, width ${a.headDim}), MLP ${a.intermediate}, vocabulary ${a.vocabSize}${a.tiedEmbeddings ? ', tied head' : ''}, ${a.maxPositions} positions`,
        `  ${count(parameterCount(a))} parameters in ${spec.dtype}, seed ${spec.seed}; tokenizer ${spec.tokenizer === 'char' ? 'character-level' : spec.tokenizer}`,
        `  files: ${NEW_MODEL_FILES.join(', ')}`,
      ].join('\n'),
    )}\n`,
  );
  return 0;
}
