#!/usr/bin/env node
// @ts-check
// `npm run verify:workspace` (issue 26, item 3; its design and criterion written in the README's "Your
// own environment" section before it was first run, now in docs/reproductions.md, after one design run of seed 1): the unit-converter example — what New Environment writes — learns on
// held-out tasks. Its held-out quantities are interleaved with the training ones (≡ 3 mod 5), and its
// demonstrations skip the tool on 2 of every 3 time conversions and answer with the quantity given, a
// habit the warm start copies. For each seed: the example's own configs (sft.agentrl.json, then
// run.agentrl.json's GRPO and, as the control, the same config with method rs-sft, from that one
// checkpoint, side by side), with only the seed changed; before RL, a check of the warm start (held-out
// greedy on length and mass conversions ≥ 50 %, or SFT runs again from its checkpoint, up to twice:
// `sft-more1`, `sft-more2`). Primary figure: held-out greedy pass@1, GRPO −
// warm start (the GRPO run's iteration-0 evaluation), with a 95 % interval paired by task; beside it
// the time conversions and the others apart, sampled pass@1, pass@k, tool calls, and GRPO − RS-SFT.
// Usage: node scripts/verifyWorkspace.mjs [--seeds 1,2,3] [--out DIR] [--sft-iterations N] [--rl-iterations N]
//        [--warm-start-ready 0.5] [--warm-start-rounds 2] [--warm-start-more 200]
import { arg, greedyRateOf, pct, perTask, seedRow, seedTables, verifyFolder, warmStartThenGrpoAndRsSft, writeJson } from './agentRl.mjs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const example = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'unit-converter');
const seeds = arg('--seeds', '1,2,3').split(',').map(Number);
const out = path.resolve(arg('--out', verifyFolder('workspace')));
fs.mkdirSync(out, { recursive: true });
process.stderr.write(`runs and records: ${out}\n`);
const db = path.join(out, 'runs.sqlite');
const read = (/** @type {string} */ f) => JSON.parse(fs.readFileSync(f, 'utf8'));
const sftTemplate = read(path.join(example, 'sft.agentrl.json'));
const runTemplate = read(path.join(example, 'run.agentrl.json'));
const sftIterations = arg('--sft-iterations', undefined);
const rlIterations = arg('--rl-iterations', undefined);
// the warm-start check: ready when greedy on length and mass conversions is at least this; otherwise up
// to `warmStartRounds` further SFT stages of `warmStartMore` iterations each from its checkpoint
const warmStartReady = Number(arg('--warm-start-ready', '0.5'));
const warmStartRounds = Number(arg('--warm-start-rounds', '2'));
const warmStartMore = Number(arg('--warm-start-more', '200'));
if (
  !(warmStartReady >= 0 && warmStartReady <= 1) ||
  !Number.isInteger(warmStartRounds) ||
  warmStartRounds < 0 ||
  !Number.isInteger(warmStartMore) ||
  warmStartMore < 1
) {
  process.stderr.write(
    'verify:workspace: --warm-start-ready is a fraction from 0 to 1, --warm-start-rounds an integer ≥ 0, --warm-start-more an integer ≥ 1\n',
  );
  process.exit(2);
}
/** The example's config with the seed (and iterations, when asked) changed; its files read from the example folder. @param {any} template @param {Record<string, unknown>} changes */
const configOf = (template, changes) => ({ ...template, ...changes, envOptions: { ...template.envOptions, root: example } });

// Task id → class (time conversions, the demonstrations' habit, against the rest), from the task file.
/** @type {Map<string, 'time' | 'other'>} */
const classOf = new Map();
for (const line of fs.readFileSync(path.join(example, 'tasks.jsonl'), 'utf8').split('\n')) {
  if (line.trim() === '') continue;
  const t = JSON.parse(line);
  const from = /^Convert \d+ (\w+) to /.exec(t.prompt)?.[1] ?? '';
  classOf.set(t.id, ['day', 'h', 'min', 's'].includes(from) ? 'time' : 'other');
}
/** The stored task id's class (a workspace task id may carry a prefix before the file's id). @param {string} id */
const taskClass = (id) => {
  const c = classOf.get(id) ?? classOf.get(id.slice(id.lastIndexOf(':') + 1));
  if (c === undefined) throw new Error(`task ${id}: not in ${path.join(example, 'tasks.jsonl')}`);
  return c;
};

/** Greedy pass@1 over the tasks of one class (or all). @param {Map<string, { greedy: number }>} m @param {string} [cls] */
const greedyRate = (m, cls) => greedyRateOf(m, cls === undefined ? undefined : (k) => taskClass(k) === cls, `the class ${cls}`);

/** @type {any[]} */
const rows = [];
const t0 = Date.now();
for (const seed of seeds) {
  const file = (/** @type {string} */ stage) => path.join(out, `unit-converter-${stage}-s${seed}`);
  process.stderr.write(`\n== seed ${seed}: warm start on the example's demonstrations (sft.agentrl.json)\n`);
  const stages = await warmStartThenGrpoAndRsSft({
    file,
    db,
    label: `s${seed}`,
    sftConfig: configOf(sftTemplate, { seed, ...(sftIterations ? { iterations: Number(sftIterations) } : {}) }),
    // the check of the warm start before RL: it must copy the tool's result where its demonstrations
    // do (greedy on length and mass conversions); if not, SFT goes on from its checkpoint
    checkWarmStart: (record, round) => {
      const ready = greedyRate(perTask(record.evaluations.at(-1)), 'other');
      const go = ready >= warmStartReady;
      process.stderr.write(
        `== seed ${seed}: warm start after ${round === 1 ? 'sft.agentrl.json' : `continuation ${round - 1}`}: greedy ${pct(ready)} on length and mass conversions (ready at ${pct(warmStartReady)}): ${go ? 'ready' : round > warmStartRounds ? 'not ready, and no continuation left: RL starts from it' : 'not ready'}\n`,
      );
      return go || round > warmStartRounds ? undefined : configOf(sftTemplate, { seed, iterations: warmStartMore });
    },
    rlConfig: (method, checkpoint) =>
      configOf(runTemplate, {
        seed,
        method,
        ...(rlIterations ? { iterations: Number(rlIterations) } : {}),
        policyOptions: { ...runTemplate.policyOptions, threads: 1, init: checkpoint },
      }),
  });
  const row = seedRow(seed, stages, { greedyTime: (m) => greedyRate(m, 'time'), greedyOther: (m) => greedyRate(m, 'other') });
  rows.push(row);
  process.stderr.write(
    `== seed ${seed}: held-out greedy pass@1 GRPO − warm start ${(100 * row.grpoGain.mean).toFixed(1)} points [${(100 * row.grpoGain.low).toFixed(1)}, ${(100 * row.grpoGain.high).toFixed(1)}]\n`,
  );
}

const { lines: tables, met } = seedTables(rows, [
  ['greedy, time conversions', 'greedyTime'],
  ['greedy, length and mass', 'greedyOther'],
]);
const lines = [...tables, `total ${((Date.now() - t0) / 1000).toFixed(0)} s on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; database ${db}`];
process.stdout.write(`${lines.join('\n')}\n\nruns (store runs.sqlite) and records: ${out}\n`);
writeJson(path.join(out, 'summary.json'), {
  db,
  example,
  sftIterations,
  rlIterations,
  warmStartCheck: { ready: warmStartReady, rounds: warmStartRounds, more: warmStartMore },
  rows,
});
process.exit(met ? 0 : 1);
