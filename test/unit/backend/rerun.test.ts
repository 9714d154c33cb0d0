import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rerunNotes, rerunOptions } from '../../../src/backend/rerun';
import { DEFAULT_LIMITS } from '../../../src/rl/sandbox/limits';

describe('Re-run in Sandbox: a stored run is data, not instructions', () => {
  it('takes the interpreter and the level from the settings, never from the stored config', () => {
    const o = rerunOptions({ python: '/tmp/evil', sandbox: 'process', timeoutMs: 2000 }, { python: '', sandbox: 'auto' });
    assert.equal(o.python, '');
    assert.equal(o.sandbox, 'auto');
    assert.equal(o.limits.timeoutMs, 2000, 'the run’s own (valid) limit reproduces its observation');
    assert.equal(rerunOptions({}, { python: '/opt/py3', sandbox: 'strict' }).python, '/opt/py3');
    assert.equal(rerunOptions({}, { python: '', sandbox: 'nonsense' }).sandbox, 'auto', 'an invalid setting means the strongest level');
  });

  it('clamps stored limits to what a run config may ask', () => {
    const o = rerunOptions({ timeoutMs: 1e12, outputCapBytes: -5, tailBytes: 'x' }, { python: '', sandbox: 'auto' });
    assert.equal(o.limits.timeoutMs, 600_000);
    assert.equal(o.limits.outputCapBytes, 1024);
    assert.equal(o.limits.tailBytes, DEFAULT_LIMITS.tailBytes);
    assert.equal(o.limits.memoryBytes, DEFAULT_LIMITS.memoryBytes);
  });

  it('says what the stored run had asked for that was not used', () => {
    const used = { level: 'strict' as const, python: '/usr/bin/python3.12' };
    assert.deepEqual(rerunNotes({ level: 'strict', python: '' }, used), []);
    const notes = rerunNotes({ level: 'process', python: '/tmp/evil-python' }, used);
    assert.equal(notes.length, 2);
    assert.match(notes[0]!, /the run used the weaker sandbox level "process"; this re-run used "strict"/);
    assert.match(notes[1]!, /the run named the interpreter "\/tmp\/evil-python", which was not used: this re-run used \/usr\/bin\/python3\.12/);
    assert.match(rerunNotes({ level: 'strict' }, { level: 'process', python: 'p' })[0]!, /stronger sandbox level "strict"; this re-run used "process"/);
    assert.match(rerunNotes({ level: 'sandbox-of-doom' }, used)[0]!, /unknown sandbox level/);
  });
});
