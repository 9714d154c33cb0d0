// The learner: advantages, what enters the loss and why not, the schedule, truncation, and one code
// path for every policy (the table and a transformer).
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADAM_DEFAULTS } from '../../../../src/rl/algo/adamw';
import type { TabularSpec } from '../../../../src/rl/envs/environment';
import type { TrainablePolicy } from '../../../../src/rl/policies/policy';
import { TablePolicy } from '../../../../src/rl/policies/table/tablePolicy';
import { HfTokenizer } from '../../../../src/rl/policies/lm/tokenizer';
import type { TransformerPolicy } from '../../../../src/rl/policies/lm/transformerPolicy';
import { calculatorEnv, disposeOpened } from '../../../helpers/environments';
import { characterTokenizerDir, freshModel, freshPolicy } from '../../../helpers/freshPolicy';
import { Learner } from '../../../../src/rl/train/learner';
import { lrMultiplier } from '../../../../src/rl/train/schedule';
import { algorithmDefaults, type AlgorithmSettings } from '../../../../src/shared/algorithm';
import type { MethodName } from '../../../../src/shared/runConfig';
import type { TerminationReason, Trajectory } from '../../../../src/shared/types';
import { policyLogprobs } from '../../../../src/rl/train/passes';
import type { TeacherScorer } from '../../../../src/rl/algo/distill';

before(async () => {
  await tf.setBackend('cpu');
});

const spec: TabularSpec = { stateCount: 2, actions: ['a', 'b', 'c'], stateOf: (o) => o.data.s as number };
const lp3 = Math.log(1 / 3);

function tableTraj(group: number, reward: number, action: number, termination: TerminationReason = 'finished'): Trajectory {
  return {
    taskId: 't',
    group,
    indexInGroup: 0,
    termination,
    policyVersion: 0,
    advantage: 0,
    outcome: { reward, success: reward >= 1, publicPass: true, privatePass: reward >= 1 },
    turns: [
      {
        index: 0,
        actionText: 'x',
        action: { kind: 'tool', name: 'x', args: {} },
        observation: { text: '', data: {} },
        policy: { behaviourLogprob: lp3, policyVersion: 0, stateIndex: 0, actionIndex: action },
      },
    ],
  };
}

const settings = (o: Partial<AlgorithmSettings> = {}, policy = 'table', method = 'grpo'): AlgorithmSettings => ({
  ...algorithmDefaults('binary-search', policy, method),
  ...o,
});
const learnerOf = (p: TrainablePolicy, o: Partial<AlgorithmSettings> = {}, method: MethodName = 'grpo'): Learner =>
  new Learner(p, { method, settings: settings(o, p instanceof TablePolicy ? 'table' : 'transformer', method), imitate: 'all', totalSteps: 100, seed: 3 });

describe('Learner: advantages and exclusions', () => {
  it('an env_error episode is left out of its group statistics and never gets a negative advantage', () => {
    const ts = [tableTraj(0, 1, 0), tableTraj(0, 0, 1), tableTraj(0, 0, 2, 'env_error'), tableTraj(1, 1, 0), tableTraj(1, 0, 0, 'env_error')];
    const report = learnerOf(new TablePolicy(spec, ADAM_DEFAULTS, 'cpu')).assignAdvantages(ts);
    // group 0: rewards [1, 0] (the failed environment's 0 is not the agent's): ±1 with the population std
    assert.deepEqual(
      ts.map((t) => t.advantage),
      [1, -1, 0, 0, 0],
    );
    assert.equal(report.envErrors, 2);
    assert.equal(report.zeroVarianceGroups, 1); // group 1 has one real member: no spread
  });

  it('update leaves out env_error, zero-advantage and (with the filter) overlong episodes, and says why', async () => {
    const p = new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');
    const learner = learnerOf(p, { skipZeroAdvantage: true, overlongFilter: true });
    const ts = [
      tableTraj(0, 1, 0),
      tableTraj(0, 0, 1),
      tableTraj(0, 0, 2, 'env_error'),
      tableTraj(1, 1, 0),
      tableTraj(1, 1, 1),
      tableTraj(2, 0, 0, 'turn_cap'),
      tableTraj(2, 1, 1),
    ];
    learner.assignAdvantages(ts);
    const r = await learner.update(ts);
    assert.deepEqual(
      ts.map((t) => t.excluded ?? null),
      [null, null, 'env_error', 'zero_advantage', 'zero_advantage', 'overlong', null],
    );
    assert.deepEqual(r.excluded, { env_error: 1, zero_advantage: 2, overlong: 1 });
    assert.equal(r.trainedTrajectories, 3);
  });

  it('positive-only (negativeAdvantageScale 0): failures are skipped, so failures alone take no step', async () => {
    for (const scale of [0, 1]) {
      const p = new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');
      const learner = learnerOf(p, { negativeAdvantageScale: scale, skipZeroAdvantage: true });
      const ts = [tableTraj(0, 1, 0), tableTraj(0, 0, 1), tableTraj(0, 0, 2)];
      learner.assignAdvantages(ts);
      const r = await learner.update(ts.filter((t) => t.advantage < 0));
      assert.equal(r.optimizerSteps > 0, scale > 0, `scale ${scale}`);
    }
  });

  it('RS-SFT trains on successes only; SFT on every demonstration unless told to imitate the accepted ones', async () => {
    const ts = () => [tableTraj(0, 1, 0), tableTraj(0, 0, 1)];
    const rs = learnerOf(new TablePolicy(spec, ADAM_DEFAULTS, 'cpu'), {}, 'rs-sft');
    const a = ts();
    assert.equal((await rs.update(a)).trainedTrajectories, 1);
    assert.equal(a[1]!.excluded, 'unsuccessful');
    const p = new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');
    const sftAll = new Learner(p, { method: 'sft', settings: settings({}, 'table', 'sft'), imitate: 'all', totalSteps: 1, seed: 1 });
    assert.equal((await sftAll.update(ts())).trainedTrajectories, 2);
    const sftOk = new Learner(p, { method: 'sft', settings: settings({}, 'table', 'sft'), imitate: 'successful', totalSteps: 1, seed: 1 });
    assert.equal((await sftOk.update(ts())).trainedTrajectories, 1);
  });

  it("one GRPO step with Adam moves each logit of the visited state by the learning rate, in the advantage's direction", async () => {
    const p = new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');
    const learner = learnerOf(p, { learningRate: 0.1, klCoef: 0, epochs: 1 });
    const ts = [tableTraj(0, 1, 0), tableTraj(0, 0, 1)];
    learner.assignAdvantages(ts);
    await learner.update(ts);
    // A = +1 on (0, a), −1 on (0, b): ∂L/∂logit = −½[(1 − ⅓) − (0 − ⅓)] on a … Adam's first step is lr·sign(−g)
    const after = Array.from(p.table.dataSync());
    const expect = [0.1, -0.1, 0, 0, 0, 0];
    after.forEach((x, i) => assert.ok(Math.abs(x - expect[i]!) < 1e-6, `logit ${i}: ${x} vs ${expect[i]}`));
  });

  it("the policy loss is the settings' entry; its metrics come back by name, averaged over the steps", async () => {
    const reports = new Map<string, Awaited<ReturnType<Learner['update']>>>();
    for (const policyLoss of ['clip', 'gspo', 'cispo'] as const) {
      const p = new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');
      const learner = learnerOf(p, { learningRate: 0.1, klCoef: 0, epochs: 2, policyLoss });
      const ts = [tableTraj(0, 1, 0), tableTraj(0, 0, 1)];
      learner.assignAdvantages(ts);
      reports.set(policyLoss, await learner.update(ts));
    }
    const names = (k: string): string[] => Object.keys(reports.get(k)!.lossMetrics).sort();
    assert.deepEqual(names('clip'), ['absLogRatio', 'approxKl', 'clipFractionHigh', 'clipFractionLow']);
    assert.deepEqual(names('gspo'), ['absLogRatio', 'approxKl', 'sequenceClipFraction']);
    assert.deepEqual(names('cispo'), ['absLogRatio', 'approxKl', 'truncatedFraction']);
    // after Adam's first step of 0.1 per logit the ratios are a few percent from 1: outside GSPO's 4e-4 range (both sequences held), inside the clip's 0.2
    const gspo = reports.get('gspo')!;
    assert.equal(gspo.lossMetrics.sequenceClipFraction, 0.5, 'one of the two steps clipped every sequence');
    assert.equal(gspo.clipFraction, 0.5);
    assert.equal(reports.get('clip')!.clipFraction, 0);
    // the first step is on-policy: |log-ratio| 0, which is the mismatch the learner reports
    for (const r of reports.values()) assert.equal(r.logprobMismatch, 0);
  });
});

describe('Learner: per-token statistics', () => {
  it("each trained trajectory gets its first pass's numbers: log-prob, ratio, clip side, entropy; 'before' only when it is before the update", async () => {
    for (const oldLogprobs of ['behaviour', 'recompute'] as const) {
      // a large step, so the second minibatch's ratios leave the clip range
      const learner = learnerOf(new TablePolicy(spec, ADAM_DEFAULTS, 'cpu'), {
        klCoef: 0,
        epochs: 2,
        minibatchSize: 2,
        learningRate: 2,
        oldLogprobs,
        skipZeroAdvantage: true,
      });
      const ts = [tableTraj(0, 1, 0), tableTraj(0, 0, 1), tableTraj(1, 1, 0), tableTraj(1, 0, 1), tableTraj(2, 1, 2), tableTraj(2, 1, 2)];
      learner.assignAdvantages(ts);
      const r = await learner.update(ts);
      assert.equal(r.optimizerSteps, 4, 'two epochs of two minibatches');
      assert.deepEqual(
        ts.map((t) => t.tokenStats === undefined),
        [false, false, false, false, true, true],
        'numbers for the trained, none for the zero-advantage group',
      );
      const steps = ts.slice(0, 4).map((t) => t.tokenStats!.stepsBefore);
      assert.deepEqual([...steps].sort(), [0, 0, 1, 1], `the first epoch's passes only (${steps.join(', ')})`);
      let clipped = 0;
      for (const t of ts.slice(0, 4)) {
        const s = t.tokenStats!;
        assert.equal(s.logp.length, 1);
        assert.equal(s.old, oldLogprobs === 'recompute' ? 'recomputed' : 'behaviour');
        const old = s.old === 'recomputed' ? s.before![0]! : lp3;
        assert.ok(Math.abs(s.ratio[0]! - Math.exp(s.logp[0]! - old)) < 1e-5, `ratio ${s.ratio[0]} vs exp(${s.logp[0]} − ${old})`);
        if (s.stepsBefore === 0) assert.ok(Math.abs(s.before![0]! - s.logp[0]!) < 1e-6);
        else assert.equal(s.before === undefined, oldLogprobs === 'behaviour');
        const expected = s.ratio[0]! > 1.2 && t.advantage > 0 ? 2 : s.ratio[0]! < 0.8 && t.advantage < 0 ? 1 : 0;
        assert.equal(s.clipSide[0], expected, `ratio ${s.ratio[0]}, advantage ${t.advantage}`);
        clipped += s.clipSide[0] > 0 ? 1 : 0;
        assert.ok(s.entropy[0]! > 0 && s.entropy[0]! <= Math.log(3) + 1e-6);
        assert.equal(s.kl, undefined, 'no reference, no KL');
      }
      assert.ok(clipped > 0, 'the large step clipped a token of the second minibatch');
    }
  });

  it('claims no training log-prob before the update for a supervised objective, and records the lag of an older sampler', async () => {
    const rs = learnerOf(new TablePolicy(spec, ADAM_DEFAULTS, 'cpu'), {}, 'rs-sft');
    const ts = [tableTraj(0, 1, 0), tableTraj(0, 0, 1)];
    rs.assignAdvantages(ts);
    await rs.update(ts);
    assert.ok(ts[0]!.tokenStats && ts[0]!.tokenStats.before === undefined, 'RS-SFT: its positions were not scored at the sampling temperature');
    assert.equal(ts[1]!.tokenStats, undefined, 'the failure is not trained on');
    // episodes sampled by version 0, trained after one update (version 1): lag 1
    const p = new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');
    const g = learnerOf(p, { klCoef: 0, skipZeroAdvantage: false });
    const first = [tableTraj(0, 1, 0), tableTraj(0, 0, 1)];
    g.assignAdvantages(first);
    await g.update(first);
    assert.equal(first[0]!.tokenStats!.lag, 0);
    const stale = [tableTraj(0, 1, 0), tableTraj(0, 0, 1)];
    g.assignAdvantages(stale);
    await g.update(stale);
    assert.equal(p.version, 2);
    assert.equal(stale[0]!.tokenStats!.lag, 1, 'sampled by version 0, trained from version 1');
  });
});

describe('Learner: off-policy correction', () => {
  it('truncated-is weighs each token by min(π_old/π_behaviour, isCap), π_old recomputed, and reports the mean weight and the share at the cap', async () => {
    // a group of two sampled by an older policy: (0, a) was 1/9 likely then (now 1/3: weight 3, capped
    // at 2), (0, b) 2/3 (weight 1/2); advantages +1 and −1, ratio to π_old 1, no KL
    const stale = (reward: number, action: number, behaviour: number): Trajectory => {
      const t = tableTraj(0, reward, action);
      return { ...t, turns: [{ ...t.turns[0]!, policy: { ...t.turns[0]!.policy, behaviourLogprob: behaviour } }] };
    };
    const run = async (offPolicyCorrection: 'none' | 'truncated-is') => {
      const learner = learnerOf(new TablePolicy(spec, ADAM_DEFAULTS, 'cpu'), { klCoef: 0, epochs: 1, oldLogprobs: 'recompute', offPolicyCorrection, isCap: 2 });
      const ts = [stale(1, 0, lp3 - Math.log(3)), stale(0, 1, lp3 + Math.log(2))];
      learner.assignAdvantages(ts);
      return learner.update(ts);
    };
    const corrected = await run('truncated-is');
    assert.ok(Math.abs(corrected.importanceWeightMean! - 1.25) < 1e-6, String(corrected.importanceWeightMean));
    assert.equal(corrected.importanceTruncated, 0.5);
    // per sequence −A·w: −1·2 and +1·½, averaged
    assert.ok(Math.abs(corrected.policyLoss - -0.75) < 1e-5, String(corrected.policyLoss));
    const plain = await run('none');
    assert.equal(plain.importanceWeightMean, undefined);
    assert.ok(Math.abs(plain.policyLoss) < 1e-6, String(plain.policyLoss));
  });

  it('a cap that float32 cannot hold exactly still counts the capped tokens', async () => {
    const learner = learnerOf(new TablePolicy(spec, ADAM_DEFAULTS, 'cpu'), {
      klCoef: 0,
      epochs: 1,
      oldLogprobs: 'recompute',
      offPolicyCorrection: 'truncated-is',
      isCap: 1.3,
    });
    const t = tableTraj(0, 1, 0);
    const ts = [{ ...t, turns: [{ ...t.turns[0]!, policy: { ...t.turns[0]!.policy, behaviourLogprob: lp3 - 1 } }] }, tableTraj(0, 0, 1)];
    learner.assignAdvantages(ts);
    const r = await learner.update(ts);
    assert.equal(r.importanceTruncated, 0.5);
  });
});

describe('Learner: schedule', () => {
  const a = { warmupSteps: 4, lrSchedule: 'linear' as const, minLrRatio: 0.1 };
  it('linear warm-up, then a linear decay to minLrRatio at the last step', () => {
    assert.deepEqual(
      [1, 2, 4].map((s) => lrMultiplier(s, a, 14)),
      [0.25, 0.5, 1],
    );
    assert.ok(Math.abs(lrMultiplier(9, a, 14) - (0.1 + 0.9 * 0.5)) < 1e-12);
    assert.ok(Math.abs(lrMultiplier(14, a, 14) - 0.1) < 1e-12);
  });
  it('cosine halfway is the midpoint; constant stays 1', () => {
    assert.ok(Math.abs(lrMultiplier(9, { ...a, lrSchedule: 'cosine' }, 14) - 0.55) < 1e-12);
    assert.equal(lrMultiplier(9, { ...a, lrSchedule: 'constant' }, 14), 1);
  });
});

describe('Learner: one code path for the table and a transformer', () => {
  after(disposeOpened);
  const letterDir = characterTokenizerDir(['Q', 'a', 'b']);
  const letters = HfTokenizer.fromDirectory(letterDir);
  const transformer = (): Promise<TransformerPolicy> =>
    freshPolicy(calculatorEnv(), freshModel({ maxPositions: 16, tokenizer: letterDir, seed: 5 }), { policyOptions: { maxNewTokens: 4 } });
  const textTraj = (ids: number[], group: number, reward: number): Trajectory => ({
    taskId: 'q',
    group,
    indexInGroup: 0,
    termination: 'finished',
    policyVersion: 0,
    advantage: 0,
    outcome: { reward, success: reward >= 1, publicPass: true, privatePass: reward >= 1 },
    turns: [
      {
        index: 0,
        actionText: letters.decode(ids),
        action: { kind: 'tool', name: 'say', args: {} },
        observation: { text: 'Q', data: {} },
        policy: {
          behaviourLogprob: 0,
          policyVersion: 0,
          tokens: { context: letters.encode('Q'), sampled: ids, logprobs: ids.map(() => Math.log(1 / letters.vocabSize)) },
        },
      },
    ],
  });

  it('the same update raises the rewarded choice and lowers the other, for both policies', async () => {
    const table = new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');
    const lm = await transformer();
    const a = letters.encode('a')[0]!;
    const b = letters.encode('b')[0]!;
    const cases: [TrainablePolicy, Trajectory[], (p: TrainablePolicy) => Promise<[number, number]>][] = [
      [
        table,
        [tableTraj(0, 1, 0), tableTraj(0, 0, 1)],
        async (p) => {
          const r = await policyLogprobs(p, [p.sequence(tableTraj(0, 0, 0))!, p.sequence(tableTraj(0, 0, 1))!], {
            model: 'current',
            temperature: 1,
            rows: false,
          });
          return [r.logp[0]![0]!, r.logp[1]![0]!];
        },
      ],
      [
        lm,
        [textTraj([a], 0, 1), textTraj([b], 0, 0)],
        async (p) => {
          const r = await policyLogprobs(p, [p.sequence(textTraj([a], 0, 0))!, p.sequence(textTraj([b], 0, 0))!], {
            model: 'current',
            temperature: 1,
            rows: false,
          });
          return [r.logp[0]![0]!, r.logp[1]![0]!];
        },
      ],
    ];
    for (const [p, ts, probe] of cases) {
      const [goodBefore, badBefore] = await probe(p);
      const learner = learnerOf(p, { learningRate: 0.05, klCoef: 0, epochs: 1, warmupSteps: 0 });
      learner.assignAdvantages(ts);
      const r = await learner.update(ts);
      const [goodAfter, badAfter] = await probe(p);
      const name = p instanceof TablePolicy ? 'table' : 'transformer';
      assert.equal(r.optimizerSteps, 1, name);
      assert.ok(goodAfter > goodBefore && badAfter < badBefore, `${name}: rewarded ${goodBefore} → ${goodAfter}, other ${badBefore} → ${badAfter}`);
      await p.dispose?.();
    }
  });

  it("GSPO and CISPO train a language model through the engine's own pass: the rewarded choice rises, the other falls", async () => {
    const a = letters.encode('a')[0]!;
    const b = letters.encode('b')[0]!;
    for (const policyLoss of ['gspo', 'cispo'] as const) {
      const lm = await transformer();
      const probe = async (): Promise<[number, number]> => {
        const r = await policyLogprobs(lm, [lm.sequence(textTraj([a], 0, 0))!, lm.sequence(textTraj([b], 0, 0))!], {
          model: 'current',
          temperature: 1,
          rows: false,
        });
        return [r.logp[0]![0]!, r.logp[1]![0]!];
      };
      const [goodBefore, badBefore] = await probe();
      // π_old recomputed: the ratio is 1 at the step, inside GSPO's 4e-4 range
      const learner = learnerOf(lm, { learningRate: 0.05, klCoef: 0, epochs: 1, warmupSteps: 0, oldLogprobs: 'recompute', policyLoss });
      const ts = [textTraj([a], 0, 1), textTraj([b], 0, 0)];
      learner.assignAdvantages(ts);
      const r = await learner.update(ts);
      const [goodAfter, badAfter] = await probe();
      assert.equal(r.optimizerSteps, 1, policyLoss);
      assert.ok(Number.isFinite(r.loss) && r.clipFraction === 0, `${policyLoss}: loss ${r.loss}, clip fraction ${r.clipFraction}`);
      assert.ok(policyLoss === 'gspo' ? 'sequenceClipFraction' in r.lossMetrics : 'truncatedFraction' in r.lossMetrics, JSON.stringify(r.lossMetrics));
      assert.ok(goodAfter > goodBefore && badAfter < badBefore, `${policyLoss}: rewarded ${goodBefore} → ${goodAfter}, other ${badBefore} → ${badAfter}`);
      await lm.dispose?.();
    }
  });

  it('a demonstration longer than the context is cut to it and counted, never trained past it', async () => {
    const lm = await transformer();
    const long = textTraj(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? letters.encode('a')[0]! : letters.encode('b')[0]!)),
      0,
      1,
    );
    const learner = new Learner(lm, { method: 'sft', settings: settings({}, 'transformer', 'sft'), imitate: 'all', totalSteps: 1, seed: 1 });
    const r = await learner.update([long, textTraj([1], 1, 1)]);
    assert.equal(r.truncatedSequences, 1);
    assert.equal(r.trainedTrajectories, 2);
    assert.ok(lm.sequence(long)!.targets.length > lm.maxPositions);
    // the model itself refuses positions past its context
    await assert.rejects(
      policyLogprobs(lm, [lm.sequence(long)!], { model: 'current', temperature: 1, rows: false }),
      /a sequence of 30 positions, but the context is 16/,
    );
    await lm.dispose();
  });
});

describe('Learner: on-policy distillation and the teacher term (issue 51)', () => {
  /** A teacher that gives action 0 probability 1/2 and every other 1/4, and records what it was asked to score. */
  const fakeTeacher = (): TeacherScorer & { seen: number[][] } => {
    const seen: number[][] = [];
    return {
      seen,
      describe: 'fake teacher',
      dispose: () => Promise.resolve(),
      score: (seqs) => {
        seen.push(...seqs.map((s) => [...s.targets]));
        return Promise.resolve(seqs.map((s) => Float32Array.from(s.targets, (a) => Math.log(a === 0 ? 0.5 : 0.25))));
      },
    };
  };
  const probs = async (p: TrainablePolicy): Promise<[number, number]> => {
    const r = await policyLogprobs(p, [p.sequence(tableTraj(0, 0, 0))!, p.sequence(tableTraj(0, 0, 1))!], { model: 'current', temperature: 1, rows: false });
    return [r.logp[0]![0]!, r.logp[1]![0]!];
  };

  it('distill: no group advantage, every trajectory trained, each token pushed by −(log π_student − log π_teacher)', async () => {
    const p = new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');
    const teacher = fakeTeacher();
    const learner = new Learner(p, {
      method: 'distill',
      settings: settings({ teacherWeight: 1 }, 'table', 'distill'),
      imitate: 'all',
      totalSteps: 100,
      seed: 3,
      teacher,
    });
    // the same reward in the group (GRPO would see no spread): distillation does not care
    const ts = [tableTraj(0, 1, 0), tableTraj(0, 1, 1)];
    learner.assignAdvantages(ts);
    assert.deepEqual(
      ts.map((t) => t.advantage),
      [0, 0],
    );
    const [before0, before1] = await probs(p);
    const r = await learner.update(ts);
    assert.equal(r.trainedTrajectories, 2);
    // the teacher scored the sampled ids themselves
    assert.deepEqual([...teacher.seen].sort(), [[0], [1]]);
    // reverse KL per token: (log 1/3 − log 1/2 + log 1/3 − log 1/4) / 2 = (2·log 1/3 − log 1/8) / 2 ≈ −0.0589
    const kl = (2 * Math.log(1 / 3) - Math.log(1 / 8)) / 2;
    assert.ok(Math.abs(r.lossMetrics.teacherReverseKl! - kl) < 1e-6, String(r.lossMetrics.teacherReverseKl));
    assert.ok(r.lossMetrics.teacherMs! >= 0);
    // each trajectory carries the teacher's log-prob of its one trained token and student − teacher, for the store
    for (const t of ts) {
      const s = t.tokenStats!;
      const action = t.turns[0]!.policy.actionIndex!;
      const teacherLp = Math.log(action === 0 ? 0.5 : 0.25);
      assert.deepEqual(Array.from(s.teacher!), [Math.fround(teacherLp)]);
      assert.equal(s.reverseKl!.length, 1);
      assert.ok(Math.abs(s.reverseKl![0]! - (t.turns[0]!.policy.behaviourLogprob - teacherLp)) < 1e-6, `${s.reverseKl![0]}`);
    }
    // action 0 (the teacher likes it more than the student did: A = +0.405) rises; action 1 (A = −0.288) falls
    const [after0, after1] = await probs(p);
    assert.ok(after0 > before0 && after1 < before1, `${before0}→${after0}, ${before1}→${after1}`);
  });

  it('grpo + teacher term: zero-advantage groups stay in the loss (their tokens have the teacher’s term); no teacher, no run', async () => {
    const p = new TablePolicy(spec, ADAM_DEFAULTS, 'cpu');
    const withTeacher = new Learner(p, {
      method: 'grpo',
      settings: settings({ skipZeroAdvantage: true, teacherWeight: 0.5 }),
      imitate: 'all',
      totalSteps: 100,
      seed: 3,
      teacher: fakeTeacher(),
    });
    const ts = [tableTraj(0, 1, 0), tableTraj(0, 1, 1)];
    withTeacher.assignAdvantages(ts);
    const r = await withTeacher.update(ts);
    assert.deepEqual([r.trainedTrajectories, r.excluded], [2, {}]);
    assert.ok(Math.abs(r.lossMetrics.teacherReverseKl! - (2 * Math.log(1 / 3) - Math.log(1 / 8)) / 2) < 1e-6);
    // without the teacher term, the same group is filtered as before
    const plain = learnerOf(new TablePolicy(spec, ADAM_DEFAULTS, 'cpu'), { skipZeroAdvantage: true });
    plain.assignAdvantages(ts);
    assert.deepEqual((await plain.update(ts)).excluded, { zero_advantage: 2 });
    assert.ok(
      ts.every((t) => t.tokenStats === undefined),
      'no teacher: no teacher columns (and here nothing trained)',
    );
    assert.throws(() => learnerOf(p, { teacherWeight: 0.5 }), /teacherWeight 0\.5 needs a teacher.*Fix: name one \(policyOptions\.teacher\)/);
  });
});
