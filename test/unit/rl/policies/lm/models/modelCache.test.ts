// seed000Fit: what `agent-rl model list` and `model check` say of seed 000's preset on the engine, from
// shape-only configs (config.json, no weights — the plan reads none; scripts/q8Plans.mjs plans the same
// shapes): the plans at q8 and at bfloat16 are the memory plan's own at the preset's settings, the
// plan a run would take is bfloat16's where it fits and q8's where only that does, and the line advises
// --weight-dtype q8 exactly where only q8 fits.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { fittingEnginePlan } from '../../../../../../src/rl/policies/lm/models/engine/enginePlan';
import { readHfConfig, type HfArchitecture } from '../../../../../../src/rl/policies/lm/models/hfConfig';
import { seed000Fit } from '../../../../../../src/rl/policies/lm/models/modelCache';
import { describeSeed000 } from '../../../../../../src/shared/foundModel';
import { SCALE_CONFIGS } from '../../../../../helpers/scaleCheckpoint';

// the published configs' shapes (test/helpers/scaleCheckpoint.ts)
const SHAPES: Record<string, Record<string, unknown>> = {
  'Qwen2.5-0.5B': SCALE_CONFIGS['qwen2.5-0.5b'],
  'Qwen2.5-1.5B': SCALE_CONFIGS['qwen2.5-1.5b'],
  // a made-up depth of 1.5B's widths: in wasm32's 4 GiB only q8 fits it, so its line advises --weight-dtype q8
  'Qwen2.5-1.5B widths, 36 layers': { ...SCALE_CONFIGS['qwen2.5-1.5b'], num_hidden_layers: 36 },
  'Qwen2.5-3B': SCALE_CONFIGS['qwen2.5-3b'],
};
const LORA = { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] };
const THREADS = 2;

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'seed000-fit-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function arch(name: string, config: Record<string, unknown>): HfArchitecture {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  return readHfConfig(dir);
}

describe("seed000Fit: seed 000's preset at q8 and at bfloat16", () => {
  for (const [name, config] of Object.entries(SHAPES)) {
    it(`${name}: each dtype's verdict and bytes are the memory plan's at the preset's settings, and the line says them`, () => {
      const a = arch(name, config);
      const s = seed000Fit(a, 'wasm', THREADS);
      const plan = (dtype: 'q8' | 'bf16') => fittingEnginePlan(a, { lora: LORA, contextLength: 1024, sampleRows: 12, threads: THREADS, dtype });
      const [q8, bf16] = [plan('q8'), plan('bf16')];
      assert.deepEqual(s.plans, [
        { dtype: 'q8', fits: q8.fits, total: q8.total },
        { dtype: 'bf16', fits: bf16.fits, total: bf16.total },
      ]);
      assert.ok(q8.total < bf16.total, 'Q8_0 blocks take less than bfloat16');
      // the plan a run takes: bfloat16 where it fits, else q8
      assert.equal(s.dtype, bf16.fits ? 'bf16' : 'q8');
      assert.equal(s.fits, bf16.fits || q8.fits);
      const line = describeSeed000(s);
      assert.match(
        line,
        new RegExp(
          `^seed 000 preset: (fits|does not fit) at q8 \\([\\d.]+ GiB\\), (fits|not) at bfloat16 \\([\\d.]+ GiB\\) — of [\\d.]+ GiB on the wasm engine`,
        ),
      );
      assert.equal(line.includes(`${q8.fits ? 'fits' : 'does not fit'} at q8`), true, line);
      assert.equal(line.includes(`${bf16.fits ? 'fits' : 'not'} at bfloat16`), true, line);
      assert.equal(line.endsWith('; use weightDtype q8 (--weight-dtype q8)'), q8.fits && !bf16.fits, line);
    });
  }

  it("Qwen2.5-1.5B's shapes fit seed 000's preset at q8 (issue 50, item 5)", () => {
    const s = seed000Fit(arch('Qwen2.5-1.5B', SHAPES['Qwen2.5-1.5B']!), 'wasm', THREADS);
    assert.equal(s.plans?.[0]?.fits, true);
    assert.match(describeSeed000(s), /^seed 000 preset: fits at q8 \(/);
  });

  it('a model whose widths are not whole Q8_0 blocks has the bfloat16 plan only; off the engine, the tfjs plan', () => {
    const odd = arch('odd', {
      ...SHAPES['Qwen2.5-0.5B'],
      hidden_size: 200,
      num_attention_heads: 5,
      num_key_value_heads: 1,
      intermediate_size: 400,
      num_hidden_layers: 2,
    });
    const s = seed000Fit(odd, 'wasm', THREADS);
    assert.deepEqual(
      s.plans?.map((p) => p.dtype),
      ['bf16'],
    );
    assert.match(describeSeed000(s), /^seed 000 preset: fits at bfloat16 \([\d.]+ MiB\) — of [\d.]+ GiB on the wasm engine$/);
    const cpu = seed000Fit(odd, 'cpu', THREADS);
    assert.equal(cpu.plans, undefined);
    assert.equal(cpu.on, 'tfjs cpu');
  });
});
