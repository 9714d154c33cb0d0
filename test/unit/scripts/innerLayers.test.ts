// The language-model folder's inner order (scripts/layers.mjs INNER_LAYERS, checked by npm run lint):
// models/ knows nothing of the policy, the policy nothing of the engines that sample beside it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../../helpers/cli';

interface LayersModule {
  readonly INNER_LAYERS: Readonly<Record<string, readonly string[]>>;
  readonly innerViolation: (from: string, to: string) => string | undefined;
}

const load = async (): Promise<LayersModule> => (await import(pathToFileURL(path.join(ROOT, 'scripts', 'layers.mjs')).href)) as LayersModule;

describe('the language-model folder’s inner order (INNER_LAYERS)', () => {
  it('lets each sub-layer import its own and the lower ones, and refuses an import upwards', async () => {
    const { innerViolation } = await load();
    const lm = 'rl/policies/lm';
    // downwards and sideways within a sub-layer: allowed
    assert.equal(innerViolation(`${lm}/sampler.ts`, `${lm}/models/policyModel.ts`), undefined);
    assert.equal(innerViolation(`${lm}/rolloutEngines/llamaCpp.ts`, `${lm}/sampler.ts`), undefined);
    assert.equal(innerViolation(`${lm}/rolloutEngines/llamaCpp.ts`, `${lm}/models/gguf.ts`), undefined);
    assert.equal(innerViolation(`${lm}/models/engine/decoder.ts`, `${lm}/models/families/familyOf.ts`), undefined);
    // upwards: refused, naming the order
    assert.match(
      innerViolation(`${lm}/models/engine/engineCandidates.ts`, `${lm}/scoringPolicy.ts`) ?? '',
      /models → \., against its inner order models < \. < rolloutEngines/,
    );
    assert.match(innerViolation(`${lm}/transformerPolicy.ts`, `${lm}/rolloutEngines/llamaCpp.ts`) ?? '', /\. → rolloutEngines/);
    // outside the folder the inner order says nothing (the layers between folders do)
    assert.equal(innerViolation('rl/policies/createPolicy.ts', `${lm}/rolloutEngines/llamaCpp.ts`), undefined);
    assert.equal(innerViolation(`${lm}/sampler.ts`, 'rl/policies/policy.ts'), undefined);
  });

  it('names sub-layers that exist in src/, and every file of the folder falls in one', async () => {
    const { INNER_LAYERS } = await load();
    for (const [folder, order] of Object.entries(INNER_LAYERS)) {
      const dir = path.join(ROOT, 'src', folder);
      for (const sub of order) assert.ok(fs.statSync(path.join(dir, sub)).isDirectory(), `${folder}/${sub}`);
      // the folder's own sub-folders are each a named sub-layer (an unnamed one would silently count as '.')
      const subfolders = fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
      for (const s of subfolders) assert.ok(order.includes(s), `${folder}/${s} is in no sub-layer of INNER_LAYERS`);
    }
  });
});
