// Run as a child process by test/integration/webgpuBackend.test.ts: `node webgpuProbe.js --probe BACKEND`
// initialises BACKEND and prints, as one JSON line, the numbers the test compares across backends — the
// tfjs decoder's: the qwen3 fixture's logits, its gradients under full fine-tuning, a prefill and a
// decoding step through the KV cache, and the qwen2 fixture's logits and LoRA gradients. Imported without --probe (node --test loads every file
// under out/test) it does nothing.
import * as tf from '@tensorflow/tfjs';
import * as path from 'node:path';
import { HfModel, hfDifferentiable } from '../../src/rl/policies/lm/models/hfModel';
import { initBackend, type BackendChoice } from '../../src/rl/policies/lm/models/tfjsBackend';
import { decodeStep, disposeState, prefill } from '../../src/rl/policies/lm/sampler';
import type { TrainSequence } from '../../src/rl/algo/trainSequence';
import { shardGradients } from '../../src/rl/algo/gradients';

const NLL = { kind: 'nll', aggregation: 'token-mean', normTokens: 1 } as const;

async function flat(ts: readonly tf.Tensor[]): Promise<number[]> {
  const out: number[] = [];
  for (const t of ts) out.push(...(await t.data()));
  return out;
}

async function probe(choice: BackendChoice): Promise<void> {
  const info = await initBackend(choice);
  const seq = (ids: number[]): TrainSequence => ({
    inputs: ids.slice(0, -1),
    targets: ids.slice(1),
    mask: ids.slice(1).map(() => 1),
    behaviour: ids.slice(1).map(() => 0),
    advantage: 0,
  });
  const ids = [
    [3, 17, 5, 42, 8, 11, 60, 2],
    [9, 1, 33, 7, 21, 4, 50, 6],
  ];
  const input = tf.tensor2d(ids, [2, 8], 'int32');
  const fixture = (name: string): string => path.join(__dirname, '..', '..', '..', 'test', 'fixtures', 'hf', name);
  // full fine-tuning of the qwen3 fixture: every weight's gradient
  const full = HfModel.load(fixture('qwen3'), { contextLength: 32 });
  const fullLogits = await flat([full.forward(input)]);
  const fullGrads = await shardGradients(
    hfDifferentiable(full),
    ids.map((x) => ({ seq: seq(x) })),
    NLL,
  );
  // a prefill of left-padded prompts, then one decoding step through the tfjs cache
  const { state, logits } = prefill(full, [ids[0]!.slice(0, 5), ids[1]!.slice(0, 3)]);
  const step = decodeStep(full, state, [ids[0]![5]!, ids[1]![3]!]);
  const sampling = await flat([logits, step]);
  disposeState(state);
  const hf = HfModel.load(fixture('qwen2'), { contextLength: 64, lora: { rank: 2, alpha: 4, dropout: 0, targets: ['q_proj', 'v_proj'] } });
  const hfLogits = await flat([hf.forward(input)]);
  const hfGrads = await shardGradients(
    hfDifferentiable(hf),
    ids.map((x) => ({ seq: seq(x) })),
    NLL,
  );
  process.stdout.write(
    `${JSON.stringify({
      backend: info.name,
      adapter: info.adapter ?? null,
      notes: info.notes,
      fullLogits,
      fullGrads: await flat(fullGrads.grads),
      sampling,
      hfLogits,
      hfGrads: await flat(hfGrads.grads),
    })}\n`,
  );
}

if (process.argv[2] === '--probe') {
  probe(process.argv[3] as BackendChoice).catch((e: unknown) => {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  });
}
