// `agent-rl sandbox serve` beyond Python: C++, Java, Node.js and Bash through SandboxFusion's /run_code,
// each compiled (where it compiles) and run in the sandbox at the machine's level, answered in
// SandboxFusion's shapes, and judged by verl's own client (its sandbox_fusion/utils.py, vendored
// unchanged in test/fixtures/verl) the way verl's reward judges them: True, False, −2 runtime error,
// −3 timeout, −4 compile error, −1 only when the API failed.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunCodeResponse } from '../../src/rl/sandbox/fusion/fusionProtocol';
import { startFusionServer, type RunningFusionServer } from '../../src/rl/sandbox/fusion/fusionServer';
import { detectLanguages, installationOf, javaMainClass } from '../../src/rl/sandbox/fusion/languages';
import { chooseLevel, detectIsolation, resolvePython, type IsolationLevel } from '../../src/rl/sandbox/isolation';
import { WarmPool } from '../../src/rl/sandbox/warmPool';
import { ROOT } from '../helpers/cli';

const python = resolvePython();
const level = chooseLevel('auto', python);
// every level this machine has runs every language (strict: bubblewrap; landlock: the launcher confines the compiler and the program)
const levels = detectIsolation(python)
  .filter((l) => l.available)
  .map((l) => l.level);
const found = detectLanguages();
const missing = (language: string): string | false => {
  const t = found.find((x) => x.language === language);
  return t?.available ? false : `${language}: ${t?.detail ?? 'no runner'}`;
};

async function post(url: string, body: Record<string, unknown>): Promise<RunCodeResponse> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 200);
  return (await r.json()) as RunCodeResponse;
}

/** One program per language: echo stdin doubled, fail at run time, loop past the timeout, fail to compile. */
const PROGRAMS: Record<string, { ok: string; runtimeError: string; loop: string; compileError?: string }> = {
  cpp: {
    ok: '#include <iostream>\nint main(){long x; std::cin >> x; std::cout << 2 * x << std::endl; return 0;}\n',
    runtimeError: '#include <cstdio>\n#include <cstdlib>\nint main(){std::fprintf(stderr, "bad input\\n"); std::abort();}\n',
    loop: 'int main(){volatile long i = 0; for(;;) i++;}\n',
    compileError: 'int main(){ return undefined_name; }\n',
  },
  java: {
    ok: 'import java.util.Scanner;\npublic class Solution { public static void main(String[] a){ long x = new Scanner(System.in).nextLong(); System.out.println(2 * x); } }\n',
    runtimeError: 'public class Main { public static void main(String[] a){ throw new IllegalStateException("bad input"); } }\n',
    loop: 'public class Main { public static void main(String[] a){ long i = 0; while (true) i++; } }\n',
    compileError: 'public class Main { public static void main(String[] a){ int x = "text"; } }\n',
  },
  nodejs: {
    ok: "const x = Number(require('fs').readFileSync(0, 'utf8')); console.log(2 * x);\n",
    runtimeError: "console.error('bad input'); process.exit(3);\n",
    loop: 'for (;;) {}\n',
  },
  bash: {
    ok: 'read x\necho $((2 * x))\n',
    runtimeError: 'echo "bad input" >&2\nexit 3\n',
    loop: 'while :; do :; done\n',
  },
};

function serveAt(lvl: IsolationLevel): { pool: WarmPool; server: () => RunningFusionServer } {
  const pool = new WarmPool(lvl, python, 2);
  let server: RunningFusionServer | undefined;
  before(async () => {
    server = await startFusionServer({
      host: '127.0.0.1',
      port: 0,
      concurrency: 4,
      queueLimit: 64,
      maxWaitMs: 30_000,
      executor: pool,
      maxRunTimeoutS: 30,
      defaultMemoryMB: 512,
      maxMemoryMB: 2048,
      outputCapBytes: 64 * 1024,
    });
  });
  after(async () => {
    await server?.close();
    await pool.close();
  });
  return { pool, server: () => server! };
}

for (const lvl of levels) {
  describe(`agent-rl sandbox serve: C++, Java, Node.js, Bash at level ${lvl}`, () => {
    const { server } = serveAt(lvl);
    it(
      "one request cannot read another's work folder while both run (own uid, a 0700 folder in a 0711 one of ours)",
      { skip: missing('bash') || (process.getuid?.() !== 0 ? 'needs root: without it every execution has the same uid' : false) },
      async () => {
        const secret = `s3cret-${process.pid}`;
        const holder = post(server().url, {
          code: 'sleep 3\n',
          language: 'bash',
          files: { 'data/secret.txt': Buffer.from(secret).toString('base64') },
          run_timeout: 10,
        });
        await new Promise((r) => setTimeout(r, 700));
        const spy = await post(server().url, {
          code: 'ls -R /tmp/agent-rl-lang-* 2>&1\ngrep -rs . /tmp/agent-rl-lang-* 2>&1\necho done\n',
          language: 'bash',
          run_timeout: 10,
        });
        assert.match(spy.run_result!.stdout!, /done\n$/);
        assert.doesNotMatch(spy.run_result!.stdout!, new RegExp(secret));
        assert.match(spy.run_result!.stdout!, /Permission denied|No such file/);
        assert.equal((await holder).status, 'Success');
      },
    );

    for (const [language, p] of Object.entries(PROGRAMS)) {
      it(
        `${language}: runs with stdin, reports stderr and exit codes, times out${p.compileError ? ', and a compile error is a compile error' : ''}`,
        { skip: missing(language) },
        async () => {
          await checkLanguage(server().url, language, p);
        },
      );
    }
  });
}

async function checkLanguage(url: string, language: string, p: (typeof PROGRAMS)[string]): Promise<void> {
  const ok = await post(url, { code: p.ok, language, stdin: '21\n', run_timeout: 10, compile_timeout: 20 });
  assert.equal(ok.status, 'Success', JSON.stringify(ok));
  assert.deepEqual([ok.run_result!.status, ok.run_result!.return_code, ok.run_result!.stdout], ['Finished', 0, '42\n']);
  if (p.compileError) assert.deepEqual([ok.compile_result!.status, ok.compile_result!.return_code], ['Finished', 0]);
  else assert.equal(ok.compile_result, null);

  const bad = await post(url, { code: p.runtimeError, language, run_timeout: 10, compile_timeout: 20 });
  assert.deepEqual([bad.status, bad.run_result!.status], ['Failed', 'Finished'], JSON.stringify(bad));
  assert.notEqual(bad.run_result!.return_code, 0);
  assert.match(bad.run_result!.stderr!, /bad input/);

  const t0 = performance.now();
  const loop = await post(url, { code: p.loop, language, run_timeout: 1, compile_timeout: 20 });
  assert.deepEqual([loop.status, loop.run_result!.status, loop.run_result!.return_code], ['Failed', 'TimeLimitExceeded', null], JSON.stringify(loop));
  assert.ok(loop.run_result!.execution_time! >= 1 && loop.run_result!.execution_time! < 3, `${loop.run_result!.execution_time} s`);
  assert.ok(performance.now() - t0 < 25_000);

  if (p.compileError) {
    const ce = await post(url, { code: p.compileError, language, run_timeout: 10, compile_timeout: 20 });
    assert.deepEqual([ce.status, ce.compile_result!.status, ce.run_result], ['Failed', 'Finished', null], JSON.stringify(ce));
    assert.notEqual(ce.compile_result!.return_code, 0);
    assert.match(ce.compile_result!.stderr!, /error/);
  }
}

describe(`agent-rl sandbox serve: what verl's client sees (level ${level})`, () => {
  const { server: current } = serveAt(level);
  let server: RunningFusionServer;
  before(() => {
    server = current();
  });

  it('a toolchain is shown to the code only from an installation folder: never /, a home folder or what holds one', () => {
    assert.equal(installationOf('/opt/node-22/bin/node', '/home/ann'), '/opt/node-22');
    assert.equal(installationOf('/opt/homebrew/Cellar/go/1.23/bin/go', '/Users/ann'), '/opt/homebrew/Cellar/go/1.23');
    assert.equal(installationOf('/home/ann/.cargo/bin/rustc', '/home/ann'), undefined, '~/.cargo holds credentials');
    assert.equal(installationOf('/root/.local/bin/node', '/root'), undefined);
    assert.equal(installationOf('/bin/node', '/home/ann'), undefined, 'the folder above is /');
    assert.equal(installationOf('/opt/node', '/home/ann'), undefined, 'not in a bin/ folder');
    assert.equal(installationOf('/srv/bin/x', '/srv/users/ann'), undefined, 'it holds the home folder');
  });

  it('Java files are named after the public class, as javac demands', () => {
    assert.equal(javaMainClass('import x;\npublic final class Solution_2 {'), 'Solution_2');
    assert.equal(javaMainClass('class Helper {}\nclass Main {}'), 'Main');
  });

  it("the compile step has its own time limit: compile_timeout passed is a compile TimeLimitExceeded (verl's −4)", { skip: missing('cpp') }, async () => {
    const r = await post(server.url, { code: PROGRAMS.cpp!.ok, language: 'cpp', compile_timeout: 0.05, run_timeout: 5 });
    assert.deepEqual([r.status, r.compile_result!.status, r.run_result], ['Failed', 'TimeLimitExceeded', null], JSON.stringify(r));
  });

  it("verl's own client judges every outcome as SandboxFusion's would (True, False, −2, −3, −4)", { skip: missing('cpp') || missing('bash') }, async () => {
    const script = `
import json, sys
sys.path.insert(0, sys.argv[1])
from sandbox_fusion_utils import check_correctness
url, cases = sys.argv[2], json.loads(sys.argv[3])
out = []
for language, code, inputs, outputs, timeout in cases:
    results, _ = check_correctness(url, {"inputs": inputs, "outputs": outputs}, code, timeout=timeout, language=language)
    out.append(results)
print(json.dumps(out))
`;
    const cases = [
      ['cpp', PROGRAMS.cpp!.ok, ['1\n', '5\n'], ['2', '11']],
      ['cpp', PROGRAMS.cpp!.runtimeError, ['1\n'], ['2']],
      ['cpp', PROGRAMS.cpp!.loop, ['1\n'], ['2']],
      ['cpp', PROGRAMS.cpp!.compileError, ['1\n'], ['2']],
      ['bash', PROGRAMS.bash!.ok, ['3\n'], ['6']],
      ['python', 'print(2 * int(input()))', ['4\n'], ['8']],
    ].map((c) => [...c, c[1] === PROGRAMS.cpp!.loop ? 1 : 10]);
    // asynchronously: the server answers from this process
    const r = await promisify(execFile)('/usr/bin/python3', ['-c', script, path.join(ROOT, 'test/fixtures/verl'), server.url, JSON.stringify(cases)], {
      encoding: 'utf8',
      timeout: 120_000,
    });
    assert.deepEqual(JSON.parse(r.stdout), [[true, false], [-2], [-3], [-4], [true], [true]], r.stderr);
  });
});
