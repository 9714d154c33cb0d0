// Checkpoints of the transformer policy: weights, AdamW's moments and step, the tokenizer and the model
// config round-trip exactly; under full fine-tuning the folder is a Hugging Face checkpoint too; a
// missing, foreign, mismatched or small-GPT checkpoint is refused with what is wrong.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { initBackend } from '../../../../../src/rl/policies/lm/models/tfjsBackend';
import { loadPolicyState, readCheckpoint, restoreCheckpoint, saveCheckpoint } from '../../../../../src/rl/policies/lm/checkpoint';
import { readHfConfig } from '../../../../../src/rl/policies/lm/models/hfConfig';
import { calculatorEnv, disposeOpened } from '../../../../helpers/environments';
import { freshModel, freshPolicy } from '../../../../helpers/freshPolicy';

before(async () => {
  await initBackend('wasm');
});
after(disposeOpened);

describe('checkpoints', () => {
  it('round-trip weights, optimizer moments and step, tokenizer and config exactly; a full fine-tuning checkpoint is a Hugging Face folder', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-ck-'));
    const model = freshModel({ tiedHead: false });
    const a = await freshPolicy(calculatorEnv(), model);
    const b = await freshPolicy(calculatorEnv(), model, { seed: 9 });
    try {
      const grads = a.model.weights.map((w) => tf.randomNormal(w.shape, 0, 1, 'float32', 3));
      await a.applyGradients(grads, 1e-2);
      tf.dispose(grads);
      const file = await a.save(dir, 'test');
      const ck = readCheckpoint(dir);
      assert.equal(ck.manifest.policyVersion, 0);
      assert.deepEqual(ck.manifest.model, a.model.config);
      assert.equal(ck.tokenizer.decode(ck.tokenizer.encode('<call>add(1,2)</call>')), '<call>add(1,2)</call>');
      restoreCheckpoint(readCheckpoint(file), b.model, b.optimizer);
      a.model.weights.forEach((w, i) => assert.deepEqual(Array.from(w.dataSync()), Array.from(b.model.weights[i]!.dataSync())));
      a.optimizer.m.forEach((m, i) => assert.deepEqual(Array.from(m.dataSync()), Array.from(b.optimizer.m[i]!.dataSync())));
      assert.equal(b.optimizer.step, 1);
      // the same folder read as a Hugging Face checkpoint: the trained weights, untied head included
      assert.equal(readHfConfig(dir).tiedEmbeddings, false);
      const asModel = await freshPolicy(calculatorEnv(), dir);
      try {
        const ids = [[3, 4, 5, 6]];
        const x = await a.model.lastLogits(ids);
        const y = await asModel.model.lastLogits(ids);
        assert.ok(
          x.every((v, i) => Math.abs(v - y[i]!) < 1e-5),
          'the folder holds the trained weights',
        );
      } finally {
        await asModel.dispose();
      }
    } finally {
      await a.dispose();
      await b.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a full fine-tuning resume point loads where the same fresh model was written to another folder (another process's cache), not over another tokenizer", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-ck-'));
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-models-'));
    try {
      const here = freshModel({ seed: 3 });
      const a = await freshPolicy(calculatorEnv(), here);
      const grads = a.model.weights.map((w) => tf.randomNormal(w.shape, 0, 1, 'float32', 5));
      await a.applyGradients(grads, 1e-2);
      tf.dispose(grads);
      await a.saveState(dir);
      // the same spec written again under another root: the same bytes, another path
      const copy = path.join(elsewhere, path.basename(here));
      fs.cpSync(here, copy, { recursive: true });
      const b = await freshPolicy(calculatorEnv(), copy);
      await b.loadState(dir);
      a.model.weights.forEach((w, i) => assert.deepEqual(Array.from(w.dataSync()), Array.from(b.model.weights[i]!.dataSync())));
      // the same shapes over another tokenizer's vocabulary are not the same model
      const other = path.join(elsewhere, 'other-tokenizer');
      fs.cpSync(here, other, { recursive: true });
      const tok = JSON.parse(fs.readFileSync(path.join(other, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
      const [x, y] = [tok.model.vocab.a!, tok.model.vocab.b!];
      tok.model.vocab.a = y;
      tok.model.vocab.b = x;
      fs.writeFileSync(path.join(other, 'tokenizer.json'), JSON.stringify(tok));
      const c = await freshPolicy(calculatorEnv(), other);
      await assert.rejects(c.loadState(dir), /holds a model of another shape or folder/);
      await Promise.all([a.dispose(), b.dispose(), c.dispose()]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('refuses a missing file, a foreign file, a shape mismatch and the small GPT of earlier versions with clear errors', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-ck-'));
    try {
      assert.throws(() => readCheckpoint(path.join(dir, 'nope')), /policyOptions\.init = .*cannot read a checkpoint there.*Fix:/s);
      fs.writeFileSync(path.join(dir, 'checkpoint.json'), '{"format":"other"}');
      assert.throws(() => readCheckpoint(dir), /is not an agent-rl checkpoint/);
      const a = await freshPolicy(calculatorEnv(), freshModel());
      await saveCheckpoint(dir, a.model, a.tokenizer, a.optimizer, 0);
      const wider = await freshPolicy(calculatorEnv(), freshModel({ hidden: 32 }));
      assert.throws(() => restoreCheckpoint(readCheckpoint(dir), wider.model), /has shape 104x16, the model needs 104x32/);
      await a.dispose();
      await wider.dispose();
      // a resume point of the small GPT: its manifest's model has no kind
      const old = path.join(dir, 'old');
      fs.mkdirSync(old);
      const gptConfig = { vocabSize: 98, contextLength: 192, dModel: 64, nLayers: 2, nHeads: 4, mlpRatio: 4, tiedHead: true };
      fs.writeFileSync(
        path.join(old, 'checkpoint.json'),
        JSON.stringify({
          format: 'agent-rl-checkpoint',
          version: 1,
          model: gptConfig,
          tokenizer: { kind: 'char', chars: ['a'] },
          policyVersion: 3,
          optimizer: { step: 0, options: {} },
          tensors: [],
          savedAt: '',
          note: '',
        }),
      );
      fs.writeFileSync(path.join(old, 'tensors.bin'), '');
      const p = await freshPolicy(calculatorEnv(), freshModel());
      assert.throws(
        () => loadPolicyState(old, p.model, p.reference, p.optimizer, p.tokenizer),
        /small character-level GPT of earlier versions; that network is gone.*stay readable/,
      );
      await assert.rejects(freshPolicy(calculatorEnv(), freshModel(), { policyOptions: { init: old } }), /policyOptions\.init: .* small character-level GPT/);
      await p.dispose();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
