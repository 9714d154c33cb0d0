// Start Run's steps for a Hugging Face model on an environment (src/host/commands/startRunSteps.ts):
// the module name and arguments and an OpenEnv server's URL as typed, the config the environment × method choices make (validated
// here by the run config's own validator, so a choice the wizard offers is one a run accepts), the
// verifiers interpreter from the machine setting, and the messages of a refused teacher or interpreter.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ENVIRONMENT_CHOICES,
  FIRST_AGENT_RUN,
  METHOD_CHOICES,
  moduleNameProblem,
  modelRunConfig,
  openenvUrlProblem,
  parseEnvArgs,
  teacherRefusedMessage,
  verifiersMissingMessage,
  withVerifiersPython,
} from '../../../src/host/commands/startRunSteps';
import { validateRunConfig } from '../../../src/shared/runConfig';

const VERIFIERS = { module: 'vf_echo', args: { num_train: 4 }, root: '/work/space' };

describe('Start Run: a Hugging Face model on an environment', () => {
  it('takes a dotted module name and refuses a file name, a path or nothing, saying what to type', () => {
    for (const ok of ['vf_echo', 'pkg.vf_echo', '_private', ' vf_echo ']) assert.equal(moduleNameProblem(ok), undefined, ok);
    assert.match(moduleNameProblem('') ?? '', /^Name the Python module that defines load_environment/);
    assert.match(moduleNameProblem('vf_echo.py') ?? '', /Leave out \.py: the module of vf_echo\.py is vf_echo/);
    for (const bad of ['envs/vf_echo', '1env', 'vf-echo', 'pkg..mod', 'mod;rm']) assert.match(moduleNameProblem(bad) ?? '', /^A Python module name/, bad);
  });

  it("reads load_environment's arguments as a JSON object; empty is {}; anything else says why", () => {
    assert.deepEqual(parseEnvArgs('{"num_train": 4, "tags": ["a"]}'), { args: { num_train: 4, tags: ['a'] } });
    assert.deepEqual(parseEnvArgs('  '), { args: {} });
    const problem = (t: string): string => {
      const r = parseEnvArgs(t);
      return 'problem' in r ? r.problem : '';
    };
    assert.match(problem('{num_train: 4}'), /^Not valid JSON \(.+\): e\.g\. \{"num_train_examples": 200\}/);
    for (const notObject of ['[1, 2]', '4', 'null', '"x"'])
      assert.match(problem(notObject), /^load_environment takes keyword arguments: a JSON object/, notObject);
  });

  it("takes an OpenEnv server's http(s) URL and refuses nothing, a bare host or another scheme, saying what to type", () => {
    for (const ok of ['http://127.0.0.1:8000', ' https://user-space.hf.space ', 'http://localhost:8000/']) assert.equal(openenvUrlProblem(ok), undefined, ok);
    assert.match(openenvUrlProblem('  ') ?? '', /^Type the address of your running OpenEnv server, e\.g\. http:\/\/127\.0\.0\.1:8000/);
    assert.match(openenvUrlProblem('127.0.0.1 8000') ?? '', /^Not a URL: the server's address with its scheme/);
    assert.match(openenvUrlProblem('ws://127.0.0.1:8000/ws') ?? '', /^ws: is not http: or https:/);
    assert.match(openenvUrlProblem('file:///tmp/x') ?? '', /^file: is not http: or https:/);
  });

  it('every environment × method the steps offer makes a config the validator accepts, with the choices in it', () => {
    for (const { value: env } of ENVIRONMENT_CHOICES)
      for (const { value: method } of METHOD_CHOICES) {
        const raw = modelRunConfig({
          env,
          model: '/models/student',
          method,
          ...(method === 'distill' ? { teacher: '/models/teacher' } : {}),
          ...(env === 'verifiers' ? { verifiers: VERIFIERS } : {}),
          ...(env === 'openenv' ? { openenv: { url: 'http://127.0.0.1:8000' } } : {}),
          ...(env === 'reasoning-gym' ? { reasoningGym: { dataset: 'basic_arithmetic', heldOut: 'harder' as const, root: '/work/space' } } : {}),
        });
        const c = validateRunConfig(raw);
        assert.equal(c.env, env === 'reasoning-gym' ? 'workspace' : env);
        assert.equal(c.method, method);
        assert.equal(c.iterations, FIRST_AGENT_RUN.iterations);
        assert.equal(c.groupSize, FIRST_AGENT_RUN.groupSize);
        assert.ok(c.policy === 'transformer');
        if (c.policy !== 'transformer') continue;
        assert.equal(c.policyOptions.model, '/models/student');
        assert.equal(c.policyOptions.teacher, method === 'distill' ? '/models/teacher' : '');
        if (c.env === 'verifiers') {
          assert.equal(c.envOptions.module, 'vf_echo');
          assert.deepEqual(c.envOptions.args, { num_train: 4 });
          assert.equal(c.envOptions.root, '/work/space');
          assert.equal(c.envOptions.python, '', 'no interpreter in the config: the machine setting fills it in');
        }
        if (c.env === 'openenv') {
          assert.equal(c.envOptions.url, 'http://127.0.0.1:8000');
          assert.deepEqual(c.envOptions.command, [], 'a server at a URL: nothing is started (and nothing asked before the run)');
        }
        if (c.env === 'workspace') {
          assert.equal(c.envOptions.taskSet, 'reasoning-gym:basic_arithmetic');
          assert.equal(c.envOptions.tasks, '', 'no task files: the generated set');
        }
        assert.equal(c.reward.judge, undefined, 'no judge unless one is chosen');
      }
  });

  it('a teacher is named only for distillation', () => {
    const raw = modelRunConfig({ env: 'calculator', model: '/m', method: 'grpo', teacher: '/t' });
    assert.deepEqual(raw.policyOptions, { model: '/m' });
  });

  it("fills a verifiers config's interpreter from agentRl.verifiersPythonPath, keeps a config's own, and leaves other environments alone", () => {
    const config = modelRunConfig({ env: 'verifiers', model: '/m', method: 'grpo', verifiers: VERIFIERS });
    assert.equal((withVerifiersPython(config, '/venv/bin/python').envOptions as Record<string, unknown>).python, '/venv/bin/python');
    assert.equal(withVerifiersPython(config, ''), config, 'no setting: the machine default ($AGENT_RL_VERIFIERS_PYTHON, the cached venv)');
    const own = { ...config, envOptions: { ...(config.envOptions as object), python: '/their/python' } };
    assert.equal((withVerifiersPython(own, '/venv/bin/python').envOptions as Record<string, unknown>).python, '/their/python');
    const calc = modelRunConfig({ env: 'calculator', model: '/m', method: 'grpo' });
    assert.equal(withVerifiersPython(calc, '/venv/bin/python'), calc);
  });

  it('says why a run was not started: the teacher’s own message, the interpreter and the fix', () => {
    assert.equal(
      teacherRefusedMessage('policyOptions.teacher: /t has another tokenizer'),
      'Agent RL: the run was not started: policyOptions.teacher: /t has another tokenizer',
    );
    const missing = verifiersMissingMessage("this Python (/usr/bin/python3) cannot import verifiers (ModuleNotFoundError: No module named 'verifiers')", '');
    assert.match(missing, /this Python \(\/usr\/bin\/python3\) cannot import verifiers/);
    assert.match(missing, /no agentRl\.verifiersPythonPath, so \$AGENT_RL_VERIFIERS_PYTHON, else the cached venv/);
    assert.match(
      missing,
      /Fix: install verifiers there \(pip install verifiers==0\.3\.1 for a load_environment module, verifiers==0\.4\.0 for a verifiers\.v1 taskset\), or set agentRl\.verifiersPythonPath/,
    );
    assert.match(verifiersMissingMessage('x', '/venv/bin/python'), /the interpreter from agentRl\.verifiersPythonPath\)/);
    // a path from a workspace config is untrusted text: no link or icon syntax reaches the notification
    assert.doesNotMatch(verifiersMissingMessage('[open](command:workbench.action.terminal.new) $(zap)', ''), /\]\(command:|(?<!\\)\$\(zap\)/);
  });
});
