// Llama (SmolLM2, Llama 3.x): the shared rotary decoder; attention_bias puts biases on q/k/v and
// o_proj alike; Llama 3 rope scaling is the config's (hfConfig). llama.cpp: architecture llama, whose
// converter permutes q and k rows to its rotary layout (adjacent pairs rotate together) and writes
// rope.dimension_count.
import { rotaryDecoder } from './rotaryDecoder';

export const llama = rotaryDecoder({ modelType: 'llama', outputBias: (a) => a.qkvBias, ggufPre: 'llama-bpe', llamaRotaryLayout: true });
