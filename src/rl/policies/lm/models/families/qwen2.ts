// Qwen2 / Qwen2.5: the shared rotary decoder with q/k/v biases always (config.json has no switch for
// them) and none on o_proj; a tied head by default (hfConfig). llama.cpp: architecture qwen2.
import { rotaryDecoder } from './rotaryDecoder';

export const qwen2 = rotaryDecoder({ modelType: 'qwen2', outputBias: () => false, ggufPre: 'qwen2', llamaRotaryLayout: false });
