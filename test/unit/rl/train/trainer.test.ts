// The trainer with the in-memory sink: the engine alone, no SQLite.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { RunEnvironment } from '../../../../src/rl/envs/environment';
import { binarySearchRepair } from '../../../../src/rl/envs/binarySearchRepair';
import { keptResumeIterations, readResumePoint, readResumePointAt } from '../../../../src/rl/train/resumePoint';
import { MemorySink } from '../../../../src/rl/train/sink';
import { train, type Progress, type TrainEvent } from '../../../../src/rl/train/trainer';
import { validateEnvOptions, validateRunConfig } from '../../../../src/shared/runConfig';
import type { IterationMetrics } from '../../../../src/shared/types';

/** The run's progress events, to `f`. */
const onProgress =
  (f: (p: Progress) => unknown) =>
  (e: TrainEvent): void => {
    if (e.kind === 'progress') f(e.progress);
  };

describe('trainer → sink', () => {
  it('hands over each iteration whole, evaluates before and after, and ends completed', async () => {
    const sink = new MemorySink();
    const config = validateRunConfig({ seed: 5, iterations: 4, evalEpisodes: 20 });
    const result = await train(config, { sink });
    assert.equal(sink.status, 'completed');
    assert.equal(sink.config?.seed, 5);
    assert.equal(sink.iterations.length, 4);
    for (const rec of sink.iterations) assert.equal(rec.trajectories.length, config.groupsPerIteration * config.groupSize);
    assert.deepEqual(
      sink.evaluations.map((e) => e.iteration),
      [0, 4],
    );
    assert.deepEqual(
      result.iterations,
      sink.iterations.map((r) => r.metrics),
    );
    assert.ok(sink.ended!.wallMs >= 0);
  });

  it('optimizerSteps ends a run after the iteration that reaches them, evaluated and completed as at its last iteration', async () => {
    const sink = new MemorySink();
    // RS-SFT steps only on iterations with a success: how many iterations the steps take depends on the run
    const config = validateRunConfig({ seed: 5, method: 'rs-sft', iterations: 50, optimizerSteps: 7, evalEpisodes: 20, algorithm: { epochs: 1 } });
    const result = await train(config, { sink });
    assert.equal(result.status, 'completed');
    const steps = result.iterations.map((m) => m.optimizerSteps ?? 0);
    const total = steps.reduce((a, b) => a + b, 0);
    assert.ok(total >= 7 && total - steps.at(-1)! < 7, `steps per iteration ${steps.join(',')}`);
    assert.ok(result.iterations.length < 50);
    assert.deepEqual(
      sink.evaluations.map((e) => e.iteration),
      [0, result.iterations.length],
    );
  });

  it('evalEpisodes 0 runs no evaluation, before, during or after training', async () => {
    const sink = new MemorySink();
    const result = await train(validateRunConfig({ seed: 5, iterations: 3, evalEpisodes: 0, evalInterval: 1 }), { sink });
    assert.equal(result.status, 'completed');
    assert.deepEqual(sink.evaluations, []);
    assert.deepEqual(result.evaluations, []);
    assert.equal(sink.iterations.length, 3);
  });

  it('stops at an iteration boundary when cancelled and records the run as cancelled', async () => {
    const sink = new MemorySink();
    const controller = new AbortController();
    const result = await train(validateRunConfig({ seed: 5, iterations: 1000, evalEpisodes: 20 }), {
      sink,
      signal: controller.signal,
      onEvent: onProgress((p) => {
        if (p.iteration === 3) controller.abort();
      }),
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
    await train(config, { sink });
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
        assert.equal(
          g.every((t) => t.excluded === 'replaced'),
          !spread,
          `group ${g[0]!.group}`,
        );
      }
      replacedSomewhere ||= replaced.length > 0;
      assert.equal(m.trainedTrajectories, kept.length * N);
    }
    assert.ok(replacedSomewhere, 'seed 5 has groups without spread to replace');
    assert.equal(sink.config!.algorithm.dynamicSampling, 3, 'the run records the configured rounds of dynamic sampling');
  });

  it("records where each iteration's time went", async () => {
    const sink = new MemorySink();
    await train(validateRunConfig({ seed: 5, iterations: 2, evalEpisodes: 20 }), { sink });
    for (const { metrics: m } of sink.iterations) {
      for (const k of ['phaseGenerateMs', 'phaseEnvMs', 'phaseReferenceMs', 'phaseUpdateMs', 'phaseEvaluateMs', 'phaseStoreMs'] as const)
        assert.equal(typeof m[k], 'number', k);
      assert.ok(m.phaseGenerateMs! + m.phaseEnvMs! + m.phaseUpdateMs! <= m.wallMs + 5);
    }
  });
});

/** Metrics without the fields that measure time, which differ between any two runs. */
const untimed = (m: IterationMetrics): Record<string, unknown> =>
  Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'wallMs' && !k.startsWith('phase')));

describe('trainer: resume points', () => {
  it('a run cancelled at iteration 8 and resumed from its resume point ends exactly as one that never stopped', async () => {
    const config = validateRunConfig({ seed: 11, iterations: 20, evalEpisodes: 50, evalInterval: 10, checkpointEvery: 5 });
    const whole = new MemorySink();
    await train(config, { sink: whole });

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-resume-'));
    const first = new MemorySink({ resume: dir });
    const controller = new AbortController();
    const stopped = await train(config, { sink: first, signal: controller.signal, onEvent: onProgress((p) => p.iteration === 8 && controller.abort()) });
    assert.equal(stopped.status, 'cancelled');
    const point = readResumePoint(dir)!;
    assert.equal(point.state.iteration, 8, 'cancelling writes a resume point after the last stored iteration');
    // the continued run appends to what was stored
    const rest = await train(config, { sink: first, resume: point });
    assert.equal(rest.status, 'completed');
    assert.deepEqual(
      first.iterations.map((r) => untimed(r.metrics)),
      whole.iterations.map((r) => untimed(r.metrics)),
    );
    assert.deepEqual(first.evaluations, whole.evaluations);
    assert.deepEqual(
      first.iterations.map((r) => r.trajectories.map((t) => [t.taskId, t.turns.map((u) => u.actionText), t.advantage])),
      whole.iterations.map((r) => r.trajectories.map((t) => [t.taskId, t.turns.map((u) => u.actionText), t.advantage])),
    );
  });

  it('a run that dies at iteration 8 continues from the resume point of iteration 5: the dropped iterations run again the same way', async () => {
    const config = validateRunConfig({ seed: 12, iterations: 12, evalEpisodes: 30, checkpointEvery: 5 });
    const whole = new MemorySink();
    await train(config, { sink: whole });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-resume-'));
    const died = new MemorySink({ resume: dir });
    await assert.rejects(
      train(config, {
        sink: died,
        onEvent: onProgress((p) => {
          if (p.iteration === 8) throw new Error('killed');
        }),
      }),
      /killed/,
    );
    assert.equal(died.status, 'failed');
    const point = readResumePoint(dir)!;
    assert.equal(point.state.iteration, 5);
    // what a store keeps after prepareResume: the iterations and evaluations up to the resume point
    const kept = new MemorySink();
    kept.iterations.push(...died.iterations.slice(0, 5));
    kept.evaluations.push(...died.evaluations.filter((e) => e.iteration <= 5));
    await train(config, { sink: kept, resume: point });
    assert.deepEqual(
      kept.iterations.map((r) => untimed(r.metrics)),
      whole.iterations.map((r) => untimed(r.metrics)),
    );
    assert.deepEqual(kept.evaluations, whole.evaluations);
  });

  it('a resume point is replaced atomically: the pointer names a whole state folder; states at checkpoint iterations are kept for forks', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-resume-'));
    await train(validateRunConfig({ seed: 3, iterations: 7, evalEpisodes: 10, checkpointEvery: 2 }), { sink: new MemorySink({ resume: dir }) });
    // every multiple of checkpointEvery, and the last iteration (a fork may train a finished run on)
    assert.deepEqual(fs.readdirSync(dir).sort(), ['resume.json', 'state-2', 'state-4', 'state-6', 'state-7']);
    assert.equal(readResumePoint(dir)!.state.iteration, 7);
    assert.deepEqual(keptResumeIterations(dir), [2, 4, 6, 7]);
    assert.equal(readResumePointAt(dir, 4)!.state.iteration, 4);
    assert.equal(readResumePointAt(dir, 5), undefined);
  });

  it('a state written on cancel between checkpoint iterations is dropped by the next point; the checkpoint ones stay', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-resume-'));
    const config = validateRunConfig({ seed: 3, iterations: 8, evalEpisodes: 10, checkpointEvery: 4 });
    const controller = new AbortController();
    const first = new MemorySink({ resume: dir });
    await train(config, {
      sink: first,
      signal: controller.signal,
      onEvent: onProgress((p) => {
        if (p.iteration === 5) controller.abort();
      }),
    });
    assert.deepEqual(keptResumeIterations(dir), [4, 5]);
    const rest = new MemorySink({ resume: dir });
    rest.iterations.push(...first.iterations);
    rest.evaluations.push(...first.evaluations);
    await train(config, { sink: rest, resume: readResumePoint(dir)! });
    assert.deepEqual(keptResumeIterations(dir), [4, 8]);
  });
});

describe('trainer: resume points of a language model', () => {
  it('SFT of a tiny fresh model on the engine (two threads) resumed after iteration 3 equals the uninterrupted run, weights and optimizer included', async () => {
    const config = validateRunConfig({
      env: 'calculator',
      policy: 'transformer',
      method: 'sft',
      seed: 4,
      iterations: 6,
      groupsPerIteration: 8,
      evalEpisodes: 8,
      checkpointEvery: 3,
      policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 128, maxNewTokens: 24, threads: 2 },
      algorithm: { minibatchSize: 4, warmupSteps: 2 },
    });
    const wholeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-resume-'));
    const whole = new MemorySink({ resume: wholeDir, checkpoint: path.join(wholeDir, 'final') });
    await train({ ...config, checkpointEvery: 6 }, { sink: whole });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-resume-'));
    const part = new MemorySink({ resume: dir, checkpoint: path.join(dir, 'final') });
    const controller = new AbortController();
    await train(config, { sink: part, signal: controller.signal, onEvent: onProgress((p) => p.iteration === 3 && controller.abort()) });
    await train(config, { sink: part, resume: readResumePoint(dir)! });
    assert.deepEqual(
      part.iterations.map((r) => untimed(r.metrics)),
      whole.iterations.map((r) => untimed(r.metrics)),
    );
    assert.deepEqual(part.evaluations, whole.evaluations);
    // the final checkpoints (weights and Adam's moments) are identical, byte for byte
    assert.deepEqual(fs.readFileSync(path.join(dir, 'final', 'tensors.bin')), fs.readFileSync(path.join(wholeDir, 'final', 'tensors.bin')));
  });
});

describe('trainer: faults', () => {
  it('a NaN loss skips its step and is recorded; three iterations in a row stop the run as failed, iterations stored so far whole', async () => {
    // binary search whose verifier answers NaN: every advantage and so every loss is NaN
    const base = await binarySearchRepair.open(validateEnvOptions('binary-search'));
    const nan: RunEnvironment = {
      ...base,
      create: () => {
        const e = base.create();
        return {
          ...e,
          reset: (t) => e.reset(t),
          parseAction: (x) => e.parseAction(x),
          step: (a) => e.step(a),
          close: () => e.close(),
          verify: async (rng) => ({ ...(await e.verify(rng)), reward: Number.NaN }),
        };
      },
    };
    const sink = new MemorySink();
    await assert.rejects(
      train(validateRunConfig({ seed: 2, iterations: 10, evalEpisodes: 10 }), { sink, environment: nan }),
      /the loss was NaN or infinite in 3 iterations in a row \(the last 3\).*Fix:/,
    );
    assert.equal(sink.status, 'failed');
    assert.equal(sink.iterations.length, 3);
    for (const r of sink.iterations) {
      assert.equal(r.metrics.optimizerSteps, 0);
      assert.ok((r.metrics.nonFiniteSteps ?? 0) > 0);
      assert.equal(r.metrics.policyVersion, 0, 'no step: the weights never changed');
    }
  });
});

describe('trainer: faults in episodes', () => {
  it('an environment that crashes, cannot read an output, fails to start or to verify ends only that episode: recorded as env_error with reward 0, never trained on, the run goes on', async () => {
    // of every five environments, four fail, each its own way (a crashed sandbox, a parser that throws, a
    // reset that fails, a verifier that fails); the fifth is the ordinary binary search
    let made = 0;
    const base = await binarySearchRepair.open(validateEnvOptions('binary-search'));
    const faulty: RunEnvironment = {
      ...base,
      create: () => {
        const e = base.create();
        const fault = made++ % 5;
        return {
          reset: (t) => (fault === 3 ? Promise.reject(new Error('sandbox pool failed to start')) : e.reset(t)),
          parseAction: (x) => {
            if (fault === 2) throw new TypeError('parser broke on this output');
            return e.parseAction(x);
          },
          step: (a) => (fault === 1 ? Promise.reject(new Error('sandbox server crashed (SIGSEGV)')) : e.step(a)),
          verify: (rng) => (fault === 4 ? Promise.reject(new Error('verifier timed out')) : e.verify(rng)),
          close: () => e.close(),
        };
      },
    };
    const sink = new MemorySink();
    const result = await train(validateRunConfig({ seed: 6, iterations: 4, evalEpisodes: 20 }), { sink, environment: faulty });
    assert.equal(result.status, 'completed');
    assert.equal(sink.iterations.length, 4);
    const why = new Set<string>();
    for (const rec of sink.iterations) {
      assert.equal(rec.trajectories.length, 32);
      const failed = rec.trajectories.filter((t) => t.termination === 'env_error');
      assert.ok(failed.length >= 4, `${failed.length} failed episodes`);
      assert.equal(rec.metrics.envErrorTrajectories, failed.length);
      for (const t of failed) {
        assert.equal(t.outcome.reward, 0);
        assert.ok(t.excluded === 'env_error' || t.excluded === 'replaced', `excluded: ${t.excluded}`);
        const text =
          t.outcome.details?.verifierError !== undefined ? JSON.stringify(t.outcome.details.verifierError) : (t.turns.at(-1)?.observation.text ?? '');
        why.add(/crashed/.test(text) ? 'step' : /parser broke/.test(text) ? 'parse' : /verifier timed out/.test(text) ? 'verify' : text);
      }
      assert.ok((rec.metrics.optimizerSteps ?? 0) > 0, 'the others still train');
    }
    // reset failures leave no turn: their reason is the episode's observation, not stored as a turn
    assert.ok(
      ['step', 'parse', 'verify'].every((k) => why.has(k)),
      [...why].join(' | '),
    );
  });
});

describe('trainer: asynchronous mode', () => {
  it('learns from whole groups no older than maxStaleness, records the staleness histogram and the queue, and keeps sync unchanged', async () => {
    for (const maxStaleness of [0, 2]) {
      const sink = new MemorySink();
      const config = validateRunConfig({ seed: 8, iterations: 12, evalEpisodes: 20, mode: 'async', maxStaleness });
      assert.equal(config.algorithm.oldLogprobs, 'recompute', 'async recomputes π_old by default');
      assert.equal(config.algorithm.offPolicyCorrection, 'truncated-is');
      const result = await train(config, { sink });
      assert.equal(result.status, 'completed');
      let dropped = 0;
      let stale = 0;
      for (const { metrics: m, trajectories } of sink.iterations) {
        const G = config.groupsPerIteration;
        assert.equal(trajectories.length, G * config.groupSize);
        const groups = new Map<number, number>();
        for (const t of trajectories) groups.set(t.group, (groups.get(t.group) ?? 0) + 1);
        assert.deepEqual(
          [...groups.keys()].sort((a, b) => a - b),
          Array.from({ length: G }, (_, i) => i),
          'groups renumbered 0 … G−1',
        );
        for (const n of groups.values()) assert.equal(n, config.groupSize, 'every group whole');
        // the learner's version before this update (one version per update that changed the weights)
        const before = m.policyVersion - m.updated;
        for (const t of trajectories) {
          for (const turn of t.turns)
            assert.ok(
              before - turn.policy.policyVersion <= maxStaleness,
              `iteration ${m.iteration}: a turn ${before - turn.policy.policyVersion} versions old`,
            );
        }
        assert.equal(m.staleness0! + m.staleness1! + m.staleness2! + m.staleness3plus!, G);
        assert.ok(m.stalenessMax! <= maxStaleness);
        for (const k of ['queueDepth', 'learnerIdleMs', 'rolloutBusyMs', 'rolloutBlockedMs', 'droppedStaleGroups', 'importanceWeightMean'] as const)
          assert.equal(typeof m[k], 'number', `${k} at ${m.iteration}`);
        dropped += m.droppedStaleGroups!;
        stale += m.staleness1! + m.staleness2!;
      }
      // groups start only while they can be taken in time: with none allowed, the rollout waits for each update
      if (maxStaleness === 0) assert.deepEqual([dropped, stale], [0, 0]);
      else assert.ok(stale > 0, 'with staleness allowed, the rollout runs ahead and the learner uses groups sampled before its last update');
    }
    const sync = new MemorySink();
    await train(validateRunConfig({ seed: 8, iterations: 2, evalEpisodes: 20 }), { sink: sync });
    for (const { metrics: m } of sync.iterations) {
      assert.deepEqual([m.stalenessMean, m.stalenessMax], [0, 0], 'sync mode samples on-policy: 0 behind, measured');
      assert.equal(m.staleness0, undefined, 'no queue, no histogram');
      assert.equal(m.importanceWeightMean, undefined);
    }
  });
});
