// An iteration's counts of sampled episodes that ran out of room or had a malformed action (issue 26,
// item 4: whether sampling degrades as training goes on).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statsOf, toolCallsOf } from '../../../../src/rl/train/evaluate';
import { iterationMetrics } from '../../../../src/rl/train/iterationMetrics';
import { EMPTY_UPDATE } from '../../../../src/rl/train/learner';
import type { TerminationReason, Trajectory } from '../../../../src/shared/types';

function episode(termination: TerminationReason, actions: readonly { kind: string; error?: string }[]): Trajectory {
  return {
    taskId: 't',
    group: 0,
    indexInGroup: 0,
    termination,
    advantage: 0,
    policyVersion: 0,
    outcome: { reward: 0, success: false, publicPass: false, privatePass: false, details: {} },
    turns: actions.map((a, i) => ({
      index: i,
      actionText: a.kind === 'format_error' ? '<cal' : '<call>add(1,2)</call>',
      action: a.kind === 'format_error' ? { kind: 'format_error' } : { kind: 'tool', name: 'add', args: [1, 2] },
      observation: { text: a.error ?? '3', data: a.error ? { error: a.error } : {} },
      behaviourLogprob: 0,
      policy: {},
    })),
  } as unknown as Trajectory;
}

describe('iteration metrics: degraded sampling', () => {
  it('counts episodes ended by the context or the turn cap, and episodes with at least one malformed action', () => {
    const trajectories = [
      episode('finished', [{ kind: 'tool' }, { kind: 'tool' }]),
      episode('context_exhausted', [{ kind: 'tool' }, { kind: 'format_error', error: 'format' }, { kind: 'format_error', error: 'format' }]),
      episode('turn_cap', [{ kind: 'tool' }]),
      episode('finished', [{ kind: 'format_error', error: 'format' }, { kind: 'tool' }]),
      episode('budget_exhausted', [{ kind: 'tool' }]),
    ];
    const m = iterationMetrics({
      iteration: 1,
      method: 'grpo',
      trajectories,
      report: EMPTY_UPDATE,
      zeroVarianceGroups: 0,
      resampledGroups: 0,
      timing: { generateMs: 0, envMs: 0 },
      pipeline: {},
      policyVersion: 0,
      wallMs: 0,
      storeMs: 0,
    });
    assert.equal(m.trajectories, 5);
    assert.equal(m.truncatedEpisodes, 2, 'context_exhausted and turn_cap; budget_exhausted is an ending the environment set');
    assert.equal(m.malformedEpisodes, 2, 'two malformed actions in one episode count it once');
    assert.equal(m.formatErrors, 3 / 5);
  });
});

describe('iteration metrics: tool calls', () => {
  it('counts the same tool calls as episodeStats: the final actions (answer, finish, submit) and environment steps are none', () => {
    const t = episode('finished', [{ kind: 'tool' }, { kind: 'tool' }, { kind: 'tool' }, { kind: 'tool' }, { kind: 'tool' }]);
    const names = ['add', 'submit', 'finish', 'answer', 'message'];
    t.turns.forEach((turn, i) => ((turn.action as { name: string }).name = names[i]!));
    (t.turns[4]!.observation as { data: unknown }).data = { step: 'env', observation: {}, reward: 0, done: true };
    assert.equal(toolCallsOf(t), 1);
    assert.equal(statsOf(t).toolCalls, 1);
  });
});
