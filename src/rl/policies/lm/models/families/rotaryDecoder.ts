// The decoder qwen2, qwen3 and llama share (llama.cpp's build_norm / build_attn / build_ffn): RMSNorm,
// rotary embeddings on grouped-query attention, a SwiGLU MLP, nn.Linear weights [out, in], under
// `model.` names. The families differ only in the options below; each states its own in its file.
import type { HfArchitecture, HfModelType } from '../hfConfig';
import { withGguf, type FamilyNames, type GgufFamily, type ModelFamily, type TensorSpec } from './modelFamily';

export interface RotaryDecoderOptions {
  readonly modelType: HfModelType;
  /** Whether o_proj has a bias (the q/k/v biases follow the config's qkvBias). */
  readonly outputBias: (a: HfArchitecture) => boolean;
  /** llama.cpp's pre-tokenizer name for the family's tokenizers. */
  readonly ggufPre: string;
  /** Llama: q and k rows permuted to llama.cpp's rotary layout, and rope.dimension_count written. */
  readonly llamaRotaryLayout: boolean;
}

const LINEARS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;

/**
 * Hugging Face name within a layer → llama.cpp's (tensors without an entry are not written). o_proj's
 * bias (attention_bias on llama or qwen3) has none: such a model's GGUF would lack it (no release of
 * these families sets attention_bias; llama.cpp's name would be attn_output.bias).
 */
const GGUF_LAYER_NAMES: ReadonlyMap<string, string> = new Map([
  ['input_layernorm.weight', 'attn_norm.weight'],
  ['self_attn.q_proj.weight', 'attn_q.weight'],
  ['self_attn.q_proj.bias', 'attn_q.bias'],
  ['self_attn.k_proj.weight', 'attn_k.weight'],
  ['self_attn.k_proj.bias', 'attn_k.bias'],
  ['self_attn.v_proj.weight', 'attn_v.weight'],
  ['self_attn.v_proj.bias', 'attn_v.bias'],
  ['self_attn.o_proj.weight', 'attn_output.weight'],
  ['self_attn.q_norm.weight', 'attn_q_norm.weight'],
  ['self_attn.k_norm.weight', 'attn_k_norm.weight'],
  ['post_attention_layernorm.weight', 'ffn_norm.weight'],
  ['mlp.gate_proj.weight', 'ffn_gate.weight'],
  ['mlp.up_proj.weight', 'ffn_up.weight'],
  ['mlp.down_proj.weight', 'ffn_down.weight'],
]);

const GGUF_GLOBAL_NAMES: ReadonlyMap<string, string> = new Map([
  ['model.embed_tokens.weight', 'token_embd.weight'],
  ['model.norm.weight', 'output_norm.weight'],
  ['lm_head.weight', 'output.weight'],
]);

function ggufFamily(o: RotaryDecoderOptions): GgufFamily {
  const inLayer = (hf: string): { layer: string; rest: string } | undefined => {
    const m = /^model\.layers\.(\d+)\.(.+)$/.exec(hf);
    return m ? { layer: m[1]!, rest: m[2]! } : undefined;
  };
  return {
    architecture: o.modelType,
    pre: o.ggufPre,
    ropeDimensionCount: o.llamaRotaryLayout,
    tensorName: (hf) => {
      const global = GGUF_GLOBAL_NAMES.get(hf);
      if (global) return global;
      const m = inLayer(hf);
      const to = m && GGUF_LAYER_NAMES.get(m.rest);
      return m && to ? `blk.${m.layer}.${to}` : undefined;
    },
    rotaryHeads: (hf) => {
      if (!o.llamaRotaryLayout) return undefined;
      const rest = inLayer(hf)?.rest;
      return rest === 'self_attn.q_proj.weight' ? 'q' : rest === 'self_attn.k_proj.weight' ? 'kv' : undefined;
    },
  };
}

const names: FamilyNames = {
  embed: 'model.embed_tokens.weight',
  finalNorm: 'model.norm',
  head: 'lm_head.weight',
  layer: (l) => {
    const p = `model.layers.${l}.`;
    return {
      attnNorm: `${p}input_layernorm`,
      qkv: { q: `${p}self_attn.q_proj`, k: `${p}self_attn.k_proj`, v: `${p}self_attn.v_proj` },
      qNorm: `${p}self_attn.q_norm`,
      kNorm: `${p}self_attn.k_norm`,
      o: `${p}self_attn.o_proj`,
      mlpNorm: `${p}post_attention_layernorm`,
      gate: `${p}mlp.gate_proj`,
      up: `${p}mlp.up_proj`,
      down: `${p}mlp.down_proj`,
    };
  },
};

/** A family of the shared decoder with its options. */
export function rotaryDecoder(o: RotaryDecoderOptions): ModelFamily {
  const gguf = ggufFamily(o);
  return {
    modelType: o.modelType,
    norm: 'rmsnorm',
    positions: 'rotary',
    mlp: 'swiglu',
    linearLayout: 'out-in',
    loraTargets: LINEARS,
    outputBias: o.outputBias,
    // the q/k norms are named in every layer, and read only where the config has them (qkNorm: qwen3)
    names,
    gguf,
    tensors: (a) => withGguf(rotaryDecoderTensors(a, o.outputBias(a)), a, gguf),
  };
}

/** The tensors in the tfjs decoder's order: embedding; per layer the norms, the projections' weights, their biases, the q/k norms, the MLP; the final norm; an untied head. */
function rotaryDecoderTensors(a: HfArchitecture, outputBias: boolean): TensorSpec[] {
  const D = a.hidden,
    E = a.headDim,
    q = a.heads * E,
    kv = a.kvHeads * E,
    F = a.intermediate,
    V = a.vocabSize;
  const out: TensorSpec[] = [{ name: names.embed, shape: [V, D], role: 'embedding' }];
  const linear = (module: string, rows: number, cols: number): void => {
    out.push({ name: `${module}.weight`, shape: [rows, cols], role: 'linear' });
  };
  const vector = (name: string, n: number, role: 'norm' | 'bias'): void => {
    out.push({ name, shape: [n], role });
  };
  for (let l = 0; l < a.layers; l++) {
    const m = names.layer(l);
    const { q: qm, k: km, v: vm } = m.qkv as { q: string; k: string; v: string };
    vector(`${m.attnNorm}.weight`, D, 'norm');
    vector(`${m.mlpNorm}.weight`, D, 'norm');
    linear(qm, q, D);
    linear(km, kv, D);
    linear(vm, kv, D);
    linear(m.o, D, q);
    if (a.qkvBias) {
      vector(`${qm}.bias`, q, 'bias');
      vector(`${km}.bias`, kv, 'bias');
      vector(`${vm}.bias`, kv, 'bias');
      if (outputBias) vector(`${m.o}.bias`, D, 'bias');
    }
    if (a.qkNorm) {
      vector(`${m.qNorm!}.weight`, E, 'norm');
      vector(`${m.kNorm!}.weight`, E, 'norm');
    }
    linear(m.gate!, F, D);
    linear(m.up, F, D);
    linear(m.down, D, F);
  }
  vector(`${names.finalNorm}.weight`, D, 'norm');
  if (!a.tiedEmbeddings) out.push({ name: names.head, shape: [V, D], role: 'head' });
  return out;
}
