// A training pass that keeps every layer's intermediates instead of recomputing them in the backward
// pass (issue 50, item 4, where the plan has room): the same log-probs and gradients as the recompute,
// bit for bit; the plan equal to what the allocator took; and fittingEnginePlan keeping them only where
// a wasm32 plan has room.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { fittingEnginePlan, planEngineMemory } from '../../../../../../../src/rl/policies/lm/models/engine/enginePlan';
import { HfEngine } from '../../../../../../../src/rl/policies/lm/models/engine/hfEngine';
import { readHfConfig } from '../../../../../../../src/rl/policies/lm/models/hfConfig';
import { SCALE_CONFIGS } from '../../../../../../helpers/scaleCheckpoint';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..', '..', 'test', 'fixtures', 'hf');
const LORA = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
const P = 64;
const bits = (a: Float32Array): Uint32Array => new Uint32Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));

/** Two sequences of the full context, every position trained. */
const SEQS = [0, 1].map((b) => ({
  inputs: Array.from({ length: P }, (_, i) => (i * 7 + b) % 300),
  targets: Array.from({ length: P }, (_, i) => (i * 11 + b) % 300),
  mask: Array.from({ length: P }, (_, i) => (i > 2 ? 1 : 0)),
}));

describe('keeping every layer’s activations', () => {
  it('gives the recompute’s log-probs and gradients bit for bit (qwen2 float32 LoRA, qwen3 q8 LoRA, llama full fine-tuning)', async () => {
    for (const [family, dtype, full] of [
      ['qwen2', 'f32', false],
      ['qwen3', 'q8', false],
      ['llama', 'f32', true],
    ] as const) {
      const dir = path.join(FIXTURES, family);
      const arch = readHfConfig(dir);
      const lora = full ? {} : { lora: LORA };
      const out: Float32Array[][] = [];
      const peaks: number[] = [];
      for (const keepActivations of [false, true]) {
        const plan = planEngineMemory(arch, { ...lora, contextLength: P, positionsPerPass: 2 * P, sampleRows: 2, threads: 2, dtype, keepActivations });
        assert.equal(plan.keepsActivations, keepActivations);
        const e = await HfEngine.create({ dir, arch, contextLength: P, ...lora, threads: 2, dtype, bytes: plan.total, planText: 'test plan', keepActivations });
        try {
          if (!full) {
            // adapters with b ≠ 0, the same in both engines
            const shapes = e.trainableShapes();
            e.setTrainable(
              'policy',
              shapes.map((s, i) => Float32Array.from({ length: s.shape.reduce((p, d) => p * d, 1) }, (_, j) => Math.sin(i * 13 + j) * 0.05)),
              false,
            );
          }
          e.mem.resetPeak();
          const scored = await e.score('policy', SEQS, 1.1, true);
          const grads = await e.backward(SEQS.map((s) => Float32Array.from(s.mask, (m, t) => m * Math.cos(t))));
          const peak = e.mem.peak;
          const what = `${family} ${dtype}${full ? ' full' : ''} keep ${keepActivations}: plan training ${plan.parts.training + plan.parts.persistent} against a peak of ${peak}`;
          assert.ok(peak <= plan.total, `never more than the plan: ${what}`);
          if (keepActivations) assert.ok(Math.abs(plan.parts.persistent + plan.parts.training - peak) / peak < 0.1, what);
          out.push([...scored.map((s) => s.logp), ...grads]);
          peaks.push(peak);
        } finally {
          await e.close();
        }
      }
      assert.ok(peaks[1]! > peaks[0]!, `${family}: the kept pass holds more (${peaks[1]} against ${peaks[0]})`);
      assert.ok(
        out[0]!.slice(SEQS.length).some((g) => g.some((v) => v !== 0)),
        `${family}: some gradient is not zero`,
      );
      out[0]!.forEach((a, i) => assert.deepEqual(bits(out[1]![i]!), bits(a), `${family} ${dtype}: array ${i} (log-probs, then gradients)`));
    }
  });

  it('fittingEnginePlan keeps them where a wasm32 plan has room, and not at Qwen2.5-0.5B’s seed 000 settings', () => {
    const fixture = fittingEnginePlan(readHfConfig(path.join(FIXTURES, 'qwen2')), { lora: LORA, contextLength: P, sampleRows: 2, threads: 2 });
    assert.equal(fixture.keepsActivations, true);
    assert.match(fixture.lines.map((l) => l.what).join('\n'), /every layer's intermediates kept/);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'qwen2.5-0.5b-'));
    try {
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(SCALE_CONFIGS['qwen2.5-0.5b']));
      const a = readHfConfig(dir);
      const seed000 = fittingEnginePlan(a, { lora: LORA, contextLength: 1024, sampleRows: 12, threads: 2, dtype: 'auto' });
      assert.equal(seed000.keepsActivations, false);
      assert.equal(seed000.positionsPerPass, 4096, 'the plan before kept activations: 4,096 positions a pass');
      assert.match(seed000.lines.map((l) => l.what).join('\n'), /one layer recomputed with its gradients/);
      // the kept plan would need more than wasm32's 4 GiB
      const kept = planEngineMemory(a, {
        lora: LORA,
        contextLength: 1024,
        positionsPerPass: 1024,
        sampleRows: 12,
        threads: 2,
        dtype: 'bf16',
        keepActivations: true,
      });
      assert.ok(kept.total > 4 * 2 ** 30, `kept at 1,024 positions: ${kept.total}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
