// The sampler's draw in the engine's threads (engineDraw.ts, scripts/kernels/drawWat.mjs) against the
// JavaScript path (sampleRow, drawToken) on fixture logits: the same seed draws the same tokens with
// the same log-probs, bit for bit — at temperatures 0, 0.7, 1 and 1.3, with top-k and top-p, under a
// grammar's mask, on a 151,936-word row, one rng for the batch or one a row — and the kernels' edge
// cases: ties, rows that are almost all −∞, exponents that underflow, a uniform the walk never spends.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { compileActionGrammar } from '../../../../../../../src/rl/envs/actionGrammar';
import { TokenConstraint } from '../../../../../../../src/rl/policies/lm/constraint';
import { drawRows } from '../../../../../../../src/rl/policies/lm/models/engine/engineDraw';
import { memory64Support, type AddressMode } from '../../../../../../../src/rl/policies/lm/models/engine/engineAddress';
import { EngineMemory } from '../../../../../../../src/rl/policies/lm/models/engine/engineMemory';
import { engineModule, HfEngine } from '../../../../../../../src/rl/policies/lm/models/engine/hfEngine';
import { readHfConfig } from '../../../../../../../src/rl/policies/lm/models/hfConfig';
import { EngineKernels } from '../../../../../../../src/rl/policies/lm/models/engine/kernels';
import { CONTROL_BYTES, ThreadPool } from '../../../../../../../src/rl/policies/lm/models/engine/threadPool';
import type { CausalLm, DrawnRow, RowDraw } from '../../../../../../../src/rl/policies/lm/models/policyModel';
import { sampleBatch, sampleRow, type SampleOptions } from '../../../../../../../src/rl/policies/lm/sampler';
import { characterHfTokenizer, type Tokenizer } from '../../../../../../../src/rl/policies/lm/tokenizer';
import { Rng } from '../../../../../../../src/rl/random';

const QWEN_VOCAB = 151_936;
const ROOT = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', '..', '..');
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'hf');

let mem: EngineMemory;
let pool: ThreadPool;
let kernels: EngineKernels;
/** Rows the engine drew (a test fails if the engine path was not taken). */
let engineRows = 0;

before(async () => {
  mem = new EngineMemory(32 * 2 ** 20, 'test plan', CONTROL_BYTES);
  pool = await ThreadPool.start(mem.memory, engineModule().module, 2);
  // every call split over both threads, however small
  kernels = new EngineKernels(pool, 0);
});
after(async () => {
  await pool.close();
});

function engineDraw(z: Float32Array, rows: readonly RowDraw[], inv: number, V: number): DrawnRow[] {
  engineRows += rows.length;
  // three rows at a time: a batch of five is drawn in two parts
  return drawRows(mem, kernels, z, V, rows, inv, 3);
}

/** Deterministic logits for (step, row, last token): a spread of values, a few peaks, ties and −∞ where `holes`. */
function fixtureRow(V: number, seed: number, holes: boolean): Float32Array {
  let s = seed >>> 0 || 1;
  const rand = (): number => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 4294967296;
  };
  const row = new Float32Array(V);
  for (let i = 0; i < V; i++) row[i] = (rand() + rand() + rand() - 1.5) * 4;
  for (let p = 0; p < 4; p++) row[Math.floor(rand() * V)] = 6 + rand() * 4;
  // an exact tie at the top (greedy keeps the first)
  const top = row.reduce((m, v) => Math.max(m, v), -Infinity);
  row[Math.floor(rand() * V)] = top;
  if (holes) for (let i = 0; i < V; i += 7) row[i] = -Infinity;
  return row;
}

/**
 * A model that decodes itself: fixture logits per step and row (every 7th token −∞ in odd rows when
 * `holes`), drawn on the engine (`threads`) or by sampleRow.
 */
function fixtureModel(V: number, threads: boolean, holes: boolean): CausalLm {
  return {
    config: { vocabSize: V, contextLength: 4096 },
    session: (prompts) => {
      let stepNo = 0;
      const logitsOf = (last: readonly number[]): Float32Array => {
        const out = new Float32Array(prompts.length * V);
        last.forEach((t, b) => out.set(fixtureRow(V, stepNo * 7919 + b * 104729 + t * 31, holes && b % 2 === 1), b * V));
        return out;
      };
      return Promise.resolve({
        logits: logitsOf(prompts.map((p) => p[p.length - 1]!)),
        step: (tokens) => {
          stepNo += 1;
          return Promise.resolve(logitsOf(tokens));
        },
        ...(threads ? { drawRows: (z: Float32Array, rows: readonly RowDraw[], inv: number) => engineDraw(z, rows, inv, V) } : {}),
        dispose: () => undefined,
      });
    },
  };
}

/** Decodes any id (the fixture's vocabulary is wider than a real tokenizer's). */
const letters: Tokenizer = {
  vocabSize: QWEN_VOCAB,
  encode: () => [],
  decode: (ids) => ids.map((i) => String.fromCharCode(97 + (i % 26))).join(''),
  toJSON: () => ({ kind: 'letters' }),
};

const PROMPTS = [[1, 2, 3], [4], [5, 6], [7, 8, 9, 10], [11]];

async function both(
  V: number,
  holes: boolean,
  tokenizer: Tokenizer,
  o: SampleOptions,
  rng: () => Rng | Rng[],
): Promise<{ js: Awaited<ReturnType<typeof sampleBatch>>; engine: Awaited<ReturnType<typeof sampleBatch>> }> {
  const before = engineRows;
  const js = await sampleBatch(fixtureModel(V, false, holes), tokenizer, PROMPTS, o, rng());
  const engine = await sampleBatch(fixtureModel(V, true, holes), tokenizer, PROMPTS, o, rng());
  assert.ok(engineRows > before, 'the engine drew the rows');
  return { js, engine };
}

describe('the draw in the engine’s threads', () => {
  it('its exp, one lane and two at a time, is V8’s Math.exp bit for bit: across every branch of fdlibm’s and at their boundaries', async () => {
    const gen = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'kernels', 'drawWat.mjs')).href)) as { drawFuncs: () => string };
    const wat = (await import(pathToFileURL(path.join(ROOT, 'scripts', 'watCompiler.mjs')).href)) as {
      compileWatText: (name: string, text: string) => Promise<Uint8Array<ArrayBuffer>>;
    };
    // the generated functions with two exports around them: exp1(x) and exp2(a, b) stored at p
    const bytes = await wat.compileWatText(
      'draw-exp.wat',
      `(module (import "env" "memory" (memory 1 1 shared)) ${gen.drawFuncs()}
        (func (export "exp1") (param $x f64) (result f64) (call $draw_exp (local.get $x)))
        (func (export "exp2") (param $a f64) (param $b f64) (param $p i32)
          (v128.store (local.get $p) (call $draw_exp2 (f64x2.replace_lane 1 (f64x2.splat (local.get $a)) (local.get $b))))))`,
    );
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
    const ex = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory } }).exports as {
      exp1: (x: number) => number;
      exp2: (a: number, b: number, p: number) => void;
    };
    const out = new Float64Array(memory.buffer, 0, 2);
    const fromHigh = (hi: number): number => new Float64Array(new Uint32Array([0, hi >>> 0]).buffer)[0]!;
    const xs: number[] = [0, -0, 1, -1, 2 ** -29, -(2 ** -29), 512, -512, 700, -709, -745.2, -746, 709.8, Infinity, -Infinity, NaN];
    // each side of fdlibm's thresholds (|x| at 2⁻²⁸, 0.5·ln2, 1.5·ln2, 709.78 and the draw's 512)
    for (const hi of [0x3e300000, 0x3fd62e42, 0x3ff0a2b2, 0x40800000, 0x40862e42])
      for (const d of [-1, 0, 1]) for (const s of [1, -1]) xs.push(s * fromHigh(hi + d), s * fromHigh(hi + d) * (1 + 2 ** -40));
    let seed = 99;
    const rand = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 4294967296;
    };
    for (let i = 0; i < 200_000; i++) xs.push(-(rand() ** 3) * [2, 30, 800][i % 3]! + (i % 11 === 0 ? rand() : 0));
    for (let i = 0; i < xs.length; i++) {
      const x = xs[i]!,
        y = xs[(i * 7919) % xs.length]!;
      assert.ok(Object.is(ex.exp1(x), Math.exp(x)), `exp(${x}): ${ex.exp1(x)} against ${Math.exp(x)}`);
      ex.exp2(x, y, 0);
      assert.ok(
        Object.is(out[0], Math.exp(x)) && Object.is(out[1], Math.exp(y)),
        `exp2(${x}, ${y}): ${out[0]}, ${out[1]} against ${Math.exp(x)}, ${Math.exp(y)}`,
      );
    }
  });

  it('a 151,936-word vocabulary: the same tokens and log-probs as sampleRow at temperatures 0, 0.7, 1 and 1.3 (one rng for the batch, and one a row)', async () => {
    for (const temperature of [0, 0.7, 1, 1.3]) {
      const o: SampleOptions = { temperature, topK: 0, topP: 1, maxNewTokens: 3, stop: [] };
      const shared = await both(QWEN_VOCAB, true, letters, o, () => new Rng(17));
      assert.deepEqual(shared.engine, shared.js, `T ${temperature}, one rng`);
      if (temperature === 1) {
        const perRow = await both(QWEN_VOCAB, true, letters, o, () => PROMPTS.map((_, b) => new Rng(100 + b)));
        assert.deepEqual(perRow.engine, perRow.js, `T ${temperature}, one rng a row`);
      }
      // the fixture draws more than one token per row (not the same peak every step)
      assert.ok(new Set(shared.js.flatMap((s) => s.tokens)).size > PROMPTS.length, `T ${temperature}: distinct tokens`);
    }
  });

  it('top-k and top-p: the normaliser from the engine, the truncated draw as drawToken draws it', async () => {
    for (const [topK, topP] of [
      [5, 1],
      [0, 0.9],
      [40, 0.95],
    ] as const) {
      for (const temperature of [0, 0.7, 1.3]) {
        const o: SampleOptions = { temperature, topK, topP, maxNewTokens: 3, stop: [] };
        const r = await both(4096, true, letters, o, () => new Rng(5));
        assert.deepEqual(r.engine, r.js, `top-k ${topK}, top-p ${topP}, T ${temperature}`);
      }
    }
  });

  it('under a grammar: the mask applied to the engine’s copy of each row, the same tokens and log-probs over the allowed ones', async () => {
    const chars = characterHfTokenizer();
    const constraint = new TokenConstraint(compileActionGrammar('<(add|sub)\\([0-9]{1,3},[0-9]{1,3}\\)>'), chars);
    for (const [temperature, topK] of [
      [1, 0],
      [0.7, 0],
      [0, 0],
      [1.3, 8],
    ] as const) {
      const o: SampleOptions = { temperature, topK, topP: 1, maxNewTokens: 16, stop: [], constraint };
      const r = await both(chars.vocabSize, false, chars, o, () => PROMPTS.map((_, b) => new Rng(7 + b)));
      assert.deepEqual(r.engine, r.js, `T ${temperature}, top-k ${topK}`);
      for (const s of r.engine) assert.ok(s.text.startsWith('<'), `an action of the grammar: ${s.text}`);
    }
  });

  it('edge rows: ties, all but one token masked, exponents that underflow, and a uniform the walk never spends (the last drawable token)', () => {
    const V = 1000;
    const rows: Float32Array[] = [];
    const tie = new Float32Array(V).fill(-2);
    tie[10] = 5;
    tie[500] = 5;
    rows.push(tie);
    const one = new Float32Array(V).fill(-Infinity);
    one[777] = 0.25;
    rows.push(one);
    const far = Float32Array.from({ length: V }, (_, i) => (i === 3 ? 900 : -900 + i * 0.01));
    rows.push(far);
    // a tail of −∞: u ≥ the whole mass ends at the last finite token
    const tail = Float32Array.from({ length: V }, (_, i) => (i >= 990 ? -Infinity : Math.sin(i)));
    rows.push(tail);
    const z = new Float32Array(rows.length * V);
    rows.forEach((r, b) => z.set(r, b * V));
    const fixed = (u: number): Rng =>
      new (class extends Rng {
        override next(): number {
          return u;
        }
      })(1);
    for (const temperature of [0, 0.5, 1, 2]) {
      const inv = 1 / (temperature > 0 ? temperature : 1);
      for (const u of [0, 0.3, 0.999999, 1 - 2 ** -53, 1]) {
        const got = drawRows(
          mem,
          kernels,
          z,
          V,
          rows.map((_, b) => ({ row: b, ...(temperature > 0 ? { u } : {}) })),
          inv,
          2,
        );
        rows.forEach((r, b) => {
          const want = sampleRow(r, { temperature, topK: 0, topP: 1 }, fixed(u));
          assert.equal(got[b]!.token, want.token, `row ${b}, T ${temperature}, u ${u}: token`);
          assert.equal(r[got[b]!.token]! * inv - got[b]!.lse, want.logp, `row ${b}, T ${temperature}, u ${u}: log-prob`);
        });
      }
    }
    // u = 1 (past the whole mass): the tail row's last finite token, not a masked one
    const last = drawRows(mem, kernels, z, V, [{ row: 3, u: 1 }], 1, 1);
    assert.equal(last[0]!.token, 989);
  });

  it('on the engine: a session of the qwen2 fixture samples the same tokens and log-probs drawn in its threads as by sampleRow, in no more memory than its steps take (wasm32, and memory64 where the runtime has it)', async () => {
    const dir = path.join(FIXTURES, 'qwen2');
    const arch = readHfConfig(dir);
    for (const address of memory64Support().ok ? (['wasm32', 'memory64'] as const) : (['wasm32'] as const)) await drawsOn(address);
    async function drawsOn(address: AddressMode): Promise<void> {
      const e = await HfEngine.create({
        dir,
        arch,
        contextLength: 64,
        lora: { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] },
        threads: 2,
        dtype: 'f32',
        bytes: 64 * 2 ** 20,
        planText: 'test plan',
        address,
      });
      try {
        assert.equal(e.address, address);
        let drawn = 0;
        const model = (threads: boolean): CausalLm => ({
          config: { vocabSize: arch.vocabSize, contextLength: 64 },
          session: async (prompts, capacity) => {
            const s = await e.session('policy', prompts, capacity, 32, 2);
            const own = { logits: s.logits, step: (tokens: readonly number[]) => s.step(tokens), dispose: () => s.dispose() };
            if (!threads) return own;
            return {
              ...own,
              drawRows: (z: Float32Array, rows: readonly RowDraw[], inv: number) => {
                drawn += rows.length;
                return s.drawRows(z, rows, inv);
              },
            };
          },
        });
        const peak = async (threads: boolean, o: SampleOptions): Promise<{ out: Awaited<ReturnType<typeof sampleBatch>>; peak: number }> => {
          e.mem.resetPeak();
          const out = await sampleBatch(model(threads), letters, PROMPTS, o, new Rng(3));
          return { out, peak: e.mem.peak };
        };
        for (const temperature of [1, 0.8, 0]) {
          const o: SampleOptions = { temperature, topK: 0, topP: 1, maxNewTokens: 8, stop: [] };
          const js = await peak(false, o);
          const engine = await peak(true, o);
          assert.deepEqual(engine.out, js.out, `T ${temperature}`);
          assert.ok(engine.peak <= js.peak, `T ${temperature}: the draw took ${engine.peak} bytes at most, the steps alone ${js.peak}`);
        }
        assert.ok(drawn >= 3 * 8 * PROMPTS.length, `${address}: rows drawn in the engine: ${drawn}`);
      } finally {
        await e.close();
      }
    }
  });
});
