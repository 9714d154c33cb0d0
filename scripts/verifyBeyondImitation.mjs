#!/usr/bin/env node
// @ts-check
// `npm run verify:beyond-imitation` (issue 26, item 1; pre-registered in the README's "Where RL beats
// imitation" before it was first run, now in docs/reproductions.md): an experiment where a failure carries information that
// imitating successes cannot use. The calculator charges every tool call (envOptions.callCost 0.05) and
// the demonstrator repeats half of its calls to double-check (demonstrations.redundantCallRate 0.5), so
// a success costs more the more it repeats. Success is judged before the cost: RS-SFT fine-tunes on the
// successes and so keeps imitating the repeated calls, while GRPO's group-normalised advantage ranks a
// success with fewer calls above one with more.
// For each seed: a supervised warm start on those demonstrations, then GRPO (the language model's
// defaults, named by what ran) and RS-SFT from that one checkpoint, with the same iterations, groups and
// evaluation. Primary figure: held-out mean reward, GRPO − RS-SFT, paired by task (each task's mean over
// its sampled episodes), with a 95 % confidence interval; beside it success, tool calls and repeated
// calls per episode, and each run's optimizer steps and summed learning rate (the two schedules differ:
// RS-SFT trains on successes only).
// Usage: node scripts/verifyBeyondImitation.mjs [--seeds 1,2,3] [--out DIR] [--sft-iterations N] [--rl-iterations N]
import { arg, methodConfig, pairedInterval, schedule, verifyFolder, warmStartThenGrpoAndRsSft, writeJson } from './agentRl.mjs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const seeds = arg('--seeds', '1,2,3').split(',').map(Number);
const out = path.resolve(arg('--out', verifyFolder('beyond-imitation')));
fs.mkdirSync(out, { recursive: true });
process.stderr.write(`runs and records: ${out}\n`);
const db = path.join(out, 'runs.sqlite');
const sftIterations = Number(arg('--sft-iterations', '600'));
const rlIterations = Number(arg('--rl-iterations', '25'));

const envOptions = { callCost: 0.05, heldOutTasks: 200 };
// 4 sampled episodes of each of the 200 held-out tasks: a task's mean reward is the unit of the pairing
const evaluation = { evalEpisodes: 800, evalPassK: 4 };
const demonstrations = { redundantCallRate: 0.5, skipToolOn: 'none' };

/** Per task of the last evaluation: mean reward over its episodes. @param {any} record */
function taskMeans(record) {
  const e = record.evaluations.at(-1);
  if (!Array.isArray(e.perTask)) throw new Error(`run ${record.runId}: its evaluation has no per-task results`);
  return new Map(e.perTask.map((/** @type {any} */ t) => [t.task, t.reward / t.episodes]));
}

/** @type {any[]} */
const rows = [];
const t0 = Date.now();
for (const seed of seeds) {
  const file = (/** @type {string} */ stage) => path.join(out, `calculator-${stage}-s${seed}`);
  process.stderr.write(`\n== seed ${seed}: supervised warm start on demonstrations that repeat half their calls\n`);
  const stages = await warmStartThenGrpoAndRsSft({
    file,
    db,
    label: `s${seed}`,
    sftConfig: { env: 'calculator', policy: 'transformer', method: 'sft', seed, iterations: sftIterations, envOptions, demonstrations, ...evaluation },
    rlConfig: (method, checkpoint) =>
      methodConfig('calculator', method, { seed, iterations: rlIterations, envOptions, ...evaluation, policyOptions: { threads: 1 } }, checkpoint),
  });
  const [g, r] = [stages.grpo.record, stages.rsSft.record];
  const [gm, rm] = [taskMeans(g), taskMeans(r)];
  const d = [...gm.keys()].filter((k) => rm.has(k)).map((k) => /** @type {number} */ (gm.get(k)) - /** @type {number} */ (rm.get(k)));
  const ci = pairedInterval(d);
  const e = (/** @type {any} */ rec, /** @type {number} */ i) => rec.evaluations.at(i);
  rows.push({
    seed,
    warmStart: e(g, 0),
    grpo: { label: g.methodLabel, evaluation: e(g, -1), schedule: schedule(g), run: g.runId, seconds: stages.grpo.seconds },
    rsSft: { label: r.methodLabel, evaluation: e(r, -1), schedule: schedule(r), run: r.runId, seconds: stages.rsSft.seconds },
    difference: ci,
    excludesZero: ci.low > 0 || ci.high < 0,
  });
  process.stderr.write(
    `== seed ${seed}: held-out mean reward GRPO − RS-SFT ${ci.mean.toFixed(4)} [${ci.low.toFixed(4)}, ${ci.high.toFixed(4)}] over ${ci.n} tasks\n`,
  );
}

const f = (/** @type {number | undefined} */ v, d = 3) => (v === undefined ? '–' : v.toFixed(d));
const pct = (/** @type {number | undefined} */ v) => (v === undefined ? '–' : `${(100 * v).toFixed(1)}%`);
const evalCells = (/** @type {any} */ e) =>
  `${f(e.rewardMean)} | ${pct(e.successRate)} | ${pct(e.greedySuccessRate)} | ${pct(e.passAtK)} | ${f(e.toolCalls, 2)} | ${f(e.repeatedActions, 2)}`;
const lines = [
  '| seed | model | held-out mean reward | sampled pass@1 | greedy pass@1 | pass@4 | tool calls / ep. | repeated calls / ep. | optimizer steps | Σ learning rate |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...rows.flatMap((/** @type {any} */ x) => [
    `| ${x.seed} | warm start (SFT, iteration 0) | ${evalCells(x.warmStart)} | – | – |`,
    `| ${x.seed} | ${x.grpo.label} | ${evalCells(x.grpo.evaluation)} | ${x.grpo.schedule.steps} | ${x.grpo.schedule.lrSum.toExponential(2)} |`,
    `| ${x.seed} | ${x.rsSft.label} | ${evalCells(x.rsSft.evaluation)} | ${x.rsSft.schedule.steps} | ${x.rsSft.schedule.lrSum.toExponential(2)} |`,
  ]),
  '',
  '| seed | GRPO − RS-SFT, held-out mean reward (paired by task) | 95 % interval | tasks | interval excludes 0 |',
  '|---|---|---|---|---|',
  ...rows.map(
    (/** @type {any} */ x) =>
      `| ${x.seed} | ${x.difference.mean.toFixed(4)} | [${x.difference.low.toFixed(4)}, ${x.difference.high.toFixed(4)}] | ${x.difference.n} | ${x.excludesZero ? (x.difference.mean > 0 ? 'yes, GRPO ahead' : 'yes, RS-SFT ahead') : 'no'} |`,
  ),
  '',
  `criterion (pre-registered): GRPO ahead with the interval excluding 0 on every seed — ${rows.every((x) => x.excludesZero && x.difference.mean > 0) ? 'met' : 'NOT met'}`,
  `total ${((Date.now() - t0) / 1000).toFixed(0)} s on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; database ${db}`,
];
process.stdout.write(`${lines.join('\n')}\n\nruns (store runs.sqlite) and records: ${out}\n`);
writeJson(path.join(out, 'summary.json'), { db, envOptions, demonstrations, evaluation, sftIterations, rlIterations, rows });
process.exit(rows.every((x) => x.excludesZero && x.difference.mean > 0) ? 0 : 1);
