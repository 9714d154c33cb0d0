#!/usr/bin/env node
// `npm start`: the default experiment, end to end through the real CLI and database, sized to finish
// within 5 minutes on a 2-core machine (the full-length runs are `npm run verify:learning`).
// Calculator environment (seed 003), a small character-level transformer, a supervised warm start on
// the reference agent's demonstrations, then GRPO from that checkpoint. Prints held-out accuracy
// (sampled at temperature 1, and greedy) before and after each stage, and where everything is.
// Usage: node scripts/defaultExperiment.mjs [--seed N] [--sft-iterations N] [--grpo-iterations N] [--db FILE]
import { arg, runAgentRl } from './agentRl.mjs';
import * as fs from 'node:fs';
import * as path from 'node:path';

const seed = arg('--seed', '1');
const db = path.resolve(arg('--db', path.join('.agent-rl', 'runs.sqlite')));
const results = path.join(path.dirname(db), 'results');
fs.mkdirSync(results, { recursive: true });

function run(label, args) {
  process.stderr.write(`\n== ${label}: agent-rl ${args.join(' ')}\n`);
  try {
    return runAgentRl(args, { echo: true });
  } catch (e) {
    process.exit(e.status ?? 1);
  }
}

const t0 = Date.now();
const sftOut = path.join(results, `calculator-sft-s${seed}.json`);
const sft = run('supervised warm start', ['sft', '--env', 'calculator', '--seed', seed, '--iterations', arg('--sft-iterations', '200'), '--db', db, '--output', sftOut]);
const checkpoint = /checkpoint: (\S+)/.exec(sft.stdout)?.[1];
if (!checkpoint) throw new Error('the SFT run printed no checkpoint');
const grpoOut = path.join(results, `calculator-grpo-s${seed}.json`);
// GRPO reinforcing successes only (negativeAdvantageScale 0), as `npm run verify:learning` measures
// it: on this small model plain GRPO's failed episodes mostly push on text that has already derailed.
const grpoConfig = path.join(results, `calculator-grpo-s${seed}.config.json`);
fs.writeFileSync(grpoConfig, JSON.stringify({ env: 'calculator', policy: 'transformer', method: 'grpo', policyOptions: { negativeAdvantageScale: 0 } }, null, 2));
const grpo = run('GRPO from the warm start', ['train', '--config', grpoConfig, '--seed', seed, '--iterations', arg('--grpo-iterations', '30'), '--init', checkpoint, '--db', db, '--output', grpoOut]);

const evals = (file) => JSON.parse(fs.readFileSync(file, 'utf8')).evaluations;
const [sftBefore, sftAfter] = [evals(sftOut)[0], evals(sftOut).at(-1)];
const grpoAfter = evals(grpoOut).at(-1);
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const line = (label, e) => `  ${label.padEnd(22)} sampled ${pct(e.successRate).padStart(6)}   greedy ${pct(e.greedySuccessRate ?? 0).padStart(6)}`;
process.stdout.write(
  [
    '',
    `Held-out calculator accuracy (${sftAfter.episodes} episodes, evaluation seed ${sftAfter.seed}):`,
    line('untrained model', sftBefore),
    line(`after SFT (${sft.seconds.toFixed(0)} s)`, sftAfter),
    line(`after GRPO (${grpo.seconds.toFixed(0)} s)`, grpoAfter),
    `  GRPO − SFT, sampled: ${((grpoAfter.successRate - sftAfter.successRate) * 100).toFixed(1)} points`,
    '',
    `total ${((Date.now() - t0) / 1000).toFixed(0)} s`,
    `database:   ${db}   (npx agent-rl runs --db ${db})`,
    `records:    ${sftOut}`,
    `            ${grpoOut}`,
    `checkpoint: ${checkpoint}`,
    '',
  ].join('\n'),
);
