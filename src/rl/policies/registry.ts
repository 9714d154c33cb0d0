// Builds the policy a config names. Impossible combinations were rejected by validateRunConfig already;
// the checks here guard programmatic callers.
import type { RunConfig } from '../../shared/runConfig';
import type { EnvironmentFactory } from '../envs/environment';
import type { Policy } from './policy';
import { TablePolicy } from './table/tablePolicy';
import { initBackend, type BackendChoice } from './transformer/backend';
import { readCheckpoint, restoreCheckpoint } from './transformer/checkpoint';
import { Gpt, type GptConfig } from './transformer/model';
import { CharTokenizer, HfTokenizer } from './transformer/tokenizer';
import type { Aggregation, KlEstimator } from './transformer/tokenLoss';
import { autoReplicas, ReplicaPool } from './transformer/replicas';
import { TransformerPolicy } from './transformer/transformerPolicy';

/** Trajectories per optimizer step: policyOptions.minibatchSize, or 0 = a quarter of the iteration's batch. */
export function minibatchSizeFor(config: RunConfig): number {
  const given = Number(config.policyOptions.minibatchSize ?? 0);
  return given > 0 ? given : Math.max(1, Math.ceil((config.groupsPerIteration * config.groupSize) / 4));
}

export async function createPolicy(config: RunConfig, env: EnvironmentFactory, totalSteps = 0): Promise<Policy> {
  switch (config.policy) {
    case 'table': {
      if (!env.tabular) throw new Error(`policy "table" needs a tabular environment; "${env.name}" is not`);
      return new TablePolicy(env.tabular(config.envOptions), config.learningRate);
    }
    case 'transformer':
      return createTransformer(config, env, totalSteps);
  }
}

async function createTransformer(config: RunConfig, env: EnvironmentFactory, totalSteps: number): Promise<TransformerPolicy> {
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
  // Linear warm-up for every method: a fresh Adam's first steps move every weight by the full learning
  // rate whatever the gradient's size, and on a warm-started model RL's noisy first gradients then undo
  // it (one GRPO step at 3e-3 without warm-up took the calculator from 35% to 9%). Then SFT decays
  // linearly to 10% over the run; RL stays constant.
  const warmup = o.warmupSteps as number;
  const lrSchedule = (step: number): number => {
    if (step <= warmup) return step / Math.max(1, warmup);
    return config.method === 'sft' && totalSteps > 0 ? Math.max(0.1, 1 - (0.9 * (step - warmup)) / Math.max(1, totalSteps - warmup)) : 1;
  };
  const policy = new TransformerPolicy(
    model,
    tokenizer,
    {
      temperature: o.temperature as number, topK: o.topK as number, topP: o.topP as number, maxNewTokens: o.maxNewTokens as number,
      stop: env.stop?.strings ?? [], ...(env.stop?.when ? { stopWhen: env.stop.when } : {}),
    },
    {
      clipLow: config.clipEpsilon, clipHigh: o.clipHigh as number, klEstimator: o.klEstimator as KlEstimator, aggregation: o.aggregation as Aggregation,
      minibatchSize: minibatchSizeFor(config), skipZeroAdvantage: o.skipZeroAdvantage as boolean,
      negativeAdvantageScale: o.negativeAdvantageScale as number,
      optimizer: { lr: config.learningRate, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: o.weightDecay as number, maxGradNorm: o.maxGradNorm as number },
      lrSchedule,
    },
    `tfjs ${backend.name} (${model.parameterCount().toLocaleString('en')} parameters)`,
    config.seed,
  );
  if (init) {
    // Weights only: a warm start's optimizer moments belong to another objective. The KL reference
    // is the warm-started model, so GRPO stays close to what SFT taught.
    restoreCheckpoint(init, model);
    policy.resetReference();
  }
  // Data parallelism: helper replicas on the other cores, for the single-threaded backends.
  const replicas = (o.replicas as number) > 0 ? (o.replicas as number) : autoReplicas(backend.name);
  if (replicas > 1) {
    try {
      policy.attachReplicas(await ReplicaPool.start(replicas - 1, backend.name, model, policy.reference, tokenizer), env.stop?.when ? env.name : undefined);
    } catch (e) {
      await policy.dispose();
      throw e;
    }
  }
  return policy;
}
