// Builds the policy a config names, with its optimizer settings from the config's algorithm section
// (the learner decides the learning rate of every step). Impossible combinations were rejected by
// validateRunConfig already; the checks here guard programmatic callers.
import type { RunConfig } from '../../shared/runConfig';
import { ADAM_DEFAULTS, type AdamWOptions } from '../algo/adamw';
import { stopOf, type EnvironmentFactory } from '../envs/environment';
import type { TrainablePolicy } from './policy';
import { TablePolicy } from './table/tablePolicy';
import { initBackend, type BackendChoice } from './transformer/backend';
import { readCheckpoint, restoreCheckpoint } from './transformer/checkpoint';
import { Gpt, type GptConfig } from './transformer/model';
import { CharTokenizer, HfTokenizer } from './transformer/tokenizer';
import { autoReplicas, ReplicaPool } from './transformer/replicas';
import { TransformerPolicy } from './transformer/transformerPolicy';

/** The optimizer's settings of a run (Adam's betas and epsilon are PyTorch's defaults). */
export function optimizerOptions(config: RunConfig): AdamWOptions {
  return { ...ADAM_DEFAULTS, weightDecay: config.algorithm.weightDecay, maxGradNorm: config.algorithm.maxGradNorm };
}

export async function createPolicy(config: RunConfig, env: EnvironmentFactory): Promise<TrainablePolicy> {
  switch (config.policy) {
    case 'table': {
      if (!env.tabular) throw new Error(`policy "table" needs a tabular environment; "${env.name}" is not`);
      const backend = await initBackend((config.policyOptions.backend as BackendChoice | undefined) ?? 'cpu');
      return new TablePolicy(env.tabular(config.envOptions), optimizerOptions(config), backend.name);
    }
    case 'transformer':
      return createTransformer(config, env);
  }
}

async function createTransformer(config: RunConfig, env: EnvironmentFactory): Promise<TransformerPolicy> {
  const o = config.policyOptions as Record<string, number | string | boolean>;
  const backend = await initBackend(o.backend as BackendChoice);
  const init = typeof o.init === 'string' && o.init !== '' ? readCheckpoint(o.init) : undefined;
  const tokenizer = init?.tokenizer ?? (typeof o.tokenizer === 'string' && o.tokenizer !== '' ? HfTokenizer.fromDirectory(o.tokenizer) : new CharTokenizer());
  const modelConfig: GptConfig = init?.manifest.model ?? {
    vocabSize: tokenizer.vocabSize,
    contextLength: o.contextLength as number,
    dModel: o.dModel as number,
    nLayers: o.nLayers as number,
    nHeads: o.nHeads as number,
    mlpRatio: o.mlpRatio as number,
    tiedHead: o.tiedHead as boolean,
  };
  const model = new Gpt(modelConfig, config.seed);
  const stop = stopOf(env, config.envOptions);
  const policy = new TransformerPolicy(
    model,
    tokenizer,
    {
      temperature: o.temperature as number, topK: o.topK as number, topP: o.topP as number, maxNewTokens: o.maxNewTokens as number,
      stop: stop?.strings ?? [], ...(stop?.when ? { stopWhen: stop.when } : {}),
    },
    optimizerOptions(config),
    `tfjs ${backend.name} (${model.parameterCount().toLocaleString('en')} parameters)`,
    config.seed,
  );
  if (init) {
    // Weights only: a warm start's optimizer moments belong to another objective. The KL reference
    // is the warm-started model, so RL stays close to what SFT taught.
    restoreCheckpoint(init, model);
    policy.resetReference();
  }
  // Data parallelism: helper replicas on the other cores, for the single-threaded backends.
  const replicas = (o.replicas as number) > 0 ? (o.replicas as number) : autoReplicas(backend.name);
  if (replicas > 1) {
    try {
      policy.attachReplicas(await ReplicaPool.start(replicas - 1, backend.name, model, policy.reference, tokenizer), stop?.when ? (stop.whenOf ?? env.name) : undefined);
    } catch (e) {
      await policy.dispose();
      throw e;
    }
  }
  return policy;
}
