// createPolicy as one pipeline, on the random-weight fixtures (test/fixtures/hf): the compute path is
// chosen once with its reason (the engine for qwen2 on wasm, the tfjs decoder for gpt2, which the engine
// does not build, or on another backend), the reason is the policy's computeReason on either path (and
// in the tfjs decoder's compute string), and a warm start means the same on both paths, in both action
// modes, under LoRA and full fine-tuning: the checkpoint's weights in the model, the KL reference the
// warm-started model (not the base: "the initial or warm-started policy", algorithm.klCoef), the
// optimizer (its moments and step, though the checkpoint holds them) and the version afresh. Before,
// each path had its own copy of the warm start (a scoring warm start copied the model into the
// reference on the engine and read the checkpoint into it on tfjs): two routes that reached this same
// state, which the warm-start cases pin for the one stage both paths now share.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chooseComputePath, enginePath } from '../../../../src/rl/policies/computePath';
import { createPolicy } from '../../../../src/rl/policies/createPolicy';
import { EngineModel } from '../../../../src/rl/policies/lm/models/engine/engineModel';
import { readHfConfig } from '../../../../src/rl/policies/lm/models/hfConfig';
import { HfModel } from '../../../../src/rl/policies/lm/models/hfModel';
import type { Policy } from '../../../../src/rl/policies/policy';
import { initBackend } from '../../../../src/rl/policies/lm/models/tfjsBackend';
import { readCheckpoint } from '../../../../src/rl/policies/lm/checkpoint';
import type { ModelPolicy } from '../../../../src/rl/policies/lm/modelPolicy';
import { policyRunInfo } from '../../../../src/rl/train/trainingRun';
import { optionDefaults, TRANSFORMER_OPTION_SPECS, validateRunConfig, type RunConfig } from '../../../../src/shared/runConfig';
import { binarySearchEnv, disposeOpened } from '../../../helpers/environments';
import { HF_FIXTURES } from '../../../helpers/hfFixtureConfig';

type LmModel = HfModel | EngineModel;

function configFor(family: string, actionMode: 'generate' | 'score', extra: Record<string, unknown> = {}): RunConfig {
  return validateRunConfig({
    env: 'binary-search',
    policy: 'transformer',
    method: 'grpo',
    seed: 3,
    groupSize: 4,
    groupsPerIteration: 1,
    evalEpisodes: 0,
    policyOptions: {
      model: path.join(HF_FIXTURES, family),
      actionMode,
      loraRank: 4,
      loraAlpha: 8,
      contextLength: 64,
      maxNewTokens: 8,
      backend: 'wasm',
      threads: 2,
      ...extra,
    },
  });
}

/** [positions × vocabulary] logits of one sequence of ids, on either decoder. */
async function logitsOf(model: LmModel, ids: number[]): Promise<Float32Array> {
  if (model instanceof EngineModel) return model.positionLogits(ids);
  const input = tf.tensor2d([ids], [1, ids.length], 'int32');
  const out = model.forward(input);
  const d = (await out.data()) as Float32Array;
  tf.dispose([input, out]);
  return d;
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

const PROBE = [1, 5, 9, 2, 7, 3, 11, 4];

before(async () => {
  await initBackend('wasm');
});
after(() => disposeOpened());

describe('createPolicy: the compute path, chosen once with its reason', () => {
  it('the engine for a model it builds on wasm; the tfjs decoder for gpt2 or another backend, saying why; llama.cpp refused off the engine', () => {
    const qwen2 = readHfConfig(path.join(HF_FIXTURES, 'qwen2'));
    const gpt2 = readHfConfig(path.join(HF_FIXTURES, 'gpt2'));
    const onQwen2 = chooseComputePath({ rolloutEngine: 'engine' }, 'wasm', qwen2);
    assert.deepEqual(onQwen2, { kind: 'engine', reason: 'the wasm backend, and the engine builds qwen2' });
    const onGpt2 = chooseComputePath({ rolloutEngine: 'engine' }, 'wasm', gpt2);
    assert.equal(onGpt2.kind, 'tfjs');
    assert.match(onGpt2.reason, /^not the wasm engine: gpt2 \(LayerNorm, GELU, learned positions, fused q\/k\/v, Conv1D weights\) runs on tfjs ops$/);
    const onNode = chooseComputePath({ rolloutEngine: 'engine' }, 'tensorflow', qwen2);
    assert.equal(onNode.kind, 'tfjs');
    assert.match(onNode.reason, /^not the wasm engine: the engine runs only on the wasm backend; this run's is tensorflow$/);
    assert.throws(
      () => chooseComputePath({ rolloutEngine: 'llama.cpp' }, 'wasm', gpt2),
      /policyOptions\.rolloutEngine "llama\.cpp" loads the policy's weights from the wasm engine, and this model runs on the tfjs decoder \(wasm: gpt2 .*\)\. Fix: rolloutEngine "engine", or the wasm backend/,
    ); // q8 weights live on the engine only: gpt2 on wasm (or backend auto resolving to tfjs-node) is refused
    assert.deepEqual(chooseComputePath({ rolloutEngine: 'engine', weightDtype: 'q8' }, 'wasm', qwen2), onQwen2);
    assert.throws(
      () => chooseComputePath({ rolloutEngine: 'engine', weightDtype: 'q8' }, 'wasm', gpt2),
      /policyOptions\.weightDtype "q8" runs on the wasm engine, and this model runs on the tfjs decoder \(wasm: gpt2 .*\), which holds float32 weights\. Fix: backend "wasm" with a qwen2, qwen3 or llama checkpoint, or weightDtype "auto"/,
    );
  });

  it('the engine refuses q8 (and bf16) with full fine-tuning, naming the fix, before any weight is read', () => {
    // the config rule q8-lora-only refuses it first (configRules.test.ts); this is the engine's own guard, for callers past the validator
    const qwen2 = readHfConfig(path.join(HF_FIXTURES, 'qwen2'));
    const m = { dir: path.join(HF_FIXTURES, 'qwen2'), arch: qwen2, lora: undefined, contextLength: 64 };
    const run = { seed: 0, sampleRows: 1, fullDistributions: false };
    const backend = { name: 'wasm', notes: [] };
    for (const weightDtype of ['q8', 'bf16'] as const)
      assert.throws(
        () => enginePath({ ...optionDefaults(TRANSFORMER_OPTION_SPECS), weightDtype }, run, backend, m, 'test'),
        new RegExp(
          `policyOptions\\.weightDtype "${weightDtype}" with full fine-tuning \\(loraRank 0\\): the engine updates the weights themselves, in float32\\. Fix: weightDtype "auto" or "f32", or LoRA \\(loraRank 8\\)`,
        ),
      );
    // under LoRA, q8 passes the guard and plans
    assert.equal(
      enginePath(
        { ...optionDefaults(TRANSFORMER_OPTION_SPECS), weightDtype: 'q8' },
        run,
        backend,
        { ...m, lora: { rank: 4, alpha: 8, dropout: 0, targets: ['all-linear'] } },
        'test',
      ).reason,
      'test',
    );
  });
});

describe('createPolicy: a warm start means the same on every compute path', () => {
  const cases = (['engine', 'tfjs'] as const).flatMap((p) =>
    (['generate', 'score'] as const).flatMap((actionMode) =>
      [4, 0].map((loraRank) => ({ family: p === 'engine' ? 'qwen2' : 'gpt2', path: p, actionMode, loraRank })),
    ),
  );
  for (const c of cases) {
    it(`${c.path}, actionMode ${c.actionMode}, ${c.loraRank ? 'LoRA' : 'full fine-tuning'}: the model is the checkpoint's, the KL reference the warm-started model, the version 0`, async () => {
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-warm-'));
      const env = binarySearchEnv();
      const config = configFor(c.family, c.actionMode, { loraRank: c.loraRank });
      const run = policyRunInfo(config);
      const trained = (await createPolicy(config, run, env)) as unknown as ModelPolicy<LmModel> & Policy;
      try {
        assert.equal(trained.model instanceof EngineModel, c.path === 'engine', trained.compute);
        // the reason the path was chosen, recorded with the run beside the compute string
        assert.match(
          trained.computeReason ?? '',
          c.path === 'engine' ? /^the wasm backend, and the engine builds qwen2$/ : /^not the wasm engine: gpt2 .* runs on tfjs ops$/,
        );
        if (c.path === 'tfjs')
          assert.match(
            trained.compute,
            /^tfjs wasm \(not the wasm engine: gpt2 .* runs on tfjs ops\) \(gpt2 [\d,]+ parameters, (LoRA rank 4|full fine-tuning)/,
          );
        const base = await logitsOf(trained.model, PROBE);
        // weights away from the start (LoRA's b = 0), so the trained model is not its base
        trained.model.weights.forEach((w, i) => tf.tidy(() => w.assign(tf.add(w, tf.randomNormal(w.shape, 0, 0.2, 'float32', 100 + i)))));
        trained.model.weightsChanged?.();
        const moved = await logitsOf(trained.model, PROBE);
        assert.ok(maxDiff(moved, base) > 1e-3, 'the trained model differs from its base');
        // one optimizer step at learning rate 0: the moments and step change, the weights do not
        const grads = trained.model.weights.map((w, i) => tf.randomNormal(w.shape, 0, 1, 'float32', 200 + i));
        await trained.applyGradients(grads, 0);
        tf.dispose(grads);
        await trained.save(tmp, 'warm start test');
        assert.equal(readCheckpoint(tmp).manifest.optimizer.step, 1, "the checkpoint holds the optimizer's state");

        const warm = (await createPolicy(configFor(c.family, c.actionMode, { init: tmp, loraRank: c.loraRank }), run, env)) as unknown as ModelPolicy<LmModel>;
        try {
          assert.equal(warm.version, 0);
          assert.ok(maxDiff(await logitsOf(warm.model, PROBE), moved) < 1e-5, "the warm-started model computes the checkpoint's");
          const reference = await logitsOf(warm.reference, PROBE);
          assert.ok(maxDiff(reference, moved) < 1e-5, 'the KL reference is the warm-started model');
          assert.ok(maxDiff(reference, base) > 1e-3, 'not the base model');
          assert.equal(warm.optimizer.step, 0, 'the optimizer starts afresh');
          const moments = await Promise.all([...warm.optimizer.m, ...warm.optimizer.v].map((t) => t.data()));
          assert.ok(
            moments.every((d) => d.every((x) => x === 0)),
            "the optimizer's moments start at zero, not the checkpoint's",
          );
        } finally {
          await warm.dispose();
        }
      } finally {
        await trained.dispose();
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
});
