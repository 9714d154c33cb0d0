// bench/scaleReport.ts and bench/q8Divergence.ts: the baseline of each workload is, per round, the
// fastest PyTorch side that ran it (int8 has no training pass, so it never sets the training baseline);
// a target is missed below 1× or when a side did not run; KL(p ‖ q) per position as hand-computed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HfArchitecture } from '../../../src/rl/policies/lm/models/hfConfig';
import { klOf } from '../../../bench/q8Divergence';
import { scaleReport, type OurSide } from '../../../bench/scaleReport';
import type { TorchSide } from '../../../bench/scaleTorch';

const arch = { hidden: 64, heads: 4, kvHeads: 2, headDim: 16, intermediate: 128, layers: 2, vocabSize: 100 } as HfArchitecture;
const shapes = { sample: [2, 8, 4] as const, sequences: 1, tokens: 16, trainedFrom: 4, rank: 2 };
const times = (s: number[], prefill: number[] = s.map((x) => x / 4)) =>
  s.map((seconds, i) => ({ seconds, prefill_seconds: prefill[i]!, decode_seconds: seconds - prefill[i]! }));
const train = (s: number[]) => s.map((seconds) => ({ seconds, reference_seconds: seconds / 3 }));
const torch = (build: 'debian' | 'pypi', dtype: 'float32' | 'bfloat16' | 'int8', sample: number[], tr: number[]): TorchSide => ({
  build,
  dtype,
  python: 'python3',
  ready: { torch: build === 'debian' ? '1.13.0a0' : '2.15.0+cu132', threads: 2, dtype, blas: '', cpu_bf16: true, probe: { '512': 1, '1024': 1 } },
  sample: times(sample),
  train: train(tr),
  rssBytes: 0,
  cpuSeconds: 0,
});
/** The ratio cells of a table row whose label starts with `row`. */
const rowOf = (text: string, row: string): string[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`| ${row}`))
    .pop()!
    .split('|')
    .map((c) => c.trim());

describe('bench seed000Scale report', () => {
  // round 1: 2.15 bfloat16 is fastest at sampling, round 2: 1.13 int8; training: 2.15 bfloat16 each round
  const sides = [
    torch('debian', 'float32', [40, 40], [20, 20]),
    torch('debian', 'bfloat16', [12, 11], [10, 12]),
    torch('debian', 'int8', [14, 8], []),
    torch('pypi', 'bfloat16', [10, 12], [8, 9]),
  ];
  const ours = (label: string, sample: number[], tr: number[]): OurSide => ({ label, sample: times(sample), train: train(tr) });

  it('takes per round the fastest PyTorch side as the baseline, int8 left out of training', () => {
    const r = scaleReport(arch, shapes, [ours('engine q8', [10, 16], [16, 9]), ours('engine bf16', [20, 16], [16, 18])], sides, 2);
    // sampling: best per round 10 (2.15 bf16) and 8 (1.13 int8): engine q8 ratios 10/10 = 1, 8/16 = 0.5
    const sampling = rowOf(r.text, 'sampling');
    assert.equal(sampling.at(-3), '0.75× (0.50–1.00)');
    // training: best per round 8 and 9 (2.15 bfloat16; int8 has none): q8 ratios 0.5 and 1
    const training = rowOf(r.text, 'reference');
    assert.equal(training.at(-3), '0.75× (0.50–1.00)');
    assert.match(training[2]!, /^8\.5 /);
    assert.ok(r.missed, 'a target below 1× is missed');
    assert.match(r.text, /reference \+ training pass ≥ 1× PyTorch bfloat16 \(the faster build each round\): MISSED \(0\.75×\)/);
  });

  it('meets a target only at 1× or more, and misses it when our side did not run', () => {
    const fast = scaleReport(
      arch,
      shapes,
      [ours('engine q8', [4, 4], [4, 4]), ours('engine bf16', [4, 4], [4, 4]), ours('llama.cpp bf16', [4, 4], [])],
      sides,
      2,
    );
    assert.match(fast.text, /prefill ≥ 1× PyTorch at its best: met/);
    assert.match(fast.text, /decoding ≥ 1× PyTorch at its best: met/);
    assert.equal(fast.missed, false);
    const noQ8 = scaleReport(arch, shapes, [ours('engine bf16', [4, 4], [4, 4]), ours('llama.cpp bf16', [4, 4], [])], sides, 2);
    assert.match(noQ8.text, /prefill ≥ 1× PyTorch at its best: MISSED \(not measured\)/);
    assert.ok(noQ8.missed);
  });

  it('KL(p ‖ q) per position: zero for equal distributions, Σ p (log p − log q) otherwise', () => {
    const lp = Float64Array.from([Math.log(0.5), Math.log(0.5)]);
    const lq = Float64Array.from([Math.log(0.9), Math.log(0.1)]);
    assert.equal(klOf(lp, lp), 0);
    assert.ok(Math.abs(klOf(lp, lq) - (0.5 * Math.log(0.5 / 0.9) + 0.5 * Math.log(0.5 / 0.1))) < 1e-12);
  });
});
