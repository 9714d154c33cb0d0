// Issue 43: one way to show a number (src/shared/format.ts). The webview pages, the view models they
// render, the host's views and the CLI format no number of their own; and the pages put text on
// screen through one el() (webview-ui/dom.ts), which marks invisible characters.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');

/** Every .ts file under `dir` (relative to the repository root). */
function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const rel = path.posix.join(d, e.name);
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts')) out.push(rel);
    }
  };
  walk(dir);
  return out;
}

const NUMBER_FORMATTING = /\.(toFixed|toExponential|toPrecision|toLocaleString)\(|\bIntl\.NumberFormat\b/;

/** Lines of `files` that format a number themselves, as "file:line: text". */
function offenders(files: readonly string[]): string[] {
  return files.flatMap((f) =>
    fs
      .readFileSync(path.join(ROOT, f), 'utf8')
      .split('\n')
      .flatMap((line, i) => (NUMBER_FORMATTING.test(line) && !/^\s*(\/\/|\*)/.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('no number formatting outside src/shared/format.ts', () => {
  it('the webview pages', () => {
    const files = sources('webview-ui');
    assert.ok(files.length >= 6, files.join(' '));
    assert.deepEqual(offenders(files), []);
  });

  it('the view models and the rest of src/shared', () => {
    const files = sources('src/shared').filter((f) => f !== 'src/shared/format.ts');
    assert.ok(files.includes('src/shared/inspectorModel.ts') && files.includes('src/shared/drillModel.ts') && files.includes('src/shared/comparisonModel.ts'));
    assert.deepEqual(offenders(files), []);
  });

  it("the CLI and the host's views (tree, documents, notifications)", () => {
    assert.deepEqual(offenders([...sources('src/cli'), ...sources('src/host')]), []);
  });

  it('the pages have one el(), and it marks invisible characters', () => {
    const defining = sources('webview-ui').filter((f) => /\bfunction el\b|\bconst el\s*=/.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    assert.deepEqual(defining, ['webview-ui/dom.ts']);
    assert.match(fs.readFileSync(path.join(ROOT, 'webview-ui/dom.ts'), 'utf8'), /textContent = showInvisibles\(/);
  });
});
