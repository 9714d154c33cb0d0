// A stored run rewritten by hand, as a shared or imported database can be: its name, task id,
// termination reason, action and observation texts hold Markdown links to commands, raw HTML and
// script, a right-to-left override and a 200,000-character line; its config names another interpreter
// (a script that leaves a marker file when run) and the weakest sandbox level; its iteration carries
// per-phase timings written by hand. Made with the real CLI, then edited with better-sqlite3.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
const Database = createRequire(path.join(ROOT, 'package.json'))('better-sqlite3');

export const RLO = '\u202E';
/** {"kind":"run","run":{"id":1}}: what Delete Run receives from the tree. */
const DELETE_RUN_1 = 'command:agentRl.deleteRun?%7B%22kind%22%3A%22run%22%2C%22run%22%3A%7B%22id%22%3A1%7D%7D';
export const HOSTILE = {
  name: `[open terminal](command:workbench.action.terminal.new) <img src=x onerror="document.title='pwned'"> ${RLO}evil a long name that a legend has to shorten`,
  taskId: `[delete run](${DELETE_RUN_1}) <script>document.title='pwned'</script> ${RLO}task`,
  termination: `[open terminal](command:workbench.action.terminal.new) <img src=x onerror="document.title='pwned'">`,
  prose: `Let me try [open terminal](command:workbench.action.terminal.new) <img src=x onerror="document.title='pwned'"> ${RLO}reversed words\n`,
  after: `\nand after the code: <script>document.title='pwned'</script> [delete run](${DELETE_RUN_1})`,
  longLine: 'W'.repeat(200_000),
};

/** Creates the run in `db` (its id is 1 when the database is new) and returns the hostile trajectory's id. */
export function writeHostileRun(workspace, db, { fakePython, marker }) {
  const config = path.join(workspace, '..', 'hostile-run.json');
  fs.writeFileSync(
    config,
    JSON.stringify({
      env: 'code',
      policy: 'transformer',
      method: 'sft',
      iterations: 1,
      groupsPerIteration: 1,
      groupSize: 1,
      evalEpisodes: 1,
      envOptions: { maxExecutions: 2 },
      policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 1024, maxNewTokens: 8 },
      algorithm: { minibatchSize: 1 },
      demonstrations: { mistakeRate: 1 },
    }),
  );
  execFileSync(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), 'train', '--config', config, '--name', 'hostile', '--db', db], {
    cwd: workspace,
    stdio: 'pipe',
    timeout: 300_000,
  });
  fs.writeFileSync(fakePython, `#!/bin/sh\ntouch '${marker}'\nexec /usr/bin/python3 "$@"\n`, { mode: 0o755 });
  const d = new Database(db);
  try {
    const run = d.prepare("SELECT id, config_json FROM runs WHERE name = 'hostile'").get();
    const stored = JSON.parse(run.config_json);
    d.prepare('UPDATE runs SET name = ?, config_json = ? WHERE id = ?').run(
      HOSTILE.name,
      JSON.stringify({ ...stored, envOptions: { ...stored.envOptions, python: fakePython, sandbox: 'process' } }),
      run.id,
    );
    const it = d.prepare('SELECT iteration, metrics_json FROM iterations WHERE run_id = ?').get(run.id);
    const phases = { phaseGenerateMs: 1200, phaseEnvMs: 800, phaseReferenceMs: 150, phaseUpdateMs: 600, phaseEvaluateMs: 2000, phaseStoreMs: 40 };
    d.prepare('UPDATE iterations SET metrics_json = ? WHERE run_id = ? AND iteration = ?').run(
      JSON.stringify({ ...JSON.parse(it.metrics_json), ...phases }),
      run.id,
      it.iteration,
    );
    const t = d.prepare('SELECT id FROM trajectories WHERE run_id = ? AND iteration = 1 ORDER BY group_index, index_in_group LIMIT 1').get(run.id);
    d.prepare('UPDATE trajectories SET task_id = ?, termination = ? WHERE id = ?').run(HOSTILE.taskId, HOSTILE.termination, t.id);
    const turn = d.prepare('SELECT action_text, action_json, observation_text FROM turns WHERE trajectory_id = ? AND turn_index = 0').get(t.id);
    const code = JSON.parse(turn.action_json).args.code;
    d.prepare(
      "UPDATE turns SET action_text = ?, observation_text = ?, observation_json = json_set(observation_json, '$.level', 'process') WHERE trajectory_id = ? AND turn_index = 0",
    ).run(`${HOSTILE.prose}\`\`\`python\n${code}\`\`\`${HOSTILE.after}`, `${HOSTILE.longLine}\n${turn.observation_text}`, t.id);
    return { runId: run.id, trajectoryId: t.id };
  } finally {
    d.close();
  }
}

/** Whether the run is still in the database (nothing deleted it). */
export function runExists(db, runId) {
  const d = new Database(db, { readonly: true });
  try {
    return d.prepare('SELECT count(*) AS n FROM runs WHERE id = ?').get(runId).n === 1;
  } finally {
    d.close();
  }
}

// ── Issue 30: the import path end to end ─────────────────────────────────────────────────────────────
const ESC = '\x1b';
const BEL = '\x07';
const LINK = '[open terminal](command:workbench.action.terminal.new)';
const IMG = '<img src=x onerror="document.title=\'pwned\'">';
/** An OSC 0 window title and CSI colours: what a terminal would obey. */
const ANSI = `${ESC}]0;PWNED${BEL}${ESC}[31mRED${ESC}[0m`;
export const HOSTILE_IMPORT = {
  verlName: `e2e-verl-hostile ${LINK} ${RLO}evil ${ANSI} an imported name`,
  /** The reward's extra key in the dump (a metric: its value is a number). */
  verlExtra: `acc${RLO}evil ${ANSI} ${LINK}`,
  workspaceName: `e2e-ws-hostile ${RLO}evil ${ANSI}`,
  /** The workspace reward's returned extra name. */
  workspaceExtra: `extra${RLO}evil ${ANSI} ${LINK} ${IMG}`,
  longLine: 'V'.repeat(200_000),
};

/** A character no view may show raw (\n and \t may): controls, format characters (bidi, zero-width), lone surrogates. */
export const RAW = /[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/u;
export const rawIn = (text) => RAW.exec(text.replace(/[\n\t]/g, ' '));

/** A Python expression for `s`, exactly: JSON, read by json.loads. */
const pyText = (s) => `json.loads(${JSON.stringify(JSON.stringify(s))})`;

/**
 * A verl dump whose folder, config (experiment_name, adv_estimator, model path), prompts, responses (one
 * with a 200,000-character line), ground truths and extras (keys and values) are hostile, imported with
 * `agent-rl import verl`; and a workspace environment whose task ids and prompts are hostile and whose
 * reward returns a hostile extra name, trained for one SFT iteration with `agent-rl train`. Both into `db`.
 */
export function importHostileRuns(base, db) {
  const cli = path.join(ROOT, 'dist', 'cli.js');
  const h = HOSTILE_IMPORT;
  const dir = path.join(base, 'hostile-import');
  const rollout = path.join(dir, `rollout ${RLO}evil`);
  fs.mkdirSync(rollout, { recursive: true });
  const sample = (i, score) => ({
    input: `Solve ${IMG} ${RLO}reversed ${ESC}[31mred${ESC}[0m`, // one prompt: the two samples are one group
    output: `Let me try ${LINK} ${RLO}olleh ${ANSI}\n${i === 0 ? h.longLine : 'short'}\n<script>document.title='pwned'</script> \\boxed{${i}}`,
    gts: IMG,
    score,
    step: 1,
    [h.verlExtra]: score,
    note: `<b>bold</b> $(trash) ${ANSI}`,
  });
  fs.writeFileSync(path.join(rollout, '1.jsonl'), `${[sample(0, 1), sample(1, 0)].map((s) => JSON.stringify(s)).join('\n')}\n`);
  const config = path.join(dir, 'config.yaml');
  fs.writeFileSync(
    config,
    `trainer:\n  experiment_name: ${JSON.stringify(h.verlName)}\nalgorithm:\n  adv_estimator: ${JSON.stringify(`grpo${RLO}x ${ANSI}`)}\nactor_rollout_ref:\n  rollout:\n    n: 2\n  model:\n    path: ${JSON.stringify(`/models/${RLO}evil ${LINK}`)}\n`,
  );
  const imported = spawnSync(process.execPath, [cli, 'import', 'verl', rollout, '--config', config, '--db', db], { encoding: 'utf8' });
  if (imported.status !== 0) throw new Error(`import verl failed: ${imported.stderr}`);

  const ws = path.join(base, 'hostile-workspace');
  fs.mkdirSync(ws, { recursive: true });
  const tasks = Array.from({ length: 6 }, (_, i) => ({
    id: `task ${RLO}evil ${ESC}[31mred${ESC}[0m ${LINK} #${i}`,
    prompt: `Echo ${i}. ${IMG} ${RLO}reversed`,
    answer: String(i),
    split: i < 2 ? 'test' : 'train',
    demonstration: [`<call>echo("${i}")</call>`, `<answer>${i}</answer>`],
  }));
  fs.writeFileSync(path.join(ws, 'tasks.jsonl'), `${tasks.map((t) => JSON.stringify(t)).join('\n')}\n`);
  fs.writeFileSync(path.join(ws, 'tools.py'), 'def echo(text: str) -> str:\n    """Returns its text."""\n    return text\n');
  fs.writeFileSync(
    path.join(ws, 'reward.py'),
    `import json\n\ndef reward(task, trajectory):\n    ok = trajectory["answer"] == str(task["ground_truth"])\n    return {"score": float(ok), ${pyText(h.workspaceExtra)}: 1.0, "note": ${pyText(`${LINK} ${ANSI}`)}}\n`,
  );
  const runConfig = path.join(ws, 'run.json');
  fs.writeFileSync(
    runConfig,
    JSON.stringify({
      name: h.workspaceName,
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
  const trained = spawnSync(process.execPath, [cli, 'train', '--config', runConfig, '--db', db], { cwd: ws, encoding: 'utf8', timeout: 300_000 });
  if (trained.status !== 0) throw new Error(`train failed: ${trained.stderr}`);
  const d = new Database(db, { readonly: true });
  try {
    const id = (name) => d.prepare('SELECT id FROM runs WHERE name = ? ORDER BY id DESC LIMIT 1').get(name).id;
    return { verlRunId: id(h.verlName), workspaceRunId: id(h.workspaceName) };
  } finally {
    d.close();
  }
}
