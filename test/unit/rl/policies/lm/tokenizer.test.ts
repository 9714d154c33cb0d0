import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { characterHfTokenizer, characterVocabulary, HfTokenizer, tokenizerFromJSON } from '../../../../../src/rl/policies/lm/tokenizer';

const fixture = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', 'test', 'fixtures', 'tokenizer-bpe');
const texts = [
  'Q:(3+4)*5\n<call>add(3,4)</call><obs>7</obs><answer>\\boxed{35}</answer>',
  'def solve(xs):\n    return sorted(xs)\n\tprint(solve([3, 1, 2]))  # trailing  spaces  ',
  'Traceback (most recent call last):\n  File "main.py", line 2, in <module>\nZeroDivisionError',
  'héllo wörld — ✓ 日本 \u{1F600} \uFFFD',
  ' leading space, <|endoftext|> as text',
  '',
];

describe('Hugging Face tokenizer from a tokenizer.json directory', () => {
  const tok = HfTokenizer.fromDirectory(fixture);

  it('loads with @huggingface/transformers (the tokenizers library is the fallback)', () => {
    assert.equal(tok.library, '@huggingface/transformers');
    const json = JSON.parse(fs.readFileSync(path.join(fixture, 'tokenizer.json'), 'utf8')) as { model: { vocab: Record<string, number> } };
    assert.equal(tok.vocabSize, Object.keys(json.model.vocab).length + 1); // + <|endoftext|>
  });

  it('decodes what it encodes, byte for byte, and merges (fewer ids than characters)', () => {
    for (const t of texts) {
      const ids = tok.encode(t);
      assert.equal(tok.decode(ids), t, JSON.stringify(t));
      assert.ok(ids.every((id) => Number.isInteger(id) && id >= 0 && id < tok.vocabSize));
    }
    const calc = tok.encode(texts[0]!);
    assert.ok(calc.length < texts[0]!.length * 0.8, `${calc.length} ids for ${texts[0]!.length} characters`);
  });

  it("matches an added token's text as its one id, as Hugging Face does", () => {
    const ids = tok.encode('<|endoftext|>');
    assert.deepEqual(ids, [tok.vocabSize - 1]);
  });

  it('round-trips through a checkpoint record without the directory', () => {
    const again = tokenizerFromJSON(JSON.parse(JSON.stringify(tok.toJSON())) as { kind: string });
    for (const t of texts) assert.deepEqual(again.encode(t), tok.encode(t));
    assert.equal(again.vocabSize, tok.vocabSize);
  });

  it('names the option and the fix for a missing directory, a missing file and broken JSON', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arl-tok-'));
    try {
      assert.throws(() => HfTokenizer.fromDirectory(path.join(dir, 'nope')), /policyOptions\.tokenizer: .*does not exist.*Fix:/);
      assert.throws(() => HfTokenizer.fromDirectory(dir), /policyOptions\.tokenizer: no tokenizer\.json in .*Fix:/);
      fs.writeFileSync(path.join(dir, 'tokenizer.json'), '{"model": ');
      assert.throws(() => HfTokenizer.fromDirectory(dir), /tokenizer\.json is not valid: .*Fix:/);
      fs.writeFileSync(path.join(dir, 'tokenizer.json'), '{"model": {"type": "BPE"}}');
      assert.throws(() => HfTokenizer.fromDirectory(dir), /model\.vocab is missing/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the character vocabulary as a tokenizer.json', () => {
  it('is one id per character (newline, tab, printable ASCII in order), one id for any other character, and special ids that are never text', () => {
    const t = characterHfTokenizer();
    assert.equal(t.decode(t.encode('Q:1+2\n\t~')), 'Q:1+2\n\t~');
    assert.deepEqual(
      t.encode('Q:1+2\n\t~'),
      [...'Q:1+2\n\t~'].map((c) => characterVocabulary().indexOf(c)),
    );
    const unk = characterVocabulary().length;
    assert.deepEqual(t.encode('é'), [unk]);
    assert.deepEqual(t.encode('éü'), [unk, unk]);
    assert.equal(t.vocabSize % 8, 0);
    assert.deepEqual(
      t.specialIds(),
      Array.from({ length: t.vocabSize - unk }, (_, i) => unk + i),
    );
    // the small GPT's stored tokenizer ({ kind: "char" }) reads as this one: its ids decode the same
    assert.equal(tokenizerFromJSON({ kind: 'char', chars: characterVocabulary() }).decode(t.encode('<call>add(1,2)</call>')), '<call>add(1,2)</call>');
  });
});
