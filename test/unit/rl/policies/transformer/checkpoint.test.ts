import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { AdamW } from '../../../../../src/rl/algo/adamw';
import { initBackend } from '../../../../../src/rl/policies/transformer/backend';
import { readCheckpoint, restoreCheckpoint, saveCheckpoint } from '../../../../../src/rl/policies/transformer/checkpoint';
import { Gpt, type GptConfig } from '../../../../../src/rl/policies/transformer/model';
import { CharTokenizer } from '../../../../../src/rl/policies/transformer/tokenizer';

before(async () => {
  await initBackend('auto');
});

const cfg: GptConfig = { vocabSize: 98, contextLength: 16, dModel: 16, nLayers: 1, nHeads: 2, mlpRatio: 2, tiedHead: false };
const opt = { beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, maxGradNorm: 1 };

describe('checkpoints', () => {
  it('round-trip weights, optimizer moments and step, tokenizer and config exactly', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-ck-'));
    const a = new Gpt(cfg, 1);
    const optA = new AdamW(a.weights, opt);
    const { grads } = tf.variableGrads(() => tf.mean(a.forward(tf.tensor2d([[1, 2, 3]], [1, 3], 'int32'))), a.weights);
    await optA.apply(
      a.weights.map((w) => grads[w.name]!),
      1e-3,
    );
    tf.dispose(Object.values(grads));
    const file = await saveCheckpoint(dir, a, new CharTokenizer(), optA, 5, 'test');
    const ck = readCheckpoint(dir);
    assert.equal(ck.manifest.policyVersion, 5);
    assert.deepEqual(ck.manifest.model, cfg);
    assert.equal(ck.tokenizer.decode(ck.tokenizer.encode('<call>add(1,2)</call>')), '<call>add(1,2)</call>');
    const b = new Gpt(cfg, 2);
    const optB = new AdamW(b.weights, opt);
    restoreCheckpoint(readCheckpoint(file), b, optB);
    a.weights.forEach((w, i) => assert.deepEqual(Array.from(w.dataSync()), Array.from(b.weights[i]!.dataSync())));
    optA.m.forEach((m, i) => assert.deepEqual(Array.from(m.dataSync()), Array.from(optB.m[i]!.dataSync())));
    assert.equal(optB.step, 1);
    a.dispose();
    b.dispose();
    optA.dispose();
    optB.dispose();
  });

  it('refuses a missing file, a foreign file and a shape mismatch with clear errors', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-ck-'));
    assert.throws(() => readCheckpoint(path.join(dir, 'nope')), /policyOptions\.init = .*cannot read a checkpoint there.*Fix:/s);
    fs.writeFileSync(path.join(dir, 'checkpoint.json'), '{"format":"other"}');
    assert.throws(() => readCheckpoint(dir), /is not an agent-rl checkpoint/);
    const a = new Gpt(cfg, 1);
    const o = new AdamW(a.weights, opt);
    await saveCheckpoint(dir, a, new CharTokenizer(), o, 0);
    const wider = new Gpt({ ...cfg, dModel: 32 }, 1);
    assert.throws(() => restoreCheckpoint(readCheckpoint(dir), wider), /has shape 98x16, the model needs 98x32/);
    a.dispose();
    o.dispose();
    wider.dispose();
  });
});
