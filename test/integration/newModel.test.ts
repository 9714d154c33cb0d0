// `agent-rl model new` writes a Hugging Face checkpoint folder that the workbench and an independent
// PyTorch implementation (test/fixtures/hfReference.py) both load; trained by full fine-tuning on the
// engine, the run's checkpoint is such a folder too, and the reference reads the trained weights with
// the engine's logits within 1e-4.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { readHfConfig } from '../../src/rl/policies/lm/models/hfConfig';
import { characterVocabulary, HfTokenizer } from '../../src/rl/policies/lm/tokenizer';
import { ROOT, runCli, sha256, tempDir } from '../helpers/cli';

const PYTHON = '/usr/bin/python3';
const torchMissing = spawnSync(PYTHON, ['-c', 'import torch'], { encoding: 'utf8' }).status !== 0;
const REFERENCE = path.join(ROOT, 'test', 'fixtures', 'hfReference.py');
const IDS = [60, 69, 68, 68, 8, 19, 12, 20, 9, 2, 35, 4];

/** The final position's logits of IDS from the engine (`model check --ids --json`, every id ranked). */
function engineLogits(dir: string, cwd: string, vocab: number): number[] {
  const r = runCli(['model', 'check', dir, '--ids', IDS.join(','), '--top', String(vocab), '--json', '--lora-rank', '0', '--context', '64'], cwd);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const report = JSON.parse(r.stdout) as { top: { id: number; logit: number }[] };
  const out = new Array<number>(vocab).fill(NaN);
  for (const t of report.top) out[t.id] = t.logit;
  return out;
}

function torchLogits(dir: string): number[] {
  const r = spawnSync(PYTHON, [REFERENCE, dir, '--ids', IDS.join(',')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as { logits: number[] }).logits;
}

const maxDiff = (a: readonly number[], b: readonly number[]): number => Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));

describe('agent-rl model new', () => {
  it('writes a seeded checkpoint folder of each architecture that the loaders read back, with a character tokenizer.json', () => {
    const cwd = tempDir();
    try {
      const specs: [string, string[]][] = [
        ['qwen3', ['--arch', 'qwen3', '--kv-heads', '2']],
        ['qwen2', ['--arch', 'qwen2', '--hidden', '32', '--heads', '2']],
        ['llama', ['--arch', 'llama', '--untied-head', '--layers', '1']],
      ];
      for (const [type, flags] of specs) {
        const out = path.join(cwd, type);
        const r = runCli(['model', 'new', '--out', out, '--context', '128', ...flags], cwd);
        assert.equal(r.code, 0, r.stderr);
        const a = readHfConfig(out);
        assert.equal(a.modelType, type);
        assert.equal(a.maxPositions, 128);
        assert.equal(a.vocabSize % 8, 0);
        if (type === 'qwen3') assert.equal(a.kvHeads, 2);
        if (type === 'llama') assert.equal(a.tiedEmbeddings, false);
        if (type === 'qwen2') assert.equal(a.qkvBias, true);
      }
      // the same flags and seed write the same bytes; another seed other weights
      const again = path.join(cwd, 'again');
      const other = path.join(cwd, 'other');
      assert.equal(runCli(['model', 'new', '--out', again, '--context', '128', '--arch', 'qwen3', '--kv-heads', '2'], cwd).code, 0);
      assert.equal(runCli(['model', 'new', '--out', other, '--context', '128', '--arch', 'qwen3', '--kv-heads', '2', '--seed', '1'], cwd).code, 0);
      assert.equal(sha256(path.join(again, 'model.safetensors')), sha256(path.join(cwd, 'qwen3', 'model.safetensors')));
      assert.notEqual(sha256(path.join(other, 'model.safetensors')), sha256(path.join(cwd, 'qwen3', 'model.safetensors')));
      // every character one token, in the small models' order; specials decode as themselves
      const tok = HfTokenizer.fromDirectory(path.join(cwd, 'qwen3'));
      const text = '<call>add(12,-3)</call>\n\t~ {x}';
      const ids = tok.encode(text);
      assert.deepEqual(
        ids,
        [...text].map((c) => characterVocabulary().indexOf(c)),
      );
      assert.equal(tok.decode(ids), text);
      assert.equal(tok.decode(tok.encode('é')), '<unk>');
      assert.equal(tok.vocabSize % 8, 0);
      // a folder that is not empty is refused, naming the flag
      const again2 = runCli(['model', 'new', '--out', again], cwd);
      assert.equal(again2.code, 2);
      assert.match(again2.stderr, /--out .*not empty/);
      const bad = runCli(['model', 'new', '--out', path.join(cwd, 'bad'), '--hidden', '30', '--heads', '4'], cwd);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--heads: 4 does not divide the width 30/);
      assert.doesNotMatch(bad.stderr, /\n\s+at /, 'no stack trace');
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it(
    'new → full fine-tuning on the engine → the checkpoint is a Hugging Face folder the PyTorch reference loads, its logits within 1e-4 of the engine',
    { skip: torchMissing ? `${PYTHON} has no torch (apt-get install python3-torch; .ci/run installs it)` : false },
    () => {
      const cwd = tempDir();
      try {
        const fresh = path.join(cwd, 'fresh');
        assert.equal(runCli(['model', 'new', '--out', fresh, '--context', '256', '--seed', '5'], cwd).code, 0);
        const V = readHfConfig(fresh).vocabSize;
        const before = torchLogits(fresh);
        assert.ok(maxDiff(engineLogits(fresh, cwd, V), before) < 1e-4, 'fresh weights');
        const config = path.join(cwd, 'sft.json');
        fs.writeFileSync(
          config,
          JSON.stringify({
            env: 'calculator',
            policy: 'transformer',
            method: 'sft',
            seed: 1,
            iterations: 3,
            evalEpisodes: 4,
            algorithm: { learningRate: 0.003 },
            policyOptions: { model: fresh, loraRank: 0, contextLength: 256 },
          }),
        );
        const r = runCli(['sft', '--config', config, '--db', path.join(cwd, 'runs.sqlite')], cwd);
        assert.equal(r.code, 0, r.stderr + r.stdout);
        const checkpoint = /checkpoint: (\S+)/.exec(r.stdout)?.[1];
        assert.ok(checkpoint, r.stdout);
        for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'checkpoint.json'])
          assert.ok(fs.existsSync(path.join(checkpoint, f)), f);
        const after = torchLogits(checkpoint);
        const err = maxDiff(engineLogits(checkpoint, cwd, V), after);
        assert.ok(err < 1e-4, `trained weights: max |engine − torch| = ${err}`);
        assert.ok(maxDiff(after, before) > 1e-3, 'training moved the weights the folder holds');
      } finally {
        fs.rmSync(cwd, { recursive: true, force: true });
      }
    },
  );
});
