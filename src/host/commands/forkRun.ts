// Fork Run from Here (an iteration's context menu in the Runs tree): a new run that starts from the
// run's kept state after that iteration, with the settings typed here merged over its config. The
// changes are checked against the stored config here (the same pure check the worker repeats), so a
// change a fork cannot make is refused before anything starts; an iteration without a kept state is
// the worker's error, with the nearest iterations that have one. A fork with a judge is confirmed as
// Start Run confirms one (judgeGate.ts): trusted workspace, a modal naming the address and the variable.
import * as vscode from 'vscode';
import { forkConfig, parseForkChanges } from '../../shared/forkConfig';
import { judgeTarget } from '../../shared/judgeTarget';
import { validateRunConfig } from '../../shared/runConfig';
import { showInvisibles } from '../../shared/untrustedText';
import { databasePath, sandboxSettings } from '../settings';
import type { RunsNode } from '../views/runsTree';
import type { CommandDeps } from './commandDeps';
import { confirmJudgeOf, followRun } from './startRun';

export async function forkRun(deps: CommandDeps, n?: RunsNode): Promise<void> {
  if (n?.kind !== 'iteration') return;
  const runs = await deps.processes.requireRuns();
  const backend = await deps.processes.requireBackend();
  if (!runs || !backend) return;
  const at = n.metrics.iteration;
  const stored = await backend.request('getRun', { runId: n.runId });
  if (!stored) throw new Error(`Run ${n.runId} is no longer in the database.`);
  const text = await vscode.window.showInputBox({
    title: `Fork run ${n.runId} after iteration ${at}`,
    prompt: 'Settings to change, as JSON (empty: the fork continues exactly as the run did)',
    placeHolder: '{"algorithm": {"learningRate": 0.001, "klCoef": 0.02}, "iterations": 200}',
    validateInput: (t) => {
      const p = parseForkChanges(t);
      return 'error' in p ? p.error : undefined;
    },
  });
  if (text === undefined) return;
  const parsed = parseForkChanges(text);
  if ('error' in parsed) return;
  // throws ConfigError naming each refused or invalid field; the command boundary shows it
  const config = forkConfig(validateRunConfig(stored.config), parsed.changes, at);
  // the fork's judge (the stored one, or one the changes name) is asked about as a config file's is
  if (!(await confirmJudgeOf(config, `run ${n.runId} in the database (forked with your changes)`, 'fork it again'))) return;
  deps.output.appendLine(`forking run ${n.runId} "${showInvisibles(stored.summary.name)}" after iteration ${at}`);
  const judged = judgeTarget(config) !== undefined;
  followRun(deps, runs.fork(n.runId, at, parsed.changes, databasePath(), sandboxSettings(), judged), {
    name: `${stored.summary.name} (fork of run ${n.runId} @ ${at})`,
    method: config.method,
    iterations: config.iterations,
  });
  deps.tree.refresh();
}
