// The calculator and code exports' own verl tools (agent_rl_tools.py: verl 0.9.1 ships no
// SandboxFusionTool, which those exports named before). The exported agent_rl_tools.yaml is loaded by
// verl's own tool loader and the calls run as verl 0.9.1's ToolAgentLoop._call_tool runs them
// (test/fixtures/verl/driveBuiltinTools.py: create, execute, release, the text cut past the export's
// max_tool_response_length), the code tool against a real `agent-rl sandbox serve` server on loopback;
// each observation must be the one the workbench's environment gives for the same action (the code
// environment's formatExecution of the same program on the same warm pool; the calculator environment's
// step). Twice: with verl 0.9.1 itself, in the peers venv (scripts/peersVenv.mjs; skipped, saying so,
// where it is absent), the calls made by its ToolAgentLoop._call_tool, and with the copy of verl's older
// tool registry in test/fixtures/verl/lib and of _call_tool in the driver (always).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { openCalculator } from '../../src/rl/envs/calculator/calculatorEnv';
import { formatExecution } from '../../src/rl/envs/codeSandbox/codeEnv';
import { startFusionServer, type RunningFusionServer } from '../../src/rl/sandbox/fusion/fusionServer';
import { chooseLevel, resolvePython } from '../../src/rl/sandbox/isolation';
import { limitsOf } from '../../src/rl/sandbox/limits';
import { WarmPool } from '../../src/rl/sandbox/warmPool';
import { validateRunConfig } from '../../src/shared/runConfig';
import { ROOT, runCli, tempDir } from '../helpers/cli';

const python = resolvePython();
const DRIVER = path.join(ROOT, 'test', 'fixtures', 'verl', 'driveBuiltinTools.py');
/** The peers venv scripts/peersVenv.mjs makes (its name carries the pinned versions). */
const VENV = path.join(process.env.AGENT_RL_VENVS || path.join(os.homedir(), '.cache', 'agent-rl-workbench', 'venvs'), 'peers-trl-1.16.0-verl-0.9.1');
const VERL_PYTHON = path.join(VENV, 'bin', 'python');
// made whole: the stamp is written after pip install succeeds, so a venv left by a killed install is absent here
const NO_VERL =
  !(fs.existsSync(VERL_PYTHON) && fs.existsSync(path.join(VENV, 'agent-rl-requirements.txt'))) &&
  `verl 0.9.1's venv is absent or unfinished (${VENV}): node scripts/peersVenv.mjs makes it, as npm run bench peers does`;

/** The code environment's limits in the export (small, so the tail, the cap and the timeout are reached quickly). */
const CODE_OPTIONS = { taskSet: 'formulas', timeoutMs: 1000, tailBytes: 256, outputCapBytes: 4096 };

/** The programs, as the model would send them to code_interpreter. */
const PROGRAMS = [
  'print(6 * 7)',
  'print("before")\n1 / 0',
  'def f(:\n    pass',
  // about 700 bytes: the observation keeps the last 256, and is longer than verl's default 256 characters
  'for i in range(200):\n    print(i)',
  // writes until the cap kills it (a program that ends right after one long write races the kill)
  'import sys\nwhile True:\n    sys.stdout.write("a" * 1000)',
  'import time\ntime.sleep(5)',
  'import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)',
];

/** The calculator calls: the tool's JSON arguments and the environment's text action for the same call. */
const CALCULATIONS: [Record<string, unknown>, string][] = [
  [{ op: 'add', a: 3, b: 4 }, 'add(3,4)'],
  [{ op: 'div', a: 7, b: -2 }, 'div(7,-2)'],
  [{ op: 'div', a: 5, b: 0 }, 'div(5,0)'],
  [{ op: 'pow', a: 2, b: 3 }, 'pow(2,3)'],
  [{ op: 'mul', a: 2, b: 'x' }, 'mul(2,x)'],
  [{ op: 'sub', a: '12', b: 30 }, 'sub(12,30)'],
  // Arabic-Indic three: a digit to Python's \d and int(), not to the environment's /^-?\d{1,15}$/
  [{ op: 'add', a: '\u0663', b: 4 }, 'add(\u0663,4)'],
];

// the two figures that differ by design: how long a killed program ran, and the output cap's count (the
// workbench shows the bytes it read, the server's answer only its cap)
const normal = (s: string): string => s.replace(/killed after \d+ ms/, 'killed after N ms').replace(/more than \d+ bytes/, 'more than N bytes');

interface Driven {
  verl: string;
  classes: string[];
  schemas: { function: { name: string } }[];
  responses: { text: string; reward: number; metrics: Record<string, unknown>; raised?: string }[];
}

function drive(interpreter: string, exportDir: string, mode: 'installed' | 'vendored', input: unknown, env: Record<string, string>): Promise<Driven> {
  return new Promise((resolve, reject) => {
    const args = [DRIVER, exportDir, ...(mode === 'vendored' ? ['vendored'] : [])];
    const child = spawn(interpreter, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], timeout: 300_000 });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => {
      // BaseTool's constructor prints each schema first: the answer is the last line
      const last = out.trim().split('\n').pop() ?? '';
      if (code === 0) resolve(JSON.parse(last) as Driven);
      else reject(new Error(`${interpreter} ${args.join(' ')} exited ${code}: ${err.slice(-2000)}`));
    });
    child.stdin.end(JSON.stringify(input));
  });
}

function exportConfig(config: Record<string, unknown>): string {
  const dir = tempDir('agent-rl-verl-tools-');
  fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify(config));
  const r = runCli(['export', 'verl', '--config', 'run.json', '--out', 'verl'], dir);
  assert.equal(r.code, 0, r.stderr);
  return path.join(dir, 'verl');
}

describe("the calculator and code exports' verl tools", { timeout: 900_000 }, () => {
  const pool = new WarmPool(chooseLevel('auto', python), python, 2);
  let server: RunningFusionServer;
  const code = exportConfig({ env: 'code', policy: 'transformer', method: 'grpo', envOptions: CODE_OPTIONS });
  const calc = exportConfig({ env: 'calculator', policy: 'transformer', method: 'grpo' });
  /** What the exported command line sets verl's cut of a tool response to. */
  const maxLength = Number(/multi_turn\.max_tool_response_length=(\d+)/.exec(fs.readFileSync(path.join(code, 'main_ppo.sh'), 'utf8'))?.[1]);
  let codeExpected: string[] = [];
  let calcExpected: string[] = [];

  before(async () => {
    server = await startFusionServer({
      host: '127.0.0.1',
      port: 0,
      concurrency: 2,
      queueLimit: 16,
      executor: pool,
      maxRunTimeoutS: 30,
      defaultMemoryMB: 512,
      maxMemoryMB: 1024,
      outputCapBytes: CODE_OPTIONS.outputCapBytes,
    });
    // the code environment's observation of each program, on the same pool
    const limits = limitsOf(CODE_OPTIONS);
    codeExpected = [];
    for (const p of PROGRAMS) codeExpected.push(formatExecution(await pool.execute(p, limits)));
    // the calculator environment's, without its <obs> tags (verl's chat template frames a tool's answer)
    const config = validateRunConfig({ env: 'calculator', policy: 'transformer', method: 'grpo' });
    if (config.env !== 'calculator') throw new Error('a calculator config');
    const env = openCalculator(config.envOptions);
    calcExpected = [];
    for (const [, action] of CALCULATIONS) {
      const e = env.create();
      const task = env.tasks().train[0]!;
      await e.reset(task);
      const step = await e.step(e.parseAction(`<call>${action}</call>`));
      calcExpected.push(step.observation.text.replace(/^<obs>([\s\S]*)<\/obs>$/, '$1'));
    }
  });
  after(async () => {
    await server.close();
    await pool.close();
  });

  it('the exported tool config names the workbench’s own classes, with the environment’s limits', () => {
    type Entry = { class_name: string; config: Record<string, unknown>; tool_schema: { function: { name: string } } };
    const [codeTool] = (parse(fs.readFileSync(path.join(code, 'agent_rl_tools.yaml'), 'utf8')) as { tools: Entry[] }).tools;
    const [calcTool] = (parse(fs.readFileSync(path.join(calc, 'agent_rl_tools.yaml'), 'utf8')) as { tools: Entry[] }).tools;
    assert.deepEqual(
      [codeTool!.class_name, codeTool!.tool_schema.function.name, calcTool!.class_name, calcTool!.tool_schema.function.name],
      ['agent_rl_tools.AgentRlCodeTool', 'code_interpreter', 'agent_rl_tools.AgentRlCalculatorTool', 'calculator'],
    );
    assert.deepEqual(codeTool!.config, {
      type: 'native',
      sandbox_url: 'http://127.0.0.1:8080/run_code',
      timeout_ms: CODE_OPTIONS.timeoutMs,
      memory_limit_mb: 512,
      tail_bytes: CODE_OPTIONS.tailBytes,
      num_workers: 32,
    });
    // verl imports the class by module name: the script puts the folder on the path
    assert.match(fs.readFileSync(path.join(code, 'main_ppo.sh'), 'utf8'), /^export PYTHONPATH='?.*verl'?\$\{PYTHONPATH:\+:\$PYTHONPATH\}$/m);
    // verl's default cut (256 characters) would take the middle out of an observation with two tails
    assert.ok(maxLength >= 2 * CODE_OPTIONS.tailBytes, `max_tool_response_length ${maxLength}`);
  });

  async function check(interpreter: string, mode: 'installed' | 'vendored'): Promise<string> {
    const env = { AGENT_RL_SANDBOX_URL: server.url };
    const codeCalls = [...PROGRAMS.map((p) => ({ code: p })), {}].map((args) => ({
      name: 'code_interpreter',
      arguments: JSON.stringify(args),
      create_kwargs: { ground_truth: '{}' },
    }));
    const got = await drive(interpreter, code, mode, { calls: codeCalls, max_tool_response_length: maxLength }, env);
    assert.deepEqual(got.classes, ['agent_rl_tools.AgentRlCodeTool']);
    assert.deepEqual(
      got.responses.slice(0, PROGRAMS.length).map((r) => normal(r.text)),
      codeExpected.map(normal),
    );
    // the cases the list reaches: a traceback, the tail cut, the cap, the timeout, a signal
    assert.match(codeExpected[1]!, /ZeroDivisionError/);
    assert.ok(codeExpected[3]!.length > 256 && !codeExpected[3]!.includes('[stdout]\n0\n'), 'the tail of 200 lines, longer than verl’s default cut');
    assert.match(codeExpected[4]!, /\[output cut\] more than \d+ bytes\n\[exit 9\]$/);
    assert.match(codeExpected[5]!, /\[timeout\] killed after \d+ ms\n\[exit 9\]$/);
    assert.match(codeExpected[6]!, /\[exit 11\]$/);
    assert.match(got.responses[4]!.text, new RegExp(`more than ${CODE_OPTIONS.outputCapBytes} bytes`));
    // a call without code: the environment always has text (a code block), the tool says what is missing
    assert.match(got.responses[PROGRAMS.length]!.text, /^format error: code_interpreter needs "code"/);
    const calcCalls = CALCULATIONS.map(([args]) => ({ name: 'calculator', arguments: JSON.stringify(args), create_kwargs: { ground_truth: '7' } }));
    const calcGot = await drive(interpreter, calc, mode, { calls: calcCalls, max_tool_response_length: 256 }, {});
    assert.deepEqual(calcGot.classes, ['agent_rl_tools.AgentRlCalculatorTool']);
    assert.deepEqual(
      calcGot.responses.map((r) => r.text),
      calcExpected,
    );
    assert.deepEqual(calcExpected.slice(0, 3), ['7', '-4', 'error: division by zero']);
    assert.match(calcExpected[6]!, /^error: invalid args \u0663,4; use two integers$/);
    return got.verl;
  }

  it('verl 0.9.1 loads them (load_all_tools) and their calls observe what the environments observe', { skip: NO_VERL }, async () => {
    assert.equal(await check(VERL_PYTHON, 'installed'), '0.9.1');
  });

  it("verl's older tool registry (vendored) loads them too, with the same observations", async () => {
    assert.equal(await check(python, 'vendored'), 'vendored b178a3cd');
  });
});
