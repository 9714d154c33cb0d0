// The exported verl reward: its settings are data in agent_rl_reward.json, and the verifier program it
// sends to the sandbox is the code environment's, written the same way.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { CALCULATOR_SOURCE, CODE_SOURCE, WORKSPACE_SOURCE } from '../../../../src/exporters/verl/verlTasks';
import { REWARD_CONFIG_FILE, REWARD_FILE, VERIFIER_FILE, verlRewardFiles } from '../../../../src/exporters/verl/verlReward';
import { verifierProgram } from '../../../../src/rl/envs/codeSandbox/codeEnv';
import { resolvePython } from '../../../../src/rl/sandbox/isolation';

function exported(sandboxUrl: string, formatWeight: number): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-reward-'));
  for (const [name, content] of verlRewardFiles(sandboxUrl, formatWeight)) fs.writeFileSync(path.join(dir, name), content);
  return dir;
}

function python(dir: string, script: string): string {
  const r = spawnSync(resolvePython(), ['-I', '-S', '-B', '-c', `import sys\nsys.path.insert(0, ${JSON.stringify(dir)})\n${script}`], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

/** `_VERIFY = "<JSON>"` then the verifier: the inputs, decoded, and the program after the data line. */
function parts(program: string): { inputs: unknown; rest: string } {
  const at = program.indexOf('\n');
  const head = program.slice(0, at);
  assert.match(head, /^_VERIFY = "/);
  return { inputs: JSON.parse(JSON.parse(head.slice('_VERIFY = '.length)) as string), rest: program.slice(at + 1) };
}

describe('the exported verl reward', () => {
  it('reads its settings from agent_rl_reward.json beside it, whatever characters they hold', () => {
    const url = 'http://sandbox.example:8080/run_code?token=a"b\'c\\d';
    const dir = exported(url, 0.25);
    assert.deepEqual(
      verlRewardFiles(url, 0.25).map(([name]) => name),
      [REWARD_FILE, REWARD_CONFIG_FILE, VERIFIER_FILE],
    );
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, REWARD_CONFIG_FILE), 'utf8')), {
      sandbox_url: url,
      format_weight: 0.25,
      data_sources: { calculator: CALCULATOR_SOURCE, code: CODE_SOURCE, workspace: WORKSPACE_SOURCE },
    });
    const out = python(
      dir,
      'import json, agent_rl_reward as r\nprint(json.dumps([r.SANDBOX_URL, r.FORMAT_WEIGHT, r.compute_score("agent-rl/calculator", "\\\\boxed{7}", "7")]))',
    );
    assert.deepEqual(JSON.parse(out), [url, 0.25, { score: 1.25, acc: true, pred: '7', public_pass: true, private_pass: true }]);
  });

  it('sends the sandbox the verifier program the code environment runs, its inputs as data', () => {
    const dir = exported('http://127.0.0.1:8080/run_code', 0);
    const code = 'def f(x):\n    return "é \\u2028 \\"@@CODE@@\\""\n';
    const calls = ['1', '"two"'];
    const out = python(
      dir,
      [
        'import json, types, agent_rl_reward as r',
        'r.uuid.uuid4 = lambda: types.SimpleNamespace(hex="0123")',
        'sent = []',
        'r.run_code = lambda program, timeout=10: sent.append(program) or {"run_result": {"stdout": ""}}',
        `print(json.dumps([r.verdict(${JSON.stringify(code)}, "f", ${JSON.stringify(calls)}), sent]))`,
      ].join('\n'),
    );
    const [answer, sent] = JSON.parse(out) as [unknown, string[]];
    assert.deepEqual(answer, { error: 'no verdict' });
    assert.equal(sent.length, 1);
    const ours = parts(verifierProgram(code, 'f', calls, '@@verify-0123@@'));
    const theirs = parts(sent[0]!);
    assert.deepEqual(theirs.inputs, { code, fn: 'f', calls, nonce: '@@verify-0123@@' });
    assert.deepEqual(theirs, ours);
  });
});
