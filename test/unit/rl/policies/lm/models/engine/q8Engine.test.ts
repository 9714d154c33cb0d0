// The engine at weightDtype "q8" (issue 50, items 2–3): its logits against the independent PyTorch
// reference run on the same Q8_0 weights with every product's input fake-quantized per row and block
// of 32 (test/fixtures/hfReference.py --q8 block), its distance to bfloat16 (KL per token), a fixture
// with planted activation outliers where block-wise quantization stays closer to bfloat16 than one
// scale per row (the reference's --q8 row), and one model for sampling and training: the sampler's
// log-probs equal the training pass's. The reference needs Debian's python3-torch: skipped without it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { HfEngine } from '../../../../../../../src/rl/policies/lm/models/engine/hfEngine';
import { readHfConfig } from '../../../../../../../src/rl/policies/lm/models/hfConfig';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'hf');
const REFERENCE = path.join(ROOT, 'test', 'fixtures', 'hfReference.py');
const PYTHON = '/usr/bin/python3';
const LORA = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
const TORCH = spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;
const skip = TORCH ? false : `${PYTHON} with torch is not installed (apt install python3-torch)`;

/** reference.json's two rows of 16 ids (every position's logits compared). */
const ROWS = [
  [0, 17, 45, 120, 7, 300, 22, 81, 5, 64, 99, 12, 200, 3, 150, 42],
  [250, 1, 1, 90, 33, 310, 72, 8, 8, 140, 66, 19, 2, 230, 11, 57],
];

/**
 * Tolerance on a logit, engine q8 against the reference's q8 (logits of these fixtures up to about 20):
 * the float32 one of the engine's own reference test, at every position before the first where an
 * input of some product lay within float32 rounding of a half step of its block (the reference's
 * "exact"): there the engine's float32 and the reference's float64 may round it apart, one step of
 * that block (d = amax / 127), 0.2–0.3 in these logits downstream (qwen3's row 2 does, from its
 * token 1 on). Measured up to 5e-6 where asserted.
 */
const Q8_TOL = 1e-4;

interface Reference {
  /** [row][position][vocabulary] */
  readonly logits: number[][][];
  /** With --q8: per row, the positions before the first near a rounding tie. */
  readonly exact?: number[];
}

/** The PyTorch reference with `flags` (--q8 block, --q8 row, --bf16). */
function reference(dir: string, flags: string[]): Reference {
  const r = spawnSync(PYTHON, [REFERENCE, dir, '--ids', ROWS.map((row) => row.join(',')).join('/'), '--all', ...flags], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (r.status !== 0) throw new Error(`hfReference.py ${flags.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Reference;
}

async function engine(dir: string, dtype: 'q8' | 'bf16' | 'f32'): Promise<HfEngine> {
  return HfEngine.create({ dir, arch: readHfConfig(dir), contextLength: 64, lora: LORA, threads: 2, dtype, bytes: 64 * 2 ** 20, planText: 'test plan' });
}

/** Every position's logits of ROWS on the engine, [row][position][vocabulary]. */
async function engineLogits(dir: string, dtype: 'q8' | 'bf16' | 'f32'): Promise<number[][][]> {
  const e = await engine(dir, dtype);
  try {
    const V = e.decoder.V;
    const z = await e.logits('policy', ROWS, 'all');
    return ROWS.map((row, b) => row.map((_, t) => Array.from(z.subarray((b * row.length + t) * V, (b * row.length + t + 1) * V))));
  } finally {
    await e.close();
  }
}

function logSoftmax(z: readonly number[]): number[] {
  const mx = Math.max(...z);
  const lz = mx + Math.log(z.reduce((s, v) => s + Math.exp(v - mx), 0));
  return z.map((v) => v - lz);
}

/** KL(p ‖ q) per position (p, q given as logits), [row · position]. */
function klPerToken(p: number[][][], q: number[][][]): number[] {
  const out: number[] = [];
  p.forEach((row, b) =>
    row.forEach((zp, t) => {
      const lp = logSoftmax(zp),
        lq = logSoftmax(q[b]![t]!);
      out.push(lp.reduce((s, v, i) => s + Math.exp(v) * (v - lq[i]!), 0));
    }),
  );
  return out;
}

/** max |a − b| over every logit of the positions t < until[row] (every position without `until`). */
function maxAbs(a: number[][][], b: number[][][], until?: readonly number[]): number {
  let err = 0;
  a.forEach((row, i) => row.forEach((z, t) => t < (until?.[i] ?? Infinity) && z.forEach((v, k) => (err = Math.max(err, Math.abs(v - b[i]![t]![k]!))))));
  return err;
}

const mean = (xs: readonly number[]): number => xs.reduce((s, v) => s + v, 0) / xs.length;

/**
 * The qwen2 fixture with planted activation outliers: hidden channels 5, 37 and 50 of both RMSNorm
 * gains of every layer multiplied by 1,000, 200 and 50, so the inputs of the q/k/v and gate/up
 * products carry a few channels 50–1,000× the rest, as real Qwen checkpoints do. The final norm is
 * left alone: scaled too, the logits reach 3,000 and every variant's KL to bfloat16 is over 100 nats.
 */
function outlierFixture(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'q8-outliers-'));
  const src = path.join(FIXTURES, 'qwen2');
  fs.copyFileSync(path.join(src, 'config.json'), path.join(dir, 'config.json'));
  const bytes = fs.readFileSync(path.join(src, 'model.safetensors'));
  const headerLen = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + headerLen).toString('utf8')) as Record<string, { dtype: string; data_offsets: [number, number] }>;
  const planted: [number, number][] = [
    [5, 1000],
    [37, 200],
    [50, 50],
  ];
  for (const [name, t] of Object.entries(header)) {
    if (!/(input_layernorm|post_attention_layernorm)\.weight$/.test(name)) continue;
    assert.equal(t.dtype, 'F32', `${name}: the qwen2 fixture is float32`);
    for (const [ch, f] of planted) {
      const at = 8 + headerLen + t.data_offsets[0] + ch * 4;
      bytes.writeFloatLE(bytes.readFloatLE(at) * f, at);
    }
  }
  fs.writeFileSync(path.join(dir, 'model.safetensors'), bytes);
  return dir;
}

describe('the engine at q8 (Q8_0 weights, activations quantized per row and block of 32)', { skip }, () => {
  const tmp: string[] = [];
  after(() => tmp.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  for (const family of ['qwen2', 'qwen3', 'llama']) {
    it(`${family}: the logits equal PyTorch's on the dequantized weights with the inputs fake-quantized (within ${Q8_TOL} before a rounding tie), and KL(q8 ‖ bf16) per token is small`, async (t) => {
      const dir = path.join(FIXTURES, family);
      const q8 = await engineLogits(dir, 'q8');
      const ref = reference(dir, ['--q8', 'block']);
      const exact = ref.exact!;
      // the check is not vacuous: at least 6 of the 32 positions are compared tightly (7–32 here)
      assert.ok(exact[0]! + exact[1]! >= 6, `positions before a rounding tie: ${exact.join(', ')}`);
      const err = maxAbs(q8, ref.logits, exact);
      assert.ok(err < Q8_TOL, `max |engine q8 − torch q8| = ${err} over the positions before a rounding tie (${exact.join(', ')} of 16)`);
      // the quantization is not a no-op: the engine at q8 differs from float32 by far more than the tolerance
      const f32 = await engineLogits(dir, 'f32');
      assert.ok(maxAbs(q8, f32) > 10 * err, `q8 moved the logits by ${maxAbs(q8, f32)}`);
      // these fixtures are random weights 64 wide (two blocks a row): far more sensitive than a real
      // checkpoint (measured mean 1e-3 – 4e-3 nats, max 1.4e-2); the 0.5B shapes' KL is the bench's
      const kl = klPerToken(q8, await engineLogits(dir, 'bf16'));
      t.diagnostic(
        `${family}: max |engine − torch| ${err.toExponential(2)} over ${exact.join(' + ')} positions; KL(q8 ‖ bf16) mean ${mean(kl).toExponential(2)}, max ${Math.max(...kl).toExponential(2)}`,
      );
      assert.ok(mean(kl) < 1e-2 && Math.max(...kl) < 5e-2, `KL(q8 ‖ bf16) per token: mean ${mean(kl)}, max ${Math.max(...kl)}`);
    });
  }

  it('planted activation outliers: block-wise activation quantization stays closer to bfloat16 (KL per token) than one scale per row', async (t) => {
    const dir = outlierFixture();
    tmp.push(dir);
    const blockRef = reference(dir, ['--q8', 'block']);
    const block = blockRef.logits;
    const row = reference(dir, ['--q8', 'row']).logits;
    const bf16 = reference(dir, ['--bf16']).logits;
    const klBlock = mean(klPerToken(block, bf16)),
      klRow = mean(klPerToken(row, bf16));
    t.diagnostic(`outliers: mean KL to bf16 block-wise ${klBlock.toExponential(2)}, per row ${klRow.toExponential(2)} (${(klRow / klBlock).toFixed(1)}×)`);
    assert.ok(klBlock < klRow, `mean KL to bf16: block-wise ${klBlock}, per row ${klRow}`);
    // the engine computes the block-wise variant
    const q8 = await engineLogits(dir, 'q8');
    const scale = Math.max(...block.flat(2).map(Math.abs));
    const err = maxAbs(q8, block, blockRef.exact);
    assert.ok(err < Q8_TOL * Math.max(1, scale / 20), `max |engine q8 − torch q8| = ${err} (logits up to ${scale}; positions ${blockRef.exact!.join(', ')})`);
    const klEngine = mean(klPerToken(q8, await engineLogits(dir, 'bf16')));
    t.diagnostic(`outliers: engine mean KL(q8 ‖ bf16) ${klEngine.toExponential(2)}; max |engine − torch| ${err.toExponential(2)}`);
    assert.ok(klEngine < klRow, `engine: mean KL(q8 ‖ bf16) ${klEngine} against the per-row variant's ${klRow}`);
  });
});

describe('one 8-bit base for sampling and training', () => {
  it('llama at q8: a position under a grammar scores over its allowed ids what the whole-vocabulary q8 logits give them (within 1e-4)', async () => {
    const dir = path.join(FIXTURES, 'llama');
    const e = await engine(dir, 'q8');
    try {
      const inputs = [3, 40, 41, 7, 99, 12];
      const targets = [40, 41, 7, 99, 12, 5];
      const ids = Int32Array.from([5, 12, 77, 200, 301]);
      const allowed = inputs.map((_, t) => (t === 5 ? ids : undefined));
      const [scored] = await e.score('policy', [{ inputs, targets, mask: inputs.map(() => 1), allowed }], 1, false);
      const V = e.decoder.V;
      const z = await e.logits('policy', [inputs], 'all');
      const over = logSoftmax(Array.from(ids, (id) => z[5 * V + id]!));
      const err = Math.abs(scored!.logp[5]! - over[0]!);
      assert.ok(err < 1e-4, `constrained log-prob ${scored!.logp[5]} against ${over[0]} from the q8 logits`);
    } finally {
      await e.close();
    }
  });

  it('qwen3 at q8: the log-probs of a decoding session (prefill, then steps over the KV cache) equal the training pass’s within 1e-4, and its LoRA gradients (dy·W through the dequantized base) are within 10 % of float32 weights’', async () => {
    const dir = path.join(FIXTURES, 'qwen3');
    const e = await engine(dir, 'q8');
    const f = await engine(dir, 'f32');
    try {
      // adapters with non-zero b, the same on both engines
      const adapters = e
        .trainableShapes()
        .map((t, i) => Float32Array.from({ length: t.shape.reduce((a, b) => a * b, 1) }, (_, j) => 0.05 * Math.sin(j * 0.37 + i)));
      e.setTrainable('policy', adapters, false);
      f.setTrainable('policy', adapters, false);
      const prompts = [
        [1, 5, 9, 30],
        [4, 20, 21, 22, 90, 7],
      ];
      const next = [
        [11, 12, 13],
        [40, 41, 42],
      ];
      const V = e.decoder.V;
      const s = await e.session('policy', prompts, 16, 16);
      const sampled: number[][] = prompts.map(() => []);
      let z = s.logits;
      for (let k = 0; k < 3; k++) {
        prompts.forEach((_, b) => sampled[b]!.push(logSoftmax(Array.from(z.subarray(b * V, (b + 1) * V)))[next[b]![k]!]!));
        z = await s.step(next.map((n) => n[k]!));
      }
      s.dispose();
      const seqs = prompts.map((p, b) => {
        const all = [...p, ...next[b]!];
        return {
          inputs: all.slice(0, -1),
          targets: all.slice(1),
          mask: all.slice(1).map((_, t) => (t >= p.length - 1 ? 1 : 0)),
        };
      });
      const scored = await e.score('policy', seqs, 1, true);
      let err = 0;
      seqs.forEach((q, b) => next[b]!.forEach((_, k) => (err = Math.max(err, Math.abs(scored[b]!.logp[prompts[b]!.length - 1 + k]! - sampled[b]![k]!)))));
      assert.ok(err < 1e-4, `max |sampled − trained| log-prob ${err}`);
      const g = seqs.map((q) => Float32Array.from(q.mask));
      const grads = await e.backward(g);
      await f.score('policy', seqs, 1, true);
      const want = await f.backward(g);
      let diff = 0,
        norm = 0;
      want.forEach((w, i) => w.forEach((v, j) => ((diff += (v - grads[i]![j]!) ** 2), (norm += v * v))));
      assert.ok(
        norm > 0 && Math.sqrt(diff / norm) < 0.1,
        `LoRA gradients at q8 against float32: relative error ${Math.sqrt(diff / norm)} of norm ${Math.sqrt(norm)}`,
      );
    } finally {
      await e.close();
      await f.close();
    }
  });
});
