// An OpenEnv environment (env "openenv"), against openenv-core's real server from PyPI in its cached
// virtual environment (scripts/pythonVenv.mjs openenv-core-0.3.0; .ci/run makes it, and without it
// these tests are skipped, saying so). Two environments on loopback: the package's own example (the
// echo environment `openenv init` writes from its template), reached at a URL, and a word game written
// with its API (test/fixtures/openenv/word_game.py), started by the run's command. The TypeScript
// client's session round trip (reset, step, state over /ws) against the echo server; multi-turn
// episodes of the word game played by a scripted chat model (it answers "apple" every turn), so the
// server's rewards and done are known; one short training run through the CLI; and the failures a
// user meets — nothing at the URL, a malformed observation, a server that dies mid-episode — each an
// error naming the URL and what to fix.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunEnvironment } from '../../src/rl/envs/environment';
import { OpenEnvSession } from '../../src/rl/envs/openenv/openenvSession';
import { openEnvironment } from '../../src/rl/envs/registry';
import { createPolicy } from '../../src/rl/policies/createPolicy';
import { initBackend } from '../../src/rl/policies/lm/models/tfjsBackend';
import type { TransformerPolicy } from '../../src/rl/policies/lm/transformerPolicy';
import { Rng } from '../../src/rl/random';
import { runEpisodes } from '../../src/rl/rollout/agentLoop';
import { policyRunInfo } from '../../src/rl/train/trainingRun';
import { validateRunConfig, type RunConfig } from '../../src/shared/runConfig';
import { ROOT, runCli, tempDir } from '../helpers/cli';
import { scriptedChatModel } from '../helpers/freshPolicy';

const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'openenv');
/** The venv scripts/pythonVenv.mjs makes (its name carries the pinned version). */
const VENV = path.join(process.env.AGENT_RL_VENVS || path.join(os.homedir(), '.cache', 'agent-rl-workbench', 'venvs'), 'openenv-core-0.3.0');
const PYTHON = path.join(VENV, 'bin', 'python');
// made whole: the stamp is written after pip install succeeds, so a venv left by a killed install is absent here
const SKIP =
  !(fs.existsSync(PYTHON) && fs.existsSync(path.join(VENV, 'agent-rl-requirements.txt'))) &&
  `the openenv-core venv is absent or unfinished (${VENV}): node scripts/pythonVenv.mjs openenv-core-0.3.0 makes it, as .ci/run does`;
/**
 * How long a server may take to start: openenv-core's imports (FastAPI, gradio, fastmcp) cost ~5
 * CPU-seconds, many times that on a machine shared with other work.
 */
const START_MS = 600_000;
const WORD_GAME = [PYTHON, '-m', 'uvicorn', 'word_game:app', '--host', '{host}', '--port', '{port}'];

const opened: RunEnvironment[] = [];
const children: ChildProcess[] = [];
let echoDir = '';
after(async () => {
  await Promise.all(opened.map((e) => e.dispose()));
  for (const c of children) c.kill('SIGKILL');
  if (echoDir) fs.rmSync(echoDir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const a = s.address() as net.AddressInfo;
      s.close(() => resolve(a.port));
    });
  });
}

function configFor(envOptions: Record<string, unknown>, model = ''): RunConfig {
  return validateRunConfig({
    env: 'openenv',
    policy: 'transformer',
    seed: 3,
    envOptions: { startTimeoutMs: START_MS, ...envOptions },
    policyOptions: { ...(model ? { model } : {}), loraRank: 4, loraAlpha: 8, maxNewTokens: 16, contextLength: 2048 },
  });
}

async function open(config: RunConfig): Promise<RunEnvironment> {
  const run = await openEnvironment(config);
  opened.push(run);
  return run;
}

describe('an OpenEnv environment (env "openenv")', { skip: SKIP, timeout: 3 * START_MS }, () => {
  before(async () => {
    await initBackend('wasm');
  });

  it("openenv-core's own example (`openenv init`'s echo environment) at a URL: the session's reset, step and state round trip, and the run's fields from its /schema", async () => {
    echoDir = tempDir('agent-rl-openenv-');
    const init = spawnSync(PYTHON, ['-m', 'openenv.cli', 'init', 'echo_env', '--output-dir', echoDir], { encoding: 'utf8', timeout: START_MS });
    assert.equal(init.status, 0, init.stderr + init.stdout);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const server = spawn(PYTHON, ['-m', 'uvicorn', 'server.app:app', '--host', '127.0.0.1', '--port', String(port)], {
      cwd: path.join(echoDir, 'echo_env'),
      stdio: 'ignore',
    });
    children.push(server);
    // nothing listens yet (or ever, at a port no one took): the error names the address and the fix
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    await assert.rejects(
      open(configFor({ url: nowhere })),
      new RegExp(`no OpenEnv server answers at ${nowhere}/health \\(ECONNREFUSED\\)\\. Fix: start the server`),
    );
    await assert.rejects(open(configFor({ url: 'ftp://example' })), /envOptions\.url "ftp:\/\/example": ftp: is not http: or https:/);
    const deadline = Date.now() + START_MS;
    for (;;) {
      const up = await fetch(`${url}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      assert.ok(Date.now() < deadline, 'the echo server did not start');
      await new Promise((r) => setTimeout(r, 500));
    }

    const session = await OpenEnvSession.open(url, 30_000);
    const first = await session.reset({ seed: 7, episode_id: 'ep-1' });
    assert.deepEqual(first, { observation: { echoed_message: 'Echo Env environment ready!', message_length: 0 }, reward: 0, done: false });
    const echoed = await session.step({ message: 'hello there' });
    assert.equal(echoed.observation.echoed_message, 'hello there');
    assert.equal(echoed.observation.message_length, 11);
    assert.ok(Math.abs((echoed.reward ?? 0) - 1.1) < 1e-9, 'the template rewards 0.1 per character');
    const state = await session.state();
    assert.equal(state.step_count, 1, 'the same environment answered both: one session');
    // the server refuses an action its schema does not admit: the error names the field
    await assert.rejects(
      session.step({ text: 'x' }),
      /step failed on the server: Invalid message \(VALIDATION_ERROR\) — message: Field required; text: Extra inputs are not permitted\. Fix: check envOptions\.actionField/,
    );
    session.close();
    await assert.rejects(session.state(), /state after the session was closed/);

    // the run: the fields its /schema names, an episode through the environment's own interface
    const cfg = configFor({ url }, scriptedChatModel('apple'));
    const run = await open(cfg);
    assert.match(
      run.preflight?.() ?? '',
      new RegExp(`OpenEnv server at ${url}; the model reads observation\\.echoed_message and writes action\\.message; 64 training seeds and 16 held out`),
    );
    assert.deepEqual(
      run
        .tasks()
        .heldOut.slice(0, 2)
        .map((t) => t.id),
      ['openenv:heldout:1000000', 'openenv:heldout:1000001'],
    );
    const env = run.create();
    assert.equal((await env.reset(run.tasks().train[0]!)).text, 'Echo Env environment ready!');
    const step = await env.step(env.parseAction('hi'));
    assert.deepEqual([step.observation.text, step.done], ['hi', false]);
    const outcome = await env.verify(new Rng(1));
    assert.ok(Math.abs(outcome.reward - 0.2) < 1e-9);
    assert.equal((outcome.details as { state: { step_count: number } }).state.step_count, 1);
    await env.close();
    // episodes one after another on this server of one session (the template's max_concurrent_envs=1,
    // concurrency 1): each frees its session when its last turn is taken, before the next one's reset
    const policy = (await createPolicy(cfg, policyRunInfo(cfg), run)) as TransformerPolicy;
    const specs = [0, 1, 2].map((i) => ({ task: run.tasks().train[i]!, group: i, indexInGroup: 0 }));
    const ts = await runEpisodes(specs, () => run.create(), policy, { maxTurns: 2, sampleRng: new Rng(3), verifierRng: new Rng(4), maxOpen: run.maxOpen });
    for (const t of ts) {
      assert.equal(t.termination, 'turn_cap', JSON.stringify(t.outcome.details));
      assert.deepEqual(
        t.turns.map((turn) => [turn.actionText, turn.observation.text]),
        [
          ['apple', 'apple'],
          ['apple', 'apple'],
        ],
      );
      assert.ok(Math.abs(t.outcome.reward - 1) < 1e-9, 'the sum of two steps of 0.1 per character');
      assert.equal((t.outcome.details as { state: { step_count: number } }).state.step_count, 2);
    }
  });

  it('a word game started by the run’s command: multi-turn episodes whose reward and done are the server’s, held-out resets with their own arguments', async () => {
    const cfg = configFor({ root: FIXTURES, command: WORD_GAME, concurrency: 4, heldOutResetArgs: { tries: 3 } }, scriptedChatModel('apple'));
    const run = await open(cfg);
    assert.match(run.preflight?.() ?? '', /started by .*word_game:app.* as you, not sandboxed\); the model reads observation\.prompt and writes action\.guess/);
    const policy = (await createPolicy(cfg, policyRunInfo(cfg), run)) as TransformerPolicy;
    const { train, heldOut } = run.tasks();
    // seed 0's word is apple: right at once; seed 1's is river: two wrong guesses; held out (tries 3): three
    const specs = [train[0]!, train[1]!, heldOut[1]!].flatMap((task, group) => [0, 1].map((indexInGroup) => ({ task, group, indexInGroup })));
    const ts = await runEpisodes(specs, () => run.create(), policy, { maxTurns: 6, sampleRng: new Rng(3), verifierRng: new Rng(4), maxOpen: run.maxOpen });
    for (const t of ts) {
      const details = t.outcome.details as { rewards: number[]; state: { word: string; step_count: number } };
      assert.equal(t.termination, 'finished', JSON.stringify(t.outcome.details));
      assert.ok(t.turns.every((turn) => turn.actionText === 'apple'));
      const turns = t.group === 0 ? 1 : t.group === 1 ? 2 : 3;
      assert.equal(t.turns.length, turns);
      assert.deepEqual(details.rewards, t.group === 0 ? [1] : Array(turns).fill(0));
      assert.equal(t.outcome.reward, t.group === 0 ? 1 : 0);
      assert.equal(t.outcome.success, t.group === 0);
      assert.equal(details.state.step_count, turns, "the session's own state: its environment took every step");
      const word = t.group === 0 ? 'apple' : 'river';
      assert.equal(details.state.word, word);
      assert.ok(policy.tokenizer.decode(t.turns[0]!.policy.tokens!.context).includes(`Say the word ${word}.`), 'the reset observation is the prompt');
      if (turns > 1)
        assert.ok(policy.tokenizer.decode(t.turns[1]!.policy.tokens!.context).includes(`No. Say the word ${word}.`), 'the step observation follows');
    }

    // a malformed observation: an error naming the URL, the field and the fix
    const env = run.create();
    await env.reset(train[0]!);
    await assert.rejects(
      env.step(env.parseAction('bad')),
      /OpenEnv session at ws:\/\/127\.0\.0\.1:\d+\/ws: step answered a malformed observation: it has no prompt \(its fields: none\)\. Fix: name the field the model reads in envOptions\.observationField/,
    );
    await env.close();
    // a server that dies mid-episode: this episode's error, and the next one's, say so with the command's exit
    const dying = run.create();
    await dying.reset(train[1]!);
    await assert.rejects(
      dying.step(dying.parseAction('die')),
      /OpenEnv session at ws:\/\/127\.0\.0\.1:\d+\/ws: the server closed the session \(code 1006\) during step/,
    );
    await dying.close();
    await new Promise((r) => setTimeout(r, 500));
    const next = run.create();
    await assert.rejects(next.reset(train[0]!), /could not connect \(the server command .*word_game:app.* ended: exit code 3; its output ends: /);
  });

  it('a short training run through the CLI starts the server, completes, and stops it; its record is never forked (that would start the command again)', () => {
    const dir = tempDir();
    const db = path.join(dir, 'runs.db');
    const cfg = path.join(dir, 'run.agentrl.json');
    fs.writeFileSync(
      cfg,
      JSON.stringify({
        env: 'openenv',
        policy: 'transformer',
        iterations: 1,
        groupsPerIteration: 1,
        groupSize: 2,
        evalEpisodes: 2,
        maxTurns: 3,
        envOptions: { root: FIXTURES, command: WORD_GAME, trainTasks: 1, heldOutTasks: 1, startTimeoutMs: START_MS },
        policyOptions: { model: scriptedChatModel('apple'), loraRank: 4, maxNewTokens: 8, contextLength: 2048 },
      }),
    );
    const r = runCli(['train', '--config', cfg, '--db', db], dir, {}, START_MS);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /completed/);
    const forked = runCli(['train', '--fork', '1', '--at', '1', '--db', db], dir);
    assert.notEqual(forked.code, 0);
    assert.match(forked.stderr, /run 1 ran your own code \(an agent program, a verifiers environment or an OpenEnv server's command\).* cannot be forked/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
