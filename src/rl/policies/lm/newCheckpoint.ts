// A fresh Hugging Face checkpoint folder of a supported architecture (qwen3, qwen2, llama) with random
// weights: config.json as the transformers config class writes it, model.safetensors, the tokenizer
// files and generation_config.json. Small models trained here are such folders, like any checkpoint a
// user brings (`agent-rl model new`, and a run whose policyOptions.model is empty). The tokenizer is a
// given tokenizer folder's, or a character-level vocabulary written as a real tokenizer.json (a BPE
// model without merges, so every character is one token, decoded by concatenation: any reader of the
// Hugging Face tokenizers format loads it). Weights are initialised as transformers does
// (normal(0, initializer_range) for the embedding and the linear layers, norms 1, biases 0), from a
// seeded stream: the same spec and seed write the same bytes.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Rng } from '../../random';
import { ModelLoadError, parseHfConfig, type HfArchitecture } from './models/hfConfig';
import { writeSafetensors } from './models/safetensors';
import { characterTokenizer } from './tokenizer';

export const NEW_MODEL_ARCHITECTURES = ['qwen3', 'qwen2', 'llama'] as const;
export type NewModelArchitecture = (typeof NEW_MODEL_ARCHITECTURES)[number];

export interface NewModelSpec {
  readonly architecture: NewModelArchitecture;
  readonly layers: number;
  readonly hidden: number;
  readonly heads: number;
  /** Key/value heads (grouped-query attention); default: as many as the query heads. */
  readonly kvHeads?: number;
  /** Head width; default hidden / heads. */
  readonly headDim?: number;
  /** MLP width; default the multiple of 8 nearest 8/3 × hidden (SwiGLU's parameters of a 4 × MLP). */
  readonly intermediate?: number;
  readonly tiedHead: boolean;
  /** max_position_embeddings. */
  readonly maxPositions: number;
  /** rope_theta; default 10,000 (a small model's few head dimensions and short contexts; released models' long-context bases are 10⁵–10⁶). */
  readonly ropeTheta?: number;
  /** A folder with tokenizer.json (and tokenizer_config.json), or 'char' for the character vocabulary. */
  readonly tokenizer: string;
  readonly seed: number;
  readonly dtype: 'float32' | 'bfloat16';
}

/** Ids of a tokenizer.json (vocabulary and added tokens). */
function tokenizerSize(json: Record<string, unknown>): number {
  let max = -1;
  const vocab = (json.model as { vocab?: unknown } | undefined)?.vocab;
  if (Array.isArray(vocab)) max = vocab.length - 1;
  else if (vocab && typeof vocab === 'object') for (const id of Object.values(vocab as Record<string, number>)) max = Math.max(max, id);
  for (const t of (json.added_tokens as { id: number }[] | undefined) ?? []) max = Math.max(max, t.id);
  return max + 1;
}

function readJson(file: string): Record<string, unknown> {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new ModelLoadError(`${file}: cannot read it as JSON (${(e as Error).message})`);
  }
}

/** The config.json transformers writes for this spec (its config class's fields). */
export function newModelConfig(spec: NewModelSpec, vocabSize: number, eos: number | readonly number[], bos: number | null): Record<string, unknown> {
  const headDim = spec.headDim ?? spec.hidden / spec.heads;
  const intermediate = spec.intermediate ?? Math.max(8, Math.round(((8 / 3) * spec.hidden) / 8) * 8);
  const common = {
    vocab_size: vocabSize,
    hidden_size: spec.hidden,
    intermediate_size: intermediate,
    num_hidden_layers: spec.layers,
    num_attention_heads: spec.heads,
    num_key_value_heads: spec.kvHeads ?? spec.heads,
    hidden_act: 'silu',
    max_position_embeddings: spec.maxPositions,
    initializer_range: 0.02,
    rms_norm_eps: 1e-6,
    use_cache: true,
    tie_word_embeddings: spec.tiedHead,
    rope_theta: spec.ropeTheta ?? 10000,
    rope_scaling: null,
    attention_dropout: 0,
    torch_dtype: spec.dtype,
    bos_token_id: bos,
    eos_token_id: eos,
  };
  switch (spec.architecture) {
    case 'qwen3':
      return {
        architectures: ['Qwen3ForCausalLM'],
        model_type: 'qwen3',
        ...common,
        head_dim: headDim,
        attention_bias: false,
        use_sliding_window: false,
        sliding_window: null,
        max_window_layers: spec.layers,
      };
    case 'qwen2':
      return {
        architectures: ['Qwen2ForCausalLM'],
        model_type: 'qwen2',
        ...common,
        use_sliding_window: false,
        sliding_window: null,
        max_window_layers: spec.layers,
      };
    case 'llama':
      return {
        architectures: ['LlamaForCausalLM'],
        model_type: 'llama',
        ...common,
        head_dim: headDim,
        attention_bias: false,
        mlp_bias: false,
        pretraining_tp: 1,
      };
  }
}

/**
 * Every tensor of the architecture with its initial values (transformers' _init_weights), in checkpoint
 * names. Written out here rather than read from the family spec (families/) on purpose: the families'
 * reference tests check each spec against what this writes, and the same spec and seed keep writing
 * the same bytes.
 */
function initialTensors(a: HfArchitecture, seed: number, std: number): Map<string, { data: Float32Array; shape: number[] }> {
  const out = new Map<string, { data: Float32Array; shape: number[] }>();
  const rng = Rng.stream(seed, 'model new');
  const normal = (shape: number[]): Float32Array => {
    const n = shape.reduce((x, y) => x * y, 1);
    const d = new Float32Array(n);
    for (let i = 0; i < n; i += 2) {
      // Box–Muller: two normals from two uniforms
      const u = 1 - rng.next(),
        v = rng.next();
      const r = std * Math.sqrt(-2 * Math.log(u));
      d[i] = r * Math.cos(2 * Math.PI * v);
      if (i + 1 < n) d[i + 1] = r * Math.sin(2 * Math.PI * v);
    }
    return d;
  };
  const add = (name: string, shape: number[], init: 'normal' | 'ones' | 'zeros'): void => {
    const n = shape.reduce((x, y) => x * y, 1);
    out.set(name, { shape, data: init === 'normal' ? normal(shape) : new Float32Array(n).fill(init === 'ones' ? 1 : 0) });
  };
  const D = a.hidden,
    E = a.headDim,
    q = a.heads * E,
    kv = a.kvHeads * E,
    F = a.intermediate;
  add('model.embed_tokens.weight', [a.vocabSize, D], 'normal');
  for (let l = 0; l < a.layers; l++) {
    const p = `model.layers.${l}.`;
    add(`${p}input_layernorm.weight`, [D], 'ones');
    add(`${p}post_attention_layernorm.weight`, [D], 'ones');
    add(`${p}self_attn.q_proj.weight`, [q, D], 'normal');
    add(`${p}self_attn.k_proj.weight`, [kv, D], 'normal');
    add(`${p}self_attn.v_proj.weight`, [kv, D], 'normal');
    add(`${p}self_attn.o_proj.weight`, [D, q], 'normal');
    if (a.qkvBias) {
      add(`${p}self_attn.q_proj.bias`, [q], 'zeros');
      add(`${p}self_attn.k_proj.bias`, [kv], 'zeros');
      add(`${p}self_attn.v_proj.bias`, [kv], 'zeros');
    }
    if (a.qkNorm) {
      add(`${p}self_attn.q_norm.weight`, [E], 'ones');
      add(`${p}self_attn.k_norm.weight`, [E], 'ones');
    }
    add(`${p}mlp.gate_proj.weight`, [F, D], 'normal');
    add(`${p}mlp.up_proj.weight`, [F, D], 'normal');
    add(`${p}mlp.down_proj.weight`, [D, F], 'normal');
  }
  add('model.norm.weight', [D], 'ones');
  if (!a.tiedEmbeddings) add('lm_head.weight', [a.vocabSize, D], 'normal');
  return out;
}

/** What a spec must satisfy; each problem names the flag (or option) and the fix. */
export function checkNewModelSpec(spec: NewModelSpec, name: (field: keyof NewModelSpec) => string): void {
  const fail = (field: keyof NewModelSpec, what: string): never => {
    throw new ModelLoadError(`${name(field)}: ${what}`);
  };
  if (!NEW_MODEL_ARCHITECTURES.includes(spec.architecture)) fail('architecture', `use one of ${NEW_MODEL_ARCHITECTURES.join(', ')}`);
  const whole = (field: keyof NewModelSpec, v: number | undefined, min: number): void => {
    if (v !== undefined && (!Number.isInteger(v) || v < min)) fail(field, `${v} is not a whole number ≥ ${min}`);
  };
  whole('layers', spec.layers, 1);
  whole('hidden', spec.hidden, 8);
  whole('heads', spec.heads, 1);
  whole('kvHeads', spec.kvHeads, 1);
  whole('headDim', spec.headDim, 2);
  whole('intermediate', spec.intermediate, 8);
  whole('maxPositions', spec.maxPositions, 2);
  whole('ropeTheta', spec.ropeTheta, 2);
  if (spec.headDim === undefined && spec.hidden % spec.heads !== 0)
    fail('heads', `${spec.heads} does not divide the width ${spec.hidden}. Fix: a number of heads that divides it, or give the head width`);
  if (spec.architecture === 'qwen2' && spec.headDim !== undefined && spec.headDim * spec.heads !== spec.hidden)
    fail('headDim', 'qwen2 has no head_dim of its own (hidden / heads). Fix: leave it out, or use qwen3 or llama');
  if ((spec.kvHeads ?? spec.heads) > spec.heads || spec.heads % (spec.kvHeads ?? spec.heads) !== 0)
    fail('kvHeads', `${spec.kvHeads} key/value heads do not divide ${spec.heads} query heads`);
  if (spec.dtype !== 'float32' && spec.dtype !== 'bfloat16') fail('dtype', 'use float32 or bfloat16');
}

/** The files `writeNewCheckpoint` writes into a folder. */
export const NEW_MODEL_FILES = ['config.json', 'generation_config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'] as const;

/**
 * Writes a fresh checkpoint into `out` (created; it must not hold files already). Returns the
 * architecture as the loaders read it back.
 */
export function writeNewCheckpoint(out: string, spec: NewModelSpec, name: (field: keyof NewModelSpec) => string = (f) => f): HfArchitecture {
  checkNewModelSpec(spec, name);
  let tokenizer: Record<string, unknown>;
  let tokConfig: Record<string, unknown>;
  if (spec.tokenizer === 'char') {
    const t = characterTokenizer();
    tokenizer = t.tokenizer;
    tokConfig = t.config;
  } else {
    const file = path.join(spec.tokenizer, 'tokenizer.json');
    if (!fs.existsSync(file))
      throw new ModelLoadError(
        `${name('tokenizer')}: ${fs.existsSync(spec.tokenizer) ? `no tokenizer.json in ${spec.tokenizer}` : `${spec.tokenizer} does not exist`}. Fix: a folder holding a Hugging Face tokenizer.json (and tokenizer_config.json), or the character vocabulary`,
      );
    tokenizer = readJson(file);
    const cfg = path.join(spec.tokenizer, 'tokenizer_config.json');
    tokConfig = fs.existsSync(cfg) ? readJson(cfg) : {};
  }
  const size = tokenizerSize(tokenizer);
  if (size <= 0) throw new ModelLoadError(`${name('tokenizer')}: ${spec.tokenizer}'s tokenizer.json has no vocabulary`);
  // the engine reads the vocabulary in blocks of 8 rows: padded as released models pad theirs
  const vocabSize = Math.ceil(size / 8) * 8;
  const tokenId = (v: unknown): number | undefined => {
    const text = typeof v === 'string' ? v : (v as { content?: unknown } | null | undefined)?.content;
    if (typeof text !== 'string') return undefined;
    const added = (tokenizer.added_tokens as { id: number; content: string }[] | undefined)?.find((t) => t.content === text);
    return added?.id ?? (tokenizer.model as { vocab?: Record<string, number> } | undefined)?.vocab?.[text];
  };
  const eos = tokenId(tokConfig.eos_token);
  const bos = tokenId(tokConfig.bos_token) ?? null;
  const config = newModelConfig(spec, vocabSize, eos ?? [], bos);
  const arch = parseHfConfig(config, path.join(out, 'config.json'));
  if (fs.existsSync(out) && fs.readdirSync(out).length > 0) throw new ModelLoadError(`--out ${out}: the folder is not empty. Fix: name a new folder`);
  fs.mkdirSync(out, { recursive: true });
  const tensors = initialTensors(arch, spec.seed, 0.02);
  writeSafetensors(path.join(out, 'model.safetensors'), tensors, spec.dtype === 'bfloat16' ? 'BF16' : 'F32');
  const json = (f: string, v: unknown): void => fs.writeFileSync(path.join(out, f), `${JSON.stringify(v, null, 2)}\n`);
  json('config.json', config);
  json('generation_config.json', { bos_token_id: bos, eos_token_id: eos ?? null, do_sample: true, temperature: 1, top_p: 1, top_k: 0 });
  json('tokenizer.json', tokenizer);
  json('tokenizer_config.json', tokConfig);
  return arch;
}

/**
 * A short stable name for a spec (the folder a run's fresh model is written to): a digest of the spec and
 * of the config it resolves to, so a changed default (rope θ, MLP width) names another folder.
 */
export function newModelId(spec: NewModelSpec): string {
  const h = crypto
    .createHash('sha256')
    .update(JSON.stringify({ spec, config: newModelConfig(spec, 0, [], null) }))
    .digest('hex')
    .slice(0, 12);
  return `${spec.architecture}-${spec.layers}x${spec.hidden}-s${spec.seed}-${h}`;
}

/** Where fresh models are kept: $AGENT_RL_MODELS, else agent-rl-workbench/models in the user's cache folder. */
export function freshModelsRoot(): string {
  const env = process.env.AGENT_RL_MODELS;
  if (env) return env;
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cache, 'agent-rl-workbench', 'models');
}

/**
 * The folder of a fresh model: written once per spec (its bytes follow from the spec and seed, so any
 * run or resume that asks for it again finds the same weights), atomically (a folder written beside it,
 * then renamed), under `root`.
 */
export function freshModelFolder(spec: NewModelSpec, root = freshModelsRoot(), name: (field: keyof NewModelSpec) => string = (f) => f): string {
  const dir = path.join(root, newModelId(spec));
  if (fs.existsSync(path.join(dir, 'model.safetensors'))) return dir;
  fs.mkdirSync(root, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(root, '.new-'));
  try {
    writeNewCheckpoint(tmp, spec, name);
    try {
      fs.renameSync(tmp, dir);
    } catch (e) {
      // another process wrote the same folder first: its bytes are these
      if (!fs.existsSync(path.join(dir, 'model.safetensors'))) throw e;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}
