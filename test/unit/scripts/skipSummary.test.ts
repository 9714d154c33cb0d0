// npm test's second reporter (scripts/skipSummary.mjs): after a run, one line of what was skipped and why.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ROOT, tempDir } from '../../helpers/cli';

const REPORTER = path.join(ROOT, 'scripts', 'skipSummary.mjs');

/** This environment without NODE_TEST_CONTEXT, which would make the inner run report to ours instead of to its reporter. */
const env = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'NODE_TEST_CONTEXT'));

/** Runs node:test on one file with the summary reporter only; its output. */
function summary(source: string): string {
  const file = path.join(tempDir(), 'fixture.test.mjs');
  fs.writeFileSync(file, `import { it } from 'node:test';\n${source}`);
  const r = spawnSync(process.execPath, ['--test', `--test-reporter=${REPORTER}`, '--test-reporter-destination=stdout', file], {
    encoding: 'utf8',
    env: env(),
  });
  return r.stdout.trim();
}

describe('the skipped-tests summary of npm test', () => {
  it('groups the skipped tests by reason, counting each, in one line', () => {
    const out = summary(
      [
        "it('runs', () => {});",
        "it('strict a', { skip: 'strict is not available here: bwrap is missing. Fix: apt-get install bubblewrap' }, () => {});",
        "it('strict b', { skip: 'strict is not available here: bwrap is missing. Fix: apt-get install bubblewrap' }, () => {});",
        "it('webgpu', (t) => { t.skip('no chromium: apt-get install chromium'); });",
      ].join('\n'),
    );
    assert.equal(
      out,
      'skipped: 3 — 2 × strict is not available here: bwrap is missing. Fix: apt-get install bubblewrap; 1 × no chromium: apt-get install chromium',
    );
  });

  it('says so when nothing was skipped', () => {
    assert.equal(summary("it('runs', () => {});"), 'skipped: none — every test ran on this machine');
  });
});
