// GPT-2: learned positions added to the embedding, LayerNorm (gain and bias), one fused q/k/v
// projection (c_attn, [D, 3·D], split in thirds), a GELU MLP (c_fc, c_proj), biases on every linear
// layer, Conv1D weights stored [in, out], a tied head; names under `transformer.`, which checkpoints
// saved from the bare GPT2Model lack (read under either). Not written as GGUF here, and the engine does
// not run it (engineUnsupported): the tfjs decoder does.
import type { HfArchitecture } from '../hfConfig';
import type { FamilyNames, ModelFamily, TensorSpec } from './modelFamily';

const names: FamilyNames = {
  embed: 'transformer.wte.weight',
  positions: 'transformer.wpe.weight',
  finalNorm: 'transformer.ln_f',
  head: 'lm_head.weight',
  layer: (l) => {
    const p = `transformer.h.${l}.`;
    return {
      attnNorm: `${p}ln_1`,
      qkv: { fused: `${p}attn.c_attn` },
      o: `${p}attn.c_proj`,
      mlpNorm: `${p}ln_2`,
      up: `${p}mlp.c_fc`,
      down: `${p}mlp.c_proj`,
    };
  },
};

/** In the tfjs decoder's order: the two tables; per layer both norms, then each linear's weight and bias; the final norm. */
function tensors(a: HfArchitecture): TensorSpec[] {
  const D = a.hidden,
    F = a.intermediate;
  const out: TensorSpec[] = [];
  const add = (name: string, shape: number[], role: TensorSpec['role']): void => {
    out.push({ name, shape, role, alternatives: [name.replace(/^transformer\./, '')] });
  };
  const norm = (module: string): void => {
    add(`${module}.weight`, [D], 'norm');
    add(`${module}.bias`, [D], 'norm');
  };
  const linear = (module: string, inDim: number, outDim: number): void => {
    add(`${module}.weight`, [inDim, outDim], 'linear');
    add(`${module}.bias`, [outDim], 'bias');
  };
  add(names.embed, [a.vocabSize, D], 'embedding');
  add(names.positions!, [a.maxPositions, D], 'positions');
  for (let l = 0; l < a.layers; l++) {
    const m = names.layer(l);
    norm(m.attnNorm);
    norm(m.mlpNorm);
    linear((m.qkv as { fused: string }).fused, D, 3 * D);
    linear(m.o, D, D);
    linear(m.up, D, F);
    linear(m.down, F, D);
  }
  norm(names.finalNorm);
  return out;
}

export const gpt2: ModelFamily = {
  modelType: 'gpt2',
  norm: 'layernorm',
  positions: 'learned',
  mlp: 'gelu',
  linearLayout: 'in-out',
  loraTargets: ['c_attn', 'c_proj', 'c_fc'],
  outputBias: () => true,
  names,
  tensors,
};
