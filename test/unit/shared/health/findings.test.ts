// Run-health findings on synthetic series: each fires on its pathology, with the severity its bar
// gives, and stays quiet on a healthy run (reward rising slowly, entropy easing, KL growing steadily).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { FINDING_IDS, findingRecord, healthContextOf, healthFindings, type HealthFinding } from '../../../../src/shared/health/findings';
import { HEALTH_THRESHOLDS } from '../../../../src/shared/health/healthThresholds';
import type { IterationMetrics } from '../../../../src/shared/types';
import { jsonText } from '../../../../src/shared/untrustedText';
import { findingLines } from '../../../../src/cli/healthCommand';
import { HOSTILE, rawInvisible } from '../hostileInputs';

const N = 12;
const CTX = { groupSize: 8 };

/** A healthy iteration i (1-based) of N: 4 groups of 8, reward and both pass rates rising together. */
function healthy(i: number): IterationMetrics {
  const t = (i - 1) / (N - 1);
  return {
    iteration: i,
    rewardMean: 0.1 + 0.5 * t,
    rewardMax: 1,
    rewardMin: 0,
    successRate: 0.1 + 0.5 * t,
    publicPassRate: 0.2 + 0.5 * t,
    privatePassRate: 0.15 + 0.5 * t,
    meanTurns: 4,
    zeroVarianceGroups: i % 3 === 0 ? 1 : 0,
    trajectories: 32,
    loss: 0,
    policyLoss: 0,
    kl: 0.02 * i,
    clipFraction: 0.04 + 0.01 * (i % 2),
    entropy: 1.8 - 0.4 * t,
    gradNorm: 1,
    ratioMin: 0.9,
    ratioMax: 1.1,
    updated: 1,
    trainedTrajectories: 32,
    truncatedEpisodes: i % 4 === 0 ? 1 : 0,
    responseTokens: 100 + (i % 3),
    logprobMismatch: 0.002 + 0.0005 * (i % 2),
    rewardExtras: { correctness: 0.5, format: 0.3, length: 0.2 },
    toolHealth: { search: { calls: 40, callsPerEpisode: 1.25, errorRate: 0.05, timeoutRate: 0.01 } },
    lossMetrics: { dualClipFraction: 0.01 },
    policyVersion: i,
    wallMs: 100,
  };
}

/** N healthy iterations with `change` applied to each (it gets the iteration and the 0–1 position). */
function run(change: (i: number, t: number) => Partial<IterationMetrics> = () => ({})): IterationMetrics[] {
  return Array.from({ length: N }, (_, k) => ({ ...healthy(k + 1), ...change(k + 1, k / (N - 1)) }));
}

const only = (fs: readonly HealthFinding[], id: string): HealthFinding => {
  const hits = fs.filter((f) => f.id === id);
  assert.equal(hits.length, 1, `one ${id} finding, got ${JSON.stringify(fs.map((f) => f.id))}`);
  return hits[0]!;
};

describe('healthFindings', () => {
  it('a healthy run raises nothing', () => {
    assert.deepEqual(healthFindings(run(), CTX), []);
  });

  it('no signal: most groups all-equal for iterations in a row; severe when nearly all and unsolved, info when solved', () => {
    const stuck = only(
      healthFindings(
        run((i) => (i >= 5 ? { zeroVarianceGroups: 4, successRate: 0, rewardMean: 0 } : {})),
        CTX,
      ),
      'no-signal',
    );
    assert.equal(stuck.severity, 'severe');
    assert.deepEqual(stuck.iterations, [5, 12]);
    assert.deepEqual(stuck.pick, { kind: 'equalGroup' });
    const half = only(
      healthFindings(
        run((i) => (i >= 5 ? { zeroVarianceGroups: 2 } : {})),
        CTX,
      ),
      'no-signal',
    );
    assert.equal(half.severity, 'warning');
    const solved = only(
      healthFindings(
        run((i) => (i >= 5 ? { zeroVarianceGroups: 4, successRate: 1 } : {})),
        CTX,
      ),
      'no-signal',
    );
    assert.equal(solved.severity, 'info');
    assert.match(solved.summary, /solved/);
    // two iterations in a row are chance, not a finding
    assert.deepEqual(
      healthFindings(
        run((i) => (i === 5 || i === 6 ? { zeroVarianceGroups: 4 } : {})),
        CTX,
      ).filter((f) => f.id === 'no-signal'),
      [],
    );
    // without the group size the share is unknown: no guess
    assert.deepEqual(
      healthFindings(run((i) => (i >= 5 ? { zeroVarianceGroups: 4 } : {}))).filter((f) => f.id === 'no-signal'),
      [],
    );
    // where the group's spread is not the signal, equal rewards are not "no signal": a group of one, SFT,
    // RS-SFT (trains on successes), distillation and a GRPO run with a teacher term; GRPO (named or an
    // imported run's absent method) keeps the finding
    const allEqual = run((i) => (i >= 5 ? { zeroVarianceGroups: 4, successRate: 0, rewardMean: 0 } : {}));
    for (const ctx of [
      { groupSize: 1 },
      { ...CTX, method: 'sft' },
      { ...CTX, method: 'rs-sft' },
      { ...CTX, method: 'distill' },
      { ...CTX, method: 'grpo', teacherWeight: 0.5 },
    ])
      assert.deepEqual(
        healthFindings(allEqual, ctx).filter((f) => f.id === 'no-signal'),
        [],
        JSON.stringify(ctx),
      );
    assert.equal(only(healthFindings(allEqual, { ...CTX, method: 'grpo', teacherWeight: 0 }), 'no-signal').severity, 'severe');
    assert.deepEqual(healthContextOf({ groupSize: 8, method: 'rs-sft', algorithm: { teacherWeight: 0.5 } }), {
      groupSize: 8,
      method: 'rs-sft',
      teacherWeight: 0.5,
    });
  });

  it('entropy collapse: a large fall within a few iterations; the same fall spread over the run is not one', () => {
    const f = only(
      healthFindings(
        run((i) => ({ entropy: i < 6 ? 1.8 : 0.05 })),
        CTX,
      ),
      'entropy-collapse',
    );
    assert.equal(f.severity, 'severe');
    // from the last high iteration to the last one whose window still holds it
    assert.deepEqual(f.iterations, [5, 10]);
    assert.match(f.summary, /1\.800 at iteration 5 to 0\.050 at 6/);
    const w = only(
      healthFindings(
        run((i) => ({ entropy: i < 6 ? 1.8 : 0.8 })),
        CTX,
      ),
      'entropy-collapse',
    );
    assert.equal(w.severity, 'warning');
    // 1.8 → 0.9 over 12 iterations: 6% per iteration, never half within the window
    assert.deepEqual(
      healthFindings(
        run((_, t) => ({ entropy: 1.8 - 0.9 * t })),
        CTX,
      ),
      [],
    );
    // SFT lowers entropy by design: not for method sft; RS-SFT and distillation keep it
    const fit = run((i) => ({ entropy: i < 6 ? 1.8 : 0.05 }));
    assert.ok(!healthFindings(fit, { ...CTX, method: 'sft' }).some((x) => x.id === 'entropy-collapse'));
    for (const method of ['rs-sft', 'distill', 'grpo']) only(healthFindings(fit, { ...CTX, method }), 'entropy-collapse');
    // half of a near-zero entropy is not a collapse (npm start's GRPO run: 0.046 → 0.021 nats); a fall of 0.15 nats is
    assert.deepEqual(
      healthFindings(
        run((i) => ({ entropy: i < 6 ? 0.046 : 0.021 })),
        CTX,
      ),
      [],
    );
    assert.equal(
      only(
        healthFindings(
          run((i) => ({ entropy: i < 6 ? 0.25 : 0.1 })),
          CTX,
        ),
        'entropy-collapse',
      ).severity,
      'warning',
    );
    // an imported run (entropy 0 throughout) and a skipped update (entropy 0, updated 0) are no fall
    assert.deepEqual(
      healthFindings(
        run(() => ({ entropy: 0 })),
        CTX,
      ),
      [],
    );
    assert.deepEqual(
      healthFindings(
        run((i) => (i === 7 ? { entropy: 0, updated: 0 } : {})),
        CTX,
      ),
      [],
    );
  });

  it('length drift and budget cuts', () => {
    const longer = only(
      healthFindings(
        run((_, t) => ({ responseTokens: 100 + 150 * t })),
        CTX,
      ),
      'length-drift',
    );
    assert.equal(longer.severity, 'severe');
    assert.deepEqual(longer.pick, { kind: 'longest' });
    const cuts = only(
      healthFindings(
        run((_, t) => ({ truncatedEpisodes: Math.round(32 * 0.45 * t) })),
        CTX,
      ),
      'budget-cuts',
    );
    assert.equal(cuts.severity, 'warning', `the last three average under half: ${cuts.summary}`);
    assert.deepEqual(cuts.pick, { kind: 'longestCut' });
    // a task set whose episodes are always cut this often has not drifted
    assert.deepEqual(
      healthFindings(
        run(() => ({ truncatedEpisodes: 10 })),
        CTX,
      ),
      [],
    );
  });

  it('reward hacking: reward up while private tests fall behind the public ones, or stall', () => {
    const gap = only(
      healthFindings(
        run((_, t) => ({ publicPassRate: 0.2 + 0.7 * t, privatePassRate: 0.2 })),
        CTX,
      ),
      'reward-hacking',
    );
    assert.equal(gap.severity, 'severe');
    assert.deepEqual(gap.pick, { kind: 'rewardedPrivateFail' });
    const stall = only(
      healthFindings(
        run(() => ({ publicPassRate: 0.3, privatePassRate: 0.3 })),
        CTX,
      ),
      'reward-hacking',
    );
    assert.equal(stall.severity, 'warning');
    assert.match(stall.summary, /private pass rate 30% → 30%/);
    // private tests already passing (≥ 90%) have no room to rise: a reward climbing beside them is no stall
    assert.deepEqual(
      healthFindings(
        run(() => ({ publicPassRate: 0.95, privatePassRate: 0.95 })),
        CTX,
      ).filter((f) => f.id === 'reward-hacking'),
      [],
    );
    // no tests in the environment (pass rates 0): no independent check, no finding
    assert.deepEqual(
      healthFindings(
        run(() => ({ publicPassRate: 0, privatePassRate: 0 })),
        CTX,
      ),
      [],
    );
  });

  it('one reward extra dominating', () => {
    const f = only(
      healthFindings(
        run(() => ({ rewardExtras: { length: 4, correctness: 0.3, format: 0.1 } })),
        CTX,
      ),
      'reward-component-dominates',
    );
    assert.equal(f.severity, 'info');
    assert.match(f.summary, /"length" carries 91%/);
  });

  it('policy drift: KL accelerating; clip and dual-clip spikes', () => {
    const kl = only(
      healthFindings(
        run((i) => ({ kl: i < 7 ? 0.02 * i : 0.12 + 0.3 * (i - 6) })),
        CTX,
      ),
      'kl-acceleration',
    );
    assert.equal(kl.severity, 'warning');
    // KL growing fast but steadily from the start is not acceleration
    assert.deepEqual(
      healthFindings(
        run((i) => ({ kl: 0.3 * i })),
        CTX,
      ),
      [],
    );
    const clip = only(
      healthFindings(
        run((i) => (i === 9 ? { clipFraction: 0.45 } : {})),
        CTX,
      ),
      'clip-spike',
    );
    assert.equal(clip.severity, 'severe');
    assert.deepEqual(clip.iterations, [9, 9]);
    const dual = only(
      healthFindings(
        run((i) => (i === 10 ? { lossMetrics: { dualClipFraction: 0.25 } } : {})),
        CTX,
      ),
      'clip-spike',
    );
    assert.equal(dual.severity, 'warning');
    assert.match(dual.summary, /dual-clip/);
    // a steady 30% (a tight ε) is no spike
    assert.deepEqual(
      healthFindings(
        run(() => ({ clipFraction: 0.3 })),
        CTX,
      ),
      [],
    );
  });

  it('train–inference mismatch jumping', () => {
    const f = only(
      healthFindings(
        run((i) => (i >= 8 ? { logprobMismatch: 0.3 } : {})),
        CTX,
      ),
      'mismatch-jump',
    );
    assert.equal(f.severity, 'severe');
    assert.deepEqual(f.iterations, [8, 12]);
    assert.deepEqual(f.pick, { kind: 'worstMismatch' });
  });

  it("tool trouble: a tool's failed or timed-out share rising", () => {
    const f = only(
      healthFindings(
        run((_, t) => ({ toolHealth: { search: { calls: 40, callsPerEpisode: 1.25, errorRate: 0.05 + 0.5 * t, timeoutRate: 0.2 * t } } })),
        CTX,
      ),
      'tool-trouble',
    );
    assert.equal(f.severity, 'severe');
    assert.match(f.summary, /"search" calls/);
    // always failing this often is a known cost
    assert.deepEqual(
      healthFindings(
        run(() => ({ toolHealth: { search: { calls: 40, callsPerEpisode: 1.25, errorRate: 0.4, timeoutRate: 0 } } })),
        CTX,
      ),
      [],
    );
  });

  it('orders the most severe first; stored values of the wrong type are ignored, not thrown on', () => {
    const fs = healthFindings(
      run((i) => ({ ...(i >= 5 ? { zeroVarianceGroups: 4, successRate: 1 } : {}), ...(i === 9 ? { clipFraction: 0.45 } : {}) })),
      CTX,
    );
    assert.deepEqual(
      fs.map((f) => f.severity),
      ['severe', 'info'],
    );
    const junk = run().map((m) => ({
      ...m,
      entropy: 'x',
      kl: null,
      toolHealth: { s: { errorRate: 'bad' } },
      rewardExtras: [1, 2],
    })) as unknown as IterationMetrics[];
    assert.deepEqual(healthFindings(junk, CTX), []);
    assert.deepEqual(healthFindings([], CTX), []);
  });

  it('the record form keeps id, severity, iterations, summary and episodes', () => {
    const f = healthFindings(
      run((i) => (i >= 5 ? { zeroVarianceGroups: 4 } : {})),
      CTX,
    )[0]!;
    assert.deepEqual(Object.keys(findingRecord(f)), ['id', 'severity', 'iterations', 'summary', 'episodes']);
  });

  it('the group size comes from a stored config of any shape', () => {
    assert.deepEqual(healthContextOf({ groupSize: 8 }), { groupSize: 8 });
    assert.deepEqual(healthContextOf({ groupSize: '8' }), {});
    assert.deepEqual(healthContextOf(null), {});
  });

  it('every bar has a reason', () => {
    for (const [name, cell] of Object.entries(HEALTH_THRESHOLDS)) assert.ok(cell.reason.length > 20 && Number.isFinite(cell.value), name);
  });
});

describe('findings quote stored names inertly', () => {
  for (const p of HOSTILE) {
    it(`${p.name}: a hostile tool name and reward extra reach the CLI lines and JSON inert`, () => {
      const its = run((_, t) => ({
        toolHealth: { [p.text]: { calls: 40, callsPerEpisode: 1, errorRate: 0.05 + 0.6 * t, timeoutRate: 0 } },
        rewardExtras: { [p.text]: 5, other: 0.1 },
      }));
      const fs = healthFindings(its, CTX);
      assert.deepEqual(fs.map((f) => f.id).sort(), ['reward-component-dominates', 'tool-trouble']);
      for (const f of fs) {
        const lines = findingLines(findingRecord(f));
        for (const line of lines) {
          assert.equal(rawInvisible(line), undefined, line.slice(0, 200));
          assert.ok(!line.includes('\n') && line.length < 1000, 'one line, cut');
        }
        const json = jsonText({ findings: [findingRecord(f)] });
        assert.equal(rawInvisible(json), undefined);
        assert.ok((JSON.parse(json) as { findings: { summary: string }[] }).findings[0]!.summary.includes(p.text.slice(0, 20)) || p.text.length === 0);
      }
    });
  }
});

describe('docs/health.md', () => {
  it('has a row for every finding, and names the table its bars come from', () => {
    const doc = fs.readFileSync(path.join(__dirname, '..', '..', '..', '..', '..', 'docs', 'health.md'), 'utf8');
    for (const id of FINDING_IDS) assert.ok(doc.includes(`| \`${id}\` |`), `docs/health.md has no row for ${id}`);
    assert.ok(doc.includes('src/shared/health/healthThresholds.ts'));
  });
});
