// A Hugging Face checkpoint folder's config.json as the architecture the decoders build. Four
// families: qwen2 (RMSNorm, rotary embeddings, grouped-query attention with q/k/v biases, SwiGLU),
// qwen3 (no biases; RMSNorm over each head's queries and keys before the rotation; a stated head
// width that need not be hidden / heads), llama (no biases; Llama 3 rope scaling), gpt2 (learned
// positions, LayerNorm, GELU, Conv1D weights). Anything else is refused with what is supported.
// What each family's checkpoint holds (tensor names, shapes, the parameter count) is its spec in
// families/; this file reads config.json only.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A checkpoint folder that cannot become the policy: the message names the file, the field and the fix. */
export class ModelLoadError extends Error {
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
  override name = 'ModelLoadError';
}

export const HF_MODEL_TYPES = ['qwen2', 'qwen3', 'llama', 'gpt2'] as const;
export type HfModelType = (typeof HF_MODEL_TYPES)[number];

export interface RopeScaling {
  readonly factor: number;
  readonly lowFreqFactor: number;
  readonly highFreqFactor: number;
  readonly originalMaxPositions: number;
}

/** The architecture, serialisable (stored in run records and checkpoints). */
export interface HfArchitecture {
  readonly modelType: HfModelType;
  readonly vocabSize: number;
  readonly hidden: number;
  readonly layers: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly headDim: number;
  readonly intermediate: number;
  readonly maxPositions: number;
  readonly normEps: number;
  readonly tiedEmbeddings: boolean;
  /** qwen2: q/k/v projections have biases (llama: `attention_bias`). */
  readonly qkvBias: boolean;
  readonly ropeTheta: number;
  readonly ropeScaling?: RopeScaling;
  /** The dtype the checkpoint was saved in (config's torch_dtype). */
  readonly torchDtype: string;
  /** Qwen3: RMSNorm over each head's queries and keys before the rotary embedding. */
  readonly qkNorm?: boolean;
}

function num(cfg: Record<string, unknown>, file: string, key: string, fallback?: number): number {
  const v = cfg[key] ?? fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new ModelLoadError(`${file}: ${key} is ${JSON.stringify(cfg[key])}; a positive number is needed. Fix: use the config.json saved with the checkpoint`);
  }
  return v;
}

/** Reads and checks `dir/config.json`. */
export function readHfConfig(dir: string): HfArchitecture {
  const file = path.join(dir, 'config.json');
  if (!fs.existsSync(dir))
    throw new ModelLoadError(`policyOptions.model: ${dir} does not exist. Fix: point it at a local Hugging Face checkpoint folder (nothing is downloaded)`);
  if (!fs.existsSync(file))
    throw new ModelLoadError(
      `policyOptions.model: no config.json in ${dir}. Fix: point it at the folder save_pretrained wrote (config.json, model.safetensors, tokenizer.json)`,
    );
  let cfg: Record<string, unknown>;
  try {
    cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new ModelLoadError(`${file}: not valid JSON (${(e as Error).message})`);
  }
  return parseHfConfig(cfg, file);
}

export function parseHfConfig(cfg: Record<string, unknown>, file = 'config.json'): HfArchitecture {
  const type = cfg.model_type;
  if (!HF_MODEL_TYPES.includes(type as HfModelType)) {
    throw new ModelLoadError(
      `${file}: model_type ${JSON.stringify(type)} is not supported; supported: ${HF_MODEL_TYPES.join(', ')} (Qwen2 / Qwen2.5, Qwen3, Llama / SmolLM2 / Llama 3.x, GPT-2). Fix: choose a checkpoint of one of these families`,
    );
  }
  const torchDtype = typeof cfg.torch_dtype === 'string' ? cfg.torch_dtype : 'float32';
  if (type === 'gpt2') {
    const act = cfg.activation_function ?? 'gelu_new';
    if (act !== 'gelu_new' && act !== 'gelu_pytorch_tanh')
      throw new ModelLoadError(`${file}: activation_function ${JSON.stringify(act)} is not supported for gpt2; supported: gelu_new`);
    const hidden = num(cfg, file, 'n_embd');
    const heads = num(cfg, file, 'n_head');
    if (hidden % heads !== 0) throw new ModelLoadError(`${file}: n_embd ${hidden} is not divisible by n_head ${heads}`);
    return {
      modelType: 'gpt2',
      vocabSize: num(cfg, file, 'vocab_size'),
      hidden,
      layers: num(cfg, file, 'n_layer'),
      heads,
      kvHeads: heads,
      headDim: hidden / heads,
      intermediate: typeof cfg.n_inner === 'number' ? cfg.n_inner : 4 * hidden,
      maxPositions: num(cfg, file, 'n_positions'),
      normEps: num(cfg, file, 'layer_norm_epsilon', 1e-5),
      tiedEmbeddings: true,
      qkvBias: true,
      ropeTheta: 0,
      torchDtype,
    };
  }
  const hidden = num(cfg, file, 'hidden_size');
  const heads = num(cfg, file, 'num_attention_heads');
  const kvHeads = num(cfg, file, 'num_key_value_heads', heads);
  if (heads % kvHeads !== 0) throw new ModelLoadError(`${file}: num_attention_heads ${heads} is not a multiple of num_key_value_heads ${kvHeads}`);
  const headDim = typeof cfg.head_dim === 'number' ? cfg.head_dim : hidden / heads;
  if (!Number.isInteger(headDim) || headDim % 2 !== 0)
    throw new ModelLoadError(`${file}: head width ${headDim} (hidden_size / num_attention_heads) must be an even integer for rotary embeddings`);
  const act = cfg.hidden_act ?? 'silu';
  if (act !== 'silu') throw new ModelLoadError(`${file}: hidden_act ${JSON.stringify(act)} is not supported; supported: silu`);
  if (cfg.mlp_bias === true) throw new ModelLoadError(`${file}: mlp_bias true is not supported (no Llama or Qwen2 release uses it)`);
  let ropeScaling: RopeScaling | undefined;
  const rs = cfg.rope_scaling as Record<string, unknown> | null | undefined;
  if (rs && typeof rs === 'object') {
    const kind = rs.rope_type ?? rs.type;
    if (kind === 'llama3') {
      ropeScaling = {
        factor: num(rs, `${file} rope_scaling`, 'factor'),
        lowFreqFactor: num(rs, `${file} rope_scaling`, 'low_freq_factor'),
        highFreqFactor: num(rs, `${file} rope_scaling`, 'high_freq_factor'),
        originalMaxPositions: num(rs, `${file} rope_scaling`, 'original_max_position_embeddings'),
      };
    } else if (kind !== 'default') {
      throw new ModelLoadError(`${file}: rope_scaling of type ${JSON.stringify(kind)} is not supported; supported: llama3 (or none)`);
    }
  }
  const qkvBias = type === 'qwen2' ? true : cfg.attention_bias === true;
  const qkNorm = type === 'qwen3';
  return {
    modelType: type as HfModelType,
    vocabSize: num(cfg, file, 'vocab_size'),
    hidden,
    layers: num(cfg, file, 'num_hidden_layers'),
    heads,
    kvHeads,
    headDim,
    intermediate: num(cfg, file, 'intermediate_size'),
    maxPositions: num(cfg, file, 'max_position_embeddings'),
    normEps: num(cfg, file, 'rms_norm_eps', 1e-6),
    tiedEmbeddings: cfg.tie_word_embeddings === true || (cfg.tie_word_embeddings === undefined && type === 'qwen2'),
    qkvBias,
    ropeTheta: num(cfg, file, 'rope_theta', 10000),
    ...(ropeScaling ? { ropeScaling } : {}),
    torchDtype,
    ...(qkNorm ? { qkNorm } : {}),
  };
}

/** Rotary inverse frequencies [headDim / 2] (Llama 3 scaling applied when configured), in float64. */
export function ropeInverseFrequencies(a: HfArchitecture): Float64Array {
  const half = a.headDim / 2;
  const inv = new Float64Array(half);
  for (let i = 0; i < half; i++) inv[i] = 1 / a.ropeTheta ** ((2 * i) / a.headDim);
  const s = a.ropeScaling;
  if (!s) return inv;
  const lowWavelen = s.originalMaxPositions / s.lowFreqFactor;
  const highWavelen = s.originalMaxPositions / s.highFreqFactor;
  return inv.map((f) => {
    const wavelen = (2 * Math.PI) / f;
    if (wavelen < highWavelen) return f;
    if (wavelen > lowWavelen) return f / s.factor;
    const smooth = (s.originalMaxPositions / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor);
    return (1 - smooth) * (f / s.factor) + smooth * f;
  });
}

/**
 * The tfjs decoder's rotary tables for positions < P: cos and sin [P, E] (each angle p·θ_i written at i
 * and i + E/2), and rotate_half as a product, [−x₂, x₁] = x · R with R [E, E] of ±1.
 */
export function rotaryTables(a: HfArchitecture, P: number): { cos: Float32Array; sin: Float32Array; rotation: Float32Array } {
  const E = a.headDim;
  const inv = ropeInverseFrequencies(a);
  const cos = new Float32Array(P * E);
  const sin = new Float32Array(P * E);
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < E / 2; i++) {
      const angle = p * inv[i]!;
      cos[p * E + i] = cos[p * E + i + E / 2] = Math.cos(angle);
      sin[p * E + i] = sin[p * E + i + E / 2] = Math.sin(angle);
    }
  }
  const rotation = new Float32Array(E * E);
  for (let i = 0; i < E / 2; i++) {
    rotation[(i + E / 2) * E + i] = -1;
    rotation[i * E + i + E / 2] = 1;
  }
  return { cos, sin, rotation };
}
