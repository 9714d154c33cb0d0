// A LoRA run over the engine's 8-bit base (policyOptions.weightDtype "q8", issue 50 item 2) end to end
// through the CLI on the qwen3 fixture: the run record's runtime section says the base ran at 8 bits and
// `show` prints it in a line of its own; the checkpoint names it; and `model export` merges the trained
// adapters into the folder's ORIGINAL weights, as QLoRA's merge does — the merged weights equal
// W + alpha/rank · (A·B)ᵀ with W read from the checkpoint folder, and lie a quantization error away from
// the same merge over the Q8_0-dequantized W.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { RunRecord } from '../../src/cli/runRecord';
import { readCheckpoint } from '../../src/rl/policies/lm/checkpoint';
import { dequantizeQ8, quantizeQ8 } from '../../src/rl/policies/lm/models/q8Blocks';
import { checkpointTensors, readTensor, safetensorsHeader } from '../../src/rl/policies/lm/models/safetensors';
import { ROOT, runCli, tempDir } from '../helpers/cli';

const QWEN3 = path.join(ROOT, 'test', 'fixtures', 'hf', 'qwen3');

const ok = (r: { code: number | null; stdout: string; stderr: string }): string => {
  assert.equal(r.code, 0, r.stderr);
  return r.stdout;
};

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('a LoRA run over the 8-bit base (weightDtype q8)', () => {
  it('records and shows the base at 8 bits (Q8_0), and model export merges into the original weights, not the dequantized blocks', () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'sft.json'),
      JSON.stringify({
        policyOptions: { maxNewTokens: 16, contextLength: 256 },
        algorithm: { learningRate: 0.01, warmupSteps: 0 },
        groupsPerIteration: 4,
        evalEpisodes: 0,
      }),
    );
    const sft = ok(
      runCli(['sft', '--config', 'sft.json', '--model', QWEN3, '--weight-dtype', 'q8', '--iterations', '1', '--seed', '3', '--output', 'rec.json'], dir),
    );
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'rec.json'), 'utf8')) as RunRecord;
    assert.equal(rec.runtime.baseWeights, 'q8');
    assert.match(rec.runtime.compute, /q8 base \(Q8_0 blocks of 32/);
    const show = ok(runCli(['show', String(rec.runId)], dir));
    assert.match(show, /^ {2}base weights: 8 bits \(Q8_0 blocks of 32, one float16 scale each; activations quantized to 8 bits per block of 32\)$/m);
    const json = JSON.parse(ok(runCli(['show', String(rec.runId), '--json'], dir))) as RunRecord;
    assert.equal(json.runtime.baseWeights, 'q8', "show --json's runtime section");

    const ckDir = /checkpoint: (\S+)/.exec(sft)?.[1];
    assert.ok(ckDir, sft);
    const ck = readCheckpoint(ckDir);
    assert.equal(ck.manifest.baseWeights, 'q8', 'the checkpoint says what the adapters trained over');
    const lora = ck.manifest.model.lora!;
    const scale = lora.alpha / lora.rank;

    const out = ok(runCli(['model', 'export', ckDir, '--out', 'merged'], dir));
    assert.match(
      out,
      /^merged the LoRA adapters \(rank 8\) into the original weights of .*qwen3 \(stored as BF16\), written in float32: the run trained them over an 8-bit copy of the base \(Q8_0 blocks\), and the merge uses the original, unquantized weights, as QLoRA's does\n/,
    );

    const original = checkpointTensors(QWEN3);
    const merged = new Map(safetensorsHeader(path.join(dir, 'merged', 'model.safetensors')).map((t) => [t.name, t]));
    let modules = 0;
    let moved = 0;
    for (const [name, a] of ck.tensors) {
      if (!name.endsWith('.lora_A') || name.includes('/')) continue; // not adam.m/…, adam.v/…
      const module = name.slice(0, -'.lora_A'.length);
      const b = ck.tensors.get(`${module}.lora_B`)!;
      const w = original.get(`${module}.weight`)!;
      const [rows, cols] = w.shape as [number, number]; // nn.Linear's [out, in]; A [in, r], B [r, out]
      const r = a.length / cols;
      assert.equal(b.length, r * rows, module);
      const base = readTensor(w);
      // base + scale · (A·B)ᵀ in float64, from the checkpoint folder's own weights
      const delta = new Float64Array(rows * cols);
      for (let o = 0; o < rows; o++)
        for (let i = 0; i < cols; i++) {
          let s = 0;
          for (let k = 0; k < r; k++) s += a[i * r + k]! * b[k * rows + o]!;
          delta[o * cols + i] = scale * s;
        }
      const fromOriginal = base.map((v, j) => v + delta[j]!);
      const dequantized = dequantizeQ8(quantizeQ8(base, rows, cols, 'weight'));
      const fromBlocks = dequantized.map((v, j) => v + delta[j]!);
      const got = readTensor(merged.get(`${module}.weight`)!);
      const offOriginal = maxDiff(got, fromOriginal);
      const offBlocks = maxDiff(got, fromBlocks);
      assert.ok(offOriginal < 1e-6, `${module}: ${offOriginal} from the original weights + BA`);
      assert.ok(offBlocks > 100 * Math.max(offOriginal, 1e-9), `${module}: ${offBlocks} from the dequantized blocks + BA, ${offOriginal} from the original`);
      modules++;
      if (Math.max(...delta.map(Math.abs)) > 1e-4) moved++;
    }
    assert.ok(modules >= 14, `${modules} adapted modules`);
    assert.ok(moved > 0, 'one SFT iteration moved the adapters (B is no longer zero)');
  });

  it("model check says where seed 000's preset fits (q8 and bfloat16); full fine-tuning with q8 is refused naming the fix, in model check and in train", () => {
    const dir = tempDir();
    const check = ok(runCli(['model', 'check', QWEN3, '--max-new-tokens', '2'], dir));
    assert.match(
      check,
      /^ {2}seed 000's preset \(LoRA rank 8, context 1024, 12 rows sampled at once\): seed 000 preset: fits at q8 \([\d.]+ MiB\), fits at bfloat16 \([\d.]+ MiB\) — of [\d.]+ GiB on the wasm engine$/m,
    );
    const full = runCli(['model', 'check', QWEN3, '--weight-dtype', 'q8', '--lora-rank', '0', '--ids', '1,2'], dir);
    assert.equal(full.code, 2);
    assert.match(full.stderr, /--weight-dtype q8 with --lora-rank 0: Q8_0 weights are a frozen base for LoRA\. Fix: --lora-rank 8, or --weight-dtype f32/);
    fs.writeFileSync(path.join(dir, 'full.json'), JSON.stringify({ policyOptions: { loraRank: 0 } }));
    const train = runCli(
      ['train', '--config', 'full.json', '--env', 'calculator', '--policy', 'transformer', '--model', QWEN3, '--weight-dtype', 'q8', '--iterations', '1'],
      dir,
    );
    assert.equal(train.code, 2, train.stderr);
    assert.match(
      train.stderr,
      /policyOptions\.weightDtype.*full fine-tuning \(loraRank 0\).*Fix: train LoRA adapters over the 8-bit base \(policyOptions\.loraRank 8\), or weightDtype "f32" for full fine-tuning/s,
    );
  });
});
