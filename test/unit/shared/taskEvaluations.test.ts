// A stored evaluation's per-task list is untrusted JSON: read back only when every entry has the right types.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { taskEvaluations } from '../../../src/shared/types';

const entry = { task: 'convert-00003', episodes: 2, successes: 1, reward: 1, toolCalls: 2, repeatedActions: 0 };

describe('taskEvaluations', () => {
  it('reads entries with and without a greedy result', () => {
    const xs = [entry, { ...entry, task: 'convert-00008', greedySuccesses: 1 }];
    assert.deepEqual(taskEvaluations(xs), xs);
  });
  it('refuses the whole list when any entry has a field of the wrong type', () => {
    assert.equal(taskEvaluations([entry, { ...entry, greedySuccesses: '1' }]), undefined);
    assert.equal(taskEvaluations([{ ...entry, greedySuccesses: Number.NaN }]), undefined);
    assert.equal(taskEvaluations([{ ...entry, reward: null }]), undefined);
    assert.equal(taskEvaluations([{ ...entry, task: 3 }]), undefined);
    assert.equal(taskEvaluations({ 0: entry }), undefined);
  });
});
