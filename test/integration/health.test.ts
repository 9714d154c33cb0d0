// Run health on real training through the CLI (issue 52): runs built to fail in a known way raise
// their finding within a few iterations, with episodes from the database that show it; the seed 002
// defaults (binary-search, table policy, GRPO) raise nothing severe. Each run takes a second or two.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import type { RunRecord } from '../../src/cli/runRecord';
import type { FindingRecord } from '../../src/shared/health/findings';
import { ROOT, runCli, tempDir } from '../helpers/cli';
import { openStore } from '../../src/store/openStore';
import { pickEpisodes } from '../../src/store/healthEpisodes';
import type { EpisodePick } from '../../src/shared/health/findings';
import { rawInvisible } from '../unit/shared/hostileInputs';
import { openBinarySearch } from '../../src/rl/envs/binarySearchRepair';
import { train } from '../../src/rl/train/trainer';
import { validateEnvOptions, validateRunConfig } from '../../src/shared/runConfig';
import { RunWriter } from '../../src/store/runWriter';
import { withReward } from '../helpers/rewardedEnvironment';
import type { TrajectorySummary } from '../../src/shared/protocol/backendProtocol';

function health(cwd: string, run: string): FindingRecord[] {
  const r = runCli(['health', run, '--json'], cwd);
  assert.equal(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { findings: FindingRecord[] }).findings;
}

/** The trajectory as `agent-rl trajectory ID --json` prints it. */
function trajectory(cwd: string, id: number): TrajectorySummary & { runId: number } {
  const r = runCli(['trajectory', String(id), '--json'], cwd);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as TrajectorySummary & { runId: number };
}

/**
 * Trains `config` (a binary-search run on the table policy) with the environment's reward replaced by
 * `reward`, stored by the real store writer in `cwd`'s default database, where the CLI finds it as run 1.
 */
async function trainRewarded(cwd: string, given: Record<string, unknown>, reward: Parameters<typeof withReward>[2]): Promise<void> {
  const config = validateRunConfig({ env: 'binary-search', policy: 'table', method: 'grpo', evalEpisodes: 8, ...given });
  const env = withReward(openBinarySearch(validateEnvOptions('binary-search', config.envOptions)), 'binary-search', reward);
  const file = path.join(cwd, '.agent-rl', 'runs.sqlite');
  const db = openStore(file, { busyTimeoutMs: 1000 });
  try {
    const result = await train(config, { sink: new RunWriter(db, file), environment: env });
    assert.equal(result.status, 'completed');
  } finally {
    db.close();
    await env.dispose();
  }
}

describe('agent-rl health on real runs', () => {
  it('no signal: a one-step budget leaves every group of a task with equal rewards, found with one such group', () => {
    const cwd = tempDir();
    fs.writeFileSync(path.join(cwd, 'one-step.json'), JSON.stringify({ envOptions: { stepBudget: 1 } }));
    const t = runCli(['train', '--seed', '3', '--iterations', '4', '--eval-episodes', '8', '--config', 'one-step.json', '--name', 'stuck'], cwd);
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, /severe {2}no-signal/, 'train prints the severe finding at the end');
    const f = health(cwd, 'stuck').find((x) => x.id === 'no-signal');
    assert.ok(f, 'no-signal found');
    assert.equal(f.severity, 'severe');
    assert.deepEqual(f.iterations, [1, 4], 'from the first iteration: every group equal from the start');
    assert.equal(f.episodes.length, 3);
    const shown = f.episodes.map((id) => trajectory(cwd, id));
    assert.equal(new Set(shown.map((s) => `${s.iteration}/${s.group}`)).size, 1, 'the episodes are one group');
    assert.equal(new Set(shown.map((s) => s.reward)).size, 1, 'whose rewards are equal');
    // the run record carries the same findings
    const rec = JSON.parse(runCli(['show', 'stuck', '--json'], cwd).stdout) as RunRecord;
    assert.deepEqual(
      rec.findings.map((x) => x.id),
      health(cwd, 'stuck').map((x) => x.id),
    );
  });

  it('entropy collapse: a learning rate of 3 on the table policy collapses entropy within three iterations', () => {
    const cwd = tempDir();
    const t = runCli(['train', '--seed', '3', '--iterations', '6', '--eval-episodes', '8', '--lr', '3', '--name', 'hot', '--output', 'rec.json'], cwd);
    assert.equal(t.code, 0, t.stderr);
    const f = health(cwd, 'hot').find((x) => x.id === 'entropy-collapse');
    assert.ok(f, 'entropy-collapse found');
    assert.equal(f.severity, 'severe');
    assert.ok(f.iterations[0] <= 3, `starts by iteration 3: ${JSON.stringify(f.iterations)}`);
    const rec = JSON.parse(fs.readFileSync(path.join(cwd, 'rec.json'), 'utf8')) as RunRecord;
    assert.ok(
      rec.findings.some((x) => x.id === 'entropy-collapse' && x.severity === 'severe'),
      "train --output's record has it",
    );
    for (const id of f.episodes) assert.equal(trajectory(cwd, id).runId, 1);
  });

  it('SFT: entropy falling as the model fits its demonstrations raises no entropy collapse', () => {
    // a small transformer's SFT on the calculator's demonstrations at Adam 0.05: entropy falls by four
    // fifths within 5 iterations, the fit SFT is for (RL's bar would call it severe)
    const cwd = tempDir();
    const config = {
      env: 'calculator',
      policy: 'transformer',
      method: 'sft',
      iterations: 8,
      evalEpisodes: 4,
      policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 256 },
      algorithm: { learningRate: 0.05 },
    };
    fs.writeFileSync(path.join(cwd, 'sft.json'), JSON.stringify(config));
    const t = runCli(['train', '--config', 'sft.json', '--seed', '3', '--name', 'fit'], cwd);
    assert.equal(t.code, 0, t.stderr);
    const entropy = (JSON.parse(runCli(['show', 'fit', '--json'], cwd).stdout) as RunRecord).iterations.map((m) => m.entropy);
    const fall = Math.max(...entropy.slice(5).map((e, i) => 1 - e / Math.max(...entropy.slice(i, i + 5))));
    assert.ok(fall >= 0.8, `entropy fell ${fall} within 5 iterations: ${entropy.join(', ')}`);
    assert.deepEqual(
      health(cwd, 'fit').filter((x) => x.id === 'entropy-collapse'),
      [],
    );
  });

  it('the seed 002 defaults (100 iterations of GRPO) raise no severe finding and no warning', () => {
    const cwd = tempDir();
    const t = runCli(['train', '--env', 'binary-search', '--policy', 'table', '--method', 'grpo', '--seed', '7', '--eval-episodes', '16'], cwd);
    assert.equal(t.code, 0, t.stderr);
    const fs2 = health(cwd, '1');
    assert.deepEqual(
      fs2.filter((x) => x.severity !== 'info'),
      [],
    );
    // groups agree once the task is solved: said, as info
    assert.ok(fs2.some((x) => x.id === 'no-signal' && x.severity === 'info'));
    const text = runCli(['health', '1'], cwd);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /^info {4}no-signal/m);
  });

  it('every episode pick runs on a real store and returns the run’s own trajectories, best first', () => {
    const cwd = tempDir();
    assert.equal(runCli(['train', '--seed', '3', '--iterations', '3', '--eval-episodes', '8'], cwd).code, 0);
    assert.equal(runCli(['train', '--seed', '4', '--iterations', '3', '--eval-episodes', '8'], cwd).code, 0);
    const db = openStore(path.join(cwd, '.agent-rl', 'runs.sqlite'), { busyTimeoutMs: 1000 });
    try {
      const kinds: EpisodePick['kind'][] = [
        'equalGroup',
        'longestCut',
        'longest',
        'rewardedPrivateFail',
        'highestReward',
        'worstMismatch',
        'largestShift',
        'toolFailures',
      ];
      const row = db.prepare('SELECT id, run_id, iteration, reward, num_turns, termination FROM trajectories WHERE id = ?');
      for (const kind of kinds) {
        const ids = pickEpisodes(db, 2, { kind }, [1, 3]);
        assert.ok(ids.length <= 3, kind);
        const rows = ids.map((id) => row.get(id) as { run_id: number; iteration: number; reward: number; num_turns: number; termination: string });
        for (const r of rows) assert.equal(r.run_id, 2, `${kind} stays in its run`);
        if (kind === 'highestReward' || kind === 'rewardedPrivateFail')
          assert.deepEqual(
            rows.map((r) => r.reward),
            [...rows.map((r) => r.reward)].sort((a, b) => b - a),
            kind,
          );
        if (kind === 'longest')
          assert.equal(rows[0]!.num_turns, (db.prepare('SELECT max(num_turns) AS n FROM trajectories WHERE run_id = 2').get() as { n: number }).n);
        if (kind === 'longestCut') for (const r of rows) assert.match(r.termination, /budget_exhausted|turn_cap|context_exhausted/);
      }
      assert.deepEqual(pickEpisodes(db, 2, { kind: 'highestReward' }, [9, 10]), [], 'no trajectories outside the stored iterations');
    } finally {
      db.close();
    }
  });

  it('an imported verl dump whose groups all score alike raises no-signal, with hostile text inert and nothing executed', () => {
    const cwd = tempDir();
    fs.copyFileSync(path.join(ROOT, 'test/fixtures/verl/config.yaml'), path.join(cwd, 'config.yaml'));
    fs.mkdirSync(path.join(cwd, 'rollout'));
    const marker = path.join(cwd, 'pwned');
    // every step: two prompts × 4 samples, every sample scored 0; the text tries a shell, a terminal escape and a bidi override
    const evil = `$(touch ${marker}) \u001b]8;;command:workbench.action.terminal.new\u0007x\u202e`;
    for (let step = 1; step <= 4; step++) {
      const lines = [0, 1].flatMap((p) =>
        [0, 1, 2, 3].map((k) =>
          JSON.stringify({ input: `user\nprompt ${p} ${evil}\nassistant\n`, output: `${evil} ${k}`, gts: '1', score: 0, step, acc: false }),
        ),
      );
      fs.writeFileSync(path.join(cwd, 'rollout', `${step}.jsonl`), `${lines.join('\n')}\n`);
    }
    const imported = runCli(['import', 'verl', 'rollout', '--config', 'config.yaml'], cwd);
    assert.equal(imported.code, 0, imported.stderr);
    const json = runCli(['health', '1', '--json'], cwd);
    assert.equal(json.code, 0, json.stderr);
    const f = (JSON.parse(json.stdout) as { findings: FindingRecord[] }).findings.find((x) => x.id === 'no-signal');
    assert.ok(f, json.stdout);
    assert.equal(f.severity, 'severe');
    assert.deepEqual(f.iterations, [1, 4]);
    assert.equal(f.episodes.length, 3);
    const text = runCli(['health', '1'], cwd);
    assert.equal(text.code, 0);
    assert.equal(rawInvisible(text.stdout), undefined);
    // show's summary of an imported run names it too
    assert.match(runCli(['show', '1'], cwd).stdout, /^ {2}severe: no signal: 100% of groups had equal rewards/m);
    assert.ok(!fs.existsSync(marker), 'nothing in the dump ran');
  });

  it('an unknown run exits 2 naming it; a run with no findings exits 0', () => {
    const cwd = tempDir();
    assert.equal(runCli(['train', '--seed', '3', '--iterations', '1', '--eval-episodes', '8'], cwd).code, 0);
    const r = runCli(['health', 'nosuch'], cwd);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no run "nosuch"/);
    const ok = runCli(['health', '1', '--json'], cwd);
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout), { findings: [] });
    assert.match(runCli(['health', '1'], cwd).stdout, /no findings/);
  });

  it('a reward that pays for length: every tool call earns 0.05, and episodes grow until the turn cap cuts them', async () => {
    // binary-search with a 20-step budget under a turn cap of 16: the cap, not the budget, ends a long
    // episode (turn_cap, a cut). The uniform start finishes after ~6 steps and is rarely cut; the reward
    // teaches the table to stop finishing (Adam 0.3, above seed 002's 0.08, so it shows within 10 iterations).
    const cwd = tempDir();
    await trainRewarded(cwd, { seed: 3, iterations: 10, maxTurns: 16, envOptions: { stepBudget: 20 }, algorithm: { learningRate: 0.3 } }, (o) => {
      const steps = (o.details as { steps?: unknown } | undefined)?.steps;
      return typeof steps === 'number' ? 0.05 * steps : 0;
    });
    const found = health(cwd, '1');
    const drift = found.find((x) => x.id === 'length-drift');
    const cuts = found.find((x) => x.id === 'budget-cuts');
    assert.ok(drift && cuts, JSON.stringify(found));
    assert.notEqual(drift.severity, 'info');
    assert.match(drift.summary, /turns per episode up/);
    assert.equal(cuts.severity, 'severe', cuts.summary);
    // the episodes: cut ones, as long as the run's longest cut episode; the drift's, the run's longest
    const db = openStore(path.join(cwd, '.agent-rl', 'runs.sqlite'), { busyTimeoutMs: 1000 });
    const longest = (where: string): number => (db.prepare(`SELECT max(num_turns) AS n FROM trajectories WHERE run_id = 1 ${where}`).get() as { n: number }).n;
    const [longestCut, longestAll] = [longest("AND termination = 'turn_cap'"), longest('')];
    db.close();
    assert.equal(cuts.episodes.length, 3);
    for (const id of cuts.episodes) {
      const t = trajectory(cwd, id);
      assert.equal(t.termination, 'turn_cap');
      assert.equal(t.turns, longestCut);
    }
    for (const id of drift.episodes) assert.equal(trajectory(cwd, id).turns, longestAll);
  });

  it('a verifier the policy games: the reward follows the public smoke test, which wrong code passes, while the private tests fail', async () => {
    // binary-search's own public test (find 3 in [1, 3, 5]) passes for every variant of the code, repaired
    // or not; here a submission earns 1 when it passes it. Submitting at once pays as well as repairing
    // both lines first, so the policy learns to submit unrepaired code: reward up, private pass rate down.
    // (The code environment shows the same gap, but its policy writes Python and takes minutes to learn
    // anything; this run trains in a second on the table policy, stored by the same writer.)
    const cwd = tempDir();
    await trainRewarded(cwd, { seed: 3, iterations: 6 }, (o) => {
      const finished = (o.details as { finished?: unknown } | undefined)?.finished === true;
      return finished && o.publicPass ? 1 : 0;
    });
    const f = health(cwd, '1').find((x) => x.id === 'reward-hacking');
    assert.ok(f, 'reward-hacking found');
    assert.equal(f.severity, 'severe', f.summary);
    assert.deepEqual(f.iterations, [1, 6], 'found as soon as there are two trend windows (3 iterations each)');
    assert.equal(f.episodes.length, 3);
    // the episodes: the highest-reward ones that fail the private tests
    for (const id of f.episodes) {
      const t = trajectory(cwd, id);
      assert.equal(t.reward, 1);
      assert.equal(t.publicPass, true);
      assert.equal(t.privatePass, false);
    }
  });
});
