// Start Run's rubric file (src/host/commands/rubricFile.ts): a regular, non-symlink file inside a
// workspace folder, read up to the byte limit; a symlink (to a secret or to /dev/zero), a FIFO, a device,
// a folder, a file outside the workspace or one over the limit is refused, naming it, without hanging.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { RUBRIC_FILE_MAX_BYTES } from '../../../src/host/commands/judgeSteps';
import { readRubricFile } from '../../../src/host/commands/rubricFile';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-rubric-'));
after(() => fs.rmSync(base, { recursive: true, force: true }));
const ws = path.join(base, 'workspace');
const outside = path.join(base, 'home');
fs.mkdirSync(path.join(ws, 'docs'), { recursive: true });
fs.mkdirSync(outside);
const secret = path.join(outside, 'credentials');
fs.writeFileSync(secret, 'aws_secret_access_key = canary-4c2f\n');

const problem = async (file: string, label = path.relative(ws, file)): Promise<string> => {
  const r = await readRubricFile(file, [ws], label);
  assert.ok('problem' in r, `accepted ${file}: ${JSON.stringify(r)}`);
  assert.ok(!r.problem.includes('canary-4c2f'), r.problem);
  return r.problem;
};

describe('a rubric from a workspace file', () => {
  it('reads a regular text file inside the workspace, trimmed', async () => {
    const file = path.join(ws, 'docs', 'rubric.md');
    fs.writeFileSync(file, '\n# Rubric\nShort and right.\n');
    assert.deepEqual(await readRubricFile(file, [ws], 'docs/rubric.md'), { rubric: '# Rubric\nShort and right.' });
  });

  it('refuses a symlink, even one inside the workspace pointing at a workspace file', async () => {
    fs.symlinkSync(secret, path.join(ws, 'rubric-link.md'));
    assert.match(await problem(path.join(ws, 'rubric-link.md')), /^Agent RL: rubric-link\.md is a symbolic link\. Fix: /);
    fs.writeFileSync(path.join(ws, 'real.md'), 'fine');
    fs.symlinkSync(path.join(ws, 'real.md'), path.join(ws, 'inner-link.md'));
    assert.match(await problem(path.join(ws, 'inner-link.md')), /is a symbolic link/);
  });

  it('refuses a file outside the workspace (a credentials file), and a path that leaves it through a symlinked folder', async () => {
    assert.match(await problem(secret, secret), /is outside the workspace.*Fix: put the rubric in a file in the workspace/);
    fs.symlinkSync(outside, path.join(ws, 'home-link'));
    assert.match(await problem(path.join(ws, 'home-link', 'credentials')), /is outside the workspace/);
    assert.match(await problem(path.join(base, 'workspace-other.md'), 'x'), /cannot be read \(ENOENT\)/);
  });

  it('refuses a device, a FIFO and a folder without reading them (they would hang or be no text)', async () => {
    assert.match(await problem('/dev/zero', '/dev/zero'), /is not a regular file/);
    fs.symlinkSync('/dev/zero', path.join(ws, 'zero.md'));
    assert.match(await problem(path.join(ws, 'zero.md')), /is a symbolic link/);
    const fifo = path.join(ws, 'pipe.md');
    const made = spawnSync('mkfifo', [fifo]);
    if (made.status === 0) assert.match(await problem(fifo), /is not a regular file \(a folder, device or pipe\)/);
    assert.match(await problem(path.join(ws, 'docs')), /is not a regular file/);
  });

  it('reads a file of the byte limit and refuses one a byte over it', async () => {
    const atLimit = path.join(ws, 'at-limit.md');
    // ASCII letters: the limit in bytes is 4× the rubric's characters, so the text check refuses it as too long, not the size check
    fs.writeFileSync(atLimit, 'a'.repeat(RUBRIC_FILE_MAX_BYTES));
    assert.match(await problem(atLimit), /cannot be the rubric: A rubric of at most/);
    const over = path.join(ws, 'over.md');
    fs.writeFileSync(over, 'a'.repeat(RUBRIC_FILE_MAX_BYTES + 1));
    assert.match(await problem(over), /is larger than a rubric can be/);
  });
});
