// The code environment against the real sandbox: every task's verifier, the reference agent on every
// held-out task, and the environment contract.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { codeEnvOptions, codeTask, verifyCode } from '../../src/rl/envs/codeSandbox/codeEnv';
import { detectIsolation, resolvePython } from '../../src/rl/sandbox/isolation';
import { SandboxPools } from '../../src/rl/sandbox/sandboxPools';
import { validateEnvOptions } from '../../src/shared/runConfig';
import { codeEnv, disposeOpened } from '../helpers/environments';
import { CodeReferenceAgent } from '../../src/rl/policies/scripted/codeReference';
import { Rng } from '../../src/rl/random';
import { runEpisodes } from '../../src/rl/rollout/agentLoop';
import { evaluate, parseExpr } from '../../src/rl/envs/calculator/expressions';
import { CODE_TASKS, formulaTasks } from '../../src/rl/tasks/codeTasks';
import { runCli, tempDir } from '../helpers/cli';

const pools = new SandboxPools();
after(() => Promise.all([disposeOpened(), pools.close()]));

/** Prints the public answer from a function that ignores its input: passes the public check only. */
function memorised(t: (typeof CODE_TASKS)[number]): string {
  return [
    'import ast',
    'try:',
    `    _ANSWER = ast.literal_eval(${JSON.stringify(t.publicOutput)})`,
    'except Exception:',
    `    _ANSWER = ${JSON.stringify(t.publicOutput)}`,
    `def ${t.fn}(*args, **kwargs):`,
    '    return _ANSWER',
    `print(${t.fn}(${t.publicArgs}))`,
    '',
  ].join('\n');
}

describe('code tasks', () => {
  it('at least 60 tasks with fixed train and held-out splits, seed 000 tasks included', () => {
    assert.ok(CODE_TASKS.length >= 60, String(CODE_TASKS.length));
    const { train, heldOut } = codeEnv({}).tasks();
    assert.ok(heldOut.length >= 15);
    assert.equal(train.length + heldOut.length, CODE_TASKS.length);
    assert.ok(!heldOut.some((h) => train.some((t) => t.id === h.id)));
    for (const id of ['code:fibonacci', 'code:palindrome', 'code:sort-list'])
      assert.ok(
        train.some((t) => t.id === id),
        id,
      );
  });

  it('every private verifier accepts the reference solution and rejects a memorised answer', async () => {
    const o = codeEnvOptions(validateEnvOptions('code', {}));
    const sandbox = pools.get(o);
    const rejected: string[] = [];
    await Promise.all(
      CODE_TASKS.map(async (t) => {
        const task = codeTask(t);
        const ref = await verifyCode(sandbox, o.limits, task, `${t.reference}\nprint(${t.fn}(${t.publicArgs}))\n`);
        assert.deepEqual([ref.publicPass, ref.privatePass], [true, true], `${t.id} reference: ${JSON.stringify(ref.detail)}`);
        const mem = await verifyCode(sandbox, o.limits, task, memorised(t));
        assert.equal(mem.publicPass, true, `${t.id}: the memorised answer should print the public output`);
        assert.equal(mem.privatePass, false, `${t.id}: the memorised answer passed the private verifier`);
        rejected.push(t.id);
      }),
    );
    assert.equal(rejected.length, CODE_TASKS.length);
  });
});

describe('generated formula tasks (envOptions.taskSet = formulas)', () => {
  const all = formulaTasks();

  it('405 tasks, about a quarter held out, ids unique, public outputs right', () => {
    assert.equal(all.length, 405);
    assert.equal(new Set(all.map((t) => t.id)).size, all.length);
    const { train, heldOut } = codeEnv({ taskSet: 'formulas' }).tasks();
    assert.equal(train.length + heldOut.length, all.length);
    assert.ok(heldOut.length > 70 && heldOut.length < 135, String(heldOut.length));
    const t = all.find((x) => x.id === 'code:f=3*(x+4)')!;
    assert.equal(t.publicOutput, String(3 * (Number(t.publicArgs) + 4)));
    assert.equal(codeEnv().taskFromId!('f=3*(x+4)')?.id, 'code:f=3*(x+4)');
  });

  it('no held-out formula computes the same function as a training one (values on probe inputs)', () => {
    // a formula's value at x: substitute and evaluate with the calculator's own parser
    const f = (expr: string, x: number): number => evaluate(parseExpr(expr.replaceAll('x', x < 0 ? `(${x})` : String(x))));
    const values = (id: string): string => [-7, -3, 0, 1, 2, 5, 10, 100].map((x) => f(id.replace('code:f=', ''), x)).join(',');
    const trained = new Set(all.filter((t) => t.split === 'train').map((t) => values(t.id)));
    const twins = all.filter((t) => t.split === 'heldOut' && trained.has(values(t.id)));
    assert.deepEqual(
      twins.map((t) => t.id),
      [],
    );
    // x*x+2*3, x*x+3*2 and x*x+1*6 are one function, in one split
    const split = (id: string): string => all.find((t) => t.id === id)!.split;
    assert.equal(split('code:f=x*x+2*3'), split('code:f=x*x+3*2'));
    assert.equal(split('code:f=x*x+1*6'), split('code:f=x*x+2*3'));
  });

  it('the reference agent solves sampled held-out formulas, and a memorised answer fails their private verifier', async () => {
    const o = codeEnvOptions(validateEnvOptions('code', { taskSet: 'formulas' }));
    const sample = all.filter((t) => t.split === 'heldOut').filter((_, i) => i % 8 === 0);
    const trajectories = await runEpisodes(
      sample.map((t, i) => ({ task: codeTask(t), group: i, indexInGroup: 0 })),
      () => codeEnv({ taskSet: 'formulas' }).create(),
      new CodeReferenceAgent(0),
      { maxTurns: 8, sampleRng: new Rng(3), verifierRng: new Rng(4) },
    );
    for (const t of trajectories) assert.equal(t.outcome.success, true, `${t.taskId}: ${JSON.stringify(t.outcome)}`);
    const mem = await verifyCode(pools.get(o), o.limits, codeTask(sample[0]!), memorised(sample[0]!));
    assert.deepEqual([mem.publicPass, mem.privatePass], [true, false]);
  });
});

describe('code reference agent', () => {
  for (const mistakeRate of [0, 1]) {
    it(`solves every held-out task (mistake rate ${mistakeRate})`, async () => {
      const tasks = codeEnv({}).tasks().heldOut;
      const trajectories = await runEpisodes(
        tasks.map((task, i) => ({ task, group: i, indexInGroup: 0 })),
        () => codeEnv({}).create(),
        new CodeReferenceAgent(mistakeRate),
        { maxTurns: 8, sampleRng: new Rng(3), verifierRng: new Rng(4) },
      );
      for (const t of trajectories) {
        assert.equal(t.outcome.success, true, `${t.taskId}: ${JSON.stringify(t.outcome)} ${JSON.stringify(t.turns.map((x) => x.observation.text))}`);
        assert.equal(t.termination, 'finished');
      }
      if (mistakeRate === 1) {
        for (const t of trajectories) {
          assert.match(t.turns[0]!.observation.text, /NameError/);
          assert.equal(t.turns.length, 3);
        }
      }
    });
  }
});

describe('code environment contract', () => {
  const task = codeTask(CODE_TASKS[0]!);

  it("the run record's environment line says which level ran the code and what it holds, in env check's words", () => {
    const env = codeEnv({ sandbox: 'process' });
    const line = env.preflight!();
    const python = resolvePython();
    const holds = detectIsolation(python).find((s) => s.level === 'process')!.reason;
    assert.equal(line, `code sandbox: level process (${holds}), python ${python}`);
  });

  it('observations are structured: stdout, stderr with user line numbers, exit code, timeout, level', async () => {
    const env = codeEnv({ timeoutMs: 800, maxExecutions: 10 }).create();
    await env.reset(task);
    const ok = await env.step(env.parseAction('```python\nprint(6 * 7)\n```'));
    assert.equal(ok.observation.data.stdout, '42\n');
    assert.equal(ok.observation.data.exitCode, 0);
    assert.match(String(ok.observation.data.level), /strict|landlock|network|process/);
    const bad = await env.step(env.parseAction('```python\nx = 1\nprint(y)\n```'));
    assert.equal(bad.observation.data.exitCode, 1);
    assert.match(bad.observation.text, /line 2, in <module>[\s\S]*NameError/);
    const slow = await env.step(env.parseAction('```python\nwhile True:\n    pass\n```'));
    assert.equal(slow.observation.data.timedOut, true);
    assert.match(slow.observation.text, /\[timeout\]/);
    const fmt = await env.step(env.parseAction('I will think about it.'));
    assert.match(fmt.observation.text, /^format error/);
    assert.equal(fmt.done, false);
  });

  it('the budget ends the episode; submitting wrong code earns 0 with the gap recorded', async () => {
    const env = codeEnv({ maxExecutions: 1 }).create();
    await env.reset(task);
    const r = await env.step(env.parseAction('```python\nprint(55)\n```'));
    assert.equal(r.termination, 'budget_exhausted');
    const o = await env.verify(new Rng(0));
    assert.deepEqual([o.reward, o.publicPass, o.privatePass], [0, true, false]);

    const env2 = codeEnv({}).create();
    await env2.reset(task);
    await env2.step(env2.parseAction(`\`\`\`python\n${CODE_TASKS[0]!.reference}\nprint(fib(10))\n\`\`\``));
    const fin = await env2.step(env2.parseAction('FINAL ANSWER: 55'));
    assert.equal(fin.termination, 'finished');
    const o2 = await env2.verify(new Rng(0));
    assert.deepEqual([o2.reward, o2.success, o2.publicPass, o2.privatePass], [1, true, true, true]);
    assert.match(String(o2.details?.level), /strict|landlock|network|process/);
  });

  it("faults in the agent's code are observations: a hang, a memory hog, a crash, a flood and garbage each get their answer and the episode goes on to a verdict", async () => {
    const env = codeEnv({ timeoutMs: 600, maxExecutions: 10 }).create();
    await env.reset(task);
    const run = async (code: string) => (await env.step(env.parseAction(`\`\`\`python\n${code}\n\`\`\``))).observation;
    const hang = await run('while True:\n    pass');
    assert.equal(hang.data.timedOut, true);
    const hog = await run('x = bytearray(4 << 30)\nprint(len(x))');
    assert.notEqual(hog.data.exitCode, 0);
    assert.match(hog.text, /MemoryError/);
    const crash = await run('import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)');
    assert.notEqual(crash.data.exitCode, 0);
    const flood = await run('import sys\nsys.stdout.write("x" * 50_000_000)');
    assert.ok(flood.text.length < 20_000, `${flood.text.length} characters reached the model`);
    const garbage = await env.step(env.parseAction('\u0000\uFFFD```'));
    assert.equal(garbage.done, false);
    // after all that, the sandbox still runs code and the episode still ends with a verdict
    const ok = await run(`${CODE_TASKS[0]!.reference}\nprint(fib(10))`);
    assert.equal(ok.data.stdout, '55\n');
    const fin = await env.step(env.parseAction('FINAL ANSWER: 55'));
    assert.equal(fin.termination, 'finished');
    const o = await env.verify(new Rng(0));
    assert.equal(o.reward, 1);
  });

  it('an episode without any code scores 0', async () => {
    const env = codeEnv({}).create();
    await env.reset(task);
    await env.step(env.parseAction('FINAL ANSWER: 55'));
    const o = await env.verify(new Rng(0));
    assert.deepEqual([o.reward, o.publicPass, o.privatePass], [0, false, false]);
  });
});

describe('agent-rl env run --env code', () => {
  it('replays code actions through the sandbox', () => {
    const dir = tempDir();
    const file = path.join(dir, 'a.json');
    fs.writeFileSync(
      file,
      JSON.stringify(['```python\nprint(fib(10))\n```', `\`\`\`python\n${CODE_TASKS[0]!.reference}\nprint(fib(10))\n\`\`\``, 'FINAL ANSWER: 55']),
    );
    const r = runCli(['env', 'run', '--env', 'code', '--task', 'code:fibonacci', '--actions', file], dir);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { observation?: { data: Record<string, unknown> }; outcome?: { reward: number } });
    assert.equal(lines[1]!.observation!.data.exitCode, 1);
    assert.equal(lines[2]!.observation!.data.stdout, '55\n');
    assert.equal(lines[4]!.outcome!.reward, 1);
  });

  it('demanding strict where bubblewrap is missing fails before anything runs, naming the fix', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'c.json'), JSON.stringify({ env: 'code', envOptions: { sandbox: 'strict' } }));
    fs.writeFileSync(path.join(dir, 'a.json'), '["FINAL ANSWER: 1"]');
    const r = runCli(['env', 'run', '--env', 'code', '--config', 'c.json', '--actions', 'a.json'], dir, { PATH: '/nonexistent' });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /Sandbox level "strict" was demanded but is not available: bubblewrap \(bwrap\) is not installed\. Fix: apt-get install bubblewrap/);
    assert.equal(r.stdout, '');
  });
});
