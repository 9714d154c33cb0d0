// Issue 30: every stored or imported field is inert in every command and every view, proven by one
// matrix instead of hand-picked cases. Each payload of test/helpers/hostileText.ts (bidi controls,
// zero-width and C0/C1 controls, CSI/OSC/DCS escape sequences, command links and $(icon) syntax,
// Markdown and HTML, a 200,000-character line, lone surrogates) is planted
//   - in every text column of every table of a run database, found from the schema at run time (a new
//     column is planted without anyone listing it; a JSON column in every value and as a key of every
//     object), then every printing CLI command and every pure host renderer reads it back;
//   - in every key and value of the inputs the workbench reads: verl dump lines and config.yaml
//     (`agent-rl import verl`), workspace task records in JSONL, CSV and Parquet, a tool's doc, name and
//     result, a reward's extras, run configs and their keys, actions, model folders and their files.
// Each output must pass: no raw control, format or escape character reaches a terminal or a view;
// one-line outputs stay on one line; notifications, quick picks and the status bar get no live link or
// icon from the data; Markdown gets no structure from the data (the same tokens as for harmless text
// of the same shape); `--json` output holds the stored data exactly; the store is left as it was.
// Which commands there are comes from the CLI's own usage text, which renderers there are from the
// exports of src/host's pure modules: a command or renderer that the matrix does not run fails the
// last test until it is added (or excused with the reason).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import Database from 'better-sqlite3';
import YAML from 'yaml';
import { handlers } from '../../src/backend/handlers';
import { SandboxPools } from '../../src/rl/sandbox/sandboxPools';
import { USAGE } from '../../src/cli/cli';
import { importVerl, type ImportEvent } from '../../src/importers/verl/verlImporter';
import { readTaskRecords } from '../../src/rl/envs/workspace/taskFiles';
import { tasksOf } from '../../src/rl/envs/workspace/taskRecords';
import type { FoundModel } from '../../src/shared/foundModel';
import { isHostToDashboard, isInspectorData, type HostToDashboard, type InspectorData } from '../../src/shared/protocol/webviewProtocol';
import { importPickTitle, importProgressTitle, importStartLine, malformedLine } from '../../src/host/commands/importMessages';
import { modelItems } from '../../src/host/pickItems';
import { openStore } from '../../src/store/openStore';
import { runtimeInfo } from '../../src/store/runtimeInfo';
import { runCliBatch, type CliJob, type CliJobResult } from '../helpers/cliBatch';
import { CLI, ROOT, runCli, tempDir } from '../helpers/cli';
import { asData, containsExactly, plantStore, snapshot, textColumns, type PlantReport } from '../helpers/hostileStore';
import { NOT_RENDERERS, RENDERERS, type Rendered, type ViewInput } from '../helpers/hostileRenderers';
import {
  asStored,
  benign,
  COMBINED,
  hoverHtml,
  ICON,
  LONG,
  markdownStructure,
  NOTIFICATION_LINK,
  PAYLOADS,
  rawCharacter,
  type Payload,
} from '../helpers/hostileText';

// ── What the matrix runs ──────────────────────────────────────────────────────────────────────────────
/** Every command of `agent-rl --help`, and the part of the matrix that runs it on hostile text. */
const COMMANDS: Readonly<Record<string, string>> = {
  runs: 'store',
  show: 'store',
  trajectory: 'store',
  health: 'store',
  'train --resume': 'store',
  'import verl': 'verl dumps',
  'env check': 'workspace',
  train: 'run configs',
  sft: 'run configs',
  'export verl': 'run configs',
  'env run': 'actions',
  'model list': 'model folders',
  'model check': 'model folders',
  'sandbox serve': 'sandbox',
  rescore: 'store',
  request: 'store',
};
/** Commands that print nothing stored or imported, and why. */
const NOT_PRINTING: Readonly<Record<string, string>> = {
  'model export':
    "prints the paths it wrote under --out (the user's own argument and fixed file names); its errors go through the one error path every other command's errors take",
  'model new':
    "prints its own flags' numbers, --out and --tokenizer (the user's own arguments) and fixed file names, never the tokenizer folder's contents; its errors go through the one error path every other command's errors take",
  serve:
    "prints the --model folder's name (the user's own argument, through showInvisibles), its loopback URL and the compute path, never a stored text nor a model's answer (those go to its HTTP clients as JSON); its errors go through the one error path every other command's errors take",
};

/** `train --resume`, `env check`, `import verl`, `show`: the command a usage line or an argument list names. */
function commandOf(words: readonly string[]): string {
  const [c, next] = words;
  return next !== undefined && (next === '--resume' || /^[a-z]+$/.test(next)) ? `${c} ${next}` : c!;
}
const ran = new Set<string>();

/**
 * Per store column, where its value must come out exactly in --json (the rest is not part of any JSON
 * output; a column in neither list fails the store test until it is placed).
 */
const IN_JSON: Readonly<Record<string, readonly string[]>> = {
  runs: ['runs.name', 'runs.env', 'runs.policy', 'runs.method', 'runs.created_at', 'runs.finished_at', 'runs.error'],
  show: ['runs.name', 'runs.config_json', 'runs.runtime_json', 'iterations.metrics_json'],
  // findings quote stored names (a tool's, a reward extra's) inside their summaries, never a whole column
  health: [],
  trajectory: [
    'trajectories.task_id',
    'trajectories.termination',
    'trajectories.excluded',
    'trajectories.outcome_json',
    'turns.action_text',
    'turns.action_json',
    'turns.observation_text',
    'turns.observation_json',
    'turns.policy_json',
  ],
};
const NOT_IN_JSON: Readonly<Record<string, string>> = {
  // a judged group's exchange (migration 10, issue 51): read by the inspector beside the trajectory
  // (src/shared/judgeExchangeView.ts, whose text goes into the page through el() as text); no command prints it
  'judge_exchanges.cache_key': "the exchange's cache key (a sha256 of model, rubric and messages), shown nowhere",
  'judge_exchanges.request_json': "the request's body (the key is a header, never in it), in the inspector",
  'judge_exchanges.answer_text': "the judge's answer as it came, in the inspector",
  'judge_exchanges.error': "why the group's judging failed, in the inspector and the trajectory's details",
  'judge_exchanges.scores_json': "the judge's scores, in the inspector (each trajectory's reward carries its own)",
  'runs.host': 'the machine of a live run (to tell a dead worker), shown nowhere',
  'runs.heartbeat_at': "a live run's last sign of life, shown nowhere",
  'runs.source': "an imported run's identity; show prints its folder from config.rolloutDir",
  'iterations.created_at': 'when the iteration was stored, shown nowhere',
  'evaluations.created_at': 'when the evaluation was stored, shown nowhere',
  'evaluations.metrics_json': 'read as its known numeric extras only (pass@k, tool calls)',
  'import_files.file': "an imported file's name, for continuing an import; show counts the files",
  'import_files.state_json': "an import's progress through a file",
  // re-scores and edits (migration 7): printed by `agent-rl rescore` as it makes them (--json there), read
  // back by the re-score document and the inspector (both rendered below); no read-only command prints them
  'rescores.reward_file': "the reward file's path, printed when the re-score is made; the re-score document shows it",
  'rescores.reward_sha256': 'its content hash (the first 16 characters in the re-score document)',
  'rescores.reward_label': "the reward's name, in the re-score document and the inspector",
  'rescores.created_at': 'when the re-score was made, in the inspector',
  'rescores.summary_json': "the re-score's figures (the document reads its numbers)",
  'rescore_results.details_json': "the verifier's details of a re-scored episode, stored for queries, shown nowhere",
  'rescore_results.error': 'why a trajectory could not be re-scored, in the re-score document and the inspector',
  'trajectory_edits.action_text': 'the edited final answer, in the inspector',
  'trajectory_edits.reward_file': "the reward file's path, printed when the edit is scored",
  'trajectory_edits.reward_sha256': 'its content hash, shown nowhere',
  'trajectory_edits.reward_label': "the reward's name, in the inspector",
  'trajectory_edits.details_json': "the verifier's details of the edited copy, shown nowhere",
  'trajectory_edits.error': 'why the edited copy could not be scored, in the inspector',
  'trajectory_edits.created_at': 'when the edit was made, in the inspector',
};

// ── Checks ────────────────────────────────────────────────────────────────────────────────────────────
/** Problems found, collected so that one run of the matrix reports all of them. */
class Findings {
  private readonly items: string[] = [];
  add(where: string, problem: string): void {
    this.items.push(`${where}: ${problem}`);
  }
  /** A terminal or a view got `text`: no raw character. */
  inert(where: string, text: string): void {
    const raw = rawCharacter(text);
    if (raw) this.add(where, `raw ${raw}`);
  }
  assertNone(what: string): void {
    const distinct = [...new Set(this.items)];
    assert.equal(
      distinct.length,
      0,
      `${what}: ${distinct.length} problem(s)\n${distinct.slice(0, 60).join('\n')}${distinct.length > 60 ? `\n… ${distinct.length - 60} more` : ''}`,
    );
  }
}

/** A command's output: inert on stdout and stderr, the exit code expected. */
function checkCli(f: Findings, where: string, r: CliJobResult, codes: readonly number[] = [0]): void {
  ran.add(commandOf(r.argv));
  f.inert(`${where} stdout`, r.stdout);
  f.inert(`${where} stderr`, r.stderr);
  if (!codes.includes(r.code)) f.add(where, `exit code ${r.code} (expected ${codes.join(' or ')}): ${r.stderr.slice(0, 600)}`);
}

const elements = (html: string): string[] => [...new Set([...html.matchAll(/<([a-z][a-z0-9]*)\b/gi)].map((m) => m[1]!.toLowerCase()))].sort();
const icons = (text: string): number => [...text.matchAll(ICON)].length;

/** A renderer's output checked against its kind, and against the same renderer's output for harmless text of the same shape. */
function checkRendered(f: Findings, where: string, o: Rendered, twin: Rendered | undefined): void {
  f.inert(where, o.text);
  if ((o.kind === 'line' || o.kind === 'message') && /[\n\r]/.test(o.text)) f.add(where, 'a line break in a one-line output');
  if ((o.kind === 'line' || o.kind === 'message') && o.text.length > 2000) f.add(where, `${o.text.length} characters in a one-line output`);
  if (o.kind === 'message') {
    if (NOTIFICATION_LINK.test(o.text)) f.add(where, `a live link: ${NOTIFICATION_LINK.exec(o.text)![0].slice(0, 80)}`);
    if (twin && icons(o.text) !== icons(twin.text)) f.add(where, `${icons(o.text)} live $(icon)s (harmless text of the same shape: ${icons(twin.text)})`);
  }
  if (o.kind === 'markdown') {
    if (o.text.length > 60_000) f.add(where, `${o.text.length} characters of Markdown (not cut)`);
    if (twin && !isDeepStrictEqual(markdownStructure(o.text), markdownStructure(twin.text)))
      f.add(where, `Markdown structure from the data: ${markdownStructure(o.text).join(' ')}`);
    if (twin && !isDeepStrictEqual(elements(hoverHtml(o.text)), elements(hoverHtml(twin.text))))
      f.add(where, `HTML elements from the data in a hover: ${elements(hoverHtml(o.text)).join(' ')}`);
  }
}

/** Every pure renderer over every run of a store; `twinDb` holds harmless text of the same shape. */
function renderStore(f: Findings, label: string, dbFile: string, twinDb: string | undefined, counts: Map<string, number>): void {
  const inputs = (file: string): ViewInput[] => {
    const db = openStore(file, { readonly: true });
    try {
      const h = handlers(db, new SandboxPools());
      // the store's handlers answer at once (only a re-run is asynchronous)
      const now = <T>(x: T | Promise<T>): T => x as T;
      const runs = now(h.listRuns({}));
      return runs.map((s) => {
        const run = now(h.getRun({ runId: s.id }))!;
        const iterations = now(h.iterations({ runId: s.id, offset: 0, limit: 1000 })).items;
        const first = iterations[0]?.iteration ?? 1;
        const trajectories = now(h.trajectories({ runId: s.id, iteration: first, offset: 0, limit: 1000 })).items;
        const trajectory = now(h.trajectory({ trajectoryId: trajectories[0]!.id }))!;
        const c = run.config as Record<string, unknown>;
        const str = (x: unknown, fallback: string): string => (typeof x === 'string' ? x : fallback);
        const importDir = str(c.rolloutDir, path.join('/dumps', s.name));
        const found: FoundModel[] = [
          {
            name: s.name,
            dir: path.join('/models', s.name),
            foundIn: '/models',
            modelType: s.env,
            parameters: 1000,
            dtypes: s.policy,
            revision: s.method,
            main: true,
            seed000: { fits: true, total: 1, limit: 2, on: s.policy },
          },
          { name: s.name, dir: path.join('/models', s.name), foundIn: '/models', problem: s.error ?? s.name },
        ];
        // the messages the webviews are sent: data, set by the page with textContent (e2e checks the page)
        const dashboard: HostToDashboard = {
          type: 'data',
          runs,
          series: [{ run: run.summary, iterations, evaluations: run.evaluations, ...(run.baseWeights ? { baseWeights: run.baseWeights } : {}) }],
          selected: [s.id],
        };
        const rescores = now(h.trajectoryRescores({ trajectoryId: trajectory.id }));
        const newest = rescores.rescores[0];
        const inspector: InspectorData = {
          type: 'trajectory',
          detail: trajectory,
          group: trajectories,
          maxTextLength: 10_000,
          compute: run.compute,
          ...(run.baseWeights ? { baseWeights: run.baseWeights } : {}),
          rescores,
        };
        if (!isHostToDashboard(dashboard) || !isDeepStrictEqual(structuredClone(dashboard), dashboard))
          f.add(`${label} run ${s.id} dashboard message`, "refused by its guard, or changed by postMessage's structured clone");
        if (!isInspectorData(inspector) || !isDeepStrictEqual(structuredClone(inspector), inspector))
          f.add(`${label} run ${s.id} inspector message`, "refused by its guard, or changed by postMessage's structured clone");
        return {
          runs,
          run,
          iterations,
          trajectories,
          trajectory,
          found,
          importDir,
          importFound: {
            ...(typeof c.validationDir === 'string' ? { validationDir: c.validationDir } : {}),
            ...(typeof c.configFile === 'string' ? { configFile: c.configFile } : {}),
          },
          importFile: path.join(importDir, '1.jsonl'),
          rescore: newest ? (now(h.rescoreReport({ rescoreId: newest.rescoreId })) ?? null) : null,
        };
      });
    } finally {
      db.close();
    }
  };
  const views = inputs(dbFile);
  const twins = twinDb ? inputs(twinDb) : [];
  views.forEach((v, i) => {
    for (const r of RENDERERS) {
      const outs = r.render(v);
      const twinOuts = twins[i] ? r.render(twins[i]) : undefined;
      if (twinOuts && twinOuts.length !== outs.length) f.add(`${label} ${r.id}`, `${outs.length} outputs, ${twinOuts.length} for harmless text`);
      outs.forEach((o, j) =>
        checkRendered(f, `${label} run ${v.run.summary.id} ${r.id} (${o.where})`, o, twinOuts?.length === outs.length ? twinOuts[j] : undefined),
      );
      counts.set(r.id, (counts.get(r.id) ?? 0) + outs.length);
    }
  });
}

/** A folder name carrying as much of the payload as a file system allows (no '/', no NUL, ≤ 200 bytes). */
function folderName(p: string, i: number): string {
  let name = p.replace(/[/\0]/g, '_').replace(/^\.+$/, 'dots');
  while (Buffer.byteLength(name) > 200) name = name.slice(0, -1);
  return name.trim() === '' ? `payload-${i}` : name;
}

const jsonl = (rows: readonly unknown[]): string => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

/** An interpreter whose path is hostile (a script that runs python3): what --python or envOptions.python may name. */
function hostilePython(dir: string): string {
  const file = path.join(dir, folderName(PAYLOADS[0]!.text, 0));
  fs.writeFileSync(file, '#!/bin/sh\nexec /usr/bin/python3 "$@"\n', { mode: 0o755 });
  return file;
}

/** A Python expression that evaluates to `s` exactly (lone surrogates included): JSON, read by json.loads. */
const pyText = (s: string): string => `json.loads(${JSON.stringify(JSON.stringify(s))})`;

// ── The matrix ────────────────────────────────────────────────────────────────────────────────────────
describe('hostile text in every stored and imported field, through every command and view (issue 30)', { timeout: 1_500_000 }, () => {
  let work: string;
  let base: string;
  const size: { part: string; payloads: number; fields: number; outputs: number }[] = [];

  before(() => {
    work = tempDir('agent-rl-hostile-');
    base = path.join(work, 'base.sqlite');
    // Three kinds of run, as the workbench writes them: a table run, an imported verl run, a workspace
    // run with tool calls and a reward's extras (each made by the real CLI).
    const table = runCli(
      ['train', '--iterations', '2', '--eval-episodes', '4', '--groups', '1', '--group-size', '2', '--name', 'base-table', '--db', base],
      work,
    );
    assert.equal(table.code, 0, table.stderr);
    const verl = path.join(ROOT, 'test', 'fixtures', 'verl');
    const imported = runCli(
      ['import', 'verl', path.join(verl, 'rollout'), '--validation', path.join(verl, 'validation'), '--config', path.join(verl, 'config.yaml'), '--db', base],
      work,
    );
    assert.equal(imported.code, 0, imported.stderr);
    const ws = path.join(work, 'base-workspace');
    fs.mkdirSync(ws);
    fs.writeFileSync(
      path.join(ws, 'tasks.jsonl'),
      jsonl(
        Array.from({ length: 8 }, (_, i) => ({
          id: `t${i}`,
          prompt: `Echo ${i}.`,
          answer: String(i),
          split: i % 4 === 0 ? 'test' : 'train',
          demonstration: [`<call>echo("${i}")</call>`, `<answer>${i}</answer>`],
        })),
      ),
    );
    fs.writeFileSync(path.join(ws, 'tools.py'), 'def echo(text: str) -> str:\n    """Returns its text."""\n    return text\n');
    fs.writeFileSync(
      path.join(ws, 'reward.py'),
      'def reward(task, trajectory):\n    ok = trajectory["answer"] == str(task["ground_truth"])\n    return {"score": float(ok), "calls": trajectory["tool_calls"], "answered": trajectory["answer"] is not None}\n',
    );
    fs.writeFileSync(
      path.join(ws, 'run.agentrl.json'),
      JSON.stringify({
        name: 'base-workspace',
        env: 'workspace',
        policy: 'transformer',
        method: 'sft',
        iterations: 1,
        groupsPerIteration: 2,
        evalEpisodes: 2,
        envOptions: { tasks: 'tasks.jsonl', tools: 'tools.py', reward: 'reward.py' },
        policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 224, maxNewTokens: 16 },
      }),
    );
    const workspace = runCli(['train', '--config', path.join(ws, 'run.agentrl.json'), '--db', base], ws);
    assert.equal(workspace.code, 0, workspace.stderr);
    // a re-score of each trained run and an edited final answer: their rows are planted too
    for (const run of ['base-table', 'base-workspace']) {
      const rescored = runCli(['rescore', run, '--db', base], ws);
      assert.equal(rescored.code, 0, rescored.stderr);
    }
    const wsTrajectory = JSON.parse(runCli(['show', 'base-workspace', '--json', '--db', base], ws).stdout) as { runId: number };
    const first = new Database(base, { readonly: true });
    const tid = (first.prepare('SELECT min(id) AS id FROM trajectories WHERE run_id = ?').get(wsTrajectory.runId) as { id: number }).id;
    first.close();
    const edited = runCli(['rescore', 'base-workspace', '--trajectory', String(tid), '--final-answer', '<answer>7</answer>', '--db', base], ws);
    assert.equal(edited.code, 0, edited.stderr);
    const d = new Database(base);
    // cancelled, so that train --resume reads the stored run (a completed one is refused at once)
    d.prepare("UPDATE runs SET status = 'cancelled' WHERE name = 'base-table'").run();
    d.pragma('wal_checkpoint(TRUNCATE)');
    d.close();
  });

  after(() => {
    if (work && !process.env.KEEP_HOSTILE_MATRIX) fs.rmSync(work, { recursive: true, force: true });
  });

  it('store: every payload in every text column of every table, through runs, show, trajectory, train --resume and every host renderer', (t) => {
    const f = new Findings();
    const rounds: { p: Payload; db: string; twin: string; report: PlantReport; before: unknown; trajectories: number[] }[] = [];
    const jobs: CliJob[] = [];
    PAYLOADS.forEach((p, i) => {
      const db = path.join(work, `store-${i}.sqlite`);
      const twin = path.join(work, `store-${i}-harmless.sqlite`);
      fs.copyFileSync(base, db);
      fs.copyFileSync(base, twin);
      const d = new Database(db);
      const report = plantStore(d, p.text);
      const stored = snapshot(d);
      const trajectories = (d.prepare('SELECT min(id) AS id FROM trajectories GROUP BY run_id ORDER BY run_id').all() as { id: number }[]).map((r) => r.id);
      const runIds = (d.prepare('SELECT id FROM runs ORDER BY id').all() as { id: number }[]).map((r) => r.id);
      d.close();
      const h = new Database(twin);
      plantStore(h, benign(p.text));
      h.close();
      rounds.push({ p, db, twin, report, before: stored, trajectories });
      const job = (argv: string[]): void => void jobs.push({ id: `${i} ${argv.join(' ')}`, argv: [...argv, '--db', db] });
      job(['runs']);
      job(['runs', '--json']);
      for (const r of runIds) {
        job(['show', String(r)]);
        job(['show', String(r), '--json']);
        job(['health', String(r)]);
        job(['health', String(r), '--json']);
      }
      for (const tr of trajectories) {
        job(['trajectory', String(tr)]);
        job(['trajectory', String(tr), '--json']);
        // a stored request sent again: refused for a run that is not an agent program's, naming only the id
        job(['request', String(tr)]);
      }
      job(['train', '--resume', String(runIds[0])]);
      // a re-score writes its own rows: it runs on a copy, so that the store above is only read
      const copy = path.join(work, `store-${i}-rescore.sqlite`);
      fs.copyFileSync(db, copy);
      for (const r of runIds) jobs.push({ id: `${i} rescore ${r}`, argv: ['rescore', String(r), '--db', copy] });
    });
    const results = new Map(runCliBatch(jobs, work).map((r) => [r.id, r]));
    const counts = new Map<string, number>();
    const baseDb = new Database(base, { readonly: true });
    const columns = textColumns(baseDb);
    baseDb.close();
    const unplaced = columns.filter((c) => !Object.values(IN_JSON).some((cols) => cols.includes(c.id)) && NOT_IN_JSON[c.id] === undefined);
    rounds.forEach(({ p, db, twin, report, before: stored }, i) => {
      for (const r of report.refused) if (!/CHECK constraint failed/.test(r.reason)) f.add(`${p.name}: ${r.column.id}`, `could not be planted: ${r.reason}`);
      for (const c of report.planted)
        if (unplaced.some((u) => u.id === c.id)) f.add(c.id, 'a text column in no --json output and not in NOT_IN_JSON: say where its value comes out exactly');
      const d = new Database(db, { readonly: true });
      const rows = (sql: string, ...args: unknown[]): Record<string, unknown>[] => d.prepare(sql).all(...args) as Record<string, unknown>[];
      try {
        for (const job of jobs.filter((j) => j.id.startsWith(`${i} `))) {
          const r = results.get(job.id)!;
          const name = `[${p.name}] agent-rl ${job.argv.slice(0, -2).join(' ')}`;
          const command = commandOf(job.argv);
          checkCli(f, name, r, command === 'train --resume' || command === 'rescore' || command === 'request' ? [0, 2] : [0]);
          if (!job.argv.includes('--json')) {
            if ((command === 'runs' || command === 'show' || command === 'health') && r.stdout.length > 20_000)
              f.add(name, `${r.stdout.length} characters: long fields are not cut`);
            continue;
          }
          let out: unknown;
          try {
            out = JSON.parse(r.stdout) as unknown;
          } catch (e) {
            f.add(name, `--json is not JSON (${(e as Error).message})`);
            continue;
          }
          const id = Number(job.argv[1]);
          const source: Record<string, Record<string, unknown>[]> =
            command === 'runs'
              ? { runs: rows('SELECT * FROM runs') }
              : command === 'show'
                ? { runs: rows('SELECT * FROM runs WHERE id = ?', id), iterations: rows('SELECT * FROM iterations WHERE run_id = ?', id) }
                : { trajectories: rows('SELECT * FROM trajectories WHERE id = ?', id), turns: rows('SELECT * FROM turns WHERE trajectory_id = ?', id) };
          for (const column of IN_JSON[command]!) {
            const [table, col] = column.split('.') as [string, string];
            for (const row of source[table] ?? []) {
              if (row[col] === null) continue;
              if (!containsExactly(out, asData(row[col]))) f.add(name, `${column} is not in the output exactly (${JSON.stringify(row[col]).slice(0, 80)}…)`);
            }
          }
        }
        if (!isDeepStrictEqual(snapshot(d), stored)) f.add(`[${p.name}]`, 'the store changed while commands read it');
      } finally {
        d.close();
      }
      renderStore(f, `[${p.name}]`, db, twin, counts);
    });
    const planted = rounds[0]!.report.planted.length;
    const outputs = new Set(jobs.map((j) => commandOf(j.argv) + (j.argv.includes('--json') ? ' --json' : ''))).size + RENDERERS.length;
    size.push({ part: 'store', payloads: PAYLOADS.length, fields: planted, outputs });
    t.diagnostic(
      `store: ${PAYLOADS.length} payloads × ${planted} text columns (${rounds[0]!.report.refused.map((r) => `${r.column.id} refused by its CHECK`).join(', ')}) × ${outputs} outputs; ${jobs.length} command lines, ${[...counts.values()].reduce((a, b) => a + b, 0)} rendered texts`,
    );
    f.assertNone('store matrix');
  });

  it("verl dumps and config.yaml: every payload in every key and value, through import verl, show and trajectory, and the import's host messages", async (t) => {
    const f = new Findings();
    const jobs: CliJob[] = [];
    const cases = PAYLOADS.map((p, i) => {
      const dir = path.join(work, `verl-${i}`);
      const rollout = path.join(dir, folderName(p.text, i));
      const validation = path.join(dir, 'validation');
      fs.mkdirSync(rollout, { recursive: true });
      fs.mkdirSync(validation);
      const x = p.text;
      const toolCall = `<tool_call>\n${JSON.stringify({ name: x, arguments: { [x]: x } })}\n</tool_call>user\n<tool_response>\n${x}\n</tool_response>\nassistant\n${x}`;
      const samples = [
        { input: x, output: x, gts: x, score: 1, step: 1, acc: true, [x]: 0.5, note: x },
        { input: x, output: toolCall, gts: { [x]: x }, score: 0, step: 1, acc: false, [x]: 0.25, note: [x] },
      ];
      const malformed = [x.replace(/\n/g, ' '), JSON.stringify({ input: 'x', output: 'y', score: 1, step: x })];
      fs.writeFileSync(path.join(rollout, '1.jsonl'), `${samples.map((s) => JSON.stringify(s)).join('\n')}\n${malformed.join('\n')}\n`);
      fs.writeFileSync(path.join(validation, '1.jsonl'), jsonl(samples.map((s) => ({ ...s, reward: s.score }))));
      const config = path.join(dir, 'config.yaml');
      fs.writeFileSync(
        config,
        YAML.stringify({
          trainer: { experiment_name: x, total_training_steps: 2, [x]: x },
          algorithm: { adv_estimator: x },
          actor_rollout_ref: { model: { path: x }, rollout: { n: 2 } },
          [x]: [x],
        }),
      );
      const db = path.join(dir, 'runs.sqlite');
      for (const argv of [
        ['import', 'verl', rollout, '--validation', validation, '--config', config],
        ['show', '1'],
        ['show', '1', '--json'],
        ['trajectory', '1'],
        ['trajectory', '2'],
        ['trajectory', '2', '--json'],
      ]) {
        jobs.push({ id: `${i} ${argv.join(' ')}`, argv: [...argv, '--db', db] });
      }
      return { p, rollout, validation, config, db, samples };
    });
    const results = new Map(runCliBatch(jobs, work).map((r) => [r.id, r]));
    for (const j of jobs) {
      const r = results.get(j.id)!;
      const i = Number(j.id.split(' ')[0]);
      const name = `[${cases[i]!.p.name}] agent-rl ${commandOf(j.argv)}`;
      checkCli(f, name, r);
      if (commandOf(j.argv) === 'show' && !j.argv.includes('--json') && r.stdout.length > 20_000)
        f.add(name, `${r.stdout.length} characters: long fields are not cut`);
      if (commandOf(j.argv) === 'import verl' && !/malformed lines: 2 in this import/.test(r.stdout))
        f.add(name, `the two malformed lines were not counted: ${r.stdout.slice(0, 300)}`);
    }
    for (const c of cases) {
      const x = c.p.text;
      const where = `[${c.p.name}] verl import`;
      const d = new Database(c.db, { readonly: true });
      try {
        const run = d.prepare('SELECT name, config_json FROM runs').get() as { name: string; config_json: string };
        const config = JSON.parse(run.config_json) as Record<string, unknown>;
        if (run.name !== asStored(x)) f.add(where, "the run name is not the config's experiment_name");
        if (config.verlConfigText !== asStored(fs.readFileSync(c.config, 'utf8'))) f.add(where, 'config.yaml is not stored whole');
        // JSON columns keep what the parsers gave, lone surrogates too (JSON writes them as \ud800 escapes)
        const parsed = YAML.parse(asStored(fs.readFileSync(c.config, 'utf8'))) as {
          algorithm: { adv_estimator: unknown };
          actor_rollout_ref: { model: { path: unknown } };
        };
        if (!isDeepStrictEqual(config.verlConfig, parsed)) f.add(where, "config.yaml's settings are not stored as parsed");
        if (config.advEstimator !== parsed.algorithm.adv_estimator || config.modelPath !== parsed.actor_rollout_ref.model.path)
          f.add(where, 'adv_estimator or model.path not kept');
        if (config.rolloutDir !== fs.realpathSync(c.rollout)) f.add(where, 'the folder is not stored as it is');
        const outcomes = (d.prepare('SELECT outcome_json FROM trajectories ORDER BY id').all() as { outcome_json: string }[]).map(
          (o) =>
            JSON.parse(o.outcome_json) as {
              details: { input: unknown; groundTruth: unknown; extras: Record<string, unknown>; metrics: Record<string, number> };
            },
        );
        c.samples.forEach((s, k) => {
          const o = outcomes[k];
          if (!o) return f.add(where, `sample ${k} was not stored`);
          // the dump line as JSON.parse reads it (JSON.stringify wrote lone surrogates as \ud800 escapes)
          const line = JSON.parse(JSON.stringify(s)) as Record<string, unknown>;
          const { input, gts } = line;
          const extras = Object.fromEntries(Object.entries(line).filter(([key]) => !['input', 'output', 'gts', 'score', 'step'].includes(key)));
          if (o.details.input !== input) f.add(where, `sample ${k}: input not stored exactly`);
          if (!isDeepStrictEqual(o.details.groundTruth, gts)) f.add(where, `sample ${k}: ground truth not stored exactly`);
          if (!isDeepStrictEqual(o.details.extras, extras)) f.add(where, `sample ${k}: the extras (keys and values) not stored exactly`);
          if (o.details.metrics[x] !== extras[x]) f.add(where, `sample ${k}: the numeric extra named by the payload is not a metric`);
        });
        const turns = d.prepare('SELECT action_text, action_json, observation_text FROM turns').all() as {
          action_text: string;
          action_json: string;
          observation_text: string;
        }[];
        const texts = turns.map((u) => `${u.action_text}\n${u.observation_text}`).join('\n');
        if (x.trim() !== '' && !texts.includes(asStored(x).trim().split('\n')[0]!)) f.add(where, 'the response text is not in the stored turns');
        if (!turns.some((u) => containsExactly(JSON.parse(u.action_json), x))) f.add(where, "the tool call's name is not in a stored action");
      } finally {
        d.close();
      }
      // the workbench's Import Run: the same importer, its events rendered by the host's messages
      const events: ImportEvent[] = [];
      const store = openStore(path.join(path.dirname(c.db), 'host.sqlite'));
      try {
        await importVerl(store, {
          rolloutDir: c.rollout,
          validationDir: c.validation,
          configFile: c.config,
          runtime: runtimeInfo(store, 'imported from verl'),
          onEvent: (e) => events.push(e),
        });
      } finally {
        store.close();
      }
      const outs: Rendered[] = [
        { where: 'Import quick pick title', kind: 'message', text: importPickTitle(c.rollout) },
        { where: 'Import progress title', kind: 'message', text: importProgressTitle(c.rollout) },
        { where: 'Import output line', kind: 'text', text: importStartLine(c.rollout, { validationDir: c.validation, configFile: c.config }, c.db) },
        ...events.flatMap((e): Rendered[] =>
          e.type === 'malformed'
            ? [{ where: 'Import malformed line', kind: 'text', text: malformedLine({ type: 'malformed', file: e.file, line: e.line, reason: e.reason }) }]
            : [],
        ),
      ];
      if (events.filter((e) => e.type === 'malformed').length !== 2) f.add(where, 'the importer did not report the two malformed lines');
      for (const o of outs) checkRendered(f, `${where} ${o.where}`, o, { ...o, text: o.text.replace(/[^\n]/g, 'x') });
    }
    size.push({ part: 'verl dumps', payloads: PAYLOADS.length, fields: 14, outputs: 6 + 4 });
    t.diagnostic(
      `verl dumps: ${PAYLOADS.length} payloads × 14 fields (input, output, gts and its keys, extras' keys and values, a tool call's name, arguments and response, two malformed lines, the folder, experiment_name, adv_estimator, model.path, config keys) × 10 outputs`,
    );
    f.assertNone('verl matrix');
  });

  it("workspace task files (JSONL, CSV, Parquet), a tool's name, doc and result, a reward's extras: read exactly, through env check, train, show and trajectory", async (t) => {
    const f = new Findings();
    const dir = path.join(work, 'workspace');
    fs.mkdirSync(dir);
    // one record per payload: id, prompt, answer and metadata (keys and values) hostile; two plain held-out records
    const records = [
      ...PAYLOADS.map((p) => ({ id: p.text, prompt: p.text, answer: p.text, split: 'train', metadata: { [p.text]: p.text, note: p.text } })),
      { id: 'plain-1', prompt: 'Echo 1.', answer: '1', split: 'test', metadata: {} },
      { id: 'plain-2', prompt: 'Echo 2.', answer: '2', split: 'test', metadata: {} },
    ];
    const csvCell = (s: string): string => `"${s.replace(/"/g, '""')}"`;
    fs.writeFileSync(path.join(dir, 'all.jsonl'), jsonl(records));
    fs.writeFileSync(
      path.join(dir, 'all.csv'),
      `id,prompt,answer,split,metadata\n${records.map((r) => [r.id, r.prompt, r.answer, r.split, JSON.stringify(r.metadata)].map(csvCell).join(',')).join('\n')}\n`,
    );
    const { parquetWriteBuffer } = await import('hyparquet-writer');
    fs.writeFileSync(
      path.join(dir, 'all.parquet'),
      Buffer.from(
        parquetWriteBuffer({
          columnData: [
            { name: 'id', data: records.map((r) => r.id), type: 'STRING' },
            { name: 'prompt', data: records.map((r) => r.prompt), type: 'STRING' },
            { name: 'answer', data: records.map((r) => r.answer), type: 'STRING' },
            { name: 'split', data: records.map((r) => r.split), type: 'STRING' },
            { name: 'metadata', data: records.map((r) => r.metadata), type: 'JSON' },
          ],
        }),
      ),
    );
    // what each format can carry: JSON (JSON Lines, a CSV cell or Parquet column of JSON) keeps a lone
    // surrogate as its \ud800 escape; UTF-8 text (a CSV cell, a Parquet string) has U+FFFD in its place
    const text: Readonly<Record<string, (s: string) => string>> = { 'all.jsonl': (s) => s, 'all.csv': asStored, 'all.parquet': asStored };
    for (const file of ['all.jsonl', 'all.csv', 'all.parquet']) {
      const tasks = tasksOf(await readTaskRecords(dir, [file]), { preset: 'default', fields: {}, heldOutFraction: 0.2, splitSeed: 0 });
      const all = [...tasks.train, ...tasks.heldOut];
      const exact = text[file]!;
      for (const r of records) {
        const task = all.find((x) => x.id === exact(r.id));
        const where = `${file}: ${r.id.slice(0, 30)}`;
        if (!task) {
          f.add(where, 'the task is missing (or its id changed)');
          continue;
        }
        if (task.prompt !== exact(r.prompt)) f.add(where, 'prompt not read exactly');
        if (task.data.groundTruth !== exact(r.answer)) f.add(where, 'answer not read exactly');
        if (!isDeepStrictEqual(task.data.metadata, r.metadata)) f.add(where, 'metadata (keys and values) not read exactly');
      }
    }
    // env check over each format: the first record carries every payload at once (env check shows it whole), then LONG alone
    const tools = [
      'import json',
      '',
      'def echo(text: str) -> str:',
      '    return text',
      '',
      `echo.__doc__ = ${pyText(COMBINED.text)}`,
      '',
      'def shout(text: str) -> str:',
      '    """Returns hostile text."""',
      `    return ${pyText(COMBINED.text)}`,
      '',
      // a tool registered under a hostile name: the module's names are what the tool host lists
      `globals()[${pyText(`tool${COMBINED.text}`)}] = shout`,
      '',
      `EXAMPLES = {"echo": {"text": ${pyText(COMBINED.text)}}, "shout": {"text": "x"}}`,
      '',
    ].join('\n');
    const reward = [
      'import json',
      '',
      'def reward(task, trajectory):',
      `    return {"score": 1.0, ${pyText(COMBINED.text)}: 1.0, ${pyText(LONG.text)}: 0.5, "note": ${pyText(COMBINED.text)}}`,
      '',
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'tools.py'), tools);
    fs.writeFileSync(path.join(dir, 'reward.py'), reward);
    const first = (p: Payload, split = 'train') => ({
      id: p.text,
      prompt: p.text,
      answer: p.text,
      split,
      metadata: { [p.text]: p.text },
      demonstration: ['<call>echo("1")</call>', `<answer>${p.text}</answer>`],
    });
    const plain = Array.from({ length: 6 }, (_, i) => ({
      id: `p${i}`,
      prompt: `Echo ${i}.`,
      answer: String(i),
      split: i < 2 ? 'test' : 'train',
      metadata: {},
      demonstration: [`<call>echo("${i}")</call>`, `<answer>${i}</answer>`],
    }));
    const jobs: CliJob[] = [];
    const configFor = (tasks: string, name: string, extra: Record<string, unknown> = {}): string => {
      const file = path.join(dir, `${name}.agentrl.json`);
      fs.writeFileSync(
        file,
        JSON.stringify({
          name: PAYLOADS[0]!.text,
          env: 'workspace',
          policy: 'transformer',
          method: 'sft',
          iterations: 1,
          groupsPerIteration: 2,
          evalEpisodes: 2,
          envOptions: { tasks, tools: 'tools.py', reward: 'reward.py', ...extra },
          policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 256, maxNewTokens: 16 },
        }),
      );
      return file;
    };
    fs.writeFileSync(path.join(dir, 'check.jsonl'), jsonl([first(COMBINED), ...plain]));
    fs.writeFileSync(path.join(dir, 'check-long.jsonl'), jsonl([first(LONG), ...plain]));
    const row = (r: ReturnType<typeof first>) =>
      [r.id, r.prompt, r.answer, r.split, JSON.stringify(r.metadata), JSON.stringify(r.demonstration)].map(csvCell).join(',');
    fs.writeFileSync(path.join(dir, 'check.csv'), `id,prompt,answer,split,metadata,demonstration\n${[first(COMBINED), ...plain].map(row).join('\n')}\n`);
    const rowsP = [first(COMBINED), ...plain];
    fs.writeFileSync(
      path.join(dir, 'check.parquet'),
      Buffer.from(
        parquetWriteBuffer({
          columnData: [
            ...(['id', 'prompt', 'answer', 'split'] as const).map((k) => ({ name: k, data: rowsP.map((r) => r[k]), type: 'STRING' as const })),
            { name: 'metadata', data: rowsP.map((r) => r.metadata), type: 'JSON' as const },
            { name: 'demonstration', data: rowsP.map((r) => r.demonstration), type: 'JSON' as const },
          ],
        }),
      ),
    );
    for (const tasks of ['check.jsonl', 'check-long.jsonl', 'check.csv'])
      jobs.push({ id: `env check ${tasks}`, argv: ['env', 'check', '--config', configFor(tasks, tasks.replace(/\W/g, '-'))] });
    jobs.push({ id: 'env check check.parquet', argv: ['env', 'check', '--config', configFor('check.parquet', 'parquet', { taskPreset: 'default' })] });
    // the sandbox check alone, with an interpreter whose path is hostile
    jobs.push({ id: 'env check --python', argv: ['env', 'check', '--python', hostilePython(dir)] });
    // a run over tasks whose ids are the payloads, with the reward's hostile extras: what reaches the store
    fs.writeFileSync(path.join(dir, 'train.jsonl'), jsonl([...PAYLOADS.filter((p) => p.text.length < 1000).map((p) => first(p)), ...plain]));
    const db = path.join(dir, 'runs.sqlite');
    jobs.push({ id: 'train', argv: ['train', '--config', configFor('train.jsonl', 'train'), '--db', db], cwd: dir });
    const results = runCliBatch(jobs, work);
    for (const r of results) checkCli(f, `agent-rl ${r.id}`, r);
    const envCheck = results.find((r) => r.id === 'env check check.jsonl')!;
    if (!/⟨U\+202E⟩/.test(envCheck.stdout) || !/tool/.test(envCheck.stdout))
      f.add('env check', `the hostile task and tools are not shown: ${envCheck.stdout.slice(0, 400)}`);
    // nothing lost on the way into the store: task ids, the reward's extras (names and values)
    if (!fs.existsSync(db)) {
      f.add('workspace run', 'no database: the run did not start');
      f.assertNone('workspace matrix');
    }
    const d = new Database(db, { readonly: true });
    try {
      const names = new Set([...PAYLOADS.map((p) => asStored(p.text)), ...plain.map((p) => p.id)]);
      for (const r of d.prepare('SELECT task_id, outcome_json FROM trajectories').all() as { task_id: string; outcome_json: string }[]) {
        if (!names.has(r.task_id)) f.add('workspace run', `stored task id ${JSON.stringify(r.task_id).slice(0, 60)} is no task's id`);
        const details = (JSON.parse(r.outcome_json) as { details?: { metrics?: Record<string, unknown> } }).details;
        // the reward's dict crosses from Python as JSON: its names arrive exactly, lone surrogates too
        if (details?.metrics?.[COMBINED.text] !== 1 || details.metrics[LONG.text] !== 0.5)
          f.add('workspace run', "the reward's hostile extras are not stored under their names");
      }
      const extras = d
        .prepare('SELECT metrics_json FROM iterations')
        .all()
        .map((m) => (JSON.parse((m as { metrics_json: string }).metrics_json) as { rewardExtras?: Record<string, number> }).rewardExtras ?? {});
      if (!extras.every((e) => e[COMBINED.text] === 1)) f.add('workspace run', "the iteration's reward extras lost the hostile name");
      const name = (d.prepare('SELECT name FROM runs').get() as { name: string }).name;
      if (name !== asStored(PAYLOADS[0]!.text)) f.add('workspace run', 'the run name was changed');
    } finally {
      d.close();
    }
    const reads = runCliBatch(
      ['runs', 'show 1', 'show 1 --json', 'trajectory 1', 'trajectory 1 --json', 'trajectory 2'].map((a) => ({ id: a, argv: [...a.split(' '), '--db', db] })),
      work,
    );
    for (const r of reads) checkCli(f, `workspace run: agent-rl ${r.id}`, r);
    renderStore(f, '[workspace run]', db, undefined, new Map());
    size.push({ part: 'workspace', payloads: PAYLOADS.length, fields: 3 * 5 + 6, outputs: 5 + 1 + 6 + RENDERERS.length });
    t.diagnostic(
      `workspace: ${PAYLOADS.length} payloads × (3 formats × 5 fields: id, prompt, answer, metadata keys and values; a tool's name, doc and result, the reward's extra names and values, an interpreter's path) × (env check ×5, train, runs/show/trajectory ×6, ${RENDERERS.length} renderers)`,
    );
    f.assertNone('workspace matrix');
  });

  it('run configs and their keys, actions and model folders: through train, sft, export verl, env run, model list and model check', (t) => {
    const f = new Findings();
    const dir = path.join(work, 'configs');
    fs.mkdirSync(dir);
    const write = (name: string, value: unknown): string => {
      fs.writeFileSync(path.join(dir, name), JSON.stringify(value));
      return path.join(dir, name);
    };
    const jobs: CliJob[] = [];
    for (const [k, p] of [COMBINED, LONG].entries()) {
      // every payload as a key (at the top and in envOptions, algorithm, policyOptions) and as every value: refused, each problem named
      const keys = Object.fromEntries(PAYLOADS.filter((x) => x.text.length < 1000).map((x) => [x.text, x.text]));
      const bad = write(`bad-${k}.json`, {
        name: p.text,
        env: p.text,
        policy: p.text,
        method: p.text,
        seed: p.text,
        ...(k === 0 ? keys : { [p.text]: p.text }),
        envOptions: keys,
        algorithm: keys,
        policyOptions: keys,
      });
      jobs.push({ id: `train bad ${k}`, argv: ['train', '--config', bad, '--db', path.join(dir, 'bad.sqlite')] });
      jobs.push({ id: `sft bad ${k}`, argv: ['sft', '--config', bad, '--db', path.join(dir, 'bad.sqlite')] });
    }
    // a run name is at most 200 characters: each payload that fits names a run (the long line is refused above)
    const named = PAYLOADS.map((p, i) => ({ p, i })).filter(({ p }) => p.text.length <= 200);
    const namedDb = path.join(dir, 'named.sqlite');
    for (const { p, i } of named) {
      jobs.push({
        id: `train named ${i}`,
        argv: [
          'train',
          '--env',
          'binary-search',
          '--iterations',
          '1',
          '--eval-episodes',
          '2',
          '--groups',
          '1',
          '--group-size',
          '2',
          '--name',
          p.text,
          '--db',
          namedDb,
        ],
      });
      jobs.push({ id: `show named ${i}`, argv: ['show', p.text, '--db', namedDb] });
      const good = write(`export-${i}.json`, { name: p.text, env: 'calculator', policy: 'transformer', method: 'grpo', iterations: 2 });
      jobs.push({ id: `export verl ${i}`, argv: ['export', 'verl', '--config', good, '--out', path.join(dir, `export-${i}`)] });
    }
    // actions: every payload as one action of an episode, printed as JSON lines
    fs.writeFileSync(path.join(dir, 'actions.json'), JSON.stringify(PAYLOADS.map((p) => p.text)));
    jobs.push({ id: 'env run', argv: ['env', 'run', '--env', 'calculator', '--actions', path.join(dir, 'actions.json')] });
    // model folders: one per payload, named by it, its config's strings and keys the payload
    const models = path.join(dir, 'models');
    const fixture = path.join(ROOT, 'test', 'fixtures', 'hf', 'qwen3');
    PAYLOADS.forEach((p, i) => {
      const m = path.join(models, folderName(p.text, i));
      fs.mkdirSync(m, { recursive: true });
      for (const file of fs.readdirSync(fixture)) {
        if (file === 'config.json' || file === 'reference.json') continue;
        fs.symlinkSync(path.join(fixture, file), path.join(m, file));
      }
      const config = JSON.parse(fs.readFileSync(path.join(fixture, 'config.json'), 'utf8')) as Record<string, unknown>;
      // every other folder also names a model type nobody knows: the reason it cannot load quotes it
      fs.writeFileSync(
        path.join(m, 'config.json'),
        JSON.stringify({ ...config, architectures: [p.text], torch_dtype: p.text, [p.text]: p.text, ...(i % 2 === 1 ? { model_type: p.text } : {}) }),
      );
    });
    jobs.push(
      { id: 'model list', argv: ['model', 'list', '--folder', models] },
      { id: 'model list --json', argv: ['model', 'list', '--folder', models, '--json'] },
    );
    const results = new Map(runCliBatch(jobs, work).map((r) => [r.id, r]));
    for (const [id, r] of results) checkCli(f, `agent-rl ${id}`, r, id.includes(' bad ') ? [2] : [0]);
    for (const [id, r] of results)
      if (/^show named/.test(id) && r.stdout.length > 20_000) f.add(`agent-rl ${id}`, `${r.stdout.length} characters: long fields are not cut`);
    for (const { p, i } of named) {
      const sh = path.join(dir, `export-${i}`, 'main_ppo.sh');
      if (!fs.existsSync(sh)) {
        f.add(`export verl ${i}`, 'wrote no main_ppo.sh');
        continue;
      }
      const script = fs.readFileSync(sh, 'utf8').split('\n');
      // the run name's comment stays one line: nothing of the name can become a command of the script
      if (!script[1]!.startsWith('# ') || script[2] !== '#   agent-rl sandbox serve --port 8080')
        f.add(`[${p.name}] export verl: main_ppo.sh`, `the name broke out of its comment line: ${JSON.stringify(script.slice(1, 4)).slice(0, 200)}`);
      f.inert(`[${p.name}] export verl: main_ppo.sh's comment`, script[1]!);
    }
    const d = new Database(namedDb, { readonly: true });
    const names = (d.prepare('SELECT name FROM runs ORDER BY id').all() as { name: string }[]).map((r) => r.name);
    d.close();
    if (
      !isDeepStrictEqual(
        names,
        named.map(({ p }) => asStored(p.text)),
      )
    )
      f.add('train --name', 'the names were not stored exactly');
    const lines = results
      .get('env run')!
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn?: number; action?: string });
    const acted = lines.filter((l) => typeof l.turn === 'number');
    if (acted.length === 0) f.add('env run', 'no action was replayed');
    for (const l of acted) if (l.action !== asStored(PAYLOADS[l.turn!]!.text)) f.add('env run', `action ${l.turn} is not printed exactly`);
    const found = JSON.parse(results.get('model list --json')!.stdout) as FoundModel[];
    if (found.length !== PAYLOADS.length) f.add('model list --json', `${found.length} of ${PAYLOADS.length} folders listed`);
    for (const [i, p] of PAYLOADS.entries()) {
      const m = found.find((x) => x.dir === path.join(models, asStored(folderName(p.text, i))));
      if (!m) f.add('model list --json', `folder ${i} missing (or its name changed)`);
      else if (m.name !== asStored(folderName(p.text, i))) f.add('model list --json', `folder ${i}: its name is not listed exactly`);
      else if (i % 2 === 1 && !m.problem?.includes('is not supported'))
        f.add('model list --json', `folder ${i}: the reason it cannot load is lost (${m.problem?.slice(0, 120)})`);
    }
    // Start Run's model step over what the backend finds (the same findModels)
    for (const item of modelItems(found)) {
      for (const [part, text] of Object.entries(item))
        if (part !== 'dir') checkRendered(f, `Start Run model step ${part}`, { where: part, kind: 'message', text: String(text) }, undefined);
    }
    // model check on a folder with a hostile dtype, and one with a hostile model type (the error path)
    for (const i of [0, 1]) {
      const r = runCli(['model', 'check', path.join(models, folderName(PAYLOADS[i]!.text, i)), '--max-new-tokens', '2', '--context', '64'], dir);
      ran.add('model check');
      f.inert(`model check ${i} stdout`, r.stdout);
      f.inert(`model check ${i} stderr`, r.stderr);
      if (r.code !== 0 && r.code !== 2) f.add(`model check ${i}`, `exit code ${r.code}: ${r.stderr.slice(0, 400)}`);
    }
    size.push({ part: 'configs, actions, models', payloads: PAYLOADS.length, fields: 6 + 1 + 4, outputs: 9 });
    t.diagnostic(
      `configs, actions, models: ${PAYLOADS.length} payloads × (config keys at 4 levels, name, env, policy, method, seed; actions; model folder names, architectures, torch_dtype, model_type, config keys) × (train, sft, train --name, show, export verl, main_ppo.sh, env run, model list, --json, model check)`,
    );
    f.assertNone('config, action and model matrix');
  });

  it("sandbox serve: code printing every payload is answered exactly as JSON; nothing of it, nor a hostile interpreter path, reaches the server's terminal", async (t) => {
    const f = new Findings();
    const child = spawn(process.execPath, [CLI, 'sandbox', 'serve', '--port', '0', '--python', hostilePython(work)], {
      cwd: work,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    ran.add('sandbox serve');
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      for (let i = 0; i < 200 && !/on (http:\S+)/.test(stdout); i++) await new Promise((r) => setTimeout(r, 50));
      const url = /on (http:\S+)/.exec(stdout)?.[1];
      assert.ok(url, `the server did not start: ${stderr}`);
      // stdout cannot carry lone surrogates (Python writes UTF-8): the payloads as the sandbox can print them
      const printable = asStored(COMBINED.text);
      const body = JSON.stringify({
        code: `import sys, json\nsys.stdout.write(json.loads(${JSON.stringify(JSON.stringify(printable))}))\nsys.stderr.write(${pyText(printable)})`,
        language: 'python',
        run_timeout: 20,
      });
      const answer = await new Promise<string>((resolve, reject) => {
        const req = http.request(new URL('/run_code', url), { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end(body);
      });
      const parsed = JSON.parse(answer) as { run_result?: { stdout?: string; stderr?: string } };
      if (parsed.run_result?.stdout !== printable) f.add('sandbox serve', `stdout not answered exactly: ${answer.slice(0, 300)}`);
      if (parsed.run_result?.stderr !== printable) f.add('sandbox serve', 'stderr not answered exactly');
    } finally {
      child.kill('SIGINT');
      await new Promise((r) => child.on('exit', r));
    }
    f.inert('sandbox serve stdout', stdout);
    f.inert('sandbox serve stderr', stderr);
    size.push({ part: 'sandbox serve', payloads: PAYLOADS.length - 1, fields: 3, outputs: 2 });
    t.diagnostic(
      `sandbox serve: ${PAYLOADS.length - 1} payloads (the 200,000-character line aside) × stdout and stderr of the code, the --python path × the answer and the server's own output`,
    );
    f.assertNone('sandbox serve');
  });

  it('covers every command of the usage and every pure host renderer (a new one fails here until the matrix runs it)', (t: TestContext) => {
    const usage = new Set(
      [...USAGE.matchAll(/^\s*agent-rl ([a-z]+)((?: +(?:--resume|[a-z]+)\b)?)/gm)].map((m) => commandOf([m[1]!, ...(m[2]!.trim() ? [m[2]!.trim()] : [])])),
    );
    const known = new Set([...Object.keys(COMMANDS), ...Object.keys(NOT_PRINTING)]);
    assert.deepEqual(
      [...usage].filter((c) => !known.has(c)),
      [],
      'commands of the usage that the matrix does not run: add them to COMMANDS (and run them) or to NOT_PRINTING with the reason',
    );
    assert.deepEqual(
      [...known].filter((c) => !usage.has(c)),
      [],
      'commands the matrix lists that the usage does not have',
    );
    assert.deepEqual(
      Object.keys(COMMANDS).filter((c) => !ran.has(c)),
      [],
      'commands listed as covered that no part of the matrix ran (run the whole file)',
    );
    // pure host modules: every export renders (and is in RENDERERS) or says why not (NOT_RENDERERS)
    const exported: string[] = [];
    const walk = (d: string): void => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const full = path.join(d, e.name);
        if (e.isDirectory()) walk(full);
        else if (e.name.endsWith('.ts') && !/from 'vscode'/.test(fs.readFileSync(full, 'utf8'))) {
          const rel = path.relative(ROOT, full).split(path.sep).join('/');
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          const mod = require(path.join(ROOT, 'out', rel.replace(/\.ts$/, '.js'))) as Record<string, unknown>;
          for (const [k, v] of Object.entries(mod)) if (typeof v === 'function') exported.push(`${rel}#${k}`);
        }
      }
    };
    walk(path.join(ROOT, 'src', 'host'));
    const listed = new Set([...RENDERERS.map((r) => r.id), ...Object.keys(NOT_RENDERERS)]);
    assert.deepEqual(
      exported.filter((e) => !listed.has(e)),
      [],
      'pure host exports the matrix does not render: add them to RENDERERS (test/helpers/hostileRenderers.ts) or to NOT_RENDERERS with the reason',
    );
    assert.deepEqual(
      [...listed].filter((e) => e.startsWith('src/host/') && !exported.includes(e)),
      [],
      'renderers listed that src/host no longer exports',
    );
    const total = size.reduce((n, s) => n + s.payloads * s.fields * s.outputs, 0);
    t.diagnostic(
      `matrix: ${size.map((s) => `${s.part} ${s.payloads}×${s.fields}×${s.outputs}`).join(' + ')} = ${total.toLocaleString('en-US')} (payload, field, output) cells`,
    );
  });
});
