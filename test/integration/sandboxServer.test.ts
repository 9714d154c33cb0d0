// `agent-rl sandbox serve` against SandboxFusion's documented /run_code schema (RunCodeRequest →
// RunCodeResponse, sandbox/server/sandbox_api.py), with a real warm pool. The fields asserted are the
// ones verl's SandboxFusion client decides on: the top-level status (Success / Failed / SandboxError),
// run_result.status (Finished / TimeLimitExceeded), return_code and stdout.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { defaultSlots } from '../../src/rl/sandbox/fusion/admission';
import { checkServerOptions, startFusionServer, type FusionServerOptions, type RunningFusionServer } from '../../src/rl/sandbox/fusion/fusionServer';
import type { RunCodeResponse } from '../../src/rl/sandbox/fusion/fusionProtocol';
import { chooseLevel, resolvePython } from '../../src/rl/sandbox/isolation';
import { WarmPool } from '../../src/rl/sandbox/warmPool';
import { runCli, tempDir } from '../helpers/cli';

const python = resolvePython();
const level = chooseLevel('auto', python);
const TOKEN = 'test-token-0123456789abcdef';

async function serve(pool: WarmPool, o: Partial<FusionServerOptions> = {}): Promise<RunningFusionServer> {
  return startFusionServer({
    host: '127.0.0.1',
    port: 0,
    concurrency: 2,
    queueLimit: 64,
    maxWaitMs: 30_000,
    cores: 2,
    executor: pool,
    maxRunTimeoutS: 30,
    defaultMemoryMB: 512,
    maxMemoryMB: 2048,
    outputCapBytes: 64 * 1024,
    ...o,
  });
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown; headers: Headers }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json(), headers: r.headers };
}

const run = async (url: string, code: string, extra: Record<string, unknown> = {}): Promise<RunCodeResponse> => {
  const r = await post(url, { code, language: 'python', ...extra });
  assert.equal(r.status, 200);
  return r.json as RunCodeResponse;
};

describe(`agent-rl sandbox serve: SandboxFusion's /run_code on the warm pool (level ${level})`, () => {
  const pool = new WarmPool(level, python, 2);
  let server: RunningFusionServer;
  before(async () => {
    server = await serve(pool);
  });
  after(async () => {
    await server.close();
    await pool.close();
  });

  it('success: every RunCodeResponse field, with stdin, files and fetch_files', async () => {
    const r = await run(
      server.url,
      'import os, sys\nprint(sys.stdin.read().strip()[::-1])\nos.mkdir("out")\nopen("out/x.txt", "w").write(open("in/a.txt").read() * 2)\n',
      {
        stdin: 'abc\n',
        files: { 'in/a.txt': Buffer.from('hi').toString('base64') },
        fetch_files: ['out/x.txt', 'missing.txt'],
        run_timeout: 5,
        memory_limit_MB: 256,
      },
    );
    assert.deepEqual(Object.keys(r), ['status', 'message', 'compile_result', 'run_result', 'executor_pod_name', 'files']);
    assert.equal(r.status, 'Success');
    assert.equal(r.message, '');
    assert.equal(r.compile_result, null);
    assert.deepEqual(
      { ...r.run_result!, execution_time: typeof r.run_result!.execution_time },
      { status: 'Finished', execution_time: 'number', return_code: 0, stdout: 'cba\n', stderr: '' },
    );
    assert.deepEqual(r.files, { 'out/x.txt': Buffer.from('hihi').toString('base64') });
  });

  it('compile (syntax) error: Failed, the run finished with exit code 1 and the SyntaxError on stderr', async () => {
    const r = await run(server.url, 'def f(:\n    return 1\n');
    assert.equal(r.status, 'Failed');
    assert.equal(r.run_result!.status, 'Finished');
    assert.equal(r.run_result!.return_code, 1);
    assert.match(r.run_result!.stderr!, /File "main\.py", line 1[\s\S]*SyntaxError/);
  });

  it('runtime error: Failed with the traceback (main.py line numbers)', async () => {
    const r = await run(server.url, 'x = 0\nprint("before")\nprint(1 / x)\n');
    assert.deepEqual([r.status, r.run_result!.status, r.run_result!.return_code, r.run_result!.stdout], ['Failed', 'Finished', 1, 'before\n']);
    assert.match(r.run_result!.stderr!, /File "main\.py", line 3[\s\S]*ZeroDivisionError/);
  });

  it('timeout: TimeLimitExceeded after run_timeout, no return code', async () => {
    const t0 = performance.now();
    const r = await run(server.url, 'print("start", flush=True)\nwhile True:\n    pass\n', { run_timeout: 0.5 });
    const ms = performance.now() - t0;
    assert.deepEqual([r.status, r.run_result!.status, r.run_result!.return_code, r.run_result!.stdout], ['Failed', 'TimeLimitExceeded', null, 'start\n']);
    assert.ok(r.run_result!.execution_time! >= 0.5 && ms < 5000, `${r.run_result!.execution_time} s, answered in ${ms} ms`);
  });

  it('memory limit: memory_limit_MB is enforced (MemoryError) and the same code passes with more', async () => {
    const code = 'buf = bytearray(300 * 1024 * 1024)\nprint(len(buf))\n';
    const low = await run(server.url, code, { memory_limit_MB: 128 });
    assert.deepEqual([low.status, low.run_result!.return_code], ['Failed', 1]);
    assert.match(low.run_result!.stderr!, /MemoryError/);
    const high = await run(server.url, code, { memory_limit_MB: 1024 });
    assert.deepEqual([high.status, high.run_result!.stdout], ['Success', `${300 * 1024 * 1024}\n`]);
  });

  it('output cap: a flood is killed (return code −9), cut to the cap, and the message says so', async () => {
    const r = await run(server.url, 'import sys\nfor _ in range(100):\n    sys.stdout.write("x" * 100000)\n');
    assert.deepEqual([r.status, r.run_result!.status, r.run_result!.return_code], ['Failed', 'Finished', -9]);
    assert.match(r.message, /output passed 65536 bytes/);
    assert.ok(r.run_result!.stdout!.length <= 64 * 1024 && r.run_result!.stdout!.length > 0);
  });

  it('requests SandboxFusion rejects get its shapes: 422 with FastAPI detail, a language with no toolchain here a SandboxError answer', async () => {
    const bad = await post(server.url, { language: 'klingon', run_timeout: 'soon' });
    assert.equal(bad.status, 422);
    const detail = (bad.json as { detail: { type: string; loc: string[] }[] }).detail;
    assert.deepEqual(
      detail.map((d) => [d.type, d.loc.join('.')]),
      [
        ['float_type', 'body.run_timeout'],
        ['missing', 'body.code'],
        ['literal_error', 'body.language'],
      ],
    );
    assert.equal((await post(server.url, { code: '1', language: 'python', files: { '../x': 'AA==' } })).status, 422);
    const cuda = await run(server.url, 'int main() {}', { language: 'cuda' });
    assert.deepEqual([cuda.status, cuda.run_result, cuda.compile_result], ['SandboxError', null, null]);
    assert.match(cuda.message, /language cuda is not run here: .*This server runs python, /);
    assert.equal((await fetch(server.url.replace('/run_code', '/v1/ping'))).status, 200);
  });

  it('concurrent requests over the limit are queued, not rejected: at most 2 run at once, all 6 succeed', async () => {
    const before = { ...server.stats };
    const code = 'import time\nt0 = time.time()\ntime.sleep(0.6)\nprint(t0, time.time())\n';
    const t0 = performance.now();
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(server.url, { code, language: 'python' })));
    const wall = performance.now() - t0;
    assert.deepEqual(
      answers.map((a) => [a.status, (a.json as RunCodeResponse).status]),
      Array.from({ length: 6 }, () => [200, 'Success']),
    );
    // Measured from inside the sandbox: never more than 2 executions overlapped.
    const spans = answers.map((a) => (a.json as RunCodeResponse).run_result!.stdout!.trim().split(' ').map(Number) as [number, number]);
    const overlapAt = (t: number): number => spans.filter(([s, e]) => s <= t && t < e).length;
    assert.equal(Math.max(...spans.map(([s]) => overlapAt(s))), 2);
    // ... and the server says the other four waited in its queue.
    const waited = answers.map((a) => Number(a.headers.get('x-agent-rl-queue-ms'))).filter((ms) => ms > 300).length;
    assert.ok(waited >= 3, `queued answers: ${waited}`);
    assert.ok(server.admission.maxWaiting >= 3 && server.admission.maxRunning === 2 && server.stats.rejected === before.rejected);
    assert.ok(wall >= 3 * 600 - 50, `6 × 0.6 s on 2 slots took ${wall} ms`);
  });

  it('the queue is bounded: past queueLimit a request is answered 504 (which verl retries) with Retry-After', async () => {
    const small = await serve(pool, { concurrency: 1, cores: 1, queueLimit: 1 });
    try {
      const answers = await Promise.all(Array.from({ length: 3 }, () => post(small.url, { code: 'import time\ntime.sleep(0.4)\n', language: 'python' })));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 504]);
      const turned = answers.find((a) => a.status === 504)!;
      assert.equal(turned.headers.get('retry-after'), '1');
      assert.match((turned.json as { detail: string }).detail, /^Gateway Timeout: queue full: 1 waiting, 1 running/);
    } finally {
      await small.close();
    }
  });

  it('a request that cannot start within maxWaitMs is answered 504 then, not left to the client timeout', async () => {
    const small = await serve(pool, { concurrency: 1, cores: 1, queueLimit: 10, maxWaitMs: 300 });
    try {
      const t0 = performance.now();
      const slow = post(small.url, { code: 'import time\ntime.sleep(1.5)\n', language: 'python' });
      await new Promise((r) => setTimeout(r, 100));
      const waiting = await post(small.url, { code: 'print(1)', language: 'python' });
      const ms = performance.now() - t0;
      assert.equal(waiting.status, 504);
      assert.match((waiting.json as { detail: string }).detail, /no execution slot within 300 ms \(1 running, 0 waiting/);
      assert.ok(ms < 1200, `answered after ${ms} ms, before the sleeper ended`);
      assert.equal((await slow).status, 200);
    } finally {
      await small.close();
    }
  });

  it('off loopback a token is required: without one the server refuses to start; with one, requests without it are refused', async () => {
    assert.throws(() => checkServerOptions({ host: '0.0.0.0', concurrency: 1, queueLimit: 1 }), /a token is required/);
    assert.throws(() => checkServerOptions({ host: '0.0.0.0', token: 'short', concurrency: 1, queueLimit: 1 }), /guessable/);
    const cli = runCli(['sandbox', 'serve', '--host', '0.0.0.0', '--port', '0'], tempDir());
    assert.equal(cli.code, 2);
    assert.match(cli.stderr, /--host 0\.0\.0\.0: binding off loopback .* a token is required\. Fix: add --token/);
    const open = await serve(pool, { host: '0.0.0.0', token: TOKEN });
    try {
      const url = `http://127.0.0.1:${open.port}/run_code`;
      const body = { code: 'print(2 + 2)', language: 'python' };
      assert.equal((await post(url, body)).status, 401);
      assert.equal((await post(url, body, { authorization: 'Bearer wrong-token-0123456789' })).status, 401);
      assert.equal((await post(url, body, { authorization: `Bearer ${TOKEN}` })).status, 200);
      const viaUrl = await post(`${url}?token=${TOKEN}`, body);
      assert.equal((viaUrl.json as RunCodeResponse).run_result!.stdout, '4\n');
    } finally {
      await open.close();
    }
  });
});

describe(`agent-rl sandbox serve under load (level ${level}, default slots and admission)`, () => {
  const slots = defaultSlots();
  const pool = new WarmPool(level, python, slots, 128);
  let server: RunningFusionServer;
  before(async () => {
    await pool.prestart(128); // as sandbox serve does before it prints its URL
    server = await startFusionServer({
      host: '127.0.0.1',
      port: 0,
      concurrency: slots,
      queueLimit: 1024,
      executor: pool,
      maxRunTimeoutS: 30,
      defaultMemoryMB: 1024,
      maxMemoryMB: 4096,
      outputCapBytes: 64 * 1024,
    });
  });
  after(async () => {
    await server.close();
    await pool.close();
  });

  it('100 programs sleeping past a 5 s timeout, sent at once: all TimeLimitExceeded within 10 s; a trivial one sent behind them answers within its own timeout', async () => {
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    const t0 = performance.now();
    const sleepers = Array.from({ length: 100 }, () =>
      timedPost(server.url, { code: 'import time\ntime.sleep(30)\n', language: 'python', run_timeout: 5 }, agent, t0),
    );
    await new Promise((r) => setTimeout(r, 200));
    const trivial = await timedPost(server.url, { code: 'print(6 * 7)', language: 'python', run_timeout: 5 }, agent, performance.now());
    const answers = await Promise.all(sleepers);
    assert.deepEqual(
      [...new Set(answers.map((a) => `${a.status} ${a.body.run_result?.status}`))],
      ['200 TimeLimitExceeded'],
      JSON.stringify(answers.find((a) => a.status !== 200 || a.body.run_result?.status !== 'TimeLimitExceeded')),
    );
    const slowest = Math.max(...answers.map((a) => a.ms));
    assert.ok(slowest < 10_000, `the last sleeper answered after ${slowest} ms`);
    assert.deepEqual([trivial.status, trivial.body.status, trivial.body.run_result?.stdout], [200, 'Success', '42\n']);
    assert.ok(trivial.ms < 5000, `the trivial request answered after ${trivial.ms} ms`);
    assert.ok(server.admission.maxRunning >= 100, `${server.admission.maxRunning} ran at once`);
    agent.destroy();
  });
});

async function timedPost(url: string, body: unknown, agent: http.Agent, t0: number): Promise<{ status: number; body: RunCodeResponse; ms: number }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as RunCodeResponse, ms: performance.now() - t0 }),
        );
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}
