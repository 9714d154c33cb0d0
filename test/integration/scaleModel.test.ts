// Seed 000's model at its real size: a random-weight checkpoint of Qwen2.5-0.5B-Instruct's exact shapes
// (494,032,768 parameters, bfloat16, with the real Qwen tokenizer files), written by the test itself.
// The wasm engine's logits match an independent PyTorch forward pass within 1e-3 with bfloat16 weights
// in memory; the memory plan agrees with the allocator's measured peak within 10 % at 192 and at 1,024
// tokens; an allocation that fails is an error naming the plan, never output; and the tfjs path's
// XNNPACK failure (the zeros it used to print as logits) is caught.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import * as tf from '@tensorflow/tfjs';
import { assertBackendHealthy } from '../../src/rl/tfjsHealth';
import { planEngineMemory } from '../../src/rl/policies/lm/models/engine/enginePlan';
import { HfEngine } from '../../src/rl/policies/lm/models/engine/hfEngine';
import { readHfConfig } from '../../src/rl/policies/lm/models/hfConfig';
import { HfModel } from '../../src/rl/policies/lm/models/hfModel';
import { initBackend } from '../../src/rl/policies/lm/models/tfjsBackend';
import { ROOT } from '../helpers/cli';
import { scaleParameters, writeScaleCheckpoint } from '../helpers/scaleCheckpoint';

const DIR = path.join(os.tmpdir(), 'agent-rl-scale', 'qwen2.5-0.5b');
const REFERENCE = path.join(ROOT, 'test', 'fixtures', 'scale', 'qwen2.5-0.5b.json');
const LORA = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
const cli = path.join(ROOT, 'dist', 'cli.js');

before(() => {
  writeScaleCheckpoint(DIR, 'qwen2.5-0.5b');
});

describe('Qwen2.5-0.5B shapes on the wasm engine', { timeout: 900_000 }, () => {
  it('model check --ids gives the top-5 ids and logits of the PyTorch reference within 1e-3, with bfloat16 weights in memory', () => {
    const ref = JSON.parse(fs.readFileSync(REFERENCE, 'utf8')) as { sha256: string; ids: number[]; top: { id: number; logit: number }[] };
    const sha = createHash('sha256')
      .update(fs.readFileSync(path.join(DIR, 'model.safetensors')))
      .digest('hex');
    assert.equal(sha, ref.sha256, 'the checkpoint is the one the reference was computed from (test/fixtures/scaleReference.py)');
    assert.equal(scaleParameters('qwen2.5-0.5b'), 494_032_768);
    const r = spawnSync(process.execPath, [cli, 'model', 'check', DIR, '--ids', ref.ids.join(','), '--context', '192', '--top', '5', '--json'], {
      encoding: 'utf8',
      timeout: 300_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout) as { ids: number[]; top: { id: number; logit: number; token: string }[] };
    assert.deepEqual(got.ids, ref.ids);
    assert.deepEqual(
      got.top.map((t) => t.id),
      ref.top.map((t) => t.id),
    );
    got.top.forEach((t, i) => assert.ok(Math.abs(t.logit - ref.top[i]!.logit) < 1e-3, `logit ${i}: ${t.logit} against ${ref.top[i]!.logit}`));
    assert.ok(
      got.top.every((t) => typeof t.token === 'string'),
      'tokens decoded with the real Qwen tokenizer',
    );
    const text = spawnSync(process.execPath, [cli, 'model', 'check', DIR, '--context', '192', '--max-new-tokens', '4'], { encoding: 'utf8', timeout: 300_000 });
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /parameters: 494,032,768; stored as BF16 .*held as bf16 on the engine/);
    assert.match(text.stdout, /memory plan of a run \(LoRA rank 8, context 192, [\d,]+ packed positions per pass, 12 rows sampled at once\): fits/);
  });

  for (const P of [192, 1024]) {
    it(`the memory plan agrees with the measured peak within 10 % at ${P}-token contexts (training, forward and sampling passes)`, async () => {
      const arch = readHfConfig(DIR);
      const B = 12;
      const plan = planEngineMemory(arch, { lora: LORA, contextLength: P, positionsPerPass: P, sampleRows: B, threads: 2, dtype: 'bf16' });
      const e = await HfEngine.create({ dir: DIR, arch, contextLength: P, lora: LORA, threads: 2, dtype: 'bf16', bytes: plan.total, planText: 'test plan' });
      try {
        const seq = {
          inputs: Array.from({ length: P }, (_, i) => (i * 7919) % 150000),
          targets: Array.from({ length: P }, (_, i) => (i * 104729) % 150000),
          mask: new Array<number>(P).fill(1),
        };
        e.mem.resetPeak();
        await e.score('policy', [seq], 1, true);
        await e.backward([new Float32Array(P).fill(1)]);
        const training = e.mem.peak;
        e.mem.resetPeak();
        // one prefill pass of P positions over the 12 rows, then a step
        const len = Math.floor(P / B);
        const s = await e.session(
          'policy',
          Array.from({ length: B }, (_, b) => Array.from({ length: len }, (_, i) => (i * 31 + b) % 150000)),
          P,
          P,
        );
        await s.step(new Array<number>(B).fill(11));
        s.dispose();
        const sampling = e.mem.peak;
        const measured = Math.max(training, sampling);
        const what = `plan ${plan.total} (training ${plan.parts.training}, sampling ${plan.parts.sampling}) against a measured peak of ${measured} (training ${training}, sampling ${sampling})`;
        process.stdout.write(`# ${P} tokens: ${what}\n`);
        assert.ok(measured <= plan.total, what);
        assert.ok((plan.total - measured) / measured < 0.1, what);
      } finally {
        await e.close();
      }
    });
  }

  it('an engine that cannot get its memory is an error naming the plan: no logits, no continuation', () => {
    // a 5 GB address-space limit: Node starts, the engine's 1 GiB reservation does not
    const r = spawnSync('/bin/sh', ['-c', `ulimit -v 5000000 && exec "${process.execPath}" "${cli}" model check "${DIR}" --ids 1,2,3 --context 192 --json`], {
      encoding: 'utf8',
      timeout: 300_000,
    });
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /^agent-rl: the engine could not reserve its 1\.\d\d GiB \(.*\): this process cannot get that much memory now\. Memory plan of this check:\n +[\d.]+ MiB {2}weights \(bfloat16/,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.equal(r.stdout, '', 'nothing was computed, so nothing is printed');
  });

  it("the tfjs path's XNNPACK allocation failure on these shapes becomes an error instead of zeros", async () => {
    await initBackend('wasm');
    const model = HfModel.load(DIR, { contextLength: 192, lora: LORA });
    try {
      const ids = tf.tensor2d([[1, 2, 3, 4, 5, 6, 7, 8]], [1, 8], 'int32');
      const out = model.forward(ids);
      await out.data();
      tf.dispose([ids, out]);
      assert.throws(
        () => assertBackendHealthy('the logits'),
        /tfjs-backend-wasm failed to allocate memory \(".*xnn_create_fully_connected_nc_f32.*Got status 6.*"\), so the logits would be computed from zeros; nothing it computed is used\. Fix: /,
      );
    } finally {
      model.dispose();
    }
  });
});
