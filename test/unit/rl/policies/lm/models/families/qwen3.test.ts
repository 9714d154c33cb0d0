// The qwen3 family's reference test (familyReference.ts): q/k norms, a head width of its own, no biases.
import { describe } from 'node:test';
import { familyReferenceTests } from './familyReference';

describe('model family qwen3', () => {
  familyReferenceTests({
    modelType: 'qwen3',
    // embedding (+ head when untied); per layer q, k, v, o, two norms, the q and k norms [E], gate/up/down; the final norm
    parameters: (a) => {
      const [D, E, q, kv, F] = [a.hidden, a.headDim, a.heads * a.headDim, a.kvHeads * a.headDim, a.intermediate];
      const layer = D * q + 2 * D * kv + q * D + 2 * D + 2 * E + 3 * D * F;
      return a.vocabSize * D * (a.tiedEmbeddings ? 1 : 2) + a.layers * layer + D;
    },
    // head width 16 with 4 heads of a 32-wide model: q_proj [64, 32]
    newModel: { architecture: 'qwen3', layers: 2, hidden: 32, heads: 4, kvHeads: 1, headDim: 16, tiedHead: false },
    gguf: { architecture: 'qwen3', rotary: false },
  });
});
