// `agent-rl rescore RUN`: score a run's stored trajectories again with the current reward file (or
// another) without training, store the result beside them, and print what changed; with --trajectory
// and --final-answer, score an edited copy of one trajectory instead. Stored text (task ids, the
// answer) is printed through cell() / showInvisibles, as every read-side command does.
import * as fs from 'node:fs';
import { fixed, signed as withSign } from '../shared/format';
import { errorHeadline, parseIterationRange, type RescoreReport, type Score } from '../shared/rescore';
import { jsonText, showInvisibles } from '../shared/untrustedText';
import { openStore } from '../store/openStore';
import { editFinalAnswer, rescoreRun } from '../store/rescoreRun';
import { cell, duration, pct, table } from './format';
import { defineCommand } from './command';
import { DATABASE, databaseOf, JSON_OUTPUT } from './optionSets';
import { UsageError } from './usageError';

const RESCORE_USAGE = `agent-rl rescore RUN [--reward FILE] [--iterations A..B] [--trajectory ID] [--db FILE] [--python PATH] [--json]
agent-rl rescore RUN --trajectory ID (--final-answer TEXT | --final-answer-file F) [--reward FILE]
  score stored trajectories again with the reward file as it is now (or another) without training;
  with --final-answer, score a copy of the trajectory with its last action replaced (stored as an
  edit, the original untouched)
  RUN           a run id or name; its stored config rebuilds the environment and its verifier (nothing is trained)
  --reward      a workspace run's reward file to score with (default: the run's own reward.py, as it is now)
  --iterations  A..B, A.., ..B or A (default: every stored iteration)
  --trajectory  only this trajectory of RUN
  --final-answer, --final-answer-file  the edited last action, as text or from a file
  --python      the interpreter the reward runs with (default /usr/bin/python3, else python3 on PATH)`;

const f3 = (x: number): string => fixed(x, 3, '?');
const signed = (x: number): string => withSign(x, f3, '?');
const scoreText = (s: Score): string =>
  `reward ${f3(s.reward)}, ${s.success ? 'success' : 'failure'}, public ${s.publicPass ? 'pass' : 'fail'}, private ${s.privatePass ? 'pass' : 'fail'}`;

/** The printed report of a stored re-score (pure: tests read it). */
export function rescoreText(r: RescoreReport, runName: string): string {
  const s = r.summary;
  const what = r.trajectoryId !== null ? `trajectory ${r.trajectoryId}` : `iterations ${r.iterationFrom}..${r.iterationTo}`;
  const lines = [
    `rescore ${r.id}: run ${r.runId} "${cell(runName, 200)}", ${what}, with ${cell(r.reward.label, 200)}${r.reward.sha256 ? ` (sha256 ${cell(r.reward.sha256, 12)})` : ''} in ${duration(r.wallMs)}`,
    `  trajectories re-scored: ${s.scored} of ${s.trajectories}${s.errors > 0 ? `; ${s.errors} could not be scored` : ''}`,
    `  rewards changed: ${s.changed} of ${s.scored} (${pct(s.scored === 0 ? 0 : s.changed / s.scored)}); mean reward ${f3(s.oldMean)} → ${f3(s.newMean)}`,
    `  success flips: ${s.toSuccess} to success, ${s.toFailure} to failure`,
  ];
  if (r.reward.file) lines.push(`  reward file: ${showInvisibles(r.reward.file)}`);
  if (s.largest.length > 0) {
    lines.push('', 'largest differences:');
    lines.push(
      table(
        ['trajectory', 'iteration', 'task', 'old', 'new', 'Δ', 'success'],
        s.largest.map((d) => [
          String(d.trajectoryId),
          String(d.iteration),
          cell(d.taskId, 40),
          f3(d.oldReward),
          f3(d.newReward),
          signed(d.delta),
          d.successFlip ?? '',
        ]),
      ),
    );
  }
  lines.push(
    '',
    `high-reward outliers (reward > mean + 3 sd of its iteration): ${s.outliers.length === 0 ? 'none' : s.outliers.length}`,
    ...s.outliers.map((o) => `  trajectory ${o.trajectoryId} (iteration ${o.iteration}): reward ${f3(o.reward)}, iteration mean ${f3(o.mean)}, sd ${f3(o.sd)}`),
    `public pass, private fail: ${s.publicPassPrivateFail.length === 0 ? 'none' : `${s.publicPassPrivateFail.length} (trajectories ${s.publicPassPrivateFail.slice(0, 20).join(', ')}${s.publicPassPrivateFail.length > 20 ? ', …' : ''})`}`,
  );
  if (s.errors > 0) {
    lines.push('', `errors (${s.errors}; first ${s.firstErrors.length}):`);
    // a reward's Python traceback is stored whole; the list shows its first line and the exception
    for (const e of s.firstErrors) lines.push(`  trajectory ${e.trajectoryId}: ${cell(errorHeadline(e.error), 600)}`);
  }
  lines.push('', `stored as rescore ${r.id}; the trajectories themselves are unchanged`);
  return lines.join('\n');
}

export const rescoreCommand = defineCommand({
  name: 'rescore',
  summary: 'score stored trajectories again with the reward file as it is now (or another), without training',
  usage: RESCORE_USAGE,
  options: {
    reward: { type: 'string' },
    iterations: { type: 'string' },
    trajectory: { type: 'string' },
    'final-answer': { type: 'string' },
    'final-answer-file': { type: 'string' },
    python: { type: 'string' },
  },
  sets: [DATABASE, JSON_OUTPUT],
  positionals: { min: 1, max: 1, error: 'rescore needs exactly one RUN (a run id or name)' },
  run: ({ values, positionals }) => rescore(positionals[0]!, values),
});

async function rescore(
  run: string,
  v: {
    readonly reward?: string | undefined;
    readonly iterations?: string | undefined;
    readonly trajectory?: string | undefined;
    readonly 'final-answer'?: string | undefined;
    readonly 'final-answer-file'?: string | undefined;
    readonly python?: string | undefined;
    readonly json?: boolean | undefined;
  } & Readonly<Record<string, unknown>>,
): Promise<number> {
  const trajectoryId = v.trajectory === undefined ? undefined : /^\d+$/.test(v.trajectory) ? Number(v.trajectory) : undefined;
  if (v.trajectory !== undefined && trajectoryId === undefined) throw new UsageError(`--trajectory ${v.trajectory}: give a trajectory id (a number)`);
  if (trajectoryId !== undefined && v.iterations !== undefined)
    throw new UsageError('--trajectory and --iterations choose what to re-score two ways; give one');
  let iterations;
  try {
    iterations = v.iterations === undefined ? undefined : parseIterationRange(v.iterations);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (v['final-answer'] !== undefined && v['final-answer-file'] !== undefined)
    throw new UsageError('give --final-answer TEXT or --final-answer-file F, not both');
  let finalAnswer = v['final-answer'];
  if (v['final-answer-file'] !== undefined) {
    try {
      finalAnswer = fs.readFileSync(v['final-answer-file'], 'utf8');
    } catch (e) {
      throw new UsageError(`--final-answer-file ${v['final-answer-file']}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
    }
  }
  if (finalAnswer !== undefined && trajectoryId === undefined) throw new UsageError('--final-answer edits one trajectory: give it with --trajectory ID');
  const { db, busyTimeoutMs } = databaseOf(v);
  const store = openStore(db, { busyTimeoutMs });
  // a stored workspace run's tools and reward run only from inside the folder this command runs in
  const sandbox = { python: v.python ?? '', sandbox: 'auto', folders: [process.cwd()] };
  const reward = v.reward !== undefined ? { rewardFile: v.reward } : {};
  try {
    if (finalAnswer !== undefined && trajectoryId !== undefined) {
      const r = await editFinalAnswer(store, db, { run, trajectoryId, finalAnswer, sandbox, ...reward });
      if (v.json) process.stdout.write(`${jsonText(r, 2)}\n`);
      else
        process.stdout.write(
          [
            `edit ${r.edit.id} of trajectory ${trajectoryId} (turn ${r.edit.turnIndex}), scored with ${cell(r.edit.reward.label, 200)}`,
            `  stored: ${scoreText(r.old)}`,
            `  edited: ${r.edit.score ? scoreText(r.edit.score) : `not scored: ${cell(r.edit.error ?? '', 2000)}`}`,
            `  original final answer: ${cell(r.originalText, 300)}`,
            `  edited final answer:   ${cell(r.edit.actionText, 300)}`,
            'the stored trajectory is unchanged',
          ].join('\n') + '\n',
        );
      return r.edit.score ? 0 : 1;
    }
    const tty = process.stderr.isTTY === true;
    const report = await rescoreRun(store, db, {
      run,
      sandbox,
      ...reward,
      ...(iterations ? { iterations } : {}),
      ...(trajectoryId !== undefined ? { trajectoryId } : {}),
      onProgress: (done, total) => {
        if (tty) process.stderr.write(`\rre-scoring ${done}/${total}\x1b[K${done === total ? '\n' : ''}`);
      },
    });
    const name = (store.prepare('SELECT name FROM runs WHERE id = ?').get(report.runId) as { name: string }).name;
    process.stdout.write(v.json ? `${jsonText(report, 2)}\n` : `${rescoreText(report, name)}\n`);
    return 0;
  } finally {
    store.close();
  }
}
