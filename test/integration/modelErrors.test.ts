// Model folders a user may have, broken in the ways downloads and copies break: each error names the
// file, both numbers where there are two, and the fix, with no stack trace — from `agent-rl model check`
// and from `agent-rl train --model` (the worker sends the same message to VS Code's notification).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, runCli, tempDir } from '../helpers/cli';

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'hf', 'qwen2');

/** A copy of the qwen2 fixture, changed by `edit`. */
function broken(edit: (dir: string) => void): string {
  const dir = path.join(tempDir(), 'model');
  fs.cpSync(FIXTURE, dir, { recursive: true });
  edit(dir);
  return dir;
}

function refused(args: string[], pattern: RegExp): void {
  const r = runCli(args, tempDir());
  assert.equal(r.code, 2, `${args.join(' ')} → ${r.code}\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stderr, pattern);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
}

const train = (dir: string): string[] => [
  'train',
  '--env',
  'code',
  '--policy',
  'transformer',
  '--model',
  dir,
  '--iterations',
  '1',
  '--groups',
  '1',
  '--group-size',
  '2',
  '--eval-episodes',
  '1',
];

describe('model folder errors a user can act on', () => {
  it("no tokenizer.json: --ids still works; text needs it, and the message names the folder's file, not a run-config field", () => {
    const dir = broken((d) => fs.rmSync(path.join(d, 'tokenizer.json')));
    const r = runCli(['model', 'check', dir, '--ids', '1,2,3', '--top', '3', '--json'], tempDir());
    assert.equal(r.code, 0, r.stderr);
    const got = JSON.parse(r.stdout) as { ids: number[]; top: { id: number; token: string | null }[] };
    assert.deepEqual(got.ids, [1, 2, 3]);
    assert.equal(got.top.length, 3);
    assert.equal(got.top[0]!.token, null, 'no tokenizer, no token texts');
    refused(
      ['model', 'check', dir],
      /^agent-rl: .*model: no tokenizer\.json, so no text can be encoded\. Fix: add the tokenizer files saved with the checkpoint, or pass --ids 1,2,3/,
    );
    refused(
      train(dir),
      /\nagent-rl: .*model: the model folder has no tokenizer\.json\. Fix: copy the tokenizer files saved with the checkpoint \(tokenizer\.json and tokenizer_config\.json/,
    );
  });

  it('a tokenizer with more ids than the embedding has rows is refused at load, naming both sizes', () => {
    const dir = broken((d) => {
      const cfg = JSON.parse(fs.readFileSync(path.join(d, 'config.json'), 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(path.join(d, 'config.json'), JSON.stringify({ ...cfg, vocab_size: 300 }));
    });
    const want =
      /tokenizer\.json has ids up to 330 \(331 in all\), but config\.json's vocab_size is 300: the model has no embedding for ids 300 … 330\. Fix: use the tokenizer files saved with this checkpoint/;
    refused(['model', 'check', dir], want);
    refused(train(dir), want);
  });

  it('an unsupported architecture, a quantised tensor and a truncated file each name the file and the fix', () => {
    const mistral = broken((d) => {
      const cfg = JSON.parse(fs.readFileSync(path.join(d, 'config.json'), 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(path.join(d, 'config.json'), JSON.stringify({ ...cfg, model_type: 'mistral' }));
    });
    refused(
      ['model', 'check', mistral],
      /config\.json: model_type "mistral" is not supported; supported: qwen2, qwen3, llama, gpt2 .*Fix: choose a checkpoint of one of these families/,
    );
    refused(train(mistral), /model_type "mistral" is not supported/);
    const truncated = broken((d) => {
      const f = path.join(d, 'model.safetensors');
      fs.truncateSync(f, fs.statSync(f).size - 1000);
    });
    refused(
      ['model', 'check', truncated],
      /model\.safetensors: tensor .* needs \d+ bytes but its data_offsets \[\d+, \d+\] give \d+ and run past the end of the file \(truncated download\?\)|model\.safetensors: .*truncated/,
    );
    const quantised = broken((d) => {
      // the embedding's header entry says I8 (a quantised checkpoint): its bytes are not float weights
      const f = path.join(d, 'model.safetensors');
      const buf = fs.readFileSync(f);
      const n = Number(buf.readBigUInt64LE(0));
      const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8')) as Record<string, { dtype: string; shape: number[]; data_offsets: number[] }>;
      const e = header['model.embed_tokens.weight']!;
      e.dtype = 'I8';
      let text = JSON.stringify(header);
      text += ' '.repeat(Math.max(0, n - Buffer.byteLength(text)));
      assert.equal(Buffer.byteLength(text), n);
      fs.writeFileSync(f, Buffer.concat([buf.subarray(0, 8), Buffer.from(text), buf.subarray(8 + n)]));
    });
    refused(
      ['model', 'check', quantised],
      /model\.safetensors: tensor model\.embed_tokens\.weight has dtype "I8"; supported: F32, F16, BF16\. Fix: save the model in float32, float16 or bfloat16 \(quantised weights are not read\)/,
    );
  });
});
