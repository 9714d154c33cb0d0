// `agent-rl health RUN [--json]`: what a run's stored iterations show going wrong (shared/health/
// findings.ts), each finding with the episodes that show it best. Works on any stored run — live, old
// or imported — since it reads only the database. Exit 0 with or without findings (a finding is a
// result, not a failure); an unknown run is bad input (exit 2). Summaries may quote stored names (a
// tool's, a reward extra's): printed through cell(), and --json escapes them as \u sequences.
import { findingRecord, type FindingRecord } from '../shared/health/findings';
import { jsonText } from '../shared/untrustedText';
import { openStore } from '../store/openStore';
import { RunReader } from '../store/runReader';
import { defineCommand } from './command';
import { cell } from './format';
import { DATABASE, databaseOf, JSON_OUTPUT } from './optionSets';
import { UsageError } from './usageError';

/** One finding as a line (and a second with the episodes to open), for a terminal. */
export function findingLines(f: FindingRecord): string[] {
  const its = f.iterations[0] === f.iterations[1] ? `iteration ${f.iterations[0]}` : `iterations ${f.iterations[0]}–${f.iterations[1]}`;
  return [
    `${f.severity.padEnd(7)} ${f.id} (${its}): ${cell(f.summary, 400)}`,
    ...(f.episodes.length ? [`        episodes: ${f.episodes.join(', ')}  (agent-rl trajectory ID shows one)`] : []),
  ];
}

function health(ref: string, values: Readonly<Record<string, unknown>>): number {
  const { db, busyTimeoutMs } = databaseOf(values);
  const store = openStore(db, { busyTimeoutMs });
  let run;
  let findings: FindingRecord[];
  try {
    const reader = new RunReader(store);
    run = reader.findRun(ref);
    if (!run) throw new UsageError(`no run "${cell(ref, 200)}" in ${db}. Fix: \`agent-rl runs --db ${db}\` lists the runs.`);
    findings = reader.findings(run.id).map(findingRecord);
  } finally {
    store.close();
  }
  if (values.json === true) {
    process.stdout.write(`${jsonText({ findings }, 2)}\n`);
    return 0;
  }
  const head = `run ${run.id}: ${cell(run.name, 200)} — ${run.iterationsDone} iteration${run.iterationsDone === 1 ? '' : 's'} stored`;
  const body = findings.length ? findings.flatMap(findingLines) : ['no findings: nothing in the stored iterations crosses a bar of docs/health.md'];
  process.stdout.write(`${[head, ...body].join('\n')}\n`);
  return 0;
}

export const healthCommand = defineCommand({
  name: 'health',
  summary: "what a run's stored iterations show going wrong, each finding with the episodes that show it",
  usage:
    'agent-rl health RUN [--db FILE] [--json]\n  RUN           a run id or name (`agent-rl runs` lists them)\n' +
    '  --json        { findings: [{ id, severity, iterations, summary, episodes }] }; docs/health.md explains each finding',
  options: {},
  sets: [DATABASE, JSON_OUTPUT],
  positionals: { min: 1, max: 1, error: 'health needs exactly one RUN (a run id or name); `agent-rl runs` lists them' },
  run: ({ values, positionals }) => health(positionals[0]!, values),
});
