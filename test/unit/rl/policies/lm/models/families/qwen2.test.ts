// The qwen2 family's reference test (familyReference.ts): q/k/v biases, no o_proj bias, a tied head.
import { describe } from 'node:test';
import { familyReferenceTests } from './familyReference';

describe('model family qwen2', () => {
  familyReferenceTests({
    modelType: 'qwen2',
    // embedding (+ head when untied); per layer q, k, v, o and their q/k/v biases, two norms, gate/up/down; the final norm
    parameters: (a) => {
      const [D, q, kv, F] = [a.hidden, a.heads * a.headDim, a.kvHeads * a.headDim, a.intermediate];
      const layer = D * q + 2 * D * kv + q * D + (q + 2 * kv) + 2 * D + 3 * D * F;
      return a.vocabSize * D * (a.tiedEmbeddings ? 1 : 2) + a.layers * layer + D;
    },
    newModel: { architecture: 'qwen2', layers: 2, hidden: 32, heads: 4, kvHeads: 2, tiedHead: true },
    gguf: { architecture: 'qwen2', rotary: false },
  });
});
