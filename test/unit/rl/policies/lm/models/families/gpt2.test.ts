// The gpt2 family's reference test (familyReference.ts): learned positions, LayerNorm with biases,
// Conv1D weights [in, out], biases everywhere, a tied head. `agent-rl model new` writes no gpt2: the
// PyTorch fixture is its reference.
import { describe } from 'node:test';
import { familyReferenceTests } from './familyReference';

describe('model family gpt2', () => {
  familyReferenceTests({
    modelType: 'gpt2',
    // token and position tables; per layer two LayerNorms (gain, bias), c_attn [D, 3D] + bias, attention c_proj [D, D] + bias,
    // c_fc [D, F] + bias, MLP c_proj [F, D] + bias; the final LayerNorm
    parameters: (a) => {
      const [D, F] = [a.hidden, a.intermediate];
      const layer = 4 * D + (3 * D * D + 3 * D) + (D * D + D) + (D * F + F) + (F * D + D);
      return a.vocabSize * D + a.maxPositions * D + a.layers * layer + 2 * D;
    },
  });
});
