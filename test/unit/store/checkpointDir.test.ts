import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { checkpointDirFor } from '../../../src/store/openStore';

describe('checkpoint folders', () => {
  it('are per database: two databases in one folder never share run-1', () => {
    const a = checkpointDirFor('/data/exp/a.sqlite', 1);
    const b = checkpointDirFor('/data/exp/b.sqlite', 1);
    assert.equal(a, path.join('/data/exp/checkpoints/a/run-1'));
    assert.notEqual(a, b);
    assert.equal(checkpointDirFor('/data/exp/runs', 7), path.join('/data/exp/checkpoints/runs/run-7'));
    assert.equal(checkpointDirFor(path.join('.agent-rl', 'runs.sqlite'), 2), path.resolve('.agent-rl/checkpoints/runs/run-2'));
  });
});
