#!/usr/bin/env node
// `npm run verify:learning`: the issue-4 learning checks, through the real CLI and one database.
// For every environment and training seed: a supervised warm start on the reference agent's
// demonstrations (`agent-rl sft`), then GRPO from that checkpoint (`agent-rl train --init`). Both are
// evaluated on the environment's held-out tasks with the fixed evaluation seed.
//   calculator: held-out accuracy (sampled at T = 1) after GRPO ≥ after SFT + 10 points, or ≥ 95%
//   code:       private-verifier pass rate after GRPO ≥ after SFT + 10 points (generated formula tasks)
// Prints a Markdown table with the wall time of every run, writes summary.json, exits 1 on a miss.
// Usage: node scripts/verifyLearning.mjs [--envs calculator,code] [--seeds 1,2,3] [--out DIR] [--warm-starts DIR]
// --warm-starts DIR reuses the SFT stage of an earlier run's output folder (its <env>-sft-s<seed>.json
// record and .checkpoint file) and runs GRPO only: for trying GRPO settings against fixed warm starts.
import { arg, runAgentRl } from './agentRl.mjs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const envs = arg('--envs', 'calculator,code').split(',');
const seeds = arg('--seeds', '1,2,3').split(',').map(Number);
const out = path.resolve(arg('--out', fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-learning-'))));
fs.mkdirSync(out, { recursive: true });
const db = path.join(out, 'runs.sqlite');
const warmStarts = arg('--warm-starts', undefined);

/** Per environment: the two stages' configs (config files, so every option is on record) and the criterion. */
const EXPERIMENTS = {
  calculator: {
    // 1,000 held-out episodes (each of the 200 tasks five times): 200 left ±3.5 points of noise.
    // GRPO reinforces successes only (negativeAdvantageScale 0): on seed 3's warm start plain GRPO
    // gained 1.1 points in 20 iterations and this 6.5; 30 iterations gave +7.7 on every seed, 60 on
    // seed 3 +12.9 (CHANGELOG, Known gaps).
    sft: { env: 'calculator', policy: 'transformer', method: 'sft', evalEpisodes: 1000 },
    grpo: { env: 'calculator', policy: 'transformer', method: 'grpo', iterations: 60, evalEpisodes: 1000, policyOptions: { negativeAdvantageScale: 0 } },
    metric: 'successRate',
    label: 'held-out accuracy (sampled)',
    pass: (sft, grpo) => grpo >= sft + 0.1 || grpo >= 0.95,
    rule: 'GRPO ≥ SFT + 10 points, or GRPO ≥ 95%',
  },
  code: {
    // GRPO at lr 5e-4 with 5 warm-up steps for 60 iterations: at 2e-4 with 20 it gained 5.0 points on
    // seed 3 in 30 iterations, this 8.5 by iteration 30 and 14.5 by 60 (CHANGELOG, Changed).
    sft: { env: 'code', policy: 'transformer', method: 'sft', iterations: 100, envOptions: { taskSet: 'formulas' }, policyOptions: { contextLength: 448, maxNewTokens: 80 } },
    grpo: { env: 'code', policy: 'transformer', method: 'grpo', iterations: 60, groupsPerIteration: 16, learningRate: 5e-4, evalInterval: 30, envOptions: { taskSet: 'formulas' }, policyOptions: { contextLength: 448, maxNewTokens: 80, negativeAdvantageScale: 0, warmupSteps: 5 } },
    metric: 'privatePassRate',
    label: 'held-out private-verifier pass rate',
    pass: (sft, grpo) => grpo >= sft + 0.1,
    rule: 'GRPO ≥ SFT + 10 points',
  },
};


const rows = [];
const t0 = Date.now();
for (const name of envs) {
  const x = EXPERIMENTS[name];
  if (!x) throw new Error(`unknown environment ${name}; choose from ${Object.keys(EXPERIMENTS).join(', ')}`);
  for (const seed of seeds) {
    const file = (stage) => path.join(out, `${name}-${stage}-s${seed}`);
    let sft;
    if (warmStarts) {
      const from = path.join(path.resolve(warmStarts), path.basename(file('sft')));
      if (!fs.existsSync(`${from}.checkpoint`)) throw new Error(`--warm-starts: no ${from}.checkpoint; give the output folder of an earlier verify:learning run`);
      fs.copyFileSync(`${from}.json`, `${file('sft')}.json`);
      fs.copyFileSync(`${from}.checkpoint`, `${file('sft')}.checkpoint`);
      sft = { seconds: JSON.parse(fs.readFileSync(`${from}.json`, 'utf8')).wallMs / 1000 };
      process.stderr.write(`\n== ${name} seed ${seed}: warm start reused from ${from}\n`);
    } else {
      fs.writeFileSync(`${file('sft')}.config.json`, JSON.stringify({ ...x.sft, seed }, null, 2));
      process.stderr.write(`\n== ${name} seed ${seed}: supervised warm start\n`);
      sft = runAgentRl(['sft', '--config', `${file('sft')}.config.json`, '--db', db, '--output', `${file('sft')}.json`]);
      const printed = /checkpoint: (\S+)/.exec(sft.stdout)?.[1];
      if (!printed) throw new Error('the SFT run printed no checkpoint');
      fs.writeFileSync(`${file('sft')}.checkpoint`, printed);
    }
    const checkpoint = fs.readFileSync(`${file('sft')}.checkpoint`, 'utf8').trim();
    fs.writeFileSync(`${file('grpo')}.config.json`, JSON.stringify({ ...x.grpo, seed, policyOptions: { ...x.grpo.policyOptions, init: checkpoint } }, null, 2));
    process.stderr.write(`== ${name} seed ${seed}: GRPO from the warm start\n`);
    const grpo = runAgentRl(['train', '--config', `${file('grpo')}.config.json`, '--db', db, '--output', `${file('grpo')}.json`]);
    const record = (stage) => JSON.parse(fs.readFileSync(`${file(stage)}.json`, 'utf8'));
    const sftEval = record('sft').evaluations.at(-1);
    const grpoEval = record('grpo').evaluations.at(-1);
    const [a, b] = [sftEval[x.metric], grpoEval[x.metric]];
    rows.push({
      env: name, seed, metric: x.metric, sft: a, grpo: b, sftGreedy: sftEval.greedySuccessRate, grpoGreedy: grpoEval.greedySuccessRate,
      episodes: grpoEval.episodes, sftSeconds: sft.seconds, grpoSeconds: grpo.seconds, pass: x.pass(a, b), rule: x.rule,
      sftRun: record('sft').runId, grpoRun: record('grpo').runId,
    });
    process.stderr.write(`== ${name} seed ${seed}: ${x.label} ${(100 * a).toFixed(1)}% → ${(100 * b).toFixed(1)}%\n`);
  }
}

const pct = (v) => (v === undefined ? '–' : `${(100 * v).toFixed(1)}%`);
const lines = [
  '| env | seed | metric | after SFT | after GRPO | change | greedy SFT → GRPO | SFT wall | GRPO wall | criterion | |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.env} | ${r.seed} | ${r.metric} (${r.episodes} held-out episodes) | ${pct(r.sft)} | ${pct(r.grpo)} | ${((r.grpo - r.sft) * 100).toFixed(1)} pts | ${pct(r.sftGreedy)} → ${pct(r.grpoGreedy)} | ${r.sftSeconds.toFixed(0)} s | ${r.grpoSeconds.toFixed(0)} s | ${r.rule} | ${r.pass ? 'met' : 'MISSED'} |`),
  '',
  `total ${((Date.now() - t0) / 1000).toFixed(0)} s on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; database ${db}${warmStarts ? `; SFT stage (runs and wall times) reused from ${path.resolve(warmStarts)}` : ''}`,
];
process.stdout.write(`${lines.join('\n')}\n`);
fs.writeFileSync(path.join(out, 'summary.json'), `${JSON.stringify({ db, ...(warmStarts ? { warmStarts: path.resolve(warmStarts) } : {}), rows }, null, 2)}\n`);
process.exit(rows.every((r) => r.pass) ? 0 : 1);
