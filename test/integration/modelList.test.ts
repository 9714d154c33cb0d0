// `agent-rl model list`: checkpoints a user already has, found where huggingface-cli and transformers
// put them ($HF_HUB_CACHE, $HF_HOME/hub; snapshots whose files are symlinks into blobs/) and in named
// folders, each described from its files without reading a weight, and a folder that cannot load listed
// with the loader's reason.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, it } from 'node:test';
import type { FoundModel } from '../../src/shared/foundModel';
import { ROOT, runCli, tempDir } from '../helpers/cli';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'hf');

type Layout = { writeCacheLayout: (root: string, repoId: string, source: string, revision?: string) => string };
const layout = (): Promise<Layout> => import(pathToFileURL(path.join(ROOT, 'test', 'helpers', 'hfCacheLayout.mjs')).href) as Promise<Layout>;

/** Parameters of a safetensors file, counted from its header alone. */
function storedParameters(file: string): number {
  const buf = fs.readFileSync(file);
  const header = JSON.parse(buf.subarray(8, 8 + Number(buf.readBigUInt64LE(0))).toString('utf8')) as Record<string, { shape?: number[] }>;
  return Object.entries(header)
    .filter(([k]) => k !== '__metadata__')
    .reduce((n, [, t]) => n + (t.shape ?? []).reduce((a, b) => a * b, 1), 0);
}

/** The CLI with only the cache locations given (HOME a fresh folder, so a real ~/.cache is never read). */
function list(args: string[], env: Record<string, string>): { code: number | null; stdout: string; stderr: string } {
  const home = tempDir();
  return runCli(['model', 'list', ...args], home, { HOME: home, HF_HUB_CACHE: '', HUGGINGFACE_HUB_CACHE: '', HF_HOME: '', XDG_CACHE_HOME: '', ...env });
}

describe('agent-rl model list', () => {
  it('finds a snapshot under $HF_HUB_CACHE and one under $HF_HOME/hub, following the blobs symlinks, and describes each', async () => {
    const { writeCacheLayout } = await layout();
    const hub = tempDir();
    const home = tempDir();
    const qwen3 = writeCacheLayout(hub, 'Qwen/Qwen3-Fixture', path.join(FIXTURES, 'qwen3'), '0123456789abcdef0123456789abcdef01234567');
    const llama = writeCacheLayout(path.join(home, 'hub'), 'meta-llama/Llama-Fixture', path.join(FIXTURES, 'llama'));
    assert.ok(fs.lstatSync(path.join(qwen3, 'model.safetensors')).isSymbolicLink(), 'the snapshot holds symlinks, as the cache does');

    const r = list(['--json'], { HF_HUB_CACHE: hub, HF_HOME: home });
    assert.equal(r.code, 0, r.stderr);
    const found = JSON.parse(r.stdout) as FoundModel[];
    assert.deepEqual(
      found.map((m) => m.name),
      ['Qwen/Qwen3-Fixture', 'meta-llama/Llama-Fixture'],
    );
    const [q, l] = found as [FoundModel, FoundModel];
    assert.equal(q.dir, qwen3);
    assert.equal(q.foundIn, fs.realpathSync(hub));
    assert.equal(q.revision, '0123456789abcdef0123456789abcdef01234567');
    assert.equal(q.main, true);
    assert.equal(q.modelType, 'qwen3');
    assert.equal(q.parameters, storedParameters(path.join(FIXTURES, 'qwen3', 'model.safetensors')));
    assert.equal(q.dtypes, 'BF16');
    assert.equal(q.seed000?.fits, true, "a tiny model fits seed 000's plan");
    assert.equal(q.seed000?.on, 'the wasm engine');
    // the preset at q8 and at bfloat16 (on a model this small the q8 plan is not the smaller: the
    // weights are a sliver of it, and the quantized inputs' buffers come on top)
    assert.deepEqual(
      q.seed000?.plans?.map((p) => [p.dtype, p.fits]),
      [
        ['q8', true],
        ['bf16', true],
      ],
    );

    assert.equal(l.modelType, 'llama');
    assert.equal(l.dir, llama);
    assert.equal(l.foundIn, path.join(fs.realpathSync(home), 'hub'));

    // only one of them when only one location is set
    const only = JSON.parse(list(['--json'], { HF_HOME: home }).stdout) as FoundModel[];
    assert.deepEqual(
      only.map((m) => m.name),
      ['meta-llama/Llama-Fixture'],
    );

    // the text listing: a line per fact, the fit, the folder
    const text = list([], { HF_HUB_CACHE: hub });
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /^Qwen\/Qwen3-Fixture @ 0123456789ab \(main\)\n {2}qwen3, [\d,]+ parameters, BF16\n {2}seed 000 preset: fits at q8 \([\d.]+ MiB\), fits at bfloat16 \([\d.]+ MiB\) — of [\d.]+ GiB on the wasm engine\n {2}\/.*snapshots\/0123456789abcdef0123456789abcdef01234567\n$/,
    );
  });

  it('named folders: a checkpoint itself or a folder of them; one that cannot load says why; nothing found says where it looked', () => {
    const shelf = tempDir();
    fs.cpSync(path.join(FIXTURES, 'qwen2'), path.join(shelf, 'qwen2'), { recursive: true });
    fs.mkdirSync(path.join(shelf, 'mistral'));
    fs.writeFileSync(path.join(shelf, 'mistral', 'config.json'), JSON.stringify({ model_type: 'mistral' }));
    fs.mkdirSync(path.join(shelf, 'notes'));
    const r = list(['--json', '--folder', shelf, '--folder', path.join(FIXTURES, 'gpt2')], {});
    assert.equal(r.code, 0, r.stderr);
    const found = JSON.parse(r.stdout) as FoundModel[];
    assert.deepEqual(
      found.map((m) => m.name),
      ['mistral', 'qwen2', 'gpt2'],
    );
    assert.match(found[0]!.problem ?? '', /config\.json: model_type "mistral" is not supported; supported: qwen2, qwen3, llama, gpt2/);
    assert.equal(found[1]!.modelType, 'qwen2');
    assert.equal(found[2]!.modelType, 'gpt2');
    const text = list(['--folder', shelf], {});
    assert.match(text.stdout, /^mistral\n {2}cannot load: .*model_type "mistral" is not supported/m);

    const none = list([], {});
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout, /^no checkpoints found in the Hugging Face cache \(no \$HF_HUB_CACHE, \$HF_HOME\/hub or ~\/\.cache\/huggingface\/hub\)\n$/);
  });
});
