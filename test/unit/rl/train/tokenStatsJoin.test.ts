// An agent program's trajectory trains as several segments: their per-token numbers join into one
// TokenStats whose columns follow the trajectory's trained tokens in order — a distillation teacher's
// two columns with them, and a column only where every segment has it (a part-column would misplace
// the numbers on the tokens).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { joinTokenStats } from '../../../../src/rl/train/tokenStatsJoin';
import type { TokenStats } from '../../../../src/shared/types';

const f = (xs: number[]): Float32Array => Float32Array.from(xs);
const segment = (base: number, n: number, o: Partial<TokenStats> = {}): TokenStats => ({
  stepsBefore: base,
  old: 'behaviour',
  lag: 0,
  logp: f(Array.from({ length: n }, (_, i) => -(base + i))),
  ratio: f(new Array<number>(n).fill(1)),
  clipSide: new Uint8Array(n),
  entropy: f(new Array<number>(n).fill(0.5)),
  ...o,
});

describe('joinTokenStats', () => {
  it("joins the segments' columns in order, the teacher's included", () => {
    const a = segment(1, 2, { teacher: f([-1, -2]), reverseKl: f([0.5, -0.5]) });
    const b = segment(3, 3, { teacher: f([-3, -4, -5]), reverseKl: f([1, 0, -1]) });
    const j = joinTokenStats([a, b]);
    assert.deepEqual(Array.from(j.logp), [-1, -2, -3, -4, -5]);
    assert.deepEqual(Array.from(j.teacher!), [-1, -2, -3, -4, -5]);
    assert.deepEqual(Array.from(j.reverseKl!), [0.5, -0.5, 1, 0, -1]);
    assert.equal(j.stepsBefore, 3, 'the latest first pass of its segments');
  });

  it("leaves the teacher's columns out when a segment has none", () => {
    const j = joinTokenStats([segment(1, 2, { teacher: f([-1, -2]), reverseKl: f([0, 0]) }), segment(3, 1)]);
    assert.equal(j.logp.length, 3);
    assert.equal(j.teacher, undefined);
    assert.equal(j.reverseKl, undefined);
  });
});
