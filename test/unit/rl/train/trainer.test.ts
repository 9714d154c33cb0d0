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

describe('trainer: dynamic sampling and phase timings', () => {
  it('replaces groups without spread by new ones, up to the configured rounds, and never trains on them', async () => {
    const sink = new MemorySink();
    const config = validateRunConfig({ seed: 5, iterations: 6, evalEpisodes: 20, algorithm: { dynamicSampling: 3 } });
    await train(config, { sink, runtime });
    let replacedSomewhere = false;
    for (const rec of sink.iterations) {
      const m = rec.metrics;
      const G = config.groupsPerIteration;
      const N = config.groupSize;
      assert.equal(rec.trajectories.length, (G + (m.resampledGroups ?? 0)) * N);
      const replaced = rec.trajectories.filter((t) => t.excluded === 'replaced');
      assert.equal(replaced.length, m.replacedTrajectories);
      // every replaced group had no spread; every kept one can teach something, and there are at most G
      const groups = new Map<number, typeof rec.trajectories>();
      for (const t of rec.trajectories) groups.set(t.group, [...(groups.get(t.group) ?? []), t]);
      const kept = [...groups.values()].filter((g) => g[0]!.excluded !== 'replaced');
      assert.ok(kept.length <= G);
      for (const g of groups.values()) {
        const spread = g.some((t) => t.advantage !== 0);
        assert.equal(g.every((t) => t.excluded === 'replaced'), !spread, `group ${g[0]!.group}`);
      }
      replacedSomewhere ||= replaced.length > 0;
      assert.equal(m.trainedTrajectories, kept.length * N);
    }
    assert.ok(replacedSomewhere, 'seed 5 has groups without spread to replace');
    assert.match(sink.config!.algorithm.dynamicSampling.toString(), /3/);
  });

  it('records where each iteration\'s time went', async () => {
    const sink = new MemorySink();
    await train(validateRunConfig({ seed: 5, iterations: 2, evalEpisodes: 20 }), { sink, runtime });
    for (const { metrics: m } of sink.iterations) {
      for (const k of ['phaseGenerateMs', 'phaseEnvMs', 'phaseReferenceMs', 'phaseUpdateMs', 'phaseEvaluateMs', 'phaseStoreMs'] as const) assert.equal(typeof m[k], 'number', k);
      assert.ok(m.phaseGenerateMs! + m.phaseEnvMs! + m.phaseUpdateMs! <= m.wallMs + 5);
    }
  });
});
