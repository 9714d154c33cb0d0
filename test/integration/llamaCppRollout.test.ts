// llama.cpp as the rollout engine of a policy on the wasm engine (policyOptions.rolloutEngine
// "llama.cpp"), on the float32 qwen2 fixture through the code environment's sandbox (and at weightDtype
// "q8", from the Q8_0 GGUF of the engine's own blocks): llama.cpp samples
// the episodes; the config recomputes π_old on the trainer and weighs tokens by truncated importance
// sampling, and the printed name says so; the learner's measured mismatch between llama.cpp's
// behaviour log-probs and the trainer's is at float32 rounding before and after an update (so the
// update's adapters, or under full fine-tuning its weights, reached llama.cpp: the stale model's
// log-probs are far from them); a model on the tfjs decoder is refused with the fix.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { methodLabel } from '../../src/shared/algorithm';
import type { RunConfig } from '../../src/shared/runConfig';
import type { Trajectory } from '../../src/shared/types';
import { createPolicy } from '../../src/rl/policies/createPolicy';
import { EngineModel } from '../../src/rl/policies/lm/models/engine/engineModel';
import { initBackend } from '../../src/rl/policies/lm/models/tfjsBackend';
import { trajectorySequence, type TransformerPolicy } from '../../src/rl/policies/lm/transformerPolicy';
import { Rng } from '../../src/rl/random';
import { runEpisodes } from '../../src/rl/rollout/agentLoop';
import { Learner } from '../../src/rl/train/learner';
import { policyRunInfo } from '../../src/rl/train/trainingRun';
import { codeEnv, disposeOpened } from '../helpers/environments';
import { hfFixtureConfig } from '../helpers/hfFixtureConfig';
import { policyLogprobs } from '../../src/rl/train/passes';

/** The fixture's GRPO config with llama.cpp sampling, at a learning rate that moves the policy visibly in one update. */
const configFor = (family: string, extra: Record<string, unknown> = {}): RunConfig => hfFixtureConfig(family, { rolloutEngine: 'llama.cpp', ...extra }, 3e-2);

before(async () => {
  await initBackend('wasm');
});
after(() => disposeOpened());

/**
 * Mean |Δ log p| per sampled token allowed between llama.cpp on the Q8_0 GGUF and the q8 trainer, which
 * quantize every product's input alike (llama.cpp's x86 rule, float16 scales): measured 1.0e-6 before the
 * update and 1.2e-6 after it, float32 rounding (the base's log-probs were 0.342 from the updated
 * policy's; before the engine rounded activation scales to float16: 0.0109 and 0.0077). The bound leaves
 * room for an 8-bit rounding flip, which float32 differences can cause on another CPU and which parts a
 * row by ~1e-2 a token from there on (llamaCppQ8.test.ts).
 */
const GAP_Q8 = 5e-3;

/** Mean |Δ log p| between the sampled tokens' behaviour log-probs and the model's (the engine's) log-probs of them. */
async function gapTo(policy: TransformerPolicy<EngineModel>, which: 'current' | 'reference', ts: readonly Trajectory[]): Promise<number> {
  const seqs = ts.map((t) => trajectorySequence(t)!);
  const { logp } = await policyLogprobs(policy, seqs, { model: which, temperature: 1, rows: false });
  let sum = 0,
    n = 0;
  seqs.forEach((s, i) =>
    s.mask.forEach((m, j) => {
      if (m === 1) {
        sum += Math.abs(logp[i]![j]! - s.behaviour[j]!);
        n++;
      }
    }),
  );
  assert.ok(n > 10, `${n} sampled tokens`);
  return sum / n;
}

describe('llama.cpp as the rollout engine', () => {
  for (const [label, extra] of [
    ['LoRA (an adapter file after each update)', {}],
    ['full fine-tuning (every weight after each update)', { loraRank: 0 }],
  ] as const) {
    it(`${label}: samples the episodes; after an update it samples from the updated policy`, async () => {
      const config = configFor('qwen2', extra);
      assert.deepEqual(
        [config.algorithm.oldLogprobs, config.algorithm.offPolicyCorrection],
        ['recompute', 'truncated-is'],
        'the sampler is not the trainer: π_old recomputed, truncated IS',
      );
      assert.match(methodLabel(config.method, config.algorithm), /\+ truncated IS \(cap 2\)$/);
      const env = codeEnv();
      const policy = (await createPolicy(config, policyRunInfo(config), env)) as TransformerPolicy<EngineModel>;
      try {
        assert.match(policy.compute, /sampling on llama\.cpp \(node-llama-cpp\), CPU build/);
        const task = env.tasks().train[0]!;
        const play = (seed: number): Promise<Trajectory[]> =>
          runEpisodes(
            Array.from({ length: 4 }, (_, i) => ({ task, group: 0, indexInGroup: i })),
            () => env.create(),
            policy,
            { maxTurns: 2, sampleRng: new Rng(seed), verifierRng: new Rng(0) },
          );
        const first = await play(11);
        assert.ok(first.every((t) => t.turns.length > 0 && t.turns.every((turn) => (turn.policy.tokens?.sampled.length ?? 0) > 0)));
        assert.ok((await gapTo(policy, 'current', first)) < 1e-4, 'float32 weights: llama.cpp and the trainer agree per token');
        const learner = new Learner(policy, { method: 'grpo', settings: config.algorithm, imitate: 'all', totalSteps: 10, seed: 1 });
        const pushed = first.map((t, i) => ({ ...t, advantage: i % 2 === 0 ? 1 : -1 }));
        const report = await learner.update(pushed);
        assert.ok(report.optimizerSteps >= 1 && Number.isFinite(report.loss), JSON.stringify(report));
        assert.ok(report.logprobMismatch !== undefined && report.logprobMismatch < 1e-4, `mismatch ${report.logprobMismatch}`);
        const second = await play(12);
        const fresh = await gapTo(policy, 'current', second);
        const stale = await gapTo(policy, 'reference', second);
        assert.ok(stale > 1e-3, `the update moved the policy's log-probs (by ${stale} per token from the base model)`);
        assert.ok(fresh < 1e-4, `llama.cpp sampled with the updated weights: ${fresh} per token from the trainer's`);
      } finally {
        await policy.dispose();
      }
    });
  }

  it('weightDtype q8: samples from the Q8_0 GGUF of the engine’s own blocks, says so, and after an update samples the updated adapters over it', async () => {
    const config = configFor('qwen2', { weightDtype: 'q8' });
    const env = codeEnv();
    const policy = (await createPolicy(config, policyRunInfo(config), env)) as TransformerPolicy<EngineModel>;
    try {
      assert.match(policy.compute, /q8 base .*sampling on llama\.cpp \(node-llama-cpp\), CPU build, \d+ threads, Q8_0 GGUF/);
      const task = env.tasks().train[0]!;
      const play = (seed: number): Promise<Trajectory[]> =>
        runEpisodes(
          Array.from({ length: 4 }, (_, i) => ({ task, group: 0, indexInGroup: i })),
          () => env.create(),
          policy,
          { maxTurns: 2, sampleRng: new Rng(seed), verifierRng: new Rng(0) },
        );
      const first = await play(11);
      const before = await gapTo(policy, 'current', first);
      const learner = new Learner(policy, { method: 'grpo', settings: config.algorithm, imitate: 'all', totalSteps: 10, seed: 1 });
      const report = await learner.update(first.map((t, i) => ({ ...t, advantage: i % 2 === 0 ? 1 : -1 })));
      assert.ok(report.optimizerSteps >= 1 && Number.isFinite(report.loss), JSON.stringify(report));
      const second = await play(12);
      const fresh = await gapTo(policy, 'current', second);
      const stale = await gapTo(policy, 'reference', second);
      if (process.env.DEBUG_LLAMA) console.log({ before, fresh, stale, mismatch: report.logprobMismatch });
      // the Q8_0 sampler and the engine quantize activations alike: float32 rounding but for a rare flip (GAP_Q8)
      assert.ok(before < GAP_Q8 && fresh < GAP_Q8, `llama.cpp on Q8_0 and the q8 trainer: ${before} before, ${fresh} after the update (bound ${GAP_Q8})`);
      assert.ok(stale > 10 * fresh, `the update reached llama.cpp: ${fresh} from the updated trainer against ${stale} from the base`);
    } finally {
      await policy.dispose();
    }
  });

  it('a model on the tfjs decoder is refused with the reason and the fix', async () => {
    const config = configFor('gpt2');
    await assert.rejects(
      createPolicy(config, policyRunInfo(config), codeEnv()),
      /rolloutEngine "llama\.cpp" loads the policy's weights from the wasm engine.*Fix: rolloutEngine "engine"/,
    );
  });
});
