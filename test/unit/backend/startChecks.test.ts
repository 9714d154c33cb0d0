// Start Run's checks before a run starts (src/backend/startChecks.ts): a teacher with the student's
// tokenizer passes and one with another is refused with the run's own message, naming both folders;
// the verifiers interpreter is resolved as the run resolves it, and one that cannot import verifiers
// (or does not exist) says so, naming it. The cached venv's verifiers, where this machine has it, passes.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { teacherProblem, verifiersCheck } from '../../../src/backend/startChecks';
import { cachedVerifiersPython } from '../../../src/rl/envs/verifiers/verifiersEnv';
import { tempDir } from '../../helpers/cli';

const ROOT = path.resolve(__dirname, '..', '..', '..', '..');
const QWEN3 = path.join(ROOT, 'test', 'fixtures', 'hf', 'qwen3');

describe("Start Run's checks before a run starts", () => {
  it("passes a teacher with the student's tokenizer and refuses another, naming both folders", () => {
    const same = tempDir();
    fs.copyFileSync(path.join(QWEN3, 'tokenizer.json'), path.join(same, 'tokenizer.json'));
    assert.equal(teacherProblem(QWEN3, same), null);
    const other = tempDir();
    fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'tokenizer-bpe', 'tokenizer.json'), path.join(other, 'tokenizer.json'));
    const problem = teacherProblem(QWEN3, other) ?? '';
    assert.ok(problem.startsWith(`policyOptions.teacher: ${other} has another tokenizer than the policy's model ${QWEN3}`), problem);
    assert.match(problem, /Fix: a teacher of the same family and tokenizer/);
    assert.match(teacherProblem(QWEN3, tempDir()) ?? '', /tokenizer\.json: cannot read it as JSON/, 'a folder without a tokenizer');
  });

  it('names an interpreter that does not exist, and one that cannot import verifiers', async () => {
    const missing = await verifiersCheck('/nonexistent/bin/python', '');
    assert.equal(missing.version, null);
    assert.match(missing.problem ?? '', /the Python \/nonexistent\/bin\/python \(envOptions\.python\) does not exist/);
    // a Python 3 without verifiers: one from PATH, when it lacks it
    const plain = ['/usr/bin/python3', '/usr/local/bin/python3'].find(
      (p) => fs.existsSync(p) && spawnSync(p, ['-c', 'import verifiers'], { encoding: 'utf8' }).status !== 0,
    );
    if (!plain) return;
    const r = await verifiersCheck(plain, '');
    assert.equal(r.python, plain);
    assert.equal(r.version, null);
    assert.match(
      r.problem ?? '',
      new RegExp(`^this Python \\(${plain.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\) cannot import verifiers \\(ModuleNotFoundError`),
    );
  });

  it('finds verifiers 0.3.1 in the cached venv (skipped where it is not made)', async (t) => {
    const venv = cachedVerifiersPython();
    if (!fs.existsSync(venv)) {
      t.skip(`no ${venv} (node scripts/pythonVenv.mjs verifiers-0.3.1 makes it)`);
      return;
    }
    const r = await verifiersCheck(venv, '');
    assert.deepEqual(r, { python: venv, version: '0.3.1', problem: null });
  });
});
