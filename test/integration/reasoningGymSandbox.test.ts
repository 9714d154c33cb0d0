// The reasoning-gym scorer runs model output in the sandbox (answerScorer.ts, confinedScorer.ts),
// against the real reasoning-gym in its cached venv (skipped without it, or without bubblewrap for the
// strict level). countdown's score_answer hands the answer to sympy's parse_expr, which evaluates it:
// the test first shows that a hostile answer really runs when scored unconfined (the file appears),
// then that the confined scorer does not let it (no file) and still scores right, wrong and hanging
// answers as the dataset does (a hang scores 0 with its reason, within the per-answer timeout, and the
// answers after it are scored by a restarted process).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AnswerScorer } from '../../src/rl/envs/reasoningGym/answerScorer';
import type { GymEntry } from '../../src/rl/envs/reasoningGym/reasoningGymTasks';
import { detectIsolation, type IsolationLevel } from '../../src/rl/sandbox/isolation';
import { tempDir } from '../helpers/cli';

const VENV = path.join(process.env.AGENT_RL_VENVS || path.join(os.homedir(), '.cache', 'agent-rl-workbench', 'venvs'), 'reasoning-gym-0.1.25');
const PYTHON = path.join(VENV, 'bin', 'python');
const SKIP =
  !(fs.existsSync(PYTHON) && fs.existsSync(path.join(VENV, 'agent-rl-requirements.txt'))) &&
  `the reasoning-gym venv is absent or unfinished (${VENV}): node scripts/pythonVenv.mjs reasoning-gym-0.1.25 makes it, as .ci/run does`;

const strictStatus = (): string | false => {
  if (SKIP) return false;
  const s = detectIsolation(fs.realpathSync(PYTHON)).find((x) => x.level === 'strict');
  return s?.available ? false : `the strict level (bubblewrap) is not available here: ${s?.reason ?? 'not probed'}`;
};

/** A countdown entry made by reasoning-gym itself (its numbers, target and a right answer). */
function countdownEntry(): GymEntry {
  const code = [
    'import json, reasoning_gym',
    'e = reasoning_gym.create_dataset("countdown", size=1, seed=0)[0]',
    'print(json.dumps({"question": e["question"], "answer": e["answer"], "metadata": e["metadata"]}, default=str))',
  ].join('\n');
  const r = spawnSync(PYTHON, ['-c', code], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as GymEntry;
}

/** countdown's score_answer of `answer`, unconfined (the venv's python run as the user): the scratch check. */
function unconfinedScore(entry: GymEntry, answer: string): string {
  const code = [
    'import json, sys',
    'from reasoning_gym.factory import get_score_answer_fn',
    'print(get_score_answer_fn("countdown")(sys.argv[1], json.loads(sys.argv[2])))',
  ].join('\n');
  const r = spawnSync(PYTHON, ['-c', code, answer, JSON.stringify(entry)], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

describe('the reasoning-gym scorer runs answers in the sandbox', { skip: SKIP || strictStatus() }, () => {
  let dir: string;
  let entry: GymEntry;
  const scorers: AnswerScorer[] = [];
  const scorer = (level: IsolationLevel, answerTimeoutMs: number): AnswerScorer => {
    const s = new AnswerScorer(PYTHON, { level, answerTimeoutMs, datasets: ['countdown'] });
    scorers.push(s);
    return s;
  };
  const hostile = (file: string): string => `__import__('os').system('touch ${file}')`;
  before(() => {
    dir = tempDir('agent-rl-rg-sbx-');
    fs.chmodSync(dir, 0o777); // writable by the sandbox's own uid too, were it visible: only the confinement keeps the file out
    entry = countdownEntry();
  });
  after(async () => {
    await Promise.all(scorers.map((s) => s.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('scratch check: unconfined, countdown’s score_answer runs a hostile answer (the file appears)', () => {
    const file = path.join(dir, 'unconfined');
    unconfinedScore(entry, hostile(file));
    assert.ok(fs.existsSync(file), 'the exploit this guards against did not run unconfined: pick another answer');
  });

  it('strict: the hostile answer creates nothing on the host, and right and wrong answers score as the dataset scores them', async () => {
    const s = scorer('strict', 20_000);
    const file = path.join(dir, 'strict');
    const right = entry.answer;
    const [bad, good, wrong] = await Promise.all([
      s.score('countdown', entry, hostile(file)),
      s.score('countdown', entry, right),
      s.score('countdown', entry, '1+1'),
    ]);
    assert.equal(fs.existsSync(file), false, 'the hostile answer ran on the host');
    assert.equal(good.score, Number(unconfinedScore(entry, right)));
    assert.equal(good.score, 1);
    assert.equal(wrong.score, Number(unconfinedScore(entry, '1+1')));
    assert.ok(bad.score < 1, `the hostile answer scored ${bad.score}`);
  });

  it("strict: an answer that writes a score to the scorer's stdout or patches the scorer does not change the scores of the answers after it", async () => {
    const s = scorer('strict', 20_000);
    const forge = "__import__('os').write(1, b'1\\n1\\n')";
    // unconfined, in one process, this makes every later answer with the right numbers score 1
    const patch = "setattr(__import__('reasoning_gym.games.countdown',fromlist=['_']),'np',__import__('types').SimpleNamespace(isclose='x'.format))";
    const sum = (entry.metadata.numbers as number[]).join('+'); // the right numbers, summed: not the target
    const wrongScore = Number(unconfinedScore(entry, sum));
    assert.ok(wrongScore < 1, 'the sum of the numbers happens to be the target: pick another wrong answer');
    const [forged, patched, wrong] = await Promise.all([
      s.score('countdown', entry, forge),
      s.score('countdown', entry, patch),
      s.score('countdown', entry, sum),
    ]);
    assert.ok(forged.score < 1 && patched.score < 1, `forged ${forged.score}, patched ${patched.score}`);
    assert.equal(wrong.score, wrongScore, 'a wrong answer after them scored otherwise than unconfined');
  });

  it('strict: a hanging answer scores 0 with its reason within the timeout, and the answers after it are still scored', async () => {
    const s = scorer('strict', 3000);
    await s.score('countdown', entry, entry.answer); // started and warm: the timeout counts the answer alone
    const t0 = performance.now();
    const [hang, good] = await Promise.all([s.score('countdown', entry, '9**9**9**9'), s.score('countdown', entry, entry.answer)]);
    const ms = performance.now() - t0;
    assert.equal(hang.score, 0);
    assert.match(hang.failure ?? '', /did not finish within 3000 ms|ran out of memory|the scorer ended/);
    assert.equal(good.score, 1, 'the answer after the hang was not scored by a fresh process');
    assert.ok(ms < 3000 + 60_000, `the hang held the scorer ${Math.round(ms)} ms`);
  });
});
