// llama.cpp on the engine's Q8_0 blocks (issue 50, items 3 and 7): a checkpoint written as a Q8_0 GGUF
// holds, tensor for tensor, the blocks the engine loads at weightDtype "q8" (the file's bytes decoded
// back equal the engine's memory); node-llama-cpp loads it; llama.cpp's next-token top-5 on it agrees
// with the engine's q8 logits on the qwen2, qwen3 and llama fixtures; and sampling from it at
// weightDtype "q8" gives behaviour log-probs close to the engine's q8 recompute (the
// training–inference mismatch, measured and bounded). The two quantize the activations alike (the
// engine follows llama.cpp's x86 quantize_row_q8_0: float16 scales, ties to even), so most tokens agree
// to float32 rounding; an input that lands within float32 noise of a half step can still round apart.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { familyOf } from '../../../../../../src/rl/policies/lm/models/families/familyOf';
import { fittingEnginePlan } from '../../../../../../src/rl/policies/lm/models/engine/enginePlan';
import { EngineModel } from '../../../../../../src/rl/policies/lm/models/engine/engineModel';
import { engineModules, ENGINE_LINEARS } from '../../../../../../src/rl/policies/lm/models/engine/engineWeights';
import { HfEngine } from '../../../../../../src/rl/policies/lm/models/engine/hfEngine';
import { q8Of, type Matrix } from '../../../../../../src/rl/policies/lm/models/engine/kernels';
import { writeCheckpointGguf } from '../../../../../../src/rl/policies/lm/models/gguf';
import { readHfConfig } from '../../../../../../src/rl/policies/lm/models/hfConfig';
import { describePlan } from '../../../../../../src/rl/policies/lm/models/memoryPlan';
import { decodeGgufQ8_0, GGUF_Q8_0 } from '../../../../../../src/rl/policies/lm/models/q8Blocks';
import { ggufCachePath, LlamaCppSampler, loadLlamaCpp, mismatch } from '../../../../../../src/rl/policies/lm/rolloutEngines/llamaCpp';
import { initBackend } from '../../../../../../src/rl/policies/lm/models/tfjsBackend';
import { HfTokenizer } from '../../../../../../src/rl/policies/lm/tokenizer';
import { Rng } from '../../../../../../src/rl/random';
import { readGgufHeader } from '../models/families/ggufHeader';
import { samplerMismatch } from '../../../../../helpers/samplerMismatch';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..', 'test', 'fixtures', 'hf');
const LORA = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
type Loaded = Exclude<Awaited<ReturnType<typeof loadLlamaCpp>>, { error: string }>;

const topIds = (xs: ArrayLike<number>, k: number): number[] =>
  Array.from(xs, (v, i) => [v, i] as const)
    .sort((a, b) => b[0] - a[0])
    .slice(0, k)
    .map(([, i]) => i);

/** llama.cpp's next-token probabilities after every prefix of `ids` ([position][vocabulary]). */
async function everyNext(lib: Loaded, file: string, ids: readonly number[], vocab: number): Promise<Float64Array[]> {
  const model = await lib.llama.loadModel({
    modelPath: file,
    experimentalDefaultContextKvCacheKeyType: 'F32',
    experimentalDefaultContextKvCacheValueType: 'F32',
  });
  try {
    const ctx = await model.createContext({ contextSize: 64, sequences: 1, flashAttention: false });
    try {
      const seq = ctx.getSequence();
      const input = ids.map((t) => [t, { generateNext: { probabilities: true } }]);
      const res = await seq.controlledEvaluate(input as Parameters<typeof seq.controlledEvaluate>[0]);
      return ids.map((_, t) => {
        const probs = res[t]?.next?.probabilities;
        assert.ok(probs, `llama.cpp returned no probabilities at position ${t}`);
        const out = new Float64Array(vocab);
        for (const [id, p] of probs) out[id as number] = p;
        return out;
      });
    } finally {
      await ctx.dispose();
    }
  } finally {
    await model.dispose();
  }
}

/** The engine's matrices at q8 by Hugging Face tensor name (a tied head is the embedding, listed once). */
function engineMatrices(e: HfEngine, dir: string): Map<string, Matrix> {
  const a = readHfConfig(dir);
  const f = familyOf(a);
  const w = e.decoder.w;
  const out = new Map<string, Matrix>([[`${f.names.embed}`, w.embed]]);
  if (!a.tiedEmbeddings) out.set(f.names.head, w.head);
  w.layers.forEach((layer, l) => {
    const modules = engineModules(f.names.layer(l));
    for (const k of ENGINE_LINEARS) out.set(`${modules[k]}.weight`, layer.linear[k].w);
  });
  return out;
}

describe('llama.cpp on Q8_0 (the engine’s 8-bit blocks as a GGUF)', () => {
  let lib: Loaded;
  let tmp: string;
  before(async () => {
    const got = await loadLlamaCpp();
    if ('error' in got) throw new Error(`node-llama-cpp must load here (a dependency with prebuilt CPU binaries): ${got.error}`);
    lib = got;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-gguf-q8-'));
  });
  after(async () => {
    fs.rmSync(tmp, { recursive: true, force: true });
    await lib?.llama.dispose();
  });

  for (const family of ['qwen3', 'llama'] as const) {
    it(`${family}: every matrix is written as Q8_0 whose bytes decode to exactly the blocks the engine holds at q8, and node-llama-cpp loads the file`, async () => {
      const dir = path.join(FIXTURES, family);
      const file = path.join(tmp, `${family}-blocks.q8_0.gguf`);
      writeCheckpointGguf(dir, file, { weightDtype: 'q8' });
      const { metadata, tensors } = readGgufHeader(file);
      assert.equal(metadata.get('general.file_type'), 7, 'llama_ftype MOSTLY_Q8_0');
      const a = readHfConfig(dir);
      const specs = familyOf(a)
        .tensors(a)
        .filter((t) => t.gguf !== undefined);
      const bytes = fs.readFileSync(file);
      const e = await HfEngine.create({ dir, arch: a, contextLength: 64, lora: LORA, threads: 1, dtype: 'q8', bytes: 64 * 2 ** 20, planText: 'test plan' });
      try {
        const held = engineMatrices(e, dir);
        let compared = 0;
        for (const spec of specs) {
          const g = tensors.find((t) => t.name === spec.gguf);
          assert.ok(g, `${spec.gguf} is in the file`);
          if (spec.shape.length === 1) {
            assert.equal(g.type, 0, `${spec.gguf}: vectors stay float32`);
            continue;
          }
          assert.equal(g.type, GGUF_Q8_0.type, `${spec.gguf}: GGML type 8`);
          const [rows, cols] = spec.shape as [number, number];
          const m = decodeGgufQ8_0(bytes.subarray(g.at, g.at + (rows * cols * GGUF_Q8_0.blockBytes) / 32), rows, cols, spec.gguf);
          const w = held.get(spec.name);
          assert.ok(w, `the engine holds ${spec.name}`);
          const op = q8Of(w);
          const buf = e.mem.memory.buffer;
          const q = new Int8Array(buf, op.q, op.layout.valueBytes);
          const s = new Float32Array(buf, op.s, op.layout.scaleBytes / 4);
          // Llama's q and k rows are in llama.cpp's rotary order in the file: row (h, i, half) of the file is row (h, half, i) of the engine
          const heads = spec.ggufRotaryHeads ?? 0;
          const dim = heads ? rows / heads : rows;
          const from = (r: number): number => (heads ? Math.floor(r / dim) * dim + (r % 2) * (dim / 2) + Math.floor((r % dim) / 2) : r);
          const { paddedCols, blocksPerRow } = op.layout;
          for (let r = 0; r < rows; r++) {
            const er = from(r);
            assert.deepEqual(
              m.q.subarray(r * paddedCols, (r + 1) * paddedCols),
              q.subarray(er * paddedCols, (er + 1) * paddedCols),
              `${spec.gguf} row ${r}: values`,
            );
            assert.deepEqual(
              m.scales.subarray(r * blocksPerRow, (r + 1) * blocksPerRow),
              s.subarray(er * blocksPerRow, (er + 1) * blocksPerRow),
              `${spec.gguf} row ${r}: scales`,
            );
          }
          compared++;
        }
        assert.equal(compared, held.size, 'every matrix the engine holds at q8 is a Q8_0 tensor of the file');
      } finally {
        await e.close();
      }
      const info = await lib.lib.readGgufFileInfo(file, { readTensorInfo: true });
      assert.ok(info.tensorInfo!.some((t) => Number(t.ggmlType) === GGUF_Q8_0.type));
      const model = await lib.llama.loadModel({ modelPath: file });
      await model.dispose();
    });
  }

  it('keys the cached GGUF by its weights, so a float file and a Q8_0 one never stand in for each other', () => {
    const float = ggufCachePath('/cache', 'abc');
    assert.equal(float, path.join('/cache', 'gguf', 'abc.gguf'), 'the float file keeps its name');
    assert.notEqual(ggufCachePath('/cache', 'abc', 'q8'), float);
    assert.match(ggufCachePath('/cache', 'abc', 'q8'), /abc\.q8_0\.gguf$/);
  });

  /**
   * The engine's q8 top-5 against llama.cpp's on the same Q8_0 weights, at every position of each
   * fixture's two reference rows (32 positions). The two quantize each product's input alike (float16
   * scales, ties to even), so only an 8-bit rounding flip orders them apart. Measured (qwen2, qwen3,
   * llama): top-1 equal at 32, 31 and 32 positions; top-5 sets equal at 32, 31 and 32; never fewer than
   * 4 ids shared (before the engine rounded activation scales to float16: top-1 at 32, 31, 30, sets at
   * 30, 27, 30). Asserted with margin:
   */
  const TOP1_AT_LEAST = 30;
  const SAME_SET_AT_LEAST = 28;
  const SHARED_AT_LEAST = 3;
  for (const family of ['qwen2', 'qwen3', 'llama'] as const) {
    it(`${family}: the engine's q8 top-5 next tokens agree with llama.cpp's on the Q8_0 GGUF (top-1 at ≥ ${TOP1_AT_LEAST} of 32 positions, else in each other's top 5; the same top-5 set at ≥ ${SAME_SET_AT_LEAST}; ≥ ${SHARED_AT_LEAST} ids shared everywhere)`, async (tc) => {
      const dir = path.join(FIXTURES, family);
      const a = readHfConfig(dir);
      const ref = JSON.parse(fs.readFileSync(path.join(dir, 'reference.json'), 'utf8')) as { ids: number[][] };
      const file = path.join(tmp, `${family}.q8_0.gguf`);
      writeCheckpointGguf(dir, file, { weightDtype: 'q8' });
      const e = await HfEngine.create({ dir, arch: a, contextLength: 64, lora: LORA, threads: 1, dtype: 'q8', bytes: 64 * 2 ** 20, planText: 'test plan' });
      let z: Float32Array;
      try {
        z = await e.logits('policy', ref.ids, 'all');
      } finally {
        await e.close();
      }
      const V = a.vocabSize;
      let sameTop1 = 0,
        sameSet = 0,
        fewest = 5,
        n = 0;
      for (let row = 0; row < ref.ids.length; row++) {
        const ids = ref.ids[row]!;
        const theirs = await everyNext(lib, file, ids, V);
        ids.forEach((_, t) => {
          const at = row * ids.length + t;
          const ours = topIds(z.subarray(at * V, (at + 1) * V), 5);
          const them = topIds(theirs[t]!, 5);
          const shared = ours.filter((x) => them.includes(x)).length;
          if (process.env.DEBUG_LLAMA) console.log(`${family} row ${row} position ${t}: engine ${ours.join(' ')}, llama.cpp ${them.join(' ')}`);
          n++;
          if (ours[0] === them[0]) sameTop1++;
          else
            assert.ok(
              them.includes(ours[0]!) && ours.includes(them[0]!),
              `${family} row ${row} position ${t}: top-1 ${ours[0]} against ${them[0]}, not in each other's top 5 (${ours.join(' ')} / ${them.join(' ')})`,
            );
          if (shared === 5) sameSet++;
          fewest = Math.min(fewest, shared);
          assert.ok(shared >= SHARED_AT_LEAST, `${family} row ${row} position ${t}: ${shared} of the top 5 shared (${ours.join(' ')} / ${them.join(' ')})`);
        });
      }
      tc.diagnostic(`${family}: top-1 equal at ${sameTop1} of ${n} positions, top-5 sets equal at ${sameSet}, fewest ids shared ${fewest}`);
      assert.equal(n, 32);
      assert.ok(sameTop1 >= TOP1_AT_LEAST, `${family}: top-1 equal at ${sameTop1} of ${n} positions`);
      assert.ok(sameSet >= SAME_SET_AT_LEAST, `${family}: top-5 sets equal at ${sameSet} of ${n} positions`);
    });
  }

  /**
   * The training–inference mismatch at weightDtype "q8", |Δ log p| per sampled token: 12 rows of 40
   * tokens (480) sampled by llama.cpp on the Q8_0 GGUF against the engine's q8 recompute, and, as the
   * control, sampled on the float GGUF (what weightDtype q8 sampled before the Q8_0 file). The two
   * quantize every product's input alike (llama.cpp's x86 quantize_row_q8_0: float16 scales, ties to
   * even), so most tokens agree to float32 rounding. Measured (qwen2, qwen3, llama): median 1.1e-6,
   * 1.1e-6, 3.8e-7; within 1e-4 at 465, 386, 425 of 480 tokens; mean 5.8e-4, 2.8e-3, 1.5e-3; p99 0.010,
   * 0.082, 0.030 (before the engine rounded activation scales to float16, llama: mean 0.021, p99 0.070;
   * the float file: mean 0.020, 0.021, 0.039). The rest is 8-bit rounding flips: a row parts at one
   * position (2, 3 and 2 of the 12 rows) and stays apart through the KV cache at ~1e-2 a token, where an
   * input lay within the two sides' float32 difference of a half step (qwen3's row 2 parts at the very
   * position the PyTorch reference flags a near tie) — the sums feeding a product differ in order
   * between the two implementations, so such flips cannot be ruled out, only made rare. Asserted with margin:
   */
  const MISMATCH_MEDIAN = 1e-5;
  const WITHIN_1E4_AT_LEAST = 0.7;
  const MISMATCH_MEAN = 0.01;
  const MISMATCH_P99 = 0.12;
  for (const family of ['qwen2', 'qwen3', 'llama'] as const)
    it(`${family}: samples from the Q8_0 GGUF at weightDtype "q8": the sampler says so, and the mismatch to the engine's q8 recompute is float32 rounding at the median (< ${MISMATCH_MEDIAN}) and within 1e-4 at ≥ ${WITHIN_1E4_AT_LEAST * 100} % of tokens, within ${MISMATCH_MEAN} (mean) and ${MISMATCH_P99} (p99), below the float file's`, async (tc) => {
      const dir = path.join(FIXTURES, family);
      const tokenizer = HfTokenizer.fromDirectory(dir);
      await initBackend('wasm');
      const arch = readHfConfig(dir);
      const plan = fittingEnginePlan(arch, { contextLength: 64, sampleRows: 4, threads: 1, dtype: 'q8', lora: LORA });
      assert.equal(plan.dtype, 'q8');
      const engine = await EngineModel.create({ dir, arch, contextLength: 64, lora: LORA, seed: 1, threads: 1, plan, planText: describePlan(plan) });
      const prompts = Array.from({ length: 12 }, (_, i) => Array.from({ length: 3 + (i % 5) }, (_, j) => (i * 37 + j * 11) % arch.vocabSize));
      const measure = async (weightDtype: 'q8' | 'stored'): Promise<{ m: ReturnType<typeof mismatch>; d: number[] }> => {
        const sampler = await LlamaCppSampler.open({
          dir,
          gguf: path.join(tmp, `${family}-sampler-${weightDtype}.gguf`),
          contextLength: 64,
          rows: 4,
          threads: 1,
          tokenizer,
          weightDtype,
        });
        try {
          if (weightDtype === 'q8') assert.match(sampler.describe(), /, Q8_0 GGUF \(the engine's 8-bit blocks\)$/);
          else assert.doesNotMatch(sampler.describe(), /Q8_0/);
          const rows = await sampler.sample(prompts, { temperature: 1, topK: 0, topP: 1, maxNewTokens: 40, stop: [] }, new Rng(11));
          const { ours, theirs, m } = await samplerMismatch(engine.scorer(), prompts, rows);
          return { m, d: ours.map((x, i) => Math.abs(x - theirs[i]!)).sort((a, b) => a - b) };
        } finally {
          await sampler.dispose();
        }
      };
      try {
        const q8 = await measure('q8');
        const float = await measure('stored');
        const line = ({ m, d }: typeof q8): string =>
          `mean ${m.mean.toExponential(2)}, median ${d[d.length >> 1]!.toExponential(2)}, p99 ${m.p99.toExponential(2)}, max ${d[d.length - 1]!.toExponential(2)}, ${d.filter((x) => x < 1e-4).length} of ${m.n} tokens within 1e-4`;
        tc.diagnostic(`${family} mismatch to the engine's q8: Q8_0 file ${line(q8)}; float file ${line(float)}`);
        assert.equal(q8.m.n, 480, 'every row ran its 40 tokens');
        assert.ok(q8.m.mean < MISMATCH_MEAN && q8.m.p99 < MISMATCH_P99, `Q8_0 file: mean ${q8.m.mean}, p99 ${q8.m.p99}`);
        assert.ok(q8.d[q8.d.length >> 1]! < MISMATCH_MEDIAN, `Q8_0 file: median ${q8.d[q8.d.length >> 1]} (float32 rounding)`);
        assert.ok(
          q8.d.filter((x) => x < 1e-4).length >= WITHIN_1E4_AT_LEAST * q8.m.n,
          `Q8_0 file: ${q8.d.filter((x) => x < 1e-4).length} of ${q8.m.n} tokens within 1e-4`,
        );
        assert.ok(q8.m.mean < float.m.mean, `the Q8_0 file is closer to the q8 trainer than the float file: ${q8.m.mean} against ${float.m.mean}`);
      } finally {
        engine.dispose();
      }
    });
});
