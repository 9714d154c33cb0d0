// npm run evidence (scripts/evidence.mjs): a quoted figure is re-derived from its committed evidence and
// must equal the quoted text, which the file must still contain; the claims in docs/evidence/claims.json
// all hold (the same check `npm run evidence` makes, so a figure cannot drift from what was measured).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../../helpers/cli';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'evidence.mjs');

interface EvidenceModule {
  valueAt(doc: unknown, at: string): unknown;
  formatValue(v: unknown, format: string): string;
}

describe('npm run evidence', () => {
  it('reads values at paths (negative indices from the end) and formats them as the documents write them', async () => {
    const m = (await import(pathToFileURL(SCRIPT).href)) as EvidenceModule;
    const doc = { records: { grpo: { evaluations: [{ g: 0.425 }, { g: 0.76 }] } }, seconds: 85.6 };
    assert.equal(m.valueAt(doc, 'records.grpo.evaluations.-1.g'), 0.76);
    assert.equal(m.valueAt(doc, 'records.grpo.evaluations.0.g'), 0.425);
    assert.throws(() => m.valueAt(doc, 'records.rs.evaluations'), /no value at records\.rs\.evaluations \(missing at "rs"\)/);
    assert.equal(m.formatValue(0.76, 'pct1'), '76.0');
    assert.equal(m.formatValue(0.335, 'points1'), '+33.5');
    assert.equal(m.formatValue(-0.031, 'points1'), '−3.1');
    assert.equal(m.formatValue(85.6, 'int'), '86');
    assert.equal(m.formatValue(1.866, 'ratio2'), '1.87×');
    assert.equal(m.formatValue(0.0395625, 'signed3'), '+0.040');
    assert.equal(m.formatValue(-0.0311875, 'signed3'), '−0.031');
    assert.equal(m.formatValue(-0.0073838, 'interval3'), '−0.007');
    assert.equal(m.formatValue(0.0445088, 'interval3'), '0.045');
    assert.equal(m.formatValue(-0.0071, 'interval1'), '−0.7');
    assert.throws(() => m.formatValue('x', 'pct1'), /not a finite number/);
  });

  it('fails, naming the claim, when the evidence gives another figure or the file no longer quotes it; passes when both hold', () => {
    const dir = tempDir();
    const evidence = path.join(dir, 'e.json');
    fs.writeFileSync(evidence, JSON.stringify({ a: { b: [0.5, 0.761] } }));
    fs.writeFileSync(path.join(dir, 'README.md'), 'greedy 76.1 % after GRPO');
    const run = (text: string, file = path.join(dir, 'README.md')): { code: number | null; out: string } => {
      const claims = path.join(dir, 'claims.json');
      fs.writeFileSync(claims, JSON.stringify([{ file, text, evidence, template: '{0} %', values: [{ path: 'a.b.-1', format: 'pct1' }] }]));
      const r = spawnSync(process.execPath, [SCRIPT, '--claims', claims], { encoding: 'utf8' });
      return { code: r.status, out: r.stdout };
    };
    assert.equal(run('76.1 %').code, 0);
    const wrong = run('76.2 %');
    assert.equal(wrong.code, 1);
    assert.match(wrong.out, /claim 1 .*"76\.2 %".*gives "76\.1 %"/);
    fs.writeFileSync(path.join(dir, 'README.md'), 'greedy 76.1\n  % after GRPO');
    assert.equal(run('76.1 %').code, 0, 'a figure wrapped across lines is still quoted');
    fs.writeFileSync(path.join(dir, 'README.md'), 'greedy 80 % after GRPO');
    assert.match(run('76.1 %').out, /no longer quotes it/);
  });

  it("the repository's claims all re-derive from their evidence", () => {
    const r = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', cwd: ROOT });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^(\d+) of \1 quoted figures re-derived/);
  });
});
