import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { episodeStats, meanStats } from '../../../src/shared/episodeStats';

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
});
