// A stored run rewritten by hand, as a shared or imported database can be: its name, task id,
// termination reason, action and observation texts hold Markdown links to commands, raw HTML and
// script, a right-to-left override and a 200,000-character line; its config names another interpreter
// (a script that leaves a marker file when run) and the weakest sandbox level; its iteration carries
// per-phase timings written by hand. Made with the real CLI, then edited with better-sqlite3.
import { execFileSync } from 'node:child_process';
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
  fs.writeFileSync(config, JSON.stringify({
    env: 'code', policy: 'transformer', method: 'sft', iterations: 1, groupsPerIteration: 1, groupSize: 1, evalEpisodes: 1,
    envOptions: { maxExecutions: 2 }, policyOptions: { dModel: 16, nLayers: 1, nHeads: 2, contextLength: 1024, maxNewTokens: 8 }, algorithm: { minibatchSize: 1 }, demonstrations: { mistakeRate: 1 },
  }));
  execFileSync(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), 'train', '--config', config, '--name', 'hostile', '--db', db], { cwd: workspace, stdio: 'pipe', timeout: 300_000 });
  fs.writeFileSync(fakePython, `#!/bin/sh\ntouch '${marker}'\nexec /usr/bin/python3 "$@"\n`, { mode: 0o755 });
  const d = new Database(db);
  try {
    const run = d.prepare("SELECT id, config_json FROM runs WHERE name = 'hostile'").get();
    const stored = JSON.parse(run.config_json);
    d.prepare('UPDATE runs SET name = ?, config_json = ? WHERE id = ?').run(HOSTILE.name, JSON.stringify({ ...stored, envOptions: { ...stored.envOptions, python: fakePython, sandbox: 'process' } }), run.id);
    const it = d.prepare('SELECT iteration, metrics_json FROM iterations WHERE run_id = ?').get(run.id);
    const phases = { phaseGenerateMs: 1200, phaseEnvMs: 800, phaseReferenceMs: 150, phaseUpdateMs: 600, phaseEvaluateMs: 2000, phaseStoreMs: 40 };
    d.prepare('UPDATE iterations SET metrics_json = ? WHERE run_id = ? AND iteration = ?').run(JSON.stringify({ ...JSON.parse(it.metrics_json), ...phases }), run.id, it.iteration);
    const t = d.prepare('SELECT id FROM trajectories WHERE run_id = ? AND iteration = 1 ORDER BY group_index, index_in_group LIMIT 1').get(run.id);
    d.prepare('UPDATE trajectories SET task_id = ?, termination = ? WHERE id = ?').run(HOSTILE.taskId, HOSTILE.termination, t.id);
    const turn = d.prepare('SELECT action_text, action_json, observation_text FROM turns WHERE trajectory_id = ? AND turn_index = 0').get(t.id);
    const code = JSON.parse(turn.action_json).args.code;
    d.prepare("UPDATE turns SET action_text = ?, observation_text = ?, observation_json = json_set(observation_json, '$.level', 'process') WHERE trajectory_id = ? AND turn_index = 0")
      .run(`${HOSTILE.prose}\`\`\`python\n${code}\`\`\`${HOSTILE.after}`, `${HOSTILE.longLine}\n${turn.observation_text}`, t.id);
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
