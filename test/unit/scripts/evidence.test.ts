// npm run evidence (scripts/evidence.mjs): a quoted figure is re-derived from its committed evidence (a
// JSON file read at paths, or a text file such as a bench's output read by a pattern) and must equal the
// quoted text, which the file must still contain; the claims in docs/evidence/claims.json all hold (the
// same check `npm run evidence` makes, so a figure cannot drift from what was measured).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { tempDir } from '../../helpers/cli';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'evidence.mjs');

interface Source {
  path?: string;
  match?: string;
}
interface Value extends Source {
  minus?: Source;
  per?: Source;
  of?: 'min' | 'max';
  scale?: number;
  format: string;
}
interface EvidenceModule {
  valueAt(doc: unknown, at: string): unknown;
  valuesAt(doc: unknown, at: string): unknown[];
  matchesIn(text: string, pattern: string, every: boolean): number[];
  formatValue(v: unknown, format: string): string;
  render(c: { file: string; text: string; evidence: string; template: string; values: Value[] }): string;
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

  it('reads every value under a "*" and every match of a pattern, and combines and reduces them', async () => {
    const m = (await import(pathToFileURL(SCRIPT).href)) as EvidenceModule;
    const doc = {
      rows: [
        { a: 0.25, b: 0.5 },
        { a: 0.125, b: 0.5 },
        { a: 0.75, b: 0.25 },
      ],
    };
    assert.deepEqual(m.valuesAt(doc, 'rows.*.a'), [0.25, 0.125, 0.75]);
    assert.deepEqual(m.valuesAt({ x: { p: 1, q: 2 } }, 'x.*'), [1, 2]);
    assert.deepEqual(m.valuesAt(doc, 'rows.1.b'), [0.5]);
    const text = 'warm in 7.9 s\n| 2.64× | 1,024 |\n| 3.35× | 2,048 |\n';
    assert.deepEqual(m.matchesIn(text, '\\| ([\\d.]+)×', false), [2.64]);
    assert.deepEqual(m.matchesIn(text, '\\| ([\\d.]+)×', true), [2.64, 3.35]);
    assert.deepEqual(m.matchesIn(text, '× \\| ([\\d,]+)', true), [1024, 2048]);
    assert.throws(() => m.matchesIn(text, 'GFLOP/s ([\\d.]+)', false), /no match for the pattern \/GFLOP\/s \(\[\\d\.\]\+\)\//);
    assert.throws(() => m.matchesIn(text, 'warm in [\\d.]+', false), /captured nothing/);

    const dir = tempDir();
    const json = path.join(dir, 'e.json');
    fs.writeFileSync(json, JSON.stringify(doc));
    const claim = (template: string, values: Value[], evidence = json) => m.render({ file: 'README.md', text: '', evidence, template, values });
    assert.equal(
      claim('{0}–{1} %', [
        { path: 'rows.*.a', of: 'min', format: 'pct1' },
        { path: 'rows.*.a', of: 'max', format: 'pct1' },
      ]),
      '12.5–75.0 %',
    );
    assert.equal(claim('{0}', [{ path: 'rows.*.b', minus: { path: 'rows.*.a' }, of: 'min', format: 'points1' }]), '−50.0');
    assert.equal(claim('{0}', [{ path: 'rows.0.a', per: { path: 'rows.0.b' }, scale: 100, format: 'int' }]), '50');
    assert.throws(() => claim('{0}', [{ path: 'rows.*.a', format: 'pct1' }]), /rows\.\*\.a gives 3 values: take their min or max with "of"/);
    const txt = path.join(dir, 'bench.txt');
    fs.writeFileSync(txt, text);
    assert.equal(
      claim(
        '{0}–{1}×',
        [
          { match: '\\| ([\\d.]+)×', of: 'min', format: 'fixed1' },
          { match: '\\| ([\\d.]+)×', of: 'max', format: 'fixed1' },
        ],
        txt,
      ),
      '2.6–3.4×',
    );
  });

  it('re-derives a figure from a text evidence file by a pattern, and fails naming a pattern that does not match', () => {
    const dir = tempDir();
    const evidence = path.join(dir, 'bench.txt');
    fs.writeFileSync(evidence, '# npm run bench\n128 Python servers warm in 7.9 s\ntarget met\n');
    const readme = path.join(dir, 'README.md');
    fs.writeFileSync(readme, 'they start behind the printed URL (8 s here) and stay');
    const run = (match: string): { code: number | null; out: string } => {
      const claims = path.join(dir, 'claims.json');
      fs.writeFileSync(claims, JSON.stringify([{ file: readme, text: '(8 s here)', evidence, template: '({0} s here)', values: [{ match, format: 'int' }] }]));
      const r = spawnSync(process.execPath, [SCRIPT, '--claims', claims], { encoding: 'utf8' });
      return { code: r.status, out: r.stdout };
    };
    const ok = run('servers warm in ([\\d.]+) s');
    assert.equal(ok.code, 0, ok.out);
    assert.match(ok.out, /^1 of 1 quoted figures re-derived/);
    const missing = run('servers ready in ([\\d.]+) s');
    assert.equal(missing.code, 1);
    assert.match(missing.out, /claim 1 .*"\(8 s here\)".*no match for the pattern \/servers ready in \(\[\\d\.\]\+\) s\//);
  });

  it("the repository's claims all re-derive from their evidence", () => {
    const r = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', cwd: ROOT });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^(\d+) of \1 quoted figures re-derived/);
  });
});
