import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { episodeStats, isEnvironmentStep, meanStats } from '../../../src/shared/episodeStats';

const call = (text: string, obs: string, data: Record<string, unknown> = {}) => ({
  actionText: text,
  action: { kind: 'tool', name: 'call', args: {} },
  observationText: obs,
  observation: data,
  sampledTokens: text.length,
});

describe('episodeStats (seed 001 acceptance metrics)', () => {
  it('counts format errors, refused calls, repeated actions with the same observation, and tool time', () => {
    const s = episodeStats([
      call('<call>add(3,4)</call>', '<obs>7</obs>'),
      call('<call>add(3,4)</call>', '<obs>7</obs>'), // the same action, the same answer: a loop
      { actionText: 'hmm', action: { kind: 'format_error', message: 'x' }, observationText: '<obs>error</obs>', observation: { error: 'format' } },
      call('<call>pow(2,3)</call>', '<obs>error: unknown op</obs>', { error: 'unknown_op' }),
      { actionText: '<answer>\\boxed{7}</answer>', action: { kind: 'tool', name: 'answer', args: {} }, observationText: 'answered', observation: {} },
    ]);
    assert.deepEqual([s.turns, s.toolCalls, s.formatErrors, s.badToolCalls, s.repeatedActions], [5, 3, 1, 1, 1]);
  });

  it("classifies what the sandbox blocked from the run's own record and its stderr", () => {
    const run = (data: Record<string, unknown>) => ({
      actionText: '```python\nx\n```',
      action: { kind: 'tool', name: 'execute_code', args: {} },
      observationText: 'x',
      observation: { exitCode: 1, durationMs: 120, ...data },
    });
    const s = episodeStats([
      run({ timedOut: true }),
      run({ outputCapped: true }),
      run({ stderr: 'OSError: [Errno 101] Network is unreachable' }),
      run({ stderr: "OSError: [Errno 30] Read-only file system: '/etc/x'" }),
      run({ stderr: 'BlockingIOError: [Errno 11] Resource temporarily unavailable' }),
      run({ stderr: 'MemoryError' }),
    ]);
    assert.deepEqual(s.blocked, { timeout: 1, outputCap: 1, network: 1, filesystem: 1, processes: 1, memory: 1 });
    assert.equal(s.toolMs, 720);
    assert.equal(meanStats([s, episodeStats([])]).blockedActions, 3);
    // the landlock level's seccomp filter refuses IP sockets, and Landlock answers EACCES
    const landlock = episodeStats([
      run({ stderr: 'OSError: [Errno 97] Address family not supported by protocol' }),
      run({ stderr: "PermissionError: [Errno 13] Permission denied: '/home/user/.ssh/id_ed25519'" }),
    ]);
    assert.deepEqual(landlock.blocked, { timeout: 0, outputCap: 0, network: 1, filesystem: 1, processes: 0, memory: 0 });
  });

  it('stored observations are untrusted: fields of the wrong type count nothing', () => {
    const s = episodeStats([
      { actionText: 'a', action: 'not an object', observationText: 'o', observation: { durationMs: '1e9', timedOut: 'yes', stderr: 42, error: 7 } },
    ]);
    assert.deepEqual([s.toolMs, s.blocked.timeout, s.badToolCalls, s.toolCalls], [0, 0, 0, 0]);
  });
  it("an OpenEnv episode's turns are its server's steps, not tool calls: counted as environment steps", () => {
    // as openenvEnv.ts stores a step: the action's field name as the tool's, the server's answer as the data
    const step = (text: string, reward: number | null, done: boolean) => ({
      actionText: text,
      action: { kind: 'tool', name: 'message', args: { message: text } },
      observationText: done ? 'Right.' : 'No.',
      observation: { observation: { text: done ? 'Right.' : 'No.' }, reward, done },
    });
    const s = episodeStats([step('pear', 0, false), step('apple', 1, true)]);
    assert.deepEqual([s.turns, s.envSteps, s.toolCalls, s.badToolCalls], [2, 2, 0, 0]);
    assert.ok(isEnvironmentStep({ observation: { clipped: '70000 characters' }, reward: null, done: false }), 'a clipped observation, no reward');
    // another environment's data is not a step answer: a key of its own, done not a boolean, no observation
    for (const other of [
      { observation: {}, reward: 0, done: false, tool: 'search' },
      { observation: {}, reward: 0, done: 'yes' },
      { reward: 0, done: true },
      { exitCode: 0, durationMs: 3 },
    ])
      assert.equal(isEnvironmentStep(other), false, JSON.stringify(other));
    const calls = episodeStats([call('<call>add(3,4)</call>', '<obs>7</obs>', { tool: 'add', done: false })]);
    assert.deepEqual([calls.toolCalls, calls.envSteps], [1, 0]);
  });
  it('a step stored with the marker (step: "env") counts as an environment step whatever else its data holds; one without keeps the shape check', () => {
    assert.ok(isEnvironmentStep({ step: 'env', observation: { text: 'No.' }, reward: 0, done: false }));
    assert.ok(isEnvironmentStep({ step: 'env', observation: {}, reward: null, done: true, extra: 1 }));
    assert.equal(isEnvironmentStep({ step: 'tool', observation: {}, reward: 0, done: false }), false, 'another marker is not the shape either');
    assert.ok(isEnvironmentStep({ observation: {}, reward: 0, done: false }), 'a turn stored before the marker');
  });
});
