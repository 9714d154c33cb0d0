import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBackendRequest, isBackendResponse } from '../../../../src/shared/protocol/backendProtocol';
import { isHostToWorker, isWorkerToHost } from '../../../../src/shared/protocol/workerProtocol';

describe('protocol guards', () => {
  it('accept well-formed worker messages', () => {
    assert.ok(isHostToWorker({ type: 'start', config: { seed: 1 }, db: '/tmp/x.sqlite' }));
    assert.ok(isHostToWorker({ type: 'cancel' }));
    assert.ok(isWorkerToHost({ type: 'progress', runId: 1, iteration: 2, iterations: 10, rewardMean: 0.5, successRate: 0.5, etaMs: 100, loss: 0.2 }));
    assert.ok(
      isWorkerToHost({ type: 'progress', runId: 1, iteration: 2, iterations: 10, rewardMean: 0.5, successRate: 0.5, etaMs: -1, loss: 0.2, tokenAccuracy: 0.9 }),
    );
    assert.ok(isWorkerToHost({ type: 'phase', phase: { kind: 'loading' }, iterations: 10 }), 'a phase before the run is stored has no run id');
    assert.ok(isWorkerToHost({ type: 'phase', runId: 1, phase: { kind: 'iteration', iteration: 3 }, iterations: 10 }));
    assert.ok(!isWorkerToHost({ type: 'phase', runId: 1, phase: { kind: 'iteration' }, iterations: 10 }), 'an iteration phase names its iteration');
    assert.ok(!isWorkerToHost({ type: 'phase', phase: { kind: 'dancing' }, iterations: 10 }));
    assert.ok(isWorkerToHost({ type: 'failed', error: 'boom' }));
    assert.ok(isWorkerToHost({ type: 'finished', runId: 3, status: 'cancelled', wallMs: 5 }));
  });

  it('reject malformed ones: wrong type, missing or mistyped fields, non-objects', () => {
    for (const bad of [
      null,
      'start',
      [],
      { type: 'start', config: 1, db: '/x' },
      { type: 'start', config: {} },
      { type: 'stop' },
      { type: 'start', config: {}, db: '/x', busyTimeoutMs: 'soon' },
    ]) {
      assert.equal(isHostToWorker(bad), false, JSON.stringify(bad));
    }
    for (const bad of [
      { type: 'progress', runId: 1 },
      { type: 'finished', runId: 1, status: 'exploded', wallMs: 1 },
      { type: 'heartbeat', at: Number.NaN },
      { type: 'log', level: 'debug', message: 'x' },
    ]) {
      assert.equal(isWorkerToHost(bad), false, JSON.stringify(bad));
    }
  });

  it('backend requests name a known method with object params; responses carry ok/result or an error', () => {
    assert.ok(isBackendRequest({ id: 1, method: 'listRuns', params: {} }));
    assert.equal(isBackendRequest({ id: 1, method: 'dropTables', params: {} }), false);
    assert.equal(isBackendRequest({ id: '1', method: 'listRuns', params: {} }), false);
    assert.equal(isBackendRequest({ id: 1, method: 'getRun', params: 5 }), false);
    assert.ok(isBackendResponse({ id: 2, ok: true, result: null }));
    assert.ok(isBackendResponse({ id: 2, ok: false, error: 'no' }));
    assert.equal(isBackendResponse({ id: 2, ok: false }), false);
  });
});
