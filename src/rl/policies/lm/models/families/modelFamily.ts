// One spec per model family: everything the readers of a checkpoint need to know about an
// architecture, written once (as llama.cpp writes each architecture once over shared building blocks).
// The tfjs decoder (hfModel.ts), the engine's weight loader (engine/engineWeights.ts), the GGUF writer
// (gguf.ts) and the memory plans (memoryPlan.ts, engine/enginePlan.ts) read a family's spec; none of
// them writes a tensor name or shape of its own.
//
// A new family needs:
//   1. its model_type in hfConfig.ts (HF_MODEL_TYPES, and parseHfConfig reading its config.json into
//      an HfArchitecture);
//   2. one file here exporting a ModelFamily: the tensors(a) list (every tensor's Hugging Face name,
//      alternatives and stored shape, in the order the decoders hold them), names (the modules each
//      layer's steps read), the properties the decoders branch on (norm, positions, mlp, linear
//      layout), its LoRA targets, and — when llama.cpp runs it — its GGUF architecture and names;
//   3. a line in familyOf.ts's registry;
//   4. its reference test (test/unit/rl/policies/lm/models/families/families.test.ts): the tensor list against
//      a checkpoint written by an independent implementation (test/fixtures/hf/<family>, and
//      `agent-rl model new` for the families it writes), and the parameter count against the tensors.
// A family whose steps the decoders do not have yet (another norm, activation or attention) needs
// that step in hfModel.ts too; the engine refuses what it cannot run (engineUnsupported).
import type { HfArchitecture, HfModelType } from '../hfConfig';

/** What a tensor is to the decoders. */
export type TensorRole =
  /** The token embedding [V, D]. */
  | 'embedding'
  /** Learned position embeddings [P, D]. */
  | 'positions'
  /** A norm's gain or bias (a vector, never adapted). */
  | 'norm'
  /** A linear layer's weight (LoRA may adapt it); its stored layout is the family's linearLayout. */
  | 'linear'
  /** A linear layer's bias [out]. */
  | 'bias'
  /** The untied output projection [V, D] (absent when the head is the embedding). */
  | 'head';

export interface TensorSpec {
  /** The Hugging Face name, e.g. model.layers.3.self_attn.q_proj.weight. */
  readonly name: string;
  /** Other names the same tensor is saved under (gpt2 checkpoints saved without the `transformer.` prefix). */
  readonly alternatives?: readonly string[];
  /** The shape as stored, outermost first (nn.Linear [out, in]; gpt2's Conv1D [in, out]). */
  readonly shape: readonly number[];
  readonly role: TensorRole;
  /** llama.cpp's name for it (absent: the family is not written as GGUF, or llama.cpp has no such tensor). */
  readonly gguf?: string;
  /** Rows permuted to llama.cpp's rotary layout over this many heads when written as GGUF (Llama's q and k). */
  readonly ggufRotaryHeads?: number;
}

/** Module paths (a tensor name without .weight / .bias) one layer's steps read. */
export interface LayerModules {
  /** The norm before attention. */
  readonly attnNorm: string;
  /** Separate query, key and value projections, or one fused projection [D, 3·D] split in thirds (gpt2's c_attn). */
  readonly qkv: { readonly q: string; readonly k: string; readonly v: string } | { readonly fused: string };
  /** Qwen3: RMSNorm over each head's queries and keys (gain [E]) before the rotation. */
  readonly qNorm?: string;
  readonly kNorm?: string;
  /** The attention's output projection. */
  readonly o: string;
  /** The norm before the MLP. */
  readonly mlpNorm: string;
  /** SwiGLU's gate (absent for a plain GELU MLP). */
  readonly gate?: string;
  readonly up: string;
  readonly down: string;
}

export interface FamilyNames {
  /** The token embedding's tensor name. */
  readonly embed: string;
  /** The learned position table's tensor name (positions 'learned'). */
  readonly positions?: string;
  /** The final norm's module. */
  readonly finalNorm: string;
  /** The untied head's tensor name. */
  readonly head: string;
  readonly layer: (l: number) => LayerModules;
}

/** How llama.cpp knows the family. */
export interface GgufFamily {
  /** general.architecture, and the prefix of the hyperparameter keys. */
  readonly architecture: string;
  /** tokenizer.ggml.pre: the pre-tokenizer llama.cpp applies (never used: ids go in and out, but it must load). */
  readonly pre: string;
  /** Whether `<arch>.rope.dimension_count` is written (llama.cpp's converter writes it for llama). */
  readonly ropeDimensionCount: boolean;
  /** llama.cpp's tensor name for a Hugging Face tensor name, undefined when it has none. */
  readonly tensorName: (hf: string) => string | undefined;
  /** The Hugging Face tensor name whose rows llama.cpp holds in its rotary layout: 'q' or 'kv' heads; else undefined. */
  readonly rotaryHeads: (hf: string) => 'q' | 'kv' | undefined;
}

export interface ModelFamily {
  readonly modelType: HfModelType;
  /** RMSNorm (gain only) or LayerNorm (gain and bias). */
  readonly norm: 'rmsnorm' | 'layernorm';
  /** Rotary embeddings on queries and keys, or a learned position table added to the embedding. */
  readonly positions: 'rotary' | 'learned';
  /** SwiGLU (down(silu(gate(x)) · up(x))) or GELU (tanh approximation, gelu_new) between up and down. */
  readonly mlp: 'swiglu' | 'gelu';
  /** Linear weights as stored: nn.Linear's [out, in], or Conv1D's [in, out] (gpt2). */
  readonly linearLayout: 'out-in' | 'in-out';
  /** The module names LoRA may target (the last part of a linear layer's path); "all-linear" means all of them. */
  readonly loraTargets: readonly string[];
  /** Whether the attention's output projection has a bias (the q/k/v biases are the config's qkvBias). */
  readonly outputBias: (a: HfArchitecture) => boolean;
  readonly names: FamilyNames;
  /** Every tensor of a checkpoint of this config, in the order the decoders hold them. */
  readonly tensors: (a: HfArchitecture) => TensorSpec[];
  /** Absent: llama.cpp does not run this family here. */
  readonly gguf?: GgufFamily;
}

/** Elements of a tensor. */
export function tensorSize(t: TensorSpec): number {
  return t.shape.reduce((x, y) => x * y, 1);
}

/**
 * The tensors in the order the decoders make them variables (full fine-tuning's weights, a
 * checkpoint's trained tensors): the spec's order, with each linear's bias moved right after its weight.
 */
export function variableOrder(tensors: readonly TensorSpec[]): TensorSpec[] {
  const biases = new Map(tensors.filter((t) => t.role === 'bias').map((t) => [t.name, t]));
  const out: TensorSpec[] = [];
  for (const t of tensors) {
    if (t.role === 'bias') continue;
    out.push(t);
    const bias = t.role === 'linear' ? biases.get(t.name.replace(/\.weight$/, '.bias')) : undefined;
    if (bias) out.push(bias);
  }
  return out;
}

/** Adds each tensor's GGUF name and rotary permutation from the family's map. */
export function withGguf(tensors: TensorSpec[], a: HfArchitecture, gguf: GgufFamily | undefined): TensorSpec[] {
  if (!gguf) return tensors;
  return tensors.map((t) => {
    const name = gguf.tensorName(t.name);
    const rotary = gguf.rotaryHeads(t.name);
    return {
      ...t,
      ...(name ? { gguf: name } : {}),
      ...(rotary ? { ggufRotaryHeads: rotary === 'q' ? a.heads : a.kvHeads } : {}),
    };
  });
}
