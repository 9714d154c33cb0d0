// The trainer with the in-memory sink: the engine alone, no SQLite.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemorySink } from '../../../../src/rl/train/sink';
import { train } from '../../../../src/rl/train/trainer';
import { validateRunConfig } from '../../../../src/shared/runConfig';

const runtime = () => ({ workbench: 't', node: process.version, platform: 't', arch: 't', cpu: 't', compute: 't' });

describe('trainer → sink', () => {
  it('hands over each iteration whole, evaluates before and after, and ends completed', async () => {
    const sink = new MemorySink();
    const config = validateRunConfig({ seed: 5, iterations: 4, evalEpisodes: 20 });
    const result = await train(config, { sink, runtime });
    assert.equal(sink.status, 'completed');
    assert.equal(sink.config?.seed, 5);
    assert.equal(sink.iterations.length, 4);
    for (const rec of sink.iterations) assert.equal(rec.trajectories.length, config.groupsPerIteration * config.groupSize);
    assert.deepEqual(sink.evaluations.map((e) => e.iteration), [0, 4]);
    assert.deepEqual(result.iterations, sink.iterations.map((r) => r.metrics));
    assert.ok(sink.ended!.wallMs >= 0);
  });

  it('stops at an iteration boundary when cancelled and records the run as cancelled', async () => {
    const sink = new MemorySink();
    const controller = new AbortController();
    const result = await train(validateRunConfig({ seed: 5, iterations: 1000, evalEpisodes: 20 }), {
      sink, runtime, signal: controller.signal,
      onProgress: (p) => {
        if (p.iteration === 3) controller.abort();
      },
    });
    assert.equal(result.status, 'cancelled');
    assert.equal(sink.status, 'cancelled');
    assert.equal(sink.iterations.length, 3);
  });
});
