// The learner's per-token numbers end to end: a tiny GRPO run through the CLI stores them for every
// trajectory it trained on, placed on the tokens the policy generated, consistent with the clip rule
// and the run's recorded mismatch; the worst-token lists and the histogram read them back.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { openStore } from '../../src/store/openStore';
import { TokenStatsReader } from '../../src/store/tokenStatsReader';
import { RunReader } from '../../src/store/runReader';
import type { RunRecord } from '../../src/cli/runRecord';
import { runCli, tempDir } from '../helpers/cli';

const tiny = { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 128, maxNewTokens: 24 };

describe('per-token statistics (tiny transformer, GRPO, KL to the reference)', () => {
  it('are stored for each trained trajectory, one per generated token, and read back as worst tokens and a histogram', () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'tiny.json'),
      JSON.stringify({
        env: 'calculator',
        policy: 'transformer',
        method: 'grpo',
        seed: 5,
        iterations: 2,
        groupsPerIteration: 4,
        groupSize: 4,
        evalEpisodes: 4,
        policyOptions: { ...tiny, temperature: 1.5 },
        // whole-batch minibatches of 8: the second minibatch of each iteration sees one step already taken
        algorithm: { minibatchSize: 8, klCoef: 0.05, klEstimator: 'k3', skipZeroAdvantage: false, learningRate: 0.05 },
      }),
    );
    const r = runCli(['train', '--config', 'tiny.json', '--output', 'out.json'], dir);
    assert.equal(r.code, 0, r.stderr);
    const rec = JSON.parse(fs.readFileSync(path.join(dir, 'out.json'), 'utf8')) as RunRecord;
    const db = openStore(path.join(dir, '.agent-rl', 'runs.sqlite'), { readonly: true });
    try {
      const runs = new RunReader(db);
      const tokens = new TokenStatsReader(db);
      let stored = 0;
      let firstPass = 0;
      for (const it of rec.iterations) {
        const page = runs.trajectoriesPage(rec.runId, it.iteration, 0, 1000);
        for (const t of page.items) {
          const stats = tokens.stats(t.id);
          if (t.excluded) {
            assert.equal(stats, undefined, `trajectory ${t.id} was left out (${t.excluded}): no numbers`);
            continue;
          }
          assert.ok(stats, `trajectory ${t.id} was trained on: numbers stored`);
          stored += 1;
          const rows = tokens.rows(t.id);
          const detail = runs.trajectory(t.id)!;
          const generated = detail.turnList.reduce((n, u) => n + ((u.policy.tokens as { sampled: number[] }).sampled.length ?? 0), 0);
          assert.equal(rows.length, generated, 'one row per generated token');
          assert.equal(stats.logp.length, rows.filter((x) => x.trained).length);
          assert.ok(stats.kl && stats.kl.length === stats.logp.length, 'KL to the reference at every trained token');
          for (const x of rows.filter((y) => y.trained)) {
            assert.ok(x.entropy! >= 0 && x.kl! >= -1e-6, `entropy ${x.entropy}, k3 ${x.kl}`);
            // the clip rule: high only above 1 + ε_high with A > 0, low only below 1 − ε_low with A < 0
            if (x.clip === 'high') assert.ok(x.ratio! > 1.28 - 1e-6 && t.advantage > 0);
            if (x.clip === 'low') assert.ok(x.ratio! < 0.8 + 1e-6 && t.advantage < 0);
            if (x.clip === 'none') assert.ok(!(x.ratio! > 1.28 + 1e-4 && t.advantage > 0) && !(x.ratio! < 0.8 - 1e-4 && t.advantage < 0));
          }
          if (stats.stepsBefore === 0) {
            firstPass += 1;
            // before any step of its update the trainer's log-prob is the sampler's (the run's own mismatch metric agrees)
            for (const x of rows.filter((y) => y.trained)) assert.ok(Math.abs(x.mismatch!) < 1e-3, `mismatch ${x.mismatch}`);
          } else {
            assert.equal(stats.before, undefined, 'a pass after another step does not claim to be before the update');
          }
        }
      }
      assert.ok(stored >= 8, `${stored} trajectories with numbers`);
      assert.ok(firstPass >= 4 && firstPass < stored, `${firstPass} of ${stored} saw the weights that sampled them`);
      // worst tokens by |log ratio| over the run: sorted, and each is the largest of its own trajectory's rows
      const worst = tokens.worst({ runId: rec.runId, by: 'logRatio', limit: 10 });
      assert.equal(worst.length, 10);
      for (let i = 1; i < worst.length; i++) assert.ok(worst[i - 1]!.value >= worst[i]!.value);
      const all = rec.iterations.flatMap((it) => runs.trajectoriesPage(rec.runId, it.iteration, 0, 1000).items.flatMap((t) => tokens.rows(t.id)));
      const brute = all
        .filter((x) => x.ratio !== undefined)
        .map((x) => Math.abs(Math.log(x.ratio!)))
        .sort((a, b) => b - a);
      assert.ok(Math.abs(worst[0]!.value - brute[0]!) < 1e-9 && Math.abs(worst[9]!.value - brute[9]!) < 1e-9, 'the run-wide list is the exact top 10');
      const inIteration = tokens.worst({ runId: rec.runId, iteration: 2, by: 'kl', limit: 5 });
      assert.ok(inIteration.every((w) => w.iteration === 2 && w.kl === w.value));
      const h = tokens.mismatchHistogram(rec.runId, 1, 10);
      assert.equal(
        h.counts.reduce((a, b) => a + b, 0),
        h.tokens,
      );
      assert.ok(h.tokens > 0 && h.unknown > 0, `${h.tokens} known, ${h.unknown} trained after another step`);
    } finally {
      db.close();
    }
  });
});
