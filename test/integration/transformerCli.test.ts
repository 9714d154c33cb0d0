// The language-model path end to end through the CLI on a tiny model: sft → checkpoint → train --init.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { RunRecord } from '../../src/cli/runRecord';
import { runCli, tempDir } from '../helpers/cli';

const tiny = { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 128, maxNewTokens: 24 };
const minibatch = { minibatchSize: 8 };

describe('agent-rl sft and train --init (transformer)', () => {
  it('warm-starts, checkpoints, continues with GRPO from the checkpoint, and stores token ids', () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'tiny.json'),
      JSON.stringify({ policyOptions: tiny, algorithm: minibatch, groupsPerIteration: 2, groupSize: 4, evalEpisodes: 8 }),
    );
    const sft = runCli(['sft', '--config', 'tiny.json', '--iterations', '2', '--seed', '3', '--output', 'sft.json'], dir);
    assert.equal(sft.code, 0, sft.stderr);
    const ck = /checkpoint: (\S+)/.exec(sft.stdout)?.[1];
    assert.ok(ck && fs.existsSync(path.join(ck, 'checkpoint.json')) && fs.existsSync(path.join(ck, 'tensors.bin')), sft.stdout);
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'sft.json'), 'utf8')) as RunRecord;
    assert.equal(rec.config.method, 'sft');
    assert.equal(rec.config.policy, 'transformer');
    assert.match(rec.runtime.compute, /^wasm engine \(\d+ threads, .*\) \(qwen3 [\d,]+ parameters, full fine-tuning\)$/);
    // why it runs there, recorded beside the compute string and shown with the run
    assert.equal(rec.runtime.computeReason, 'the wasm backend, and the engine builds qwen3');
    const show = runCli(['show', String(rec.runId)], dir);
    assert.equal(show.code, 0, show.stderr);
    assert.match(show.stdout, /^ {2}compute path: the wasm backend, and the engine builds qwen3$/m);
    // a fresh model is fully fine-tuned: the engine holds (and trains) every weight in float32
    assert.equal(rec.runtime.baseWeights, 'f32');
    assert.match(show.stdout, /^ {2}base weights: float32$/m);
    assert.ok(rec.iterations.every((m) => m.updated === 1 && m.responseTokens! > 0));
    assert.ok(rec.evaluations.every((e) => typeof e.greedySuccessRate === 'number'));
    // each held-out task's greedy result is stored beside its sampled ones, and they add up to the rate
    for (const e of rec.evaluations) {
      const greedy = (e.perTask ?? []).map((t) => t.greedySuccesses ?? -1);
      assert.ok(greedy.length > 0 && greedy.every((c) => c === 0 || c === 1), JSON.stringify(e.perTask));
      const solved = greedy.reduce<number>((a, b) => a + b, 0);
      if (e.perTask!.length === e.greedyEpisodes) assert.equal(solved / e.greedyEpisodes, e.greedySuccessRate);
      else assert.ok(solved <= Math.round(e.greedySuccessRate! * e.greedyEpisodes!));
    }

    const grpo = runCli(
      ['train', '--config', 'tiny.json', '--env', 'calculator', '--policy', 'transformer', '--iterations', '2', '--init', ck, '--output', 'grpo.json'],
      dir,
    );
    assert.equal(grpo.code, 0, grpo.stderr);
    const g = JSON.parse(fs.readFileSync(path.join(dir, 'grpo.json'), 'utf8')) as RunRecord;
    assert.ok(g.config.policy === 'transformer');
    assert.equal(g.config.policyOptions.init, ck);
    assert.equal(g.iterations.length, 2);
    for (const m of g.iterations) {
      assert.ok(typeof m.logprobMismatch === 'number' || m.updated === 0);
      if (m.updated === 1) assert.ok(m.logprobMismatch! < 1e-4, `mismatch ${m.logprobMismatch}`);
    }
    const shown = JSON.parse(runCli(['show', String(g.runId), '--json'], dir).stdout) as RunRecord;
    assert.deepEqual(shown.evaluations, g.evaluations);
    assert.deepEqual(shown.iterations, g.iterations);
  });

  it('trains with a Hugging Face tokenizer.json (--tokenizer) and carries it in the checkpoint', () => {
    const dir = tempDir();
    const fixture = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'tokenizer-bpe');
    fs.writeFileSync(
      path.join(dir, 'tiny.json'),
      JSON.stringify({ policyOptions: { ...tiny, threads: 1 }, algorithm: minibatch, groupsPerIteration: 4, groupSize: 1, evalEpisodes: 4 }),
    );
    const sft = runCli(['sft', '--config', 'tiny.json', '--iterations', '1', '--tokenizer', fixture, '--output', 'sft.json'], dir);
    assert.equal(sft.code, 0, sft.stderr);
    const ck = /checkpoint: (\S+)/.exec(sft.stdout)![1]!;
    const manifest = JSON.parse(fs.readFileSync(path.join(ck, 'checkpoint.json'), 'utf8')) as { tokenizer: { kind: string }; model: { vocabSize: number } };
    assert.equal(manifest.tokenizer.kind, 'hf');
    // the tokenizer's 327 ids, padded to a multiple of 8 as the fresh model's vocabulary
    assert.equal(manifest.model.vocabSize, 328);
    const bad = runCli(['sft', '--config', 'tiny.json', '--iterations', '1', '--tokenizer', path.join(dir, 'nowhere')], dir);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /policyOptions\.tokenizer: .*nowhere does not exist.*Fix:/);
  });

  it('a checkpoint that is not there is named with the fix, before anything runs', () => {
    const dir = tempDir();
    const r = runCli(['train', '--env', 'calculator', '--policy', 'transformer', '--init', 'missing-ck'], dir);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /policyOptions\.init = ".*missing-ck": cannot read a checkpoint there .*Fix: point it at a checkpoint directory/);
  });
});
