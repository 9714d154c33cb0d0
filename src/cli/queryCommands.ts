// `agent-rl runs`, `agent-rl show RUN` and `agent-rl trajectory ID`: read-side commands over the same
// database. Stored text is untrusted (a shared or imported database, model output): it is printed with
// invisible and direction-changing characters as markers and control characters that a terminal would
// obey (escape sequences, carriage returns) shown, never sent; --json escapes them as \u sequences.
// Every stored value goes through cell() (format.ts: oneLine, cut) or showInvisibles, the imported
// run's lines as much as ours.
import { algorithmSummary, methodLabel, storedAlgorithm } from '../shared/algorithm';
import { fixed } from '../shared/format';
import { findingRecord } from '../shared/health/findings';
import { jsonText, showInvisibles } from '../shared/untrustedText';
import { defineCommand } from './command';
import { UsageError } from './usageError';
import { openStore } from '../store/openStore';
import { DATABASE, databaseOf, JSON_OUTPUT } from './optionSets';
import { RunReader } from '../store/runReader';
import { markOrphanedRuns } from '../store/runWriter';
import { cell, duration, evaluationLine, pct, runsTable, table } from './format';
import { recordWarnings, type RunRecord } from './runRecord';
import { runtimeLines } from './runtimeLines';

interface QueryOptions {
  readonly db: string;
  readonly json: boolean;
  readonly busyTimeoutMs: number;
}

function withReader<T>(options: QueryOptions, fn: (reader: RunReader) => T): T {
  const store = openStore(options.db, { busyTimeoutMs: options.busyTimeoutMs });
  try {
    markOrphanedRuns(store);
    return fn(new RunReader(store));
  } finally {
    store.close();
  }
}

/** `show` of a run imported from verl: where it came from, its reward's extras, its evaluations. */
function importedRunLines(reader: RunReader, runId: number): string[] {
  const d = reader.detail(runId)!;
  const run = d.summary;
  const c = d.config as unknown as {
    rolloutDir: string;
    validationDir: string | null;
    configFile: string | null;
    groupSize: number | null;
    advEstimator: string | null;
    modelPath: string | null;
  };
  const files = reader.importedFiles(runId);
  const malformed = files.reduce((n, f) => n + f.malformed, 0);
  // the extras' names come from the dump's keys (or a hand-edited database): each one cut to a cell
  const means = Object.entries(reader.metricMeans(runId)).map(([k, v]) => `${cell(k)} ${fixed(v, 3)}`);
  const last = d.iterations[d.iterations.length - 1];
  const lines = [
    `run ${run.id}: ${cell(run.name, 1000)}`,
    `  status: ${cell(run.status)}${run.error ? ` (${cell(run.error, 2000)})` : ''}`,
    `  imported from verl: ${cell(c.rolloutDir, 1000)}${c.validationDir ? `; validation ${cell(c.validationDir, 1000)}` : ''}${c.configFile ? `; config ${cell(c.configFile, 1000)}` : ''}`,
    `  algorithm ${c.advEstimator ? cell(c.advEstimator) : 'unknown (no config given)'}, group size ${cell(c.groupSize ?? '?')}, model ${cell(c.modelPath ?? '?', 200)}`,
    `  steps: ${run.iterationsDone}; trajectories: ${d.trajectories}; turns: ${d.turns}; files read: ${files.length}; malformed lines skipped: ${malformed}`,
    `  reward extras (mean per trajectory): ${means.length ? means.join(', ') : 'none'}`,
  ];
  if (last)
    lines.push(
      `  last step ${last.iteration}: reward ${fixed(last.rewardMean, 3)}, success ${pct(last.successRate)}, ${fixed(last.meanTurns, 2)} turns per trajectory, ${last.trajectories} trajectories, ${last.zeroVarianceGroups} zero-variance groups`,
    );
  lines.push('', 'validation:');
  lines.push(
    table(
      ['step', 'success', 'samples', 'mean turns', 'reward'],
      d.evaluations.map((e) => [String(e.iteration), pct(e.successRate), `${e.successes}/${e.episodes}`, fixed(e.meanActions, 2), fixed(e.rewardMean, 3)]),
    ),
  );
  return lines;
}

function listRuns(options: QueryOptions): number {
  return withReader(options, (reader) => {
    const runs = reader.listRuns();
    if (options.json) process.stdout.write(`${jsonText(runs, 2)}\n`);
    else process.stdout.write(runs.length === 0 ? `no runs in ${options.db}\n` : `${runsTable(runs)}\n`);
    return 0;
  });
}

function showRun(ref: string, options: QueryOptions): number {
  return withReader(options, (reader) => {
    const run = reader.findRun(ref);
    if (!run) throw new UsageError(`no run "${cell(ref, 200)}" in ${options.db}. Fix: \`agent-rl runs --db ${options.db}\` lists the runs.`);
    const d = reader.detail(run.id)!;
    const record: RunRecord = {
      runId: run.id,
      name: run.name,
      status: run.status,
      methodLabel: run.methodLabel,
      database: options.db,
      config: d.config,
      ...(run.forkedFrom ? { forkedFrom: run.forkedFrom } : {}),
      runtime: d.runtime,
      iterations: d.iterations,
      evaluations: d.evaluations,
      wallMs: d.wallMs,
      warnings: recordWarnings(d.iterations),
      findings: reader.findings(run.id).map(findingRecord),
    };
    if (options.json) {
      process.stdout.write(`${jsonText(record, 2)}\n`);
      return 0;
    }
    // the warnings and severe findings (info ones, such as a solved task's agreeing groups, only in `health`)
    const flagged = record.findings.filter((f) => f.severity !== 'info').map((f) => `  ${f.severity}: ${cell(f.summary, 400)} (agent-rl health ${run.id})`);
    const c = d.config;
    const last = d.iterations[d.iterations.length - 1];
    if ((c as { source?: unknown }).source === 'verl') {
      process.stdout.write(`${[...importedRunLines(reader, run.id), ...flagged].join('\n')}\n`);
      return 0;
    }
    const lines = [
      `run ${run.id}: ${cell(run.name, 1000)}`,
      `  status: ${cell(run.status)}${run.error ? ` (${cell(run.error, 2000)})` : ''}`,
      `  env ${cell(c.env)}, policy ${cell(c.policy)}, method ${cell(c.method)}, seed ${cell(c.seed)}, eval seed ${cell(c.evalSeed)}`,
      `  ${cell(methodLabel(c.method, storedAlgorithm(c)))}: ${cell(c.groupsPerIteration)} groups × ${cell(c.groupSize)} trajectories, ${cell(algorithmSummary(storedAlgorithm(c)), 1000)}`,
      ...(run.forkedFrom
        ? [
            `  forked from run ${run.forkedFrom.runId ?? '(deleted)'} after iteration ${run.forkedFrom.iteration}: this run stores iterations ${run.forkedFrom.iteration + 1} on` +
              (run.forkedFrom.runId === null ? '' : `; \`agent-rl show ${run.forkedFrom.runId}\` has those up to ${run.forkedFrom.iteration}`),
          ]
        : []),
      `  iterations: ${run.iterationsDone}/${run.iterationsPlanned}; trajectories stored: ${d.trajectories}; turns: ${d.turns}`,
      `  wall time: ${d.wallMs === null ? 'running' : duration(d.wallMs)}; created ${cell(run.createdAt, 40)}`,
      ...runtimeLines(d.runtime),
      ...record.warnings.map((w) => `  warning: ${cell(w, 400)}`),
      ...flagged,
    ];
    if (last) {
      lines.push(
        `  last iteration: reward ${fixed(last.rewardMean, 3)}, success ${pct(last.successRate)}, KL ${fixed(last.kl, 4)}, entropy ${fixed(last.entropy, 3)}, clip fraction ${pct(last.clipFraction)}`,
      );
    }
    lines.push('', 'evaluations:');
    lines.push(
      table(
        ['after iteration', 'success', 'episodes', 'mean actions', 'public pass', 'private pass'],
        d.evaluations.map((e) => [
          String(e.iteration),
          pct(e.successRate),
          `${e.successes}/${e.episodes}`,
          fixed(e.meanActions, 3),
          pct(e.publicPassRate),
          pct(e.privatePassRate),
        ]),
      ),
    );
    const first = d.evaluations[0];
    const final = d.evaluations[d.evaluations.length - 1];
    if (first && final && final !== first) lines.push('', `before: ${evaluationLine(first)}`, `after:  ${evaluationLine(final)}`);
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  });
}

/** Every turn of a trajectory in full (the views cut long fields and point here). */
function showTrajectory(ref: string, options: QueryOptions): number {
  if (!/^\d+$/.test(ref)) throw new UsageError(`trajectory needs a trajectory id (a number), got "${cell(ref, 200)}"`);
  return withReader(options, (reader) => {
    const t = reader.trajectory(Number(ref));
    if (!t) throw new UsageError(`no trajectory ${ref} in ${options.db}`);
    if (options.json) {
      process.stdout.write(`${jsonText(t, 2)}\n`);
      return 0;
    }
    const lines = [
      `trajectory ${t.id}: run ${t.runId}, iteration ${t.iteration}, group ${t.group} #${t.indexInGroup}, task ${cell(t.taskId, 200)}`,
      `  reward ${cell(t.reward)}, advantage ${cell(t.advantage)}, ${t.success ? 'success' : 'failure'} (${cell(t.termination)}), public ${t.publicPass ? 'pass' : 'fail'}, private ${t.privatePass ? 'pass' : 'fail'}`,
    ];
    for (const turn of t.turnList)
      lines.push(
        '',
        `── turn ${turn.index}: action`,
        showInvisibles(turn.actionText),
        `── turn ${turn.index}: observation`,
        showInvisibles(turn.observationText),
      );
    process.stdout.write(`${lines.join('\n')}\n`);
    return 0;
  });
}

const queryOptions = (values: Readonly<Record<string, unknown>>): QueryOptions => ({
  ...databaseOf(values),
  json: values.json === true,
});

export const runsCommand = defineCommand({
  name: 'runs',
  summary: 'the runs in the database, newest first',
  usage: 'agent-rl runs [--db FILE] [--json]',
  options: {},
  sets: [DATABASE, JSON_OUTPUT],
  positionals: { min: 0, max: 0, error: 'runs takes no arguments besides its flags' },
  run: ({ values }) => listRuns(queryOptions(values)),
});

export const showCommand = defineCommand({
  name: 'show',
  summary: 'one run: its config, runtime, last iteration and evaluations',
  usage: 'agent-rl show RUN [--db FILE] [--json]\n  RUN           a run id or name (`agent-rl runs` lists them)',
  options: {},
  sets: [DATABASE, JSON_OUTPUT],
  positionals: { min: 1, max: 1, error: 'show needs exactly one RUN (a run id or name); `agent-rl runs` lists them' },
  run: ({ values, positionals }) => showRun(positionals[0]!, queryOptions(values)),
});

export const trajectoryCommand = defineCommand({
  name: 'trajectory',
  summary: 'every turn of a trajectory, in full',
  usage: 'agent-rl trajectory ID [--db FILE] [--json]\n  ID            a trajectory id (the inspector and the Markdown document show it)',
  options: {},
  sets: [DATABASE, JSON_OUTPUT],
  positionals: { min: 1, max: 1, error: 'trajectory needs exactly one trajectory ID (the inspector and the Markdown document show it)' },
  run: ({ values, positionals }) => showTrajectory(positionals[0]!, queryOptions(values)),
});
