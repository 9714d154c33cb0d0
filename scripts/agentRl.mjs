// @ts-check
// What the experiment scripts share: reading `--name value` flags, and running the built agent-rl CLI
// (dist/cli.js) as a child process with its stdout captured and its stderr (progress) passed through.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), 'dist', 'cli.js');

/**
 * The value after `--name` on this script's command line, or `fallback`.
 * @template {string | undefined} F
 * @param {string} name @param {F} fallback
 * @returns {string | F}
 */
export function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/**
 * Runs `agent-rl ARGS`; returns its stdout and wall time. `echo` copies stdout to stderr as it is read.
 * A non-zero exit throws an error carrying the exit `status`, after the stdout has been written out.
 * @param {string[]} args @param {{ echo?: boolean }} [options]
 * @returns {{ stdout: string; seconds: number }}
 */
export function runAgentRl(args, { echo = false } = {}) {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (echo || r.status !== 0) process.stderr.write(r.stdout);
  if (r.status !== 0) throw Object.assign(new Error(`agent-rl ${args.join(' ')} exited with ${r.status}`), { status: r.status ?? 1 });
  return { stdout: r.stdout, seconds: (Date.now() - t0) / 1000 };
}

/**
 * `runAgentRl` without blocking, so that two runs can share the machine's cores: its progress lines
 * are passed through with `label` in front.
 * @param {string[]} args @param {string} label
 * @returns {Promise<{ stdout: string; seconds: number }>}
 */
export function runAgentRlAsync(args, label) {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let pending = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (/** @type {string} */ d) => {
      const lines = (pending + d).split(/\r?\n|\r/);
      pending = lines.pop() ?? '';
      for (const l of lines) if (l.trim() !== '') process.stderr.write(`[${label}] ${l}\n`);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve({ stdout, seconds: (Date.now() - t0) / 1000 });
      else {
        process.stderr.write(stdout);
        reject(Object.assign(new Error(`agent-rl ${args.join(' ')} exited with ${code}`), { status: code ?? 1 }));
      }
    });
  });
}

/**
 * Where a verify script keeps the store and records of its runs, so every figure it prints can be
 * read again from the runs: `.agent-rl/verify/<script>/<UTC date and time>/` under `root` (the
 * repository when run by npm). The name is safe on every platform (no colons).
 * @param {string} script @param {string} [root] @param {Date} [now]
 */
export function verifyFolder(script, root = process.cwd(), now = new Date()) {
  return path.join(
    root,
    '.agent-rl',
    'verify',
    script,
    now
      .toISOString()
      .replace(/\.\d+Z$/, 'Z')
      .replace(/:/g, '-'),
  );
}

/** Writes `value` as JSON to `file`; returns the file. @param {string} file @param {unknown} value */
export function writeJson(file, value) {
  fs.writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
  return file;
}

/**
 * The config of an RL stage from a warm start: `env`, `method` (grpo or rs-sft) with every default
 * of (env, transformer, method), `extra` on top, `init` the checkpoint.
 * @param {string} env @param {string} method @param {Record<string, unknown>} extra @param {string} init
 */
export function methodConfig(env, method, extra, init) {
  const { policyOptions, ...rest } = /** @type {{ policyOptions?: Record<string, unknown> }} */ (extra);
  return { env, policy: 'transformer', method, ...rest, policyOptions: { ...(policyOptions ?? {}), init } };
}

/** @param {number | undefined} v */
export const pct = (v) => (v === undefined ? '–' : `${(100 * v).toFixed(1)}%`);
/** @param {number | undefined} v */
const num = (v) => (v === undefined ? '–' : v.toFixed(2));

/**
 * A Markdown table of evaluations: greedy pass@1, sampled pass@1, pass@k, tool calls; each figure's
 * change against `baseline` in points.
 * @param {string} title @param {[string, Record<string, number | undefined>][]} rows @param {Record<string, number | undefined>} baseline
 */
export function evaluationTable(title, rows, baseline) {
  const k = rows.find(([, e]) => e.passK !== undefined)?.[1].passK ?? 'k';
  /** @param {number | undefined} v @param {number | undefined} b */
  const delta = (v, b) => (v === undefined || b === undefined ? '' : ` (${v >= b ? '+' : ''}${((v - b) * 100).toFixed(1)})`);
  const lines = [
    title,
    `| model | greedy pass@1 | sampled pass@1 | sampled pass@${k} | tool calls, sampled / greedy | held-out episodes (sampled / greedy) |`,
    '|---|---|---|---|---|---|',
    ...rows.map(
      ([label, e]) =>
        `| ${label} | ${pct(e.greedySuccessRate)}${e === baseline ? '' : delta(e.greedySuccessRate, baseline.greedySuccessRate)} | ${pct(e.successRate)}${e === baseline ? '' : delta(e.successRate, baseline.successRate)} | ${pct(e.passAtK)}${e === baseline ? '' : delta(e.passAtK, baseline.passAtK)} | ${num(e.toolCalls)} / ${num(e.greedyToolCalls)} | ${e.episodes ?? '–'} / ${e.greedyEpisodes ?? '–'} |`,
    ),
  ];
  return lines.join('\n');
}

/** Mean and 95 % interval (normal approximation, n − 1 variance) of paired differences. @param {number[]} d */
export function pairedInterval(d) {
  const n = d.length;
  const mean = d.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(d.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, n - 1));
  const half = (1.96 * sd) / Math.sqrt(n);
  return { n, mean, low: mean - half, high: mean + half };
}

/**
 * Per held-out task of an evaluation in a run record: greedy success (0/1) and sampled success rate.
 * Throws when the evaluation lacks per-task greedy results or did not sample every held-out task.
 * @param {any} e
 * @returns {Map<string, { greedy: number; sampled: number }>}
 */
export function perTask(e) {
  if (!Array.isArray(e.perTask) || e.perTask.some((/** @type {any} */ t) => t.greedySuccesses === undefined))
    throw new Error(`evaluation at iteration ${e.iteration}: no per-task greedy results (a run from before they were stored?)`);
  // greedy decoding visits every held-out task; the per-task list must too (evalEpisodes ≥ the held-out tasks)
  if (e.perTask.length !== e.greedyEpisodes)
    throw new Error(`evaluation at iteration ${e.iteration}: ${e.perTask.length} tasks sampled of ${e.greedyEpisodes} held out; raise evalEpisodes`);
  return new Map(e.perTask.map((/** @type {any} */ t) => [t.task, { greedy: t.greedySuccesses, sampled: t.successes / t.episodes }]));
}

/**
 * Greedy pass@1 over the tasks `keep` accepts (all when absent); `what` names them in the error.
 * @param {Map<string, { greedy: number }>} m @param {((task: string) => boolean) | undefined} [keep] @param {string} [what]
 */
export function greedyRateOf(m, keep, what = 'the class') {
  const xs = [...m].filter(([k]) => keep === undefined || keep(k)).map(([, v]) => v.greedy);
  if (xs.length === 0) throw new Error(`no held-out task of ${what}`);
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Paired interval of a − b on greedy success, over the tasks both list. @param {Map<string, { greedy: number }>} a @param {Map<string, { greedy: number }>} b */
export function greedyDifference(a, b) {
  return pairedInterval([...a.keys()].filter((k) => b.has(k)).map((k) => /** @type {number} */ (a.get(k)?.greedy) - /** @type {number} */ (b.get(k)?.greedy)));
}

/**
 * A warm-start-then-RL verify script's row for one seed (from warmStartThenGrpoAndRsSft's stages): each
 * model's evaluation with its greedy pass@1 per task class (`classes`: the field a rate is stored under →
 * that rate over a per-task map), GRPO's and RS-SFT's schedules and wall times, and the greedy
 * differences paired by task (GRPO and RS-SFT against the warm start, the GRPO run's iteration 0).
 * @param {number} seed @param {{ warmStart: any[]; grpo: { record: any; seconds: number }; rsSft: { record: any; seconds: number } }} stages
 * @param {Record<string, (m: Map<string, { greedy: number }>) => number>} classes
 */
export function seedRow(seed, stages, classes) {
  const [g, r] = [stages.grpo.record, stages.rsSft.record];
  const [w, gm, rm] = [perTask(g.evaluations[0]), perTask(g.evaluations.at(-1)), perTask(r.evaluations.at(-1))];
  const result = (/** @type {any} */ rec, /** @type {any} */ e, /** @type {Map<string, any>} */ m, /** @type {string} */ label) => ({
    label,
    run: rec.runId,
    evaluation: e,
    ...Object.fromEntries(Object.entries(classes).map(([field, rate]) => [field, rate(m)])),
  });
  return {
    seed,
    warmStart: result(g, g.evaluations[0], w, 'warm start (SFT, iteration 0)'),
    grpo: { ...result(g, g.evaluations.at(-1), gm, g.methodLabel), schedule: schedule(g), seconds: stages.grpo.seconds },
    rsSft: { ...result(r, r.evaluations.at(-1), rm, r.methodLabel), schedule: schedule(r), seconds: stages.rsSft.seconds },
    warmStartSftIterations: stages.warmStart.reduce((a, rec) => a + rec.iterations.length, 0),
    warmStartRuns: stages.warmStart.map((rec) => rec.runId),
    grpoGain: greedyDifference(gm, w),
    rsSftGain: greedyDifference(rm, w),
    grpoMinusRsSft: greedyDifference(gm, rm),
  };
}

/** A paired difference in points with its interval: "+13.9 [11.7, 16.1]". @param {{ mean: number; low: number; high: number }} c */
export const points = (c) => `${c.mean >= 0 ? '+' : ''}${(100 * c.mean).toFixed(1)} [${(100 * c.low).toFixed(1)}, ${(100 * c.high).toFixed(1)}]`;

/**
 * The Markdown tables of seedRow rows — per model (greedy pass@1, per class, sampled pass@1, pass@k, tool
 * calls, optimizer steps) and the paired differences — then the pre-registered criterion (GRPO ≥ +10
 * greedy points over the warm start on every seed); whether it was met. `classColumns`: [header, field].
 * @param {any[]} rows @param {[string, string][]} classColumns
 */
export function seedTables(rows, classColumns) {
  const cells = (/** @type {any} */ m) =>
    [
      pct(m.evaluation.greedySuccessRate),
      ...classColumns.map(([, field]) => pct(m[field])),
      pct(m.evaluation.successRate),
      pct(m.evaluation.passAtK),
      `${(m.evaluation.toolCalls ?? 0).toFixed(2)} / ${(m.evaluation.greedyToolCalls ?? 0).toFixed(2)}`,
    ].join(' | ');
  const k = rows[0]?.grpo.evaluation.passK ?? 'k';
  const met = rows.every((x) => x.grpoGain.mean >= 0.1);
  const header = [
    'seed',
    'model',
    'greedy pass@1',
    ...classColumns.map(([h]) => h),
    'sampled pass@1',
    `pass@${k}`,
    'tool calls, sampled / greedy',
    'optimizer steps',
  ];
  const lines = [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.flatMap((x) => [
      `| ${x.seed} | ${x.warmStart.label}, ${x.warmStartSftIterations ? `${x.warmStartSftIterations} SFT iterations` : 'a checkpoint made before (no SFT in this run)'} | ${cells(x.warmStart)} | – |`,
      `| ${x.seed} | ${x.grpo.label} | ${cells(x.grpo)} | ${x.grpo.schedule.steps} |`,
      `| ${x.seed} | ${x.rsSft.label} | ${cells(x.rsSft)} | ${x.rsSft.schedule.steps} |`,
    ]),
    '',
    '| seed | GRPO − warm start, greedy points [95 % interval, paired by task] | RS-SFT − warm start | GRPO − RS-SFT | held-out tasks |',
    '|---|---|---|---|---|',
    ...rows.map((x) => `| ${x.seed} | ${points(x.grpoGain)} | ${points(x.rsSftGain)} | ${points(x.grpoMinusRsSft)} | ${x.grpoGain.n} |`),
    '',
    `criterion (pre-registered): GRPO ≥ +10 greedy points over the warm start on every seed — ${met ? 'met' : 'NOT met'}`,
  ];
  return { lines, met };
}

/** Optimizer steps and summed learning rate over a run record's iterations. @param {any} record */
export function schedule(record) {
  let steps = 0;
  let lr = 0;
  for (const m of record.iterations) {
    const s = m.optimizerSteps ?? 0;
    steps += s;
    lr += s * (m.learningRate ?? 0);
  }
  return { steps, lrSum: lr };
}

/**
 * A warm start, then GRPO and RS-SFT from its checkpoint side by side (one core each): each stage's
 * config is written to `file(stage).config.json` and its record to `file(stage).json`, runs in `db`.
 * `rlConfig(method, checkpoint)` gives an RL stage's config (and `rlArgs(method, checkpoint)` more
 * command-line arguments, e.g. a preset the config goes over). `checkWarmStart(record, round)`, when
 * given, reads the warm start's record: it returns the config of one more SFT stage to run from the
 * checkpoint (`init` is set here) or undefined when the warm start is ready; each further stage is
 * `sft-more1`, `sft-more2`, …. With `warmStartCheckpoint` in place of `sftConfig`, that checkpoint is
 * the warm start (no SFT runs; no SFT records). Returns both RL records, wall times and the warm start's
 * SFT records.
 * @param {{ file: (stage: string) => string; db: string; sftConfig?: unknown; warmStartCheckpoint?: string; rlConfig: (method: string, checkpoint: string) => unknown; rlArgs?: (method: string, checkpoint: string) => string[]; label: string; checkWarmStart?: (record: any, round: number) => Record<string, any> | undefined }} o
 * @returns {Promise<{ checkpoint: string; warmStart: any[]; grpo: { record: any; seconds: number }; rsSft: { record: any; seconds: number } }>}
 */
export async function warmStartThenGrpoAndRsSft({ file, db, sftConfig, warmStartCheckpoint, rlConfig, rlArgs, label, checkWarmStart }) {
  /** @param {string} stage @param {unknown} config */
  const sftStage = (stage, config) => {
    writeJson(`${file(stage)}.config.json`, config);
    const sft = runAgentRl(['sft', '--config', `${file(stage)}.config.json`, '--db', db, '--output', `${file(stage)}.json`]);
    const checkpoint = /checkpoint: (\S+)/.exec(sft.stdout)?.[1];
    if (!checkpoint) throw new Error(`the SFT stage ${stage} printed no checkpoint`);
    return { checkpoint, record: JSON.parse(fs.readFileSync(`${file(stage)}.json`, 'utf8')) };
  };
  /** @type {any[]} */
  const warmStart = [];
  let checkpoint = warmStartCheckpoint;
  if (checkpoint === undefined) {
    let record;
    ({ checkpoint, record } = sftStage('sft', sftConfig));
    warmStart.push(record);
    for (let round = 1, more = checkWarmStart?.(record, round); more !== undefined; more = checkWarmStart?.(record, ++round)) {
      process.stderr.write(`[${label}] the warm start is not ready: ${round === 1 ? '' : 'still '}continuing SFT from ${checkpoint}\n`);
      ({ checkpoint, record } = sftStage(`sft-more${round}`, { ...more, policyOptions: { ...(more.policyOptions ?? {}), init: checkpoint } }));
      warmStart.push(record);
    }
  }
  const from = checkpoint;
  const [grpo, rsSft] = await Promise.all(
    ['grpo', 'rs-sft'].map(async (method) => {
      writeJson(`${file(method)}.config.json`, rlConfig(method, from));
      const r = await runAgentRlAsync(
        ['train', ...(rlArgs?.(method, from) ?? []), '--config', `${file(method)}.config.json`, '--db', db, '--output', `${file(method)}.json`],
        `${label} ${method}`,
      );
      return { record: JSON.parse(fs.readFileSync(`${file(method)}.json`, 'utf8')), seconds: r.seconds };
    }),
  );
  if (!grpo || !rsSft) throw new Error('a run did not finish');
  return { checkpoint: from, warmStart, grpo, rsSft };
}

/** The commit the code that runs was checked out at, or "unknown" outside a git checkout. @param {string} [cwd] */
export function gitCommit(cwd = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')) {
  const r = spawnSync('git', ['rev-parse', 'HEAD'], { cwd, encoding: 'utf8' });
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd, encoding: 'utf8' }).stdout.trim() !== '';
  return r.status === 0 ? `${r.stdout.trim()}${dirty ? ' (with uncommitted changes)' : ''}` : 'unknown';
}

/**
 * An experiment's compact evidence in one file: its run records (config, per-iteration metrics, every
 * evaluation with its per-task results; the SQLite store stays out), the code commit, the machine, the
 * command line, its wall time and summary — what `npm run evidence` re-derives quoted figures from.
 * @param {string} file @param {{ script: string; seconds: number; records: Record<string, string>; summary?: unknown }} o
 */
export function writeEvidence(file, o) {
  const records = Object.fromEntries(Object.entries(o.records).map(([name, f]) => [name, JSON.parse(fs.readFileSync(f, 'utf8'))]));
  const cpus = os.cpus();
  return writeJson(file, {
    script: o.script,
    argv: process.argv.slice(2),
    commit: gitCommit(),
    date: new Date().toISOString(),
    machine: `${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.platform()} ${os.arch()}, node ${process.version}`,
    seconds: o.seconds,
    records,
    ...(o.summary !== undefined ? { summary: o.summary } : {}),
  });
}
