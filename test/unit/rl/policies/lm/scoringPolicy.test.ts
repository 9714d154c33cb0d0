// Seed 002's candidate scoring on the engine against the tfjs decoder, on the random-weight fixtures
// (test/fixtures/hf): the same weights give the same scores s(a, h), action probabilities and gradients
// of one update (LoRA and full fine-tuning, summed and mean scores); a short binary-search run on the
// wasm backend computes on the engine, moves the action probabilities, and its checkpoint and resume
// point restore them.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LossInput } from '../../../../../src/rl/algo/trainSequence';
import type { LossSpec } from '../../../../../src/rl/algo/objective';
import { createPolicy } from '../../../../../src/rl/policies/createPolicy';
import { EngineModel } from '../../../../../src/rl/policies/lm/models/engine/engineModel';
import { generationEos } from '../../../../../src/rl/policies/lm/generationConfig';
import { HfModel } from '../../../../../src/rl/policies/lm/models/hfModel';
import { CandidateScoringPolicy, tfjsCandidateScorer } from '../../../../../src/rl/policies/lm/scoringPolicy';
import type { PolicyContext } from '../../../../../src/rl/policies/policy';
import { initBackend } from '../../../../../src/rl/policies/lm/models/tfjsBackend';
import { HfTokenizer } from '../../../../../src/rl/policies/lm/tokenizer';
import { Rng } from '../../../../../src/rl/random';
import { runEpisodes } from '../../../../../src/rl/rollout/agentLoop';
import { MemorySink } from '../../../../../src/rl/train/sink';
import { train } from '../../../../../src/rl/train/trainer';
import { policyRunInfo } from '../../../../../src/rl/train/trainingRun';
import { validateRunConfig, type RunConfig } from '../../../../../src/shared/runConfig';
import type { Trajectory } from '../../../../../src/shared/types';
import { binarySearchEnv, disposeOpened } from '../../../../helpers/environments';
import { policyGradients, policyLogprobs } from '../../../../../src/rl/train/passes';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', '..', '..', '..', 'test', 'fixtures', 'hf');
const CONTEXT = 64;
/**
 * π = softmax(s / temperature): summed scores of candidates of 3 and of 9 tokens lie ~40 apart on these
 * random weights, so a sum needs a high temperature for a distribution that is not one-hot (whose
 * gradients would vanish); mean scores lie a few units apart.
 */
const temperatureOf = (normalization: 'sum' | 'mean'): number => (normalization === 'sum' ? 10 : 1.5);

interface Case {
  readonly family: 'qwen2' | 'qwen3';
  readonly lora: boolean;
  readonly normalization: 'sum' | 'mean';
  /** The engine's packed positions per pass (64: one row per pass, so every batch is scored in many passes and recomputed). */
  readonly positions: number;
}

function configFor(c: Pick<Case, 'family' | 'lora' | 'normalization'> & { positions?: number }, extra: Record<string, unknown> = {}): RunConfig {
  return validateRunConfig({
    env: 'binary-search',
    policy: 'transformer',
    method: 'grpo',
    seed: 3,
    groupSize: 4,
    groupsPerIteration: 1,
    evalEpisodes: 0,
    algorithm: { warmupSteps: 0, learningRate: 0.05 },
    ...extra,
    policyOptions: {
      model: path.join(FIXTURES, c.family),
      actionMode: 'score',
      scoreNormalization: c.normalization,
      temperature: temperatureOf(c.normalization),
      contextLength: CONTEXT,
      loraRank: c.lora ? 8 : 0,
      backend: 'wasm',
      threads: 2,
      ...(c.positions ? { microBatchPositions: c.positions } : {}),
      ...((extra.policyOptions as Record<string, unknown> | undefined) ?? {}),
    },
  });
}

/** The same policy on the tfjs decoder (what createPolicy built for candidate scoring before the engine ran it). */
function tfjsPolicy(c: Case, config: RunConfig, env: ReturnType<typeof binarySearchEnv>): CandidateScoringPolicy<HfModel> {
  const dir = path.join(FIXTURES, c.family);
  const model = HfModel.load(dir, {
    contextLength: CONTEXT,
    ...(c.lora ? { lora: { rank: 8, alpha: 16, dropout: 0, targets: ['all-linear'] } } : {}),
    seed: 3,
  });
  const reference = model.reference();
  const tokenizer = HfTokenizer.fromDirectory(dir, 'model');
  return new CandidateScoringPolicy({
    model,
    reference,
    scorer: tfjsCandidateScorer,
    tokenizer,
    spec: env.tabular!(),
    eosId: generationEos(dir, tokenizer)[0],
    optimizer: policyRunInfo(config).optimizer,
    computeBase: 'tfjs',
    temperature: temperatureOf(c.normalization),
    normalization: c.normalization,
  });
}

/** Every turn of the trajectories as the context its action was chosen in. */
function contextsOf(task: PolicyContext['task'], ts: readonly Trajectory[]): PolicyContext[] {
  return ts.flatMap((t) => t.turns.map((turn, i) => ({ task, observation: turn.observation, turns: t.turns.slice(0, i) })));
}

/** Largest |a − b| over the arrays, and the largest |a|. */
function diff(a: readonly Float32Array[], b: readonly Float32Array[]): { err: number; scale: number } {
  assert.equal(a.length, b.length);
  let err = 0,
    scale = 0;
  a.forEach((x, i) => {
    assert.equal(x.length, b[i]!.length);
    x.forEach((v, j) => {
      err = Math.max(err, Math.abs(v - b[i]![j]!));
      scale = Math.max(scale, Math.abs(v));
    });
  });
  return { err, scale };
}

const read = async (ts: readonly tf.Tensor[]): Promise<Float32Array[]> => Promise.all(ts.map(async (t) => (await t.data()) as Float32Array));

before(async () => {
  await initBackend('wasm');
});
after(() => disposeOpened());

describe('candidate scoring on the engine', () => {
  const cases: Case[] = [
    { family: 'qwen3', lora: true, normalization: 'sum', positions: 0 },
    { family: 'qwen3', lora: false, normalization: 'mean', positions: 0 },
    { family: 'qwen2', lora: true, normalization: 'mean', positions: 64 },
    { family: 'qwen2', lora: false, normalization: 'sum', positions: 64 },
  ];
  for (const c of cases) {
    it(`${c.family}, ${c.lora ? 'LoRA' : 'full fine-tuning'}, ${c.normalization} scores${c.positions ? ', one row per engine pass' : ''}: scores, action probabilities and the gradients of an update equal the tfjs decoder's`, async () => {
      const env = binarySearchEnv();
      const config = configFor(c);
      const engine = (await createPolicy(config, policyRunInfo(config), env)) as CandidateScoringPolicy<EngineModel>;
      const tfjs = tfjsPolicy(c, config, env);
      try {
        assert.ok(engine.model instanceof EngineModel, 'the engine runs it');
        assert.match(
          engine.compute,
          new RegExp(
            `^wasm engine \\(.*\\) \\(${c.family} [\\d,]+ parameters, ${c.lora ? 'LoRA rank 8' : 'full fine-tuning'}.*candidate scoring over 6 actions`,
          ),
        );
        // the same trained tensors in both (moved off the start, so the policy differs from its reference)
        tfjs.model.weights.forEach((w, i) => {
          if (c.lora) {
            if (i % 2 === 1) w.assign(tf.randomNormal(w.shape, 0, 0.1, 'float32', 100 + i)); // non-zero b
          } else w.assign(tf.add(w, tf.randomNormal(w.shape, 0, 0.03, 'float32', 200 + i)));
        });
        tfjs.model.weightsChanged();
        engine.model.copyFrom(tfjs.model);

        const task = env.tasks().train[0]!;
        const trajectories = await runEpisodes(
          Array.from({ length: 4 }, (_, i) => ({ task, group: 0, indexInGroup: i })),
          () => env.create(),
          tfjs,
          { maxTurns: 4, sampleRng: new Rng(11), verifierRng: new Rng(0) },
        );
        assert.ok(
          trajectories.some((t) => t.turns.length >= 2),
          'an episode of several turns (prompts of several lengths)',
        );

        // s(a, h): the candidates' summed (or mean) token log-probs after each turn's history
        const contexts = contextsOf(task, trajectories);
        const s = diff(await tfjs.candidateScores(contexts), await engine.candidateScores(contexts));
        assert.ok(s.scale > 1, `scores of magnitude ${s.scale}`);
        assert.ok(s.err <= 1e-4 * s.scale, `max |engine − tfjs| score ${s.err} of ${s.scale}`);
        const r = diff(await tfjs.candidateScores(contexts, 'reference'), await engine.candidateScores(contexts, 'reference'));
        assert.ok(r.err <= 1e-4 * r.scale, `reference: max |engine − tfjs| score ${r.err} of ${r.scale}`);

        // π(a | h) at the sampling temperature: every turn's whole distribution
        const pushed = trajectories.map((t, i) => ({ ...t, advantage: i % 2 === 0 ? 1 : -0.5 }));
        const seq = (p: CandidateScoringPolicy<HfModel> | CandidateScoringPolicy<EngineModel>): LossInput['seq'][] =>
          pushed.map((t) => ({ ...p.sequence(t)!, advantage: t.advantage }));
        const o = { temperature: temperatureOf(c.normalization), rows: true };
        const [tCur, eCur] = [
          await policyLogprobs(tfjs, seq(tfjs), { ...o, model: 'current' }),
          await policyLogprobs(engine, seq(engine), { ...o, model: 'current' }),
        ];
        const [tRef, eRef] = [
          await policyLogprobs(tfjs, seq(tfjs), { ...o, model: 'reference' }),
          await policyLogprobs(engine, seq(engine), { ...o, model: 'reference' }),
        ];
        const probs = (rows: readonly Float32Array[]): Float32Array[] => rows.map((x) => x.map(Math.exp));
        const p = diff(probs(tCur.rows!), probs(eCur.rows!));
        assert.ok(p.err <= 1e-4, `max |engine − tfjs| action probability ${p.err}`);
        assert.ok(diff(probs(tRef.rows!), probs(eRef.rows!)).err <= 1e-4, 'reference probabilities');
        const apart = diff(tCur.logp, tRef.logp).err;
        assert.ok(apart > 1e-3, `the policy differs from its reference by ${apart} (the KL term has a gradient)`);
        // the sampled actions' probabilities are the behaviour log-probs the tfjs policy recorded
        assert.ok(
          diff(
            eCur.logp,
            seq(tfjs).map((x) => Float32Array.from(x.behaviour)),
          ).err < 1e-4,
          'behaviour log-probs',
        );

        // one update's gradients: clipped policy gradient with the KL to the reference (k3 under LoRA; the exact
        // KL, over every action's probability, under full fine-tuning) and the entropy of every turn
        const spec: LossSpec = {
          kind: 'policy-gradient',
          clipLow: 0.2,
          clipHigh: 0.28,
          dualClip: 3,
          klCoef: 0.1,
          klEstimator: c.lora ? 'k3' : 'exact',
          aggregation: c.lora ? 'seq-mean-token-mean' : 'token-mean',
          normTokens: 8,
          temperature: temperatureOf(c.normalization),
        };
        const inputs = (p: CandidateScoringPolicy<HfModel> | CandidateScoringPolicy<EngineModel>, ref: typeof tRef): LossInput[] =>
          seq(p).map((x, i) => ({ seq: x, ref: ref.logp[i]!, ...(c.lora ? {} : { refRows: ref.rows![i]! }) }));
        const tg = await policyGradients(tfjs, inputs(tfjs, tRef), spec);
        const eg = await policyGradients(engine, inputs(engine, eRef), spec);
        const g = diff(await read(tg.grads), await read(eg.grads));
        tf.dispose([...tg.grads, ...eg.grads]);
        assert.ok(g.scale > 1e-3, `gradients of magnitude ${g.scale}`);
        assert.ok(g.err <= 1e-4 * g.scale, `max |engine − tfjs| gradient ${g.err} of ${g.scale}`);
        assert.ok(Math.abs(tg.stats.loss - eg.stats.loss) <= 1e-5 * Math.max(1, Math.abs(tg.stats.loss)), `loss ${tg.stats.loss} vs ${eg.stats.loss}`);
        assert.ok(Math.abs(tg.stats.entropy - eg.stats.entropy) <= 1e-5, 'entropy');
        console.log(
          `${c.family} ${c.lora ? 'LoRA' : 'full'} ${c.normalization}: max |engine − tfjs| score ${s.err.toExponential(2)} (of ${s.scale.toFixed(2)}), probability ${p.err.toExponential(2)}, gradient ${g.err.toExponential(2)} (of ${g.scale.toExponential(2)})`,
        );
      } finally {
        await engine.dispose();
        await tfjs.dispose();
      }
    });
  }

  it('a short binary-search run on the wasm backend computes on the engine and moves the action probabilities; its checkpoint and resume point restore them', async () => {
    const env = binarySearchEnv();
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'scoring-engine-'));
    const c = { family: 'qwen2', lora: true, normalization: 'mean' } as const;
    // random weights rarely repair the search: 32 episodes an iteration at a flat temperature give groups
    // with a success to learn from (the integration test's settings)
    const options = { temperature: 5 };
    const config = configFor(c, { iterations: 2, groupSize: 8, groupsPerIteration: 4, seed: 7, policyOptions: options });
    const sink = new MemorySink({ checkpoint: path.join(tmp, 'final') });
    try {
      const result = await train(config, { sink });
      assert.equal(result.status, 'completed');
      assert.match(
        sink.start!.compute,
        /^wasm engine \(.*\) \(qwen2 [\d,]+ parameters, LoRA rank 8, [\d,]+ trained\), candidate scoring over 6 actions \(mean log-prob per candidate token, temperature 5\)$/,
      );
      const steps = result.iterations.reduce((n, m) => n + (m.optimizerSteps ?? 0), 0);
      assert.ok(steps >= 1, `optimizer steps ${steps} (success rates ${result.iterations.map((m) => m.successRate).join(', ')})`);

      const fresh = (await createPolicy(config, policyRunInfo(config), env)) as CandidateScoringPolicy<EngineModel>;
      const warm = (await createPolicy(
        configFor(c, { policyOptions: { ...options, init: path.join(tmp, 'final') } }),
        policyRunInfo(config),
        env,
      )) as CandidateScoringPolicy<EngineModel>;
      const resumed = (await createPolicy(config, policyRunInfo(config), env)) as CandidateScoringPolicy<EngineModel>;
      try {
        const task = env.tasks().train[0]!;
        const [trajectory] = await runEpisodes([{ task, group: 0, indexInGroup: 0 }], () => env.create(), fresh, {
          maxTurns: 3,
          sampleRng: new Rng(1),
          verifierRng: new Rng(0),
        });
        const contexts = contextsOf(task, [trajectory!]);
        const probs = async (p: CandidateScoringPolicy<EngineModel>, model: 'current' | 'reference' = 'current'): Promise<Float32Array[]> =>
          (await p.candidateScores(contexts, model)).map((s) => {
            const e = s.map((x) => Math.exp((x - Math.max(...s)) / p.temperature));
            const z = e.reduce((a, b) => a + b, 0);
            return e.map((x) => x / z);
          });
        const before = await probs(fresh);
        const trained = await probs(warm);
        const moved = diff(before, trained).err;
        assert.ok(moved > 1e-3, `the action probabilities moved by ${moved}`);
        // a warm start's KL reference is the warm-started model
        assert.ok(diff(await probs(warm, 'reference'), trained).err < 1e-6);
        // a resume point holds the weights, the optimizer and the reference
        await warm.saveState(path.join(tmp, 'resume'));
        await resumed.loadState(path.join(tmp, 'resume'));
        assert.ok(diff(await probs(resumed), trained).err < 1e-6, 'the resumed policy computes what the trained one does');
        assert.ok(diff(await probs(resumed, 'reference'), trained).err < 1e-6, 'and its reference is the stored one');
        console.log(`engine candidate scoring: action probabilities moved by up to ${moved.toFixed(4)} in ${result.iterations.length} iterations`);
      } finally {
        await fresh.dispose();
        await warm.dispose();
        await resumed.dispose();
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  });
});
