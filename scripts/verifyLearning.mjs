#!/usr/bin/env node
// @ts-check
// `npm run verify:learning`: the learning checks, through the real CLI and one database. For every
// environment and training seed: a supervised warm start on the reference agent's demonstrations
// (`agent-rl sft`), then, from that one checkpoint, the RL method under test and RS-SFT as the
// control with the same number of sampled episodes (`agent-rl train --init`). Every figure comes from
// held-out evaluations with the fixed evaluation seed, the baseline from the RL run's own iteration-0
// evaluation. Results are printed under the name of what ran (methodLabel), never just "GRPO".
//   calculator: GRPO (failures pushed down too; with the defaults its printed name lists) from a warm start on imperfect demonstrations
//               (the reference agent skips the tool on most tasks with a multiplication): greedy
//               pass@1 ≥ warm start + 10 points, on 500 held-out tasks (none shares a call plan with
//               a training task); sampled pass@1 and pass@8 over 4,000 episodes reported beside it.
//   code:       positive-only GRPO (negativeAdvantageScale 0, as measured in earlier releases) on the
//               generated formula tasks: private-verifier pass rate (sampled) ≥ warm start + 10 points.
// Prints Markdown tables with every run's wall time, writes summary.json, exits 1 on a miss.
// Usage: node scripts/verifyLearning.mjs [--envs calculator,code] [--seeds 1,2,3] [--out DIR] [--warm-starts DIR]
// --warm-starts DIR reuses the SFT stage of an earlier run's output folder (its <env>-sft-s<seed>.json
// record and .checkpoint file) and runs the RL stages only: for trying RL settings against fixed warm starts.
import { arg, evaluationTable, methodConfig, runAgentRl, runAgentRlAsync, verifyFolder, writeJson } from './agentRl.mjs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const envs = arg('--envs', 'calculator,code').split(',');
const seeds = arg('--seeds', '1,2,3').split(',').map(Number);
const out = path.resolve(arg('--out', verifyFolder('learning')));
fs.mkdirSync(out, { recursive: true });
process.stderr.write(`runs and records: ${out}\n`);
const db = path.join(out, 'runs.sqlite');
const warmStarts = arg('--warm-starts', undefined);

/**
 * @typedef {{ sft: Record<string, unknown>; rl: Record<string, unknown>; method: string; control?: string; metric: 'greedySuccessRate' | 'privatePassRate';
 *   label: string; rule: string; pass: (base: number, rl: number) => boolean }} Experiment
 */
/** Per environment: the stages' configs (config files, so every option is on record) and the criterion. */
/** @type {Record<string, Experiment>} */
const EXPERIMENTS = {
  calculator: {
    // 500 held-out tasks: greedy pass@1 over 500 distinct tasks, sampled figures over 8 samples of each.
    // SFT for 300 iterations: at 200, seed 3's warm start was weak (16.0% greedy against 35.6 and 38.2%
    // for seeds 1 and 2) and neither RL method had much to build on (+2.6 GRPO, +4.4 RS-SFT); at 300 it
    // reached 37.8%.
    sft: { env: 'calculator', policy: 'transformer', method: 'sft', iterations: 300, envOptions: { heldOutTasks: 500 }, evalEpisodes: 500 },
    rl: { iterations: 40, envOptions: { heldOutTasks: 500 }, evalEpisodes: 4000 },
    method: 'grpo',
    control: 'rs-sft',
    metric: 'greedySuccessRate',
    label: 'held-out greedy pass@1',
    rule: 'GRPO greedy ≥ warm start + 10 points',
    pass: (base, rl) => rl >= base + 0.1,
  },
  code: {
    // Positive-only GRPO at lr 5e-4 with 5 warm-up steps for 60 iterations: +17.0, +19.5, +14.5 points
    // in the release before the held-out split moved to functions (CHANGELOG).
    sft: {
      env: 'code',
      policy: 'transformer',
      method: 'sft',
      iterations: 100,
      envOptions: { taskSet: 'formulas' },
      policyOptions: { contextLength: 448, maxNewTokens: 80 },
      evalEpisodes: 200,
    },
    rl: {
      iterations: 60,
      groupsPerIteration: 16,
      evalInterval: 30,
      evalEpisodes: 200,
      evalPassK: 0,
      envOptions: { taskSet: 'formulas' },
      policyOptions: { contextLength: 448, maxNewTokens: 80 },
      algorithm: { negativeAdvantageScale: 0 },
    },
    method: 'grpo',
    metric: 'privatePassRate',
    label: 'held-out private-verifier pass rate (sampled)',
    rule: 'positive-only GRPO ≥ warm start + 10 points',
    pass: (base, rl) => rl >= base + 0.1,
  },
};

/** @type {Record<string, unknown>[]} */
const rows = [];
/** @type {string[]} */
const tables = [];
const t0 = Date.now();
for (const name of envs) {
  const x = EXPERIMENTS[name];
  if (!x) throw new Error(`unknown environment ${name}; choose from ${Object.keys(EXPERIMENTS).join(', ')}`);
  for (const seed of seeds) {
    const file = (/** @type {string} */ stage) => path.join(out, `${name}-${stage}-s${seed}`);
    let sftSeconds;
    if (warmStarts) {
      const from = path.join(path.resolve(warmStarts), path.basename(file('sft')));
      if (!fs.existsSync(`${from}.checkpoint`))
        throw new Error(`--warm-starts: no ${from}.checkpoint; give the output folder of an earlier verify:learning run`);
      fs.copyFileSync(`${from}.json`, `${file('sft')}.json`);
      fs.copyFileSync(`${from}.checkpoint`, `${file('sft')}.checkpoint`);
      sftSeconds = JSON.parse(fs.readFileSync(`${from}.json`, 'utf8')).wallMs / 1000;
      process.stderr.write(`\n== ${name} seed ${seed}: warm start reused from ${from}\n`);
    } else {
      writeJson(`${file('sft')}.config.json`, { ...x.sft, seed });
      process.stderr.write(`\n== ${name} seed ${seed}: supervised warm start\n`);
      const sft = runAgentRl(['sft', '--config', `${file('sft')}.config.json`, '--db', db, '--output', `${file('sft')}.json`]);
      const printed = /checkpoint: (\S+)/.exec(sft.stdout)?.[1];
      if (!printed) throw new Error('the SFT run printed no checkpoint');
      fs.writeFileSync(`${file('sft')}.checkpoint`, printed);
      sftSeconds = sft.seconds;
    }
    const checkpoint = fs.readFileSync(`${file('sft')}.checkpoint`, 'utf8').trim();
    // The method and its control share the machine side by side, one core (one replica) each.
    /** @type {Record<string, { record: Record<string, any>; seconds: number }>} */
    const stages = {};
    await Promise.all(
      [x.method, ...(x.control ? [x.control] : [])].map(async (method) => {
        // the control gets the method's run shape (iterations, groups, evaluations), not its loss settings
        const { algorithm, policyOptions, ...shape } = /** @type {Record<string, any>} */ (x.rl);
        const replicas = x.control ? { threads: 1 } : {};
        const config = methodConfig(
          name,
          method,
          { ...shape, policyOptions: { ...policyOptions, ...replicas }, ...(method === x.method && algorithm ? { algorithm } : {}), seed },
          checkpoint,
        );
        writeJson(`${file(method)}.config.json`, config);
        process.stderr.write(`== ${name} seed ${seed}: ${method} from the warm start\n`);
        const r = await runAgentRlAsync(
          ['train', '--config', `${file(method)}.config.json`, '--db', db, '--output', `${file(method)}.json`],
          `${name} s${seed} ${method}`,
        );
        stages[method] = { record: JSON.parse(fs.readFileSync(`${file(method)}.json`, 'utf8')), seconds: r.seconds };
      }),
    );
    const main = stages[x.method];
    if (!main) throw new Error(`${x.method} did not run`);
    const control = x.control ? stages[x.control] : undefined;
    const base = main.record.evaluations[0];
    const final = main.record.evaluations.at(-1);
    const row = {
      env: name,
      seed,
      metric: x.metric,
      method: main.record.methodLabel,
      warmStart: base[x.metric],
      result: final[x.metric],
      control: control
        ? { method: control.record.methodLabel, result: control.record.evaluations.at(-1)[x.metric], run: control.record.runId, seconds: control.seconds }
        : undefined,
      evaluations: { warmStart: base, result: final, ...(control ? { control: control.record.evaluations.at(-1) } : {}) },
      sftSeconds,
      seconds: main.seconds,
      pass: x.pass(base[x.metric], final[x.metric]),
      rule: x.rule,
      sftRun: JSON.parse(fs.readFileSync(`${file('sft')}.json`, 'utf8')).runId,
      run: main.record.runId,
    };
    rows.push(row);
    tables.push(
      evaluationTable(
        `### ${name}, seed ${seed} (${x.label}; SFT ${sftSeconds.toFixed(0)} s)`,
        [
          ['warm start (iteration 0)', base],
          [`${main.record.methodLabel}, ${main.record.iterations.length} it. (${main.seconds.toFixed(0)} s)`, final],
          ...(control
            ? /** @type {[string, any][]} */ ([
                [`${control.record.methodLabel}, ${control.record.iterations.length} it. (${control.seconds.toFixed(0)} s)`, control.record.evaluations.at(-1)],
              ])
            : []),
        ],
        base,
      ),
    );
    process.stderr.write(
      `== ${name} seed ${seed}: ${x.label} ${(100 * base[x.metric]).toFixed(1)}% → ${(100 * final[x.metric]).toFixed(1)}%${row.control ? ` (${row.control.method} ${(100 * row.control.result).toFixed(1)}%)` : ''}\n`,
    );
  }
}

const pct = (/** @type {number | undefined} */ v) => (v === undefined ? '–' : `${(100 * v).toFixed(1)}%`);
const lines = [
  ...tables.flatMap((t) => [t, '']),
  '| env | seed | metric | method | warm start | after | change | control after | control change | criterion | |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (/** @type {any} */ r) =>
      `| ${r.env} | ${r.seed} | ${r.metric} | ${r.method} | ${pct(r.warmStart)} | ${pct(r.result)} | ${((r.result - r.warmStart) * 100).toFixed(1)} pts | ${r.control ? `${r.control.method} ${pct(r.control.result)}` : '–'} | ${r.control ? `${((r.control.result - r.warmStart) * 100).toFixed(1)} pts` : '–'} | ${r.rule} | ${r.pass ? 'met' : 'MISSED'} |`,
  ),
  '',
  `total ${((Date.now() - t0) / 1000).toFixed(0)} s on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; database ${db}${warmStarts ? `; SFT stage reused from ${path.resolve(warmStarts)}` : ''}`,
];
process.stdout.write(`${lines.join('\n')}\n\nruns (store runs.sqlite) and records: ${out}\n`);
writeJson(path.join(out, 'summary.json'), { db, ...(warmStarts ? { warmStarts: path.resolve(warmStarts) } : {}), rows });
process.exit(rows.every((/** @type {any} */ r) => r.pass) ? 0 : 1);
