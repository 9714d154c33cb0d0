#!/usr/bin/env node
// @ts-check
// `npm run verify:distill` (issue 51, item 3; pre-registered in docs/reproductions.md, "On-policy
// distillation against GRPO", before its first run on the test split): does a teacher's log-prob on
// every sampled token teach a small model more than GRPO's 0/1 reward does from the same episodes?
// One teacher per run, made here: a fresh Qwen3-architecture model 5.8× the student's size, SFT on the
// calculator's complete demonstrations (the tool on every task), exported as a Hugging Face folder.
// Per seed: the student of `npm start` (a fresh 104k-parameter model, SFT on imperfect demonstrations),
// then from that one checkpoint four arms with the same sampled episodes, one optimizer step per
// iteration and the same learning-rate schedule (so the same steps and summed learning rate):
// distillation, GRPO, GRPO + teacher term and RS-SFT, two at a time on one core each.
// Primary figure: test greedy pass@1, distillation − GRPO, paired by task (95 % interval, exact
// McNemar p); criterion: the interval above 0 on every seed. Evaluations run on the calculator's
// test split (expressions deeper than any training task, envOptions.evaluationSet "test"); --smoke runs tiny sizes on the
// validation split, never on the test split.
// Usage: node scripts/verifyDistill.mjs [--seeds 1,2,3] [--out DIR] [--smoke] [--eval-on test|validation]
//        [--teacher-iterations N] [--sft-iterations N] [--rl-iterations N] [--tasks N]
import {
  arg,
  greedyDifference,
  methodConfig,
  pct,
  perTask,
  points,
  runAgentRl,
  runAgentRlAsync,
  schedule,
  verifyFolder,
  writeEvidence,
  writeJson,
} from './agentRl.mjs';
import { mcnemarExact } from './pairedTests.mjs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const smoke = process.argv.includes('--smoke');
const evalOn = arg('--eval-on', smoke ? 'validation' : 'test');
if (evalOn !== 'test' && evalOn !== 'validation') {
  process.stderr.write(`--eval-on ${evalOn}: use test (the pre-registered split) or validation\n`);
  process.exit(2);
}
if (smoke && evalOn === 'test') {
  process.stderr.write('--smoke evaluates on the validation split only (the test split is for the pre-registered run)\n');
  process.exit(2);
}
const seeds = arg('--seeds', smoke ? '1' : '1,2,3')
  .split(',')
  .map(Number);
const out = path.resolve(arg('--out', verifyFolder(smoke ? 'distill-smoke' : evalOn === 'test' ? 'distill' : 'distill-validation')));
fs.mkdirSync(out, { recursive: true });
process.stderr.write(`runs and records: ${out}\n`);
const db = path.join(out, 'runs.sqlite');
const num = (/** @type {string} */ name, /** @type {string} */ full, /** @type {string} */ tiny) => Number(arg(name, smoke ? tiny : full));
const teacherIterations = num('--teacher-iterations', '400', '20');
const sftIterations = num('--sft-iterations', '200', '20');
const rlIterations = num('--rl-iterations', '40', '2');
// held-out tasks of the evaluated split: each evaluated greedily once and sampled 4 times (pass@4)
const tasks = num('--tasks', '400', '20');
const groups = smoke ? { groupsPerIteration: 4, groupSize: 4 } : { groupsPerIteration: 32, groupSize: 8 };
// SFT demonstrations per iteration: the SFT default of 64 (four steps of 16); a smoke run's 8 check the path only
const sftBatch = smoke ? { groupsPerIteration: 8 } : {};
// the teacher's shape: 3 layers of width 128 (607,296 parameters, 5.8× the student); a smoke run's is tiny
const teacherShape = smoke ? ['--layers', '1', '--hidden', '32'] : ['--layers', '3', '--hidden', '128'];
const contextLength = 512;
const envOptions = { evaluationSet: evalOn, heldOutTasks: tasks };
const evaluation = { evalEpisodes: 4 * tasks, evalPassK: 4 };
// one optimizer step per iteration in every arm (the whole batch), the same schedule: matched steps and Σ lr
const algorithm = { minibatchSize: 0, epochs: 1, learningRate: 2e-4, warmupSteps: 5, lrSchedule: 'constant' };
const teacherWeight = 1;

/** @param {string} label @param {string[]} args */
function cli(label, args) {
  process.stderr.write(`\n== ${label}: agent-rl ${args.join(' ')}\n`);
  return runAgentRl(args, { echo: true });
}

/** An SFT stage: its config written beside its record; returns its checkpoint, record file and seconds. @param {string} name @param {unknown} config */
function sftStage(name, config) {
  const file = path.join(out, name);
  writeJson(`${file}.config.json`, config);
  const r = cli(name, ['sft', '--config', `${file}.config.json`, '--db', db, '--output', `${file}.json`]);
  const checkpoint = /checkpoint: (\S+)/.exec(r.stdout)?.[1];
  if (!checkpoint) throw new Error(`the SFT stage ${name} printed no checkpoint`);
  return { checkpoint, record: `${file}.json`, seconds: r.seconds };
}

/** A fresh Qwen3-architecture model folder (`model new`) with the character tokenizer. @param {string} dir @param {number} seed @param {string[]} shape */
function freshModel(dir, seed, shape) {
  fs.rmSync(dir, { recursive: true, force: true });
  cli('a fresh model', ['model', 'new', '--out', dir, '--arch', 'qwen3', '--context', String(contextLength), '--seed', String(seed), ...shape]);
}

const t0 = Date.now();
// The teacher: 3 layers of width 128 (607,296 parameters, 5.8× the student), SFT on demonstrations that
// use the tool on every task, its own evaluation on the evaluated split at the end of its SFT.
const teacherSeed = 101;
const teacherBase = path.join(out, 'models', 'teacher-base');
freshModel(teacherBase, teacherSeed, teacherShape);
const teacherSft = sftStage('teacher-sft', {
  env: 'calculator',
  policy: 'transformer',
  method: 'sft',
  seed: teacherSeed,
  iterations: teacherIterations,
  ...sftBatch,
  envOptions,
  demonstrations: { skipToolOn: 'none' },
  evalEpisodes: tasks,
  policyOptions: { model: teacherBase, loraRank: 0, constrainedDecoding: true, contextLength },
});
const teacher = path.join(out, 'models', 'teacher');
fs.rmSync(teacher, { recursive: true, force: true });
cli('the teacher as a Hugging Face folder', ['model', 'export', teacherSft.checkpoint, '--out', teacher]);

/** The four arms: method, extra algorithm settings, whether the teacher scores. @type {[string, string, Record<string, number>, boolean][]} */
const ARMS = [
  ['distill', 'distill', { teacherWeight }, true],
  ['grpoTeacher', 'grpo', { teacherWeight }, true],
  ['grpo', 'grpo', {}, false],
  ['rsSft', 'rs-sft', {}, false],
];

/** @type {Record<string, string>} */
const records = { teacherSft: teacherSft.record };
/** @type {any[]} */
const rows = [];
for (const seed of seeds) {
  const model = path.join(out, 'models', `student-s${seed}`);
  freshModel(model, seed, []);
  // npm start's warm start: the imperfect demonstrations are the calculator's defaults
  const student = sftStage(`student-sft-s${seed}`, {
    env: 'calculator',
    policy: 'transformer',
    method: 'sft',
    seed,
    iterations: sftIterations,
    ...sftBatch,
    envOptions,
    evalEpisodes: 0,
    policyOptions: { model, loraRank: 0, constrainedDecoding: true, contextLength },
  });
  records[`studentSft${seed}`] = student.record;
  /** @type {Record<string, { record: any; file: string; seconds: number }>} */
  const arms = {};
  // two at a time, one core each: the two arms with a teacher, then the two without
  for (const pair of [ARMS.slice(0, 2), ARMS.slice(2)]) {
    await Promise.all(
      pair.map(async ([name, method, extra, scored]) => {
        const file = path.join(out, `${name}-s${seed}`);
        const config = methodConfig(
          'calculator',
          method,
          {
            seed,
            iterations: rlIterations,
            ...groups,
            envOptions,
            ...evaluation,
            algorithm: { ...algorithm, ...extra },
            policyOptions: { threads: 1, constrainedDecoding: true, ...(scored ? { teacher } : {}) },
          },
          student.checkpoint,
        );
        writeJson(`${file}.config.json`, config);
        const r = await runAgentRlAsync(['train', '--config', `${file}.config.json`, '--db', db, '--output', `${file}.json`], `s${seed} ${name}`);
        arms[name] = { record: JSON.parse(fs.readFileSync(`${file}.json`, 'utf8')), file: `${file}.json`, seconds: r.seconds };
        records[`${name}${seed}`] = `${file}.json`;
      }),
    );
  }
  rows.push(seedRow(seed, arms, student.seconds));
  const p = rows.at(-1).primary;
  process.stderr.write(`== seed ${seed}: test greedy pass@1, distillation − GRPO ${points(p)} points, McNemar p ${p.mcnemar.p.toPrecision(2)}\n`);
}

/**
 * One seed's figures: per arm its last evaluation, schedule, wall and teacher seconds, reverse KL first →
 * last; the warm start (GRPO's iteration 0); the paired greedy differences with McNemar's exact p.
 * @param {number} seed @param {Record<string, { record: any; seconds: number }>} arms @param {number} sftSeconds
 */
function seedRow(seed, arms, sftSeconds) {
  const a = (/** @type {string} */ name) => {
    const x = arms[name];
    if (!x) throw new Error(`seed ${seed}: the ${name} arm did not run`);
    return x;
  };
  // per task of each arm's last evaluation, and of the warm start (the GRPO run's iteration 0)
  /** @type {Record<string, Map<string, { greedy: number; sampled: number }>>} */
  const perTaskOf = Object.fromEntries(ARMS.map(([name]) => [name, perTask(a(name).record.evaluations.at(-1))]));
  perTaskOf.warm = perTask(a('grpo').record.evaluations[0]);
  const diff = (/** @type {string} */ x, /** @type {string} */ y) => {
    const [mx, my] = [perTaskOf[x], perTaskOf[y]];
    if (!mx || !my) throw new Error(`no per-task results of ${mx ? y : x}`);
    return { ...greedyDifference(mx, my), mcnemar: mcnemarExact(mx, my) };
  };
  const kl = (/** @type {any} */ rec) => {
    const xs = rec.iterations.map((/** @type {any} */ m) => m.lossMetrics?.teacherReverseKl).filter((/** @type {unknown} */ v) => typeof v === 'number');
    const mean = (/** @type {number[]} */ v) => v.reduce((s, y) => s + y, 0) / Math.max(1, v.length);
    return xs.length === 0 ? undefined : { first: mean(xs.slice(0, 3)), last: mean(xs.slice(-3)) };
  };
  return {
    seed,
    studentSftSeconds: sftSeconds,
    warmStart: a('grpo').record.evaluations[0],
    arms: Object.fromEntries(
      ARMS.map(([name]) => {
        const { record, seconds } = a(name);
        const teacherSeconds = record.iterations.reduce((/** @type {number} */ s, /** @type {any} */ m) => s + (m.lossMetrics?.teacherMs ?? 0), 0) / 1000;
        return [
          name,
          {
            label: record.methodLabel,
            run: record.runId,
            evaluation: record.evaluations.at(-1),
            schedule: schedule(record),
            seconds,
            teacherSeconds,
            reverseKl: kl(record),
          },
        ];
      }),
    ),
    primary: diff('distill', 'grpo'),
    secondary: {
      grpoTeacherMinusGrpo: diff('grpoTeacher', 'grpo'),
      distillMinusRsSft: diff('distill', 'rsSft'),
      grpoMinusRsSft: diff('grpo', 'rsSft'),
      distillMinusWarmStart: diff('distill', 'warm'),
      grpoMinusWarmStart: diff('grpo', 'warm'),
    },
  };
}

const teacherRecord = JSON.parse(fs.readFileSync(teacherSft.record, 'utf8'));
const teacherEval = teacherRecord.evaluations.at(-1);
const met = rows.every((x) => x.primary.low > 0);
const p2 = (/** @type {number} */ p) => p.toPrecision(2);
const cell = (/** @type {any} */ d) => `${points(d)} | ${p2(d.mcnemar.p)} (${d.mcnemar.better}:${d.mcnemar.worse})`;
const split = `${evalOn} split (expressions deeper than any training task's, 4–7 calls; ${tasks} tasks, each greedily and 4 times sampled)`;
const lines = [
  `Calculator, evaluated on the ${split}. Teacher: ${teacher} (${teacherShape.join(' ')}, ${teacherIterations} SFT iterations on demonstrations that always call the tool), greedy ${pct(teacherEval.greedySuccessRate)}, sampled ${pct(teacherEval.successRate)} (${teacherSft.seconds.toFixed(0)} s).`,
  '',
  '| seed | model | greedy pass@1 | sampled pass@1 | pass@4 | optimizer steps | Σ learning rate | wall s (teacher s) | reverse KL to the teacher, first 3 → last 3 it. |',
  '|---|---|---|---|---|---|---|---|---|',
  ...rows.flatMap((x) => [
    `| ${x.seed} | warm start (SFT ${sftIterations} it., iteration 0) | ${pct(x.warmStart.greedySuccessRate)} | ${pct(x.warmStart.successRate)} | ${pct(x.warmStart.passAtK)} | – | – | ${x.studentSftSeconds.toFixed(0)} | – |`,
    ...ARMS.map(([name]) => {
      const m = x.arms[name];
      const e = m.evaluation;
      const kl = m.reverseKl ? `${m.reverseKl.first.toFixed(3)} → ${m.reverseKl.last.toFixed(3)}` : '–';
      return `| ${x.seed} | ${m.label} | ${pct(e.greedySuccessRate)} | ${pct(e.successRate)} | ${pct(e.passAtK)} | ${m.schedule.steps} | ${m.schedule.lrSum.toExponential(2)} | ${m.seconds.toFixed(0)} (${m.teacherSeconds.toFixed(0)}) | ${kl} |`;
    }),
  ]),
  '',
  'Greedy pass@1, paired by task: difference in points [95 % interval] | exact McNemar p (tasks first right only : second right only)',
  '',
  '| seed | distillation − GRPO (primary) | p | GRPO + teacher − GRPO | p | distillation − RS-SFT | p | GRPO − RS-SFT | p | distillation − warm start | p | GRPO − warm start | p |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (x) =>
      `| ${x.seed} | ${cell(x.primary)} | ${cell(x.secondary.grpoTeacherMinusGrpo)} | ${cell(x.secondary.distillMinusRsSft)} | ${cell(x.secondary.grpoMinusRsSft)} | ${cell(x.secondary.distillMinusWarmStart)} | ${cell(x.secondary.grpoMinusWarmStart)} |`,
  ),
  '',
  `criterion (pre-registered): distillation − GRPO, test greedy pass@1, interval above 0 on every seed — ${evalOn === 'test' && !smoke ? (met ? 'met' : 'NOT met') : `not judged (${smoke ? 'a smoke run' : 'the validation split'})`}`,
  `total ${((Date.now() - t0) / 1000).toFixed(0)} s on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; database ${db}`,
];
process.stdout.write(`${lines.join('\n')}\n`);
const totalSeconds = (Date.now() - t0) / 1000;
writeJson(path.join(out, 'summary.json'), { evalOn, smoke, tasks, groups, algorithm, teacherWeight, teacherIterations, sftIterations, rlIterations, rows });
fs.writeFileSync(path.join(out, 'verify-distill.md'), `${lines.join('\n')}\n`);
// the compact evidence (every stage's run record with its per-task results, the summary): npm run evidence reads it
const evidence = writeEvidence(path.join(out, 'evidence.json'), {
  script: 'npm run verify:distill (scripts/verifyDistill.mjs)',
  seconds: totalSeconds,
  records,
  summary: { evalOn, smoke, tasks, teacher: { seconds: teacherSft.seconds, evaluation: teacherEval }, met, rows },
});
process.stdout.write(`evidence: ${evidence}\n`);
process.exit(evalOn === 'test' && !smoke && !met ? 1 : 0);
