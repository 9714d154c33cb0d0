// `agent-rl import verl DIR [--validation DIR] [--config config.yaml] [--name N] [--follow]`: a verl
// run's generation dumps into the database as a run (see importers/verl). Malformed lines are reported
// on stderr with file and line and never stop the import; Ctrl-C ends a follow after the current step.
import * as path from 'node:path';
import { fixed, percent } from '../shared/format';
import { oneLine, showInvisibles } from '../shared/untrustedText';
import { VerlConfigError } from '../importers/verl/verlConfig';
import { importVerl, ImportInputError, type ImportEvent } from '../importers/verl/verlImporter';
import { DEFAULT_DB_PATH, explainSqliteError, openStore } from '../store/openStore';
import { markOrphanedRuns } from '../store/runWriter';
import { runtimeInfo } from '../store/runtimeInfo';
import { defineCommand } from './command';
import { DATABASE, databaseOf } from './optionSets';
import { UsageError } from './usageError';

const IMPORT_USAGE = `agent-rl import verl DIR [--validation DIR] [--config FILE] [--name NAME] [--follow] [--poll MS] [--db FILE]
  a verl run's generation dumps into the database as a run; a re-import of the same DIR continues its
  run and adds only what is new
  DIR           verl's trainer.rollout_data_dir ({step}.jsonl per training step)
  --validation  verl's trainer.validation_data_dir (evaluations)
  --config      verl's resolved Hydra config (<output dir>/.hydra/config.yaml), stored with the run
  --name        the run's name (default: from the config's experiment name, else the folder's)
  --follow      keep reading new files and lines while verl writes them (Ctrl-C to stop)
  --poll        with --follow, how often to look for new files and lines (ms, default 1000)`;

/** Malformed lines printed one by one; past this, only counted. */
const MAX_REPORTED = 50;

export const importCommand = defineCommand({
  name: 'import',
  summary: "a verl run's generation dumps into the database as a run",
  usage: IMPORT_USAGE,
  options: {
    validation: { type: 'string' },
    config: { type: 'string' },
    name: { type: 'string' },
    follow: { type: 'boolean' },
    poll: { type: 'string' },
  },
  sets: [DATABASE],
  positionals: { min: 0, max: 2, error: 'import verl needs exactly one DIR' },
  run: ({ values, positionals }) => importVerlDumps(values, positionals),
});

async function importVerlDumps(
  values: { readonly validation?: string; readonly config?: string; readonly name?: string; readonly follow?: boolean; readonly poll?: string } & Readonly<
    Record<string, unknown>
  >,
  positionals: readonly string[],
): Promise<number> {
  const [format, dir] = positionals;
  if (format !== 'verl') throw new UsageError(`import needs a format: verl (got ${format ?? 'nothing'})\n\n${importCommand.usage}`);
  if (dir === undefined) throw new UsageError(`import verl needs exactly one DIR (got ${positionals.length - 1})\n\n${importCommand.usage}`);
  const pollMs = values.poll === undefined ? 1000 : Number(values.poll);
  if (!Number.isInteger(pollMs) || pollMs < 10) throw new UsageError(`--poll ${values.poll}: use a whole number of milliseconds ≥ 10`);
  const { db, busyTimeoutMs } = databaseOf(values);

  const store = openStore(db, { busyTimeoutMs });
  const controller = new AbortController();
  const onSignal = (): void => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
    process.stderr.write('\nagent-rl: stopping the import after this step (press Ctrl-C again to stop at once)\n');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let reported = 0;
  const onEvent = (e: ImportEvent): void => {
    if (e.type === 'run') process.stdout.write(`${e.created ? 'new' : 'continuing'} run ${e.runId} "${oneLine(e.name, 200)}" in ${showInvisibles(db)}\n`);
    if (e.type === 'step') process.stdout.write(`step ${e.step}: +${e.added} trajectories (${e.trajectories} in the step), reward ${fixed(e.rewardMean, 3)}\n`);
    if (e.type === 'evaluation') process.stdout.write(`validation at step ${e.step}: ${e.episodes} samples, success ${percent(e.successRate, 1)}\n`);
    if (e.type === 'malformed' && reported++ < MAX_REPORTED)
      process.stderr.write(`${showInvisibles(e.file)}:${e.line}: malformed line skipped: ${oneLine(e.reason, 500)}\n`);
    if (e.type === 'pending') process.stderr.write(`${showInvisibles(e.file)}:${e.line}: no newline yet (still being written?): left for the next import\n`);
  };
  try {
    markOrphanedRuns(store);
    const s = await importVerl(store, {
      rolloutDir: dir,
      ...(values.validation !== undefined ? { validationDir: values.validation } : {}),
      ...(values.config !== undefined ? { configFile: values.config } : {}),
      ...(values.name !== undefined ? { name: values.name } : {}),
      follow: values.follow === true,
      pollMs,
      signal: controller.signal,
      runtime: runtimeInfo(store, 'imported from verl'),
      onEvent,
    }).catch((e: unknown) => {
      if (e instanceof ImportInputError || e instanceof VerlConfigError) throw new UsageError(e.message);
      return explainSqliteError(e, db);
    });
    if (reported > MAX_REPORTED) process.stderr.write(`… and ${reported - MAX_REPORTED} more malformed lines\n`);
    process.stdout.write(
      `run ${s.runId} "${oneLine(s.name, 200)}": ${s.steps} steps and ${s.trajectories} trajectories added, ${s.evaluations} evaluations; ` +
        `malformed lines: ${s.malformed} in this import, ${s.malformedTotal} in all imports of this run\n` +
        `  agent-rl show ${s.runId}${db === path.resolve(DEFAULT_DB_PATH) ? '' : ` --db ${db}`}\n`,
    );
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    store.close();
  }
}
