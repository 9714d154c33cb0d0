#!/usr/bin/env node
// @ts-check
// `npm run verify:own-agent` (issue 41; its second design and criterion written in docs/reproductions.md's
// "Your own agent program learns" before it was first run): the example's unchanged program
// (examples/own-agent/agent.ts — the official openai client, one calculate tool, its reward printed)
// learns on held-out tasks. No checkpoint can be downloaded here, so the model is a fresh one: a
// 2-layer Qwen3-shaped model with Qwen3's chat template and a 336-token BPE vocabulary (the test
// fixture's tokenizer: a Qwen tokenizer's 151,669 words would make a model this small all head), made by
// `agent-rl model new` with the seed. The tasks are verify-tasks.jsonl (makeTasks.mjs --verify: the
// example's training tasks and a test split of 264 new expressions). For each seed: a warm start by SFT
// through the program on the task file's demonstrations (which skip the tool on 2 of every 3 tasks whose
// outer operation is ×, answering with the first number: a habit the warm start copies), every
// demonstrated token weighted alike (token-mean: per-episode means made the one-number answers outweigh
// the tool calls 19 to 1 in the first design), checked before RL (held-out greedy on the
// other tasks ≥ --warm-start-ready, or SFT goes on from its checkpoint, up to --warm-start-rounds
// times); then from that one checkpoint GRPO and, as the control, RS-SFT, side by side, the same config
// but the method. Primary figure: held-out greedy pass@1, GRPO − warm start (the GRPO run's iteration-0
// evaluation), with a 95 % interval paired by task; beside it × tasks and the others apart, sampled
// pass@1, pass@2, tool calls, and GRPO − RS-SFT. The evidence (run records with per-task results, the
// configs, the commit) is written to docs/runs/own-agent/ with --evidence.
// Usage: node scripts/verifyOwnAgent.mjs [--seeds 1] [--out DIR] [--sft-iterations 160] [--rl-iterations 12]
//        [--warm-start-ready 0.5] [--warm-start-rounds 1] [--warm-start-more 60] [--evidence DIR]
//        [--tasks verify-tasks.jsonl] [--from-model DIR --from-checkpoint DIR]
//        [--rl-learning-rate 5e-4] [--rl-warmup-steps 5] [--rl-minibatch 64]
// --tasks names the task file in examples/own-agent (a design's own test split); --from-model and
// --from-checkpoint start the warm start's SFT from a model made before (its folder, and the SFT
// checkpoint to continue from) in place of a fresh one; with --sft-iterations 0 that checkpoint is the
// warm start itself (no SFT runs; its evaluation is the GRPO run's iteration 0). The RL flags set both
// RL runs' step size, warm-up and minibatch (episodes per optimizer step; 0 = the whole batch: one step
// per iteration for GRPO and RS-SFT alike, so matched steps and summed learning rate).
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  arg,
  greedyRateOf,
  pct,
  perTask,
  runAgentRl,
  seedRow,
  seedTables,
  verifyFolder,
  warmStartThenGrpoAndRsSft,
  writeEvidence,
  writeJson,
} from './agentRl.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const example = path.join(root, 'examples', 'own-agent');
const tokenizer = path.join(root, 'test', 'fixtures', 'hf', 'qwen3');
const seeds = arg('--seeds', '1').split(',').map(Number);
const out = path.resolve(arg('--out', verifyFolder('own-agent')));
const evidence = arg('--evidence', undefined);
const sftIterations = Number(arg('--sft-iterations', '160'));
const rlIterations = Number(arg('--rl-iterations', '12'));
const rlLearningRate = Number(arg('--rl-learning-rate', '5e-4'));
const rlWarmupSteps = Number(arg('--rl-warmup-steps', '5'));
const rlMinibatch = Number(arg('--rl-minibatch', '64'));
const warmStartReady = Number(arg('--warm-start-ready', '0.5'));
const warmStartRounds = Number(arg('--warm-start-rounds', '1'));
const warmStartMore = Number(arg('--warm-start-more', '60'));
for (const [name, v, ok] of /** @type {[string, number, boolean][]} */ ([
  ['--sft-iterations', sftIterations, Number.isInteger(sftIterations) && sftIterations >= 0],
  ['--rl-iterations', rlIterations, Number.isInteger(rlIterations) && rlIterations >= 1],
  ['--rl-learning-rate', rlLearningRate, rlLearningRate > 0 && rlLearningRate < 1],
  ['--rl-warmup-steps', rlWarmupSteps, Number.isInteger(rlWarmupSteps) && rlWarmupSteps >= 0],
  ['--rl-minibatch', rlMinibatch, Number.isInteger(rlMinibatch) && rlMinibatch >= 0],
  ['--warm-start-ready', warmStartReady, warmStartReady >= 0 && warmStartReady <= 1],
  ['--warm-start-rounds', warmStartRounds, Number.isInteger(warmStartRounds) && warmStartRounds >= 0],
  ['--warm-start-more', warmStartMore, Number.isInteger(warmStartMore) && warmStartMore >= 1],
  ['--seeds', seeds.length, seeds.every((s) => Number.isInteger(s) && s >= 0)],
]))
  if (!ok) {
    process.stderr.write(
      `verify:own-agent: ${name} ${v}: iterations, rounds, warm-up steps and the minibatch are whole numbers (RL iterations ≥ 1; minibatch 0 = the whole batch), the readiness a fraction from 0 to 1, the learning rate above 0 and below 1\n`,
    );
    process.exit(2);
  }
const taskFile = path.join(example, arg('--tasks', 'verify-tasks.jsonl'));
const fromModel = arg('--from-model', undefined);
const fromCheckpoint = arg('--from-checkpoint', undefined);
for (const [name, p] of /** @type {[string, string | undefined][]} */ ([
  ['--tasks', taskFile],
  ['--from-model', fromModel],
  ['--from-checkpoint', fromCheckpoint],
]))
  if (p !== undefined && !fs.existsSync(p)) {
    process.stderr.write(`verify:own-agent: ${name} ${p}: no such file or folder\n`);
    process.exit(2);
  }
if (sftIterations === 0 && !(fromModel && fromCheckpoint)) {
  process.stderr.write('verify:own-agent: --sft-iterations 0 keeps a warm start made before. Fix: name it with --from-model DIR --from-checkpoint DIR.\n');
  process.exit(2);
}

// the inputs are checked before the store's folder is made: a mistyped path leaves nothing behind
fs.mkdirSync(out, { recursive: true });
process.stderr.write(`runs and records: ${out}\n`);
const db = path.join(out, 'runs.sqlite');

// Task id → class: × (the demonstrations' habit) against the rest, from the task file.
/** @type {Map<string, 'times' | 'other'>} */
const classOf = new Map();
let heldOut = 0; // the test split's tasks: the evaluation samples each twice and decodes it greedily
for (const line of fs.readFileSync(taskFile, 'utf8').split('\n')) {
  if (line.trim() === '') continue;
  const t = JSON.parse(line);
  classOf.set(t.id, /\) \* \d+\?$/.test(t.prompt) ? 'times' : 'other');
  if (t.split === 'test') heldOut++;
}
/** @param {Map<string, { greedy: number }>} m @param {'times' | 'other'} cls */
const greedyRate = (m, cls) =>
  greedyRateOf(
    m,
    (id) => {
      const c = classOf.get(id) ?? classOf.get(id.slice(id.lastIndexOf(':') + 1));
      if (c === undefined) throw new Error(`task ${id}: not in ${taskFile}`);
      return c === cls;
    },
    `the class ${cls}`,
  );

// What every stage shares: the program, its tasks (the evaluation samples every held-out task once and
// decodes each greedily), a full fine-tuning of the fresh model, room for the second request.
const common = {
  env: 'agent',
  policy: 'transformer',
  evalEpisodes: 2 * heldOut,
  evalPassK: 2,
  envOptions: { root: example, command: ['node', 'agent.ts'], tasks: path.basename(taskFile) },
};
const policyOptions = { loraRank: 0, contextLength: 1024, maxNewTokens: 96 };

/** @type {any[]} */
const rows = [];
/** @type {Record<string, string>} */
const records = {};
const t0 = Date.now();
for (const seed of seeds) {
  const file = (/** @type {string} */ stage) => path.join(out, `own-agent-${stage}-s${seed}`);
  const model = fromModel ? path.resolve(fromModel) : path.join(out, `model-s${seed}`);
  process.stderr.write(
    `\n== seed ${seed}: ${fromModel ? 'the model' : 'a fresh model'} (${model})${fromCheckpoint ? `, ${sftIterations === 0 ? 'the warm start' : 'SFT from'} ${fromCheckpoint}` : ''}\n`,
  );
  if (!fromModel)
    runAgentRl([
      'model',
      'new',
      '--out',
      model,
      '--tokenizer',
      tokenizer,
      '--layers',
      '2',
      '--hidden',
      '96',
      '--heads',
      '4',
      '--kv-heads',
      '2',
      '--context',
      '1024',
      '--seed',
      String(seed),
    ]);
  /** @param {number} iterations */
  const sftConfig = (iterations) => ({
    ...common,
    method: 'sft',
    seed,
    iterations,
    groupsPerIteration: 32,
    algorithm: { learningRate: 0.003, lossAggregation: 'token-mean' },
    policyOptions: { ...policyOptions, model, ...(fromCheckpoint ? { init: path.resolve(fromCheckpoint) } : {}) },
  });
  const stages = await warmStartThenGrpoAndRsSft({
    file,
    db,
    label: `s${seed}`,
    // --sft-iterations 0: the checkpoint given is the warm start
    ...(sftIterations === 0 ? { warmStartCheckpoint: path.resolve(/** @type {string} */ (fromCheckpoint)) } : { sftConfig: sftConfig(sftIterations) }),
    // the check of the warm start before RL: it must call the tool and copy its result where its
    // demonstrations do (greedy on the tasks without ×); if not, SFT goes on from its checkpoint
    checkWarmStart: (record, round) => {
      const ready = greedyRate(perTask(record.evaluations.at(-1)), 'other');
      const go = ready >= warmStartReady;
      process.stderr.write(
        `== seed ${seed}: warm start after ${round} SFT stage(s): greedy ${pct(ready)} on tasks without × (ready at ${pct(warmStartReady)}): ${go ? 'ready' : round > warmStartRounds ? 'not ready, and no continuation left: RL starts from it' : 'not ready'}\n`,
      );
      return go || round > warmStartRounds ? undefined : sftConfig(warmStartMore);
    },
    rlConfig: (method, checkpoint) => ({
      ...common,
      method,
      seed,
      iterations: rlIterations,
      groupsPerIteration: 16,
      groupSize: 8,
      // designs 2 and 3: 12 iterations make at most 24 steps of 64, and the language model's 20 warm-up
      // steps at 2e-4 would leave it short of its step size (5e-4 after 5, as code GRPO's default)
      algorithm: { learningRate: rlLearningRate, warmupSteps: rlWarmupSteps, minibatchSize: rlMinibatch },
      // one thread each: GRPO and RS-SFT run side by side
      policyOptions: { ...policyOptions, threads: 1, init: checkpoint },
    }),
  });
  const row = seedRow(seed, stages, { greedyTimes: (m) => greedyRate(m, 'times'), greedyOther: (m) => greedyRate(m, 'other') });
  rows.push(row);
  records[`grpo-s${seed}`] = `${file('grpo')}.json`;
  records[`rs-sft-s${seed}`] = `${file('rs-sft')}.json`;
  stages.warmStart.forEach((_, i) => (records[`sft${i === 0 ? '' : `-more${i}`}-s${seed}`] = `${file(i === 0 ? 'sft' : `sft-more${i}`)}.json`));
  process.stderr.write(
    `== seed ${seed}: held-out greedy pass@1 GRPO − warm start ${(100 * row.grpoGain.mean).toFixed(1)} points [${(100 * row.grpoGain.low).toFixed(1)}, ${(100 * row.grpoGain.high).toFixed(1)}]\n`,
  );
}

const seconds = (Date.now() - t0) / 1000;
const { lines: tables, met } = seedTables(rows, [
  ['greedy, × tasks', 'greedyTimes'],
  ['greedy, the others', 'greedyOther'],
]);
const lines = [...tables, `total ${seconds.toFixed(0)} s on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; database ${db}`];
process.stdout.write(`${lines.join('\n')}\n\nruns (store runs.sqlite) and records: ${out}\n`);
const summary = {
  example,
  tasks: path.relative(root, taskFile),
  ...(fromModel ? { fromModel: path.resolve(fromModel) } : {}),
  ...(fromCheckpoint ? { fromCheckpoint: path.resolve(fromCheckpoint) } : {}),
  tokenizer: path.relative(root, tokenizer),
  sftIterations,
  rlIterations,
  rl: { learningRate: rlLearningRate, warmupSteps: rlWarmupSteps, minibatch: rlMinibatch },
  warmStartCheck: { ready: warmStartReady, rounds: warmStartRounds, more: warmStartMore },
  criterionMet: met,
  rows,
};
writeJson(path.join(out, 'summary.json'), { db, ...summary });
if (evidence) {
  fs.mkdirSync(evidence, { recursive: true });
  fs.writeFileSync(
    path.join(evidence, 'verify-own-agent.md'),
    `${lines.slice(0, -1).join('\n')}\ntotal ${seconds.toFixed(0)} s on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}\n`,
  );
  writeEvidence(path.join(evidence, 'evidence.json'), { script: 'scripts/verifyOwnAgent.mjs', seconds, records, summary });
}
process.exit(met ? 0 : 1);
