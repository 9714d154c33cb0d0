// The judge gate (src/host/commands/judgeGate.ts) Start Run, Resume Run and Fork Run pass a config
// through (a config file's, or a run stored in a database the workspace may hold): no judge goes on;
// a judge in an untrusted workspace is refused; in a trusted one the modal names the address and the
// variable whose value would be sent.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { judgeGate, SEND_TO_JUDGE } from '../../../src/host/commands/judgeGate';
import { judgeTarget } from '../../../src/shared/judgeTarget';
import { validateRunConfig } from '../../../src/shared/runConfig';

const judge = { baseUrl: 'https://judge.example.net/v1', model: 'm', rubric: 'r', apiKeyEnv: 'AWS_SECRET_ACCESS_KEY' };

describe('the judge gate (Start Run, Resume Run, Fork Run)', () => {
  it('lets a config without reward.judge through, trusted or not, whatever else it holds', () => {
    for (const config of [{}, { reward: {} }, { reward: { judge: null } }, null, 'text', validateRunConfig({})])
      for (const trusted of [true, false]) assert.deepEqual(judgeGate(config, trusted, 'run 1 in the database', 'resume it again'), { kind: 'go' });
  });

  it('refuses a stored judge in an untrusted workspace, naming the run, the address, the variable and the fix', () => {
    // a stored run's config as the database gives it back (validated, defaults filled)
    const stored = JSON.parse(JSON.stringify(validateRunConfig({ reward: { judge } }))) as unknown;
    const gate = judgeGate(stored, false, 'run 7 in the database', 'resume it again');
    assert.equal(gate.kind, 'refuse');
    assert.match(
      gate.kind === 'refuse' ? gate.message : '',
      /^Agent RL: run 7 in the database sends trajectories and the key in "AWS_SECRET_ACCESS_KEY" to a judge at "https:\/\/judge\.example\.net\/v1", and this workspace is not trusted\. Fix: trust the workspace \(Manage Workspace Trust\), then resume it again\.$/,
    );
  });

  it('asks in a trusted workspace, naming the address and the variable (the default one when apiKeyEnv is left out)', () => {
    const gate = judgeGate({ reward: { judge } }, true, 'run 7 in the database (forked with your changes)', 'fork it again');
    assert.equal(gate.kind, 'ask');
    if (gate.kind !== 'ask') return;
    assert.equal(gate.button, SEND_TO_JUDGE);
    assert.equal(gate.question, `Send each group's trajectories and the key in "AWS_SECRET_ACCESS_KEY" to "https://judge.example.net/v1"?`);
    assert.match(gate.detail, /^run 7 in the database \(forked with your changes\) names this judge\./);
    const plain = judgeGate({ reward: { judge: { baseUrl: 'http://127.0.0.1:8080/v1' } } }, true, 'run.agentrl.json', 'start the run again');
    assert.match(plain.kind === 'ask' ? plain.question : '', /the key in "AGENT_RL_JUDGE_API_KEY" to "http:\/\/127\.0\.0\.1:8080\/v1"/);
  });

  it('shows a hostile address as quoted data, clipped, with its line breaks made visible', () => {
    const baseUrl = `http://evil.example/v1\n\nClick Send: this is safe.${'x'.repeat(2000)}`;
    const gate = judgeGate({ reward: { judge: { baseUrl } } }, true, 'run 1 in the database', 'resume it again');
    assert.ok(gate.kind === 'ask');
    assert.ok(!gate.question.includes('\n'), gate.question);
    assert.ok(gate.question.length < 500, `${gate.question.length}`);
  });

  it('judgeTarget: what decides whether a worker is handed the key', () => {
    assert.equal(judgeTarget({}), undefined);
    assert.equal(judgeTarget({ reward: { judge: 'x' } }), undefined);
    assert.deepEqual(judgeTarget({ reward: { judge: {} } }), { baseUrl: '', variable: 'AGENT_RL_JUDGE_API_KEY' });
    assert.deepEqual(judgeTarget({ reward: { judge } }), { baseUrl: judge.baseUrl, variable: judge.apiKeyEnv });
  });
});
