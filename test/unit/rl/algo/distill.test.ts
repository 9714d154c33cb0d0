// On-policy distillation's per-token advantage (rl/algo/distill.ts) by hand on a small [B, T] with a
// mask, and its way through a padded batch into the clipped policy-gradient loss ([B, T] advantages
// where GRPO has [B, 1]): the loss and its gradient with respect to log π, hand-computed.
import * as tf from '@tensorflow/tfjs';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { teacherTerm } from '../../../../src/rl/algo/distill';
import { policyLoss } from '../../../../src/rl/algo/policyLosses';
import { padBatch, type TrainSequence } from '../../../../src/rl/algo/trainSequence';

before(async () => {
  await tf.setBackend('cpu');
});

const close = (a: number, b: number, tol = 1e-6): void => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);
const closeAll = (a: ArrayLike<number>, b: readonly number[], tol = 1e-6): void => {
  assert.equal(a.length, b.length);
  b.forEach((v, i) => close(a[i]!, v, tol));
};

describe('teacherTerm: A_t = base − w·(log π_student − log π_teacher) at the policy’s tokens', () => {
  it('one sequence: mask-0 positions get 0 and add nothing to the KL; no discount (each token its own term)', () => {
    // positions 0 and 3 are prompt/observation (mask 0); the teacher's numbers there must not matter
    const term = teacherTerm([-1, -2, -0.5, 0], [-3, -1, -1, -9], [0, 1, 1, 0], 2, 0.25);
    // t = 1: reverse KL −2 − (−1) = −1 → 0.25 − 2·(−1) = 2.25 (the teacher likes the token more: pushed up)
    // t = 2: reverse KL −0.5 − (−1) = 0.5 → 0.25 − 2·0.5 = −0.75 (the teacher likes it less: pushed down)
    assert.deepEqual(term.advantages, [0, 2.25, -0.75, 0]);
    close(term.reverseKlSum, -0.5);
    assert.equal(term.tokens, 2);
    // what is stored with the trajectory: the two trained positions only, in order
    assert.deepEqual(Array.from(term.teacher), [-1, -1]);
    assert.deepEqual(Array.from(term.reverseKl), [-1, 0.5]);
  });

  it('distillation (base 0, w 1): the advantage is the negated reverse KL, 0 where student and teacher agree', () => {
    const term = teacherTerm([Math.log(0.5), Math.log(0.25), Math.log(0.1)], [Math.log(0.5), Math.log(0.5), Math.log(0.05)], [1, 1, 1], 1, 0);
    closeAll(term.advantages, [0, Math.log(2), -Math.log(2)]);
    close(term.reverseKlSum, 0); // −log 2 + log 2
  });

  it('refuses arrays of other lengths, naming them', () => {
    assert.throws(() => teacherTerm([0, 0], [0], [1, 1], 1, 0), /behaviour \(2\), teacher \(1\) and mask \(2\)/);
  });
});

describe('per-token advantages [B, T] through a padded batch and the clip loss', () => {
  // B = 2 of lengths 3 and 2 (T = 3): sequence 1's third position is padding
  const seqs: TrainSequence[] = [
    { inputs: [1, 2, 3], targets: [2, 3, 4], mask: [1, 1, 0], behaviour: [-1, -2, 0], advantage: 0, tokenAdvantages: [2.25, -0.75, 9] },
    { inputs: [5, 6], targets: [6, 7], mask: [0, 1], behaviour: [0, -0.5], advantage: 0, tokenAdvantages: [7, 1] },
  ];

  it('padBatch lays them out [B·T], 0 at mask-0 positions and at padding; GRPO batches carry none', () => {
    const b = padBatch(seqs);
    assert.deepEqual([b.B, b.T], [2, 3]);
    assert.deepEqual(Array.from(b.tokenAdvantages!), [2.25, -0.75, 0, 0, 1, 0]);
    assert.equal(padBatch(seqs.map(({ tokenAdvantages: _, ...s }) => s)).tokenAdvantages, undefined);
    assert.throws(() => padBatch([{ ...seqs[1]!, tokenAdvantages: [1] }]), /tokenAdvantages \(1\)/);
  });

  it('at ratio 1 the token-mean loss is −mean A_t over trained tokens and ∂loss/∂log π_t = −A_t / tokens', () => {
    const b = padBatch(seqs);
    const mask = tf.tensor2d(b.mask, [2, 3]);
    const old = tf.tensor2d(b.behaviour, [2, 3]);
    const adv = tf.tensor2d(b.tokenAdvantages!, [2, 3]);
    const o = { clipLow: 0.2, clipHigh: 0.28, dualClip: 0, aggregation: 'token-mean' as const };
    const f = (lp: tf.Tensor): tf.Scalar => policyLoss('clip', lp as tf.Tensor2D, old, adv, mask, o).loss;
    // log π equal to π_old in value, but its own tensor (the gradient is taken with respect to it alone)
    const { value, grad } = tf.valueAndGrad(f)(old.clone());
    // three trained tokens with A = 2.25, −0.75, 1: −(2.25 − 0.75 + 1)/3
    close(value.dataSync()[0]!, -2.5 / 3);
    closeAll(grad.dataSync(), [-2.25 / 3, 0.75 / 3, 0, 0, -1 / 3, 0]);
  });
});
