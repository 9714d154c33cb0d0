// A helper replica: a worker thread with its own tfjs engine and wasm instance (the second core), a
// copy of the policy's model and of its KL reference, kept in sync by weight messages after every
// optimizer step. It computes what the main thread asks on its shard: gradients, log-probs, samples,
// with the same functions the main thread uses.
import * as tf from '@tensorflow/tfjs';
import { parentPort } from 'node:worker_threads';
import { STOP_TESTS } from '../../envs/parsers';
import { TokenConstraint } from './constraint';
import { Rng } from '../../random';
import { shardGradients, shardLogprobs } from '../../algo/gradients';
import { initBackend, type BackendChoice } from './backend';
import { Gpt, gptDifferentiable } from './model';
import type { ReplicaReply, ReplicaRequest } from './replicaProtocol';
import { sampleBatch } from './sampler';
import { tokenizerFromJSON, type Tokenizer } from './tokenizer';

let model: Gpt | undefined;
let reference: Gpt | undefined;
let tokenizer: Tokenizer | undefined;

function setWeights(target: Gpt, weights: readonly Float32Array[]): void {
  target.weights.forEach((w, i) => w.assign(tf.tensor(weights[i]!, w.shape, 'float32')));
}

async function handle(msg: ReplicaRequest): Promise<{ reply: ReplicaReply; transfer: ArrayBuffer[] }> {
  switch (msg.kind) {
    case 'init': {
      await initBackend(msg.backend as BackendChoice);
      model = new Gpt(msg.model, 0);
      reference = new Gpt(msg.model, 0, false);
      tokenizer = tokenizerFromJSON(msg.tokenizer);
      return { reply: { kind: 'ok' }, transfer: [] };
    }
    case 'weights': {
      tf.tidy(() => setWeights(msg.which === 'model' ? model! : reference!, msg.weights));
      return { reply: { kind: 'ok' }, transfer: [] };
    }
    case 'grads': {
      const { grads, stats } = await shardGradients(gptDifferentiable(model!), msg.inputs, msg.spec);
      const arrays = await Promise.all(grads.map(async (g) => (await g.data()) as Float32Array));
      tf.dispose(grads);
      return { reply: { kind: 'grads', grads: arrays, stats }, transfer: arrays.map((a) => a.buffer as ArrayBuffer) };
    }
    case 'logprobs': {
      const r = await shardLogprobs(gptDifferentiable(msg.model === 'reference' ? reference! : model!), msg.seqs, msg);
      return { reply: { kind: 'logprobs', ...r }, transfer: [...r.logp, ...(r.rows ?? [])].map((a) => a.buffer as ArrayBuffer) };
    }
    case 'sample': {
      const when = msg.options.stopTest ? STOP_TESTS[msg.options.stopTest] : undefined;
      const rng = msg.rowSeeds ? msg.rowSeeds.map((s) => new Rng(s)) : new Rng(msg.seed);
      const { grammar, ...options } = msg.options;
      const constraint = grammar ? TokenConstraint.named(grammar, tokenizer!) : undefined;
      const sequences = await sampleBatch(
        model!,
        tokenizer!,
        msg.prompts,
        { ...options, ...(when ? { stopWhen: when } : {}), ...(constraint ? { constraint } : {}) },
        rng,
      );
      return { reply: { kind: 'sample', sequences }, transfer: [] };
    }
  }
}

// One request at a time, in the order they came: the main thread matches replies to requests by order,
// and several can be outstanding (the asynchronous mode samples while the learner computes), so a
// request that awaits (a tensor read) must not let the next one start and answer first.
let chain: Promise<void> = Promise.resolve();
parentPort!.on('message', (msg: ReplicaRequest) => {
  chain = chain
    .then(() => handle(msg))
    .then(
      ({ reply, transfer }) => parentPort!.postMessage(reply, transfer),
      (e: unknown) => parentPort!.postMessage({ kind: 'error', message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) } satisfies ReplicaReply),
    );
});
