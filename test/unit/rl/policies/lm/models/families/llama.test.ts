// The llama family's reference test (familyReference.ts): no biases, an untied head in the fixture.
import { describe } from 'node:test';
import { familyReferenceTests } from './familyReference';

describe('model family llama', () => {
  familyReferenceTests({
    modelType: 'llama',
    // embedding (+ head when untied); per layer q, k, v, o, two norms, gate/up/down; the final norm
    parameters: (a) => {
      const [D, q, kv, F] = [a.hidden, a.heads * a.headDim, a.kvHeads * a.headDim, a.intermediate];
      const layer = D * q + 2 * D * kv + q * D + 2 * D + 3 * D * F;
      return a.vocabSize * D * (a.tiedEmbeddings ? 1 : 2) + a.layers * layer + D;
    },
    newModel: { architecture: 'llama', layers: 3, hidden: 32, heads: 4, kvHeads: 2, intermediate: 48, tiedHead: false },
    gguf: { architecture: 'llama', rotary: true },
  });
});
