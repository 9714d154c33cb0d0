// Data parallelism over the machine's cores for the wasm/cpu backends, which run one thread each: the
// policy's own model on the main thread plus helper replicas in worker threads (replicaWorker.ts), each
// with its own tfjs engine. A batch is split into shards; every replica computes its shard at the same
// time (gradients, log-probs, samples); gradients are combined with the weights that make the result
// the whole minibatch's gradient; the main thread takes the optimizer step and sends the new weights
// to the helpers before anything else is asked of them, so every replica always holds the same weights.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Gpt, PolicyModel } from './model';
import type { ReplicaReply, ReplicaRequest } from './replicaProtocol';
import type { Tokenizer } from './tokenizer';

/**
 * Replicas a run uses when `policyOptions.replicas` is 0 (auto): one per core, up to 4, on the
 * single-threaded backends (wasm, cpu); one on tfjs-node, which threads its own kernels.
 */
export function autoReplicas(backend: string): number {
  // native TensorFlow threads itself, and a GPU is one engine: replicas are for single-threaded CPU backends
  return backend === 'tensorflow' || backend === 'webgpu' ? 1 : Math.min(4, os.availableParallelism());
}

/** The helper's script: next to this module when compiled by tsc, `replica.js` next to a bundle. */
function helperScript(): string {
  for (const candidate of [path.join(__dirname, 'replicaWorker.js'), path.join(__dirname, 'replica.js')]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error(`replica helper script not found next to ${__dirname} (replicaWorker.js or replica.js); rebuild with npm run build`);
}

class Helper {
  private pending: { resolve: (r: ReplicaReply) => void; reject: (e: Error) => void }[] = [];
  private failure: Error | undefined;

  constructor(private readonly worker: Worker) {
    // An idle helper never keeps the process alive (a policy someone forgot to dispose must not
    // hang the exit); one with a request in flight does.
    worker.unref();
    worker.on('message', (r: ReplicaReply) => {
      const p = this.pending.shift();
      if (this.pending.length === 0) worker.unref();
      if (!p) return;
      if (r.kind === 'error') p.reject(new Error(`replica: ${r.message}`));
      else p.resolve(r);
    });
    const fail = (e: Error): void => {
      this.failure = e;
      for (const p of this.pending.splice(0)) p.reject(e);
    };
    worker.on('error', (e: unknown) => fail(new Error(`replica thread failed: ${e instanceof Error ? e.message : String(e)}`)));
    worker.on('exit', (code) => fail(new Error(`replica thread exited (code ${code})`)));
  }

  /** Requests are answered in order (the helper handles one at a time). */
  call(msg: ReplicaRequest, transfer: ArrayBuffer[] = []): Promise<ReplicaReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.worker.ref();
      this.worker.postMessage(msg, transfer);
    });
  }

  async close(): Promise<void> {
    this.worker.removeAllListeners('exit');
    this.failure ??= new Error('replica thread closed');
    for (const p of this.pending.splice(0)) p.reject(this.failure);
    await this.worker.terminate();
  }
}

export class ReplicaPool {
  private constructor(private readonly helpers: Helper[]) {}

  /** Starts `count` helper threads holding copies of `model` (and of `reference`) on `backend`. */
  static async start(count: number, backend: string, model: Gpt, reference: Gpt, tokenizer: Tokenizer): Promise<ReplicaPool> {
    const script = helperScript();
    const helpers = Array.from({ length: count }, () => new Helper(new Worker(script)));
    const pool = new ReplicaPool(helpers);
    try {
      await Promise.all(helpers.map((h) => h.call({ kind: 'init', backend, model: model.config, tokenizer: tokenizer.toJSON() })));
      await pool.syncWeights(model, 'model');
      await pool.syncWeights(reference, 'reference');
    } catch (e) {
      await pool.close();
      throw e;
    }
    return pool;
  }

  /** Helpers, not counting the main thread. */
  get size(): number {
    return this.helpers.length;
  }

  helper(i: number): Helper {
    return this.helpers[i]!;
  }

  /** Sends `model`'s weights to every helper (as its model or as its KL reference). */
  async syncWeights(model: PolicyModel, which: 'model' | 'reference'): Promise<void> {
    const weights = await Promise.all(model.weights.map(async (w) => (await w.data()) as Float32Array));
    await Promise.all(this.helpers.map((h) => h.call({ kind: 'weights', which, weights })));
  }

  async close(): Promise<void> {
    await Promise.all(this.helpers.map((h) => h.close()));
  }
}

export type { Helper };
