// The reference test every model family has (one file per family beside this one): its spec's tensor
// list against checkpoints written without the spec — the PyTorch fixture (test/fixtures/hf/<family>,
// test/fixtures/makeHfFixtures.py) and, for the families `agent-rl model new` writes, a tiny fresh
// checkpoint (newCheckpoint.ts, which writes its tensors out itself, as transformers' _init_weights
// does) — and its parameter count against a formula written out by hand in the family's test and the
// sizes of the tensors actually stored.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { it } from 'node:test';
import { familyOf, loraModules, parameterCount } from '../../../../../../../src/rl/policies/lm/models/families/familyOf';
import { tensorSize, variableOrder } from '../../../../../../../src/rl/policies/lm/models/families/modelFamily';
import { readHfConfig, type HfArchitecture, type HfModelType } from '../../../../../../../src/rl/policies/lm/models/hfConfig';
import { loraParameterCount } from '../../../../../../../src/rl/policies/lm/models/memoryPlan';
import { writeCheckpointGguf } from '../../../../../../../src/rl/policies/lm/models/gguf';
import { writeNewCheckpoint, type NewModelSpec } from '../../../../../../../src/rl/policies/lm/newCheckpoint';
import { checkpointTensors, readTensor } from '../../../../../../../src/rl/policies/lm/models/safetensors';
import { readGgufHeader } from './ggufHeader';

export const HF_FIXTURES = path.join(__dirname, '..', '..', '..', '..', '..', '..', '..', '..', 'test', 'fixtures', 'hf');

/** Stored name → shape of a checkpoint folder. */
function stored(dir: string): Map<string, number[]> {
  return new Map([...checkpointTensors(dir).values()].map((t) => [t.name, [...t.shape]]));
}

/** The spec's tensors matched one to one with the stored ones (under a name or an alternative), shapes equal. */
function assertSpecMatches(a: HfArchitecture, dir: string, what: string): void {
  const have = stored(dir);
  const spec = familyOf(a).tensors(a);
  const used = new Set<string>();
  for (const t of spec) {
    const name = [t.name, ...(t.alternatives ?? [])].find((n) => have.has(n));
    assert.ok(name, `${what}: the spec's ${t.name} is stored`);
    assert.deepEqual(have.get(name), [...t.shape], `${what}: ${t.name}'s shape`);
    used.add(name);
  }
  assert.deepEqual(
    [...have.keys()].filter((n) => !used.has(n)),
    [],
    `${what}: every stored tensor is in the spec`,
  );
  assert.equal(new Set(spec.map((t) => t.name)).size, spec.length, `${what}: no name twice`);
  const total = [...have.values()].reduce((n, s) => n + s.reduce((x, y) => x * y, 1), 0);
  assert.equal(parameterCount(a), total, `${what}: the parameter count is the stored tensors' sizes`);
}

export interface FamilyReference {
  readonly modelType: HfModelType;
  /** The parameter count of an architecture, written out from the family's layout. */
  readonly parameters: (a: HfArchitecture) => number;
  /** A tiny `agent-rl model new` spec of the family (absent: model new does not write it). */
  readonly newModel?: Omit<NewModelSpec, 'tokenizer' | 'seed' | 'dtype' | 'maxPositions'>;
  /** llama.cpp's architecture name, and whether q and k rows move to its rotary layout (absent: not written as GGUF). */
  readonly gguf?: { readonly architecture: string; readonly rotary: boolean };
}

/**
 * Rows of `w` [rows, cols] as llama.cpp's converter permutes them for `heads` heads
 * (reshape(heads, 2, dim/2, cols).swapaxes(1, 2)): output row (h, i, s) is input row (h, s, i).
 */
function llamaPermuted(w: Float32Array, rows: number, cols: number, heads: number): Float32Array {
  const dim = rows / heads;
  const out = new Float32Array(w.length);
  for (let r = 0; r < rows; r++) {
    const [h, j] = [Math.floor(r / dim), r % dim];
    const from = h * dim + (j % 2) * (dim / 2) + Math.floor(j / 2);
    out.set(w.subarray(from * cols, (from + 1) * cols), r * cols);
  }
  return out;
}

/** Registers the reference tests of one family. */
export function familyReferenceTests(ref: FamilyReference): void {
  const fixture = path.join(HF_FIXTURES, ref.modelType);

  it(`the ${ref.modelType} spec lists exactly the PyTorch fixture's tensors and shapes; its parameter count is theirs and the formula's`, () => {
    const a = readHfConfig(fixture);
    assert.equal(familyOf(a).modelType, ref.modelType);
    assertSpecMatches(a, fixture, 'fixture');
    assert.equal(parameterCount(a), ref.parameters(a));
    assert.equal(
      familyOf(a)
        .tensors(a)
        .reduce((n, t) => n + tensorSize(t), 0),
      ref.parameters(a),
    );
  });

  const spec = ref.newModel;
  if (spec) {
    it(`the ${ref.modelType} spec lists exactly what \`agent-rl model new\` writes for a tiny config, bfloat16 and float32`, () => {
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `family-${ref.modelType}-`));
      try {
        for (const dtype of ['float32', 'bfloat16'] as const) {
          const dir = path.join(tmp, dtype);
          const a = writeNewCheckpoint(dir, { ...spec, maxPositions: 64, tokenizer: 'char', seed: 3, dtype });
          assert.deepEqual(readHfConfig(dir), a);
          assertSpecMatches(a, dir, `model new (${dtype})`);
          assert.equal(parameterCount(a), ref.parameters(a));
        }
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    });
  }

  it(`${ref.modelType}: LoRA's targets are linear weights of the spec, and every tensor is held once in the decoders' order`, () => {
    const a = readHfConfig(fixture);
    const family = familyOf(a);
    const linears = family.tensors(a).filter((t) => t.role === 'linear');
    for (const target of family.loraTargets)
      assert.ok(
        linears.some((t) => t.name.endsWith(`.${target}.weight`)),
        `${target} names a linear layer`,
      );
    for (const t of linears)
      assert.ok(
        loraModules(a, ['all-linear']).some((m) => t.name.endsWith(`.${m}.weight`)),
        `${t.name} is a LoRA target`,
      );
    // rank × (in + out) per adapted linear weight, whatever its stored layout
    const all = linears.reduce((n, t) => n + 4 * (t.shape[0]! + t.shape[1]!), 0);
    assert.equal(loraParameterCount(a, { rank: 4, alpha: 8, dropout: 0, targets: ['all-linear'] }), all);
    const order = variableOrder(family.tensors(a));
    assert.deepEqual(new Set(order.map((t) => t.name)), new Set(family.tensors(a).map((t) => t.name)));
    order.forEach((t, i) => {
      if (t.role === 'bias') assert.equal(order[i - 1]!.name, t.name.replace(/\.bias$/, '.weight'), `${t.name} follows its weight`);
    });
  });

  const gguf = ref.gguf;
  if (spec && gguf) {
    it(`${ref.modelType}: written as GGUF, llama.cpp's names, shapes and values are the spec's${gguf.rotary ? ', q and k rows in its rotary layout' : ''}`, () => {
      const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `family-${ref.modelType}-gguf-`));
      try {
        const dir = path.join(tmp, 'model');
        const a = writeNewCheckpoint(dir, { ...spec, maxPositions: 64, tokenizer: 'char', seed: 4, dtype: 'float32' });
        const file = path.join(tmp, 'model.gguf');
        writeCheckpointGguf(dir, file);
        const { metadata, tensors } = readGgufHeader(file);
        assert.equal(metadata.get('general.architecture'), gguf.architecture);
        assert.equal(metadata.get(`${gguf.architecture}.block_count`), a.layers);
        const specs = familyOf(a)
          .tensors(a)
          .filter((t) => t.gguf !== undefined);
        assert.deepEqual(tensors.map((t) => t.name).sort(), specs.map((t) => t.gguf!).sort());
        const bytes = fs.readFileSync(file);
        const have = checkpointTensors(dir);
        let permuted = 0;
        for (const t of specs) {
          const g = tensors.find((x) => x.name === t.gguf)!;
          assert.deepEqual(g.shape, [...t.shape], `${t.gguf}: shape`);
          const got = new Float32Array(bytes.buffer.slice(bytes.byteOffset + g.at, bytes.byteOffset + g.at + tensorSize(t) * 4));
          const stored = readTensor(have.get(t.name)!);
          const heads = /attn_q\.weight$/.test(t.gguf!) ? a.heads : /attn_k\.weight$/.test(t.gguf!) ? a.kvHeads : 0;
          const want: Float32Array = gguf.rotary && heads ? llamaPermuted(stored, t.shape[0]!, t.shape[1]!, heads) : stored;
          if (want !== stored) permuted++;
          assert.deepEqual(got, want, `${t.gguf}: values`);
        }
        assert.equal(permuted, gguf.rotary ? 2 * a.layers : 0);
      } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
}
