// The distillation teacher (rl/policies/teacher.ts): refused, naming both folders, when its token ids
// would mean other text than the student's; loaded through createPolicy's path, it scores the student's
// token ids exactly as the learner's reference pass scores the same weights (token in, token out).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { checkSameTokenizer, createTeacher, tokenizerIdentity } from '../../../../src/rl/policies/teacher';
import { policyRunInfo } from '../../../../src/rl/train/trainingRun';
import { policyLogprobs } from '../../../../src/rl/train/passes';
import { validateRunConfig } from '../../../../src/shared/runConfig';
import type { Trajectory } from '../../../../src/shared/types';
import { HfTokenizer } from '../../../../src/rl/policies/lm/tokenizer';
import { calculatorEnv, disposeOpened } from '../../../helpers/environments';
import { characterTokenizerDir, freshModel, freshPolicy } from '../../../helpers/freshPolicy';

const tmp = (): string => fs.mkdtempSync(path.join(os.tmpdir(), 'agent-rl-teacher-'));

describe('the teacher’s tokenizer must be the student’s', () => {
  it('the identity ignores key order and what only encodes (the normaliser); it sees the vocabulary', () => {
    const [a, b, c] = [tmp(), tmp(), tmp()];
    fs.writeFileSync(path.join(a, 'tokenizer.json'), JSON.stringify({ model: { type: 'BPE', vocab: { x: 0, y: 1 }, merges: [] }, added_tokens: [] }));
    fs.writeFileSync(
      path.join(b, 'tokenizer.json'),
      JSON.stringify({ normalizer: { type: 'NFC' }, added_tokens: [], model: { merges: [], vocab: { y: 1, x: 0 }, type: 'BPE' } }),
    );
    // the same strings with their ids swapped: id 0 would decode to other text
    fs.writeFileSync(path.join(c, 'tokenizer.json'), JSON.stringify({ model: { type: 'BPE', vocab: { x: 1, y: 0 }, merges: [] }, added_tokens: [] }));
    assert.equal(tokenizerIdentity(a), tokenizerIdentity(b));
    assert.notEqual(tokenizerIdentity(a), tokenizerIdentity(c));
    assert.doesNotThrow(() => checkSameTokenizer(a, b));
    const e = (() => {
      try {
        checkSameTokenizer(a, c);
      } catch (err) {
        return (err as Error).message;
      }
      return assert.fail('expected a refusal');
    })();
    // both folders named, the reason and the fix
    assert.ok(e.includes(`policyOptions.teacher: ${c} has another tokenizer than the policy's model ${a}`), e);
    assert.match(e, /same token ids would mean other text.*Fix: a teacher of the same family and tokenizer/);
  });

  it('createTeacher refuses a fresh model with another character set before reading a weight', async () => {
    const student = freshModel({ tokenizer: characterTokenizerDir(['Q', 'a', 'b']), seed: 1 });
    const teacher = freshModel({ tokenizer: characterTokenizerDir(['Q', 'a', 'c']), seed: 1 });
    const config = validateRunConfig({
      env: 'calculator',
      policy: 'transformer',
      method: 'distill',
      policyOptions: { model: student, teacher, loraRank: 0, backend: 'wasm', threads: 2 },
    });
    if (config.policy !== 'transformer') return assert.fail('a transformer config');
    await assert.rejects(createTeacher(config.policyOptions, policyRunInfo(config)), /has another tokenizer than the policy's model/);
  });
});

describe('the teacher scores the student’s token ids as the reference pass does', () => {
  after(disposeOpened);
  const letterDir = characterTokenizerDir(['Q', 'a', 'b']);
  const letters = HfTokenizer.fromDirectory(letterDir);
  const traj = (ids: number[]): Trajectory => ({
    taskId: 'q',
    group: 0,
    indexInGroup: 0,
    termination: 'finished',
    policyVersion: 0,
    advantage: 0,
    outcome: { reward: 0, success: false, publicPass: true, privatePass: false },
    turns: [
      {
        index: 0,
        actionText: letters.decode(ids),
        action: { kind: 'tool', name: 'say', args: {} },
        observation: { text: 'Q', data: {} },
        policy: { behaviourLogprob: 0, policyVersion: 0, tokens: { context: letters.encode('Q'), sampled: ids, logprobs: ids.map(() => -1) } },
      },
    ],
  });

  it('a teacher that is the student’s own folder gives the reference log-probs exactly; another seed gives others', async () => {
    const model = freshModel({ maxPositions: 16, tokenizer: letterDir, seed: 5 });
    const other = freshModel({ maxPositions: 16, tokenizer: letterDir, seed: 6, hidden: 32 });
    const policy = await freshPolicy(calculatorEnv(), model, { policyOptions: { maxNewTokens: 4 } });
    const [a, b] = [letters.encode('a')[0]!, letters.encode('b')[0]!];
    const seqs = [policy.sequence(traj([a, b, a]))!, policy.sequence(traj([b]))!];
    const reference = await policyLogprobs(policy, seqs, { model: 'reference', temperature: 1, rows: false });
    for (const [dir, same] of [
      [model, true],
      [other, false],
    ] as const) {
      const config = validateRunConfig({
        env: 'calculator',
        policy: 'transformer',
        method: 'distill',
        policyOptions: { model, teacher: dir, loraRank: 0, backend: 'wasm', threads: 2 },
      });
      if (config.policy !== 'transformer') return assert.fail('a transformer config');
      const teacher = await createTeacher(config.policyOptions, policyRunInfo(config));
      try {
        assert.match(teacher.describe, /frozen teacher/);
        const scored = await teacher.score(seqs, 1);
        assert.deepEqual(
          scored.map((s) => s.length),
          seqs.map((s) => s.targets.length),
        );
        if (same) assert.deepEqual(scored, reference.logp);
        else assert.ok(scored.some((s, i) => s.some((v, t) => Math.abs(v - reference.logp[i]![t]!) > 1e-3)));
        assert.ok(scored.every((s) => s.every((v) => Number.isFinite(v) && v <= 0)));
      } finally {
        await teacher.dispose();
      }
    }
    await policy.dispose();
  });
});
