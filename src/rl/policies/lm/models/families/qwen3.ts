// Qwen3: the shared rotary decoder with RMSNorm over each head's queries and keys before the rotation
// (q_norm, k_norm: hfConfig sets qkNorm), a stated head width that need not be hidden / heads, and
// attention_bias on q/k/v and o_proj alike (off in every release). llama.cpp: architecture qwen3.
import { rotaryDecoder } from './rotaryDecoder';

export const qwen3 = rotaryDecoder({ modelType: 'qwen3', outputBias: (a) => a.qkvBias, ggufPre: 'qwen2', llamaRotaryLayout: false });
