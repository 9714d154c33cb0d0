// Seed 002's candidate scoring on the engine (scoringPolicy.ts has the policy): every prompt + candidate
// row is a training sequence whose trained positions are the candidate's tokens, scored by the engine's
// `TokenScorer` at temperature 1, and s(a, h) is the sum (or mean) of those log-probs. Training: the
// learner's action-level objective runs in tfjs on the [B, T, A] scores and hands back dL/ds(a, h); the
// engine's backward pass gets g = dL/ds(a, h) on each of candidate a's positions (divided by its token
// count under 'mean'), since ∂s/∂logp = 1 (or 1/count) there.
//
// Every row repeats its prompt: a prompt of n tokens costs A·n positions per pass, not n + Σ|c|. Sharing
// the prompt (its keys and values computed once, each candidate attending to them) is what would make it
// A times cheaper; a batch whose rows exceed one engine pass scores them in several, and recomputes the
// passes it could not keep before their backward (the engine keeps one pass at a time).
import * as tf from '@tensorflow/tfjs';
import type { PaddedBatch, TrainSequence } from '../../../../algo/trainSequence';
import { packedChunks, type LogitScorer } from '../../../../algo/gradients';
import type { CandidateRows, CandidateScorer } from '../candidateScorer';
import type { EngineModel } from './engineModel';

/** One prompt + candidate row as the engine scores it: position t predicts ids[t + 1]; the candidate's positions are trained. */
function rowSequence(r: CandidateRows['rows'][number]): TrainSequence {
  const n = r.ids.length - 1;
  return {
    inputs: r.ids.slice(0, -1),
    targets: r.ids.slice(1),
    mask: Array.from({ length: n }, (_, t) => (t + 1 >= r.from ? 1 : 0)),
    behaviour: new Array<number>(n).fill(0),
    advantage: 0,
  };
}

/** The candidate's token count (what 'mean' divides by). */
const candidateLength = (r: CandidateRows['rows'][number]): number => r.ids.length - r.from;

/** s(a, h) [P·A] of the rows, in engine passes of at most the plan's positions; the last pass kept when `keep`. */
async function engineScores(
  model: EngineModel,
  c: CandidateRows,
  seqs: readonly TrainSequence[],
  chunks: readonly TrainSequence[][],
  keep: boolean,
): Promise<Float32Array> {
  const scorer = model.scorer();
  const out = new Float32Array(seqs.length);
  let r = 0;
  for (let k = 0; k < chunks.length; k++) {
    const scored = await scorer.score(chunks[k]!, 1, keep && k === chunks.length - 1);
    for (const s of scored) {
      let sum = 0;
      for (const lp of s.logp) sum += lp; // 0 at positions not trained
      const row = c.rows[r]!;
      out[r++] = c.mean ? sum / candidateLength(row) : sum;
    }
  }
  return out;
}

/** Candidate scoring on the engine: the scores are the engine's log-probs, their gradient its backward pass. */
export const engineCandidateScorer: CandidateScorer<EngineModel> = {
  async scores(model, c) {
    const seqs = c.rows.map(rowSequence);
    return engineScores(model, c, seqs, packedChunks(seqs, model.positionsPerPass), false);
  },

  trainable(model, actions, rowsOf): LogitScorer {
    /** The batch last scored with `keep`: its prompts' rows, the engine passes, and each position's prompt. */
    let kept: { c: CandidateRows; chunks: TrainSequence[][]; at: Int32Array; T: number; B: number } | undefined;
    const scorer = model.scorer();
    return {
      kind: 'logits',
      weights: model.weights,
      vocabularySize: actions,
      costPerPass: model.positionsPerPass,
      // every turn's prompt with every candidate (prompts a batch shares are scored once: an upper bound)
      cost: (seq) => rowsOf([...new Set(seq.inputs)]).rows.reduce((n, r) => n + r.ids.length - 1, 0),
      async logits(batch: PaddedBatch, keep: boolean): Promise<tf.Tensor3D> {
        if (kept) throw new Error('engine candidate scoring: a kept batch was neither backpropagated nor released');
        const { B, T } = batch;
        // the prompts of the trained positions (a padded position has none: its logits are 0)
        const unique: number[] = [];
        const index = new Map<number, number>();
        const at = new Int32Array(B * T).fill(-1);
        for (let i = 0; i < B * T; i++) {
          if (!batch.mask[i]) continue;
          const p = batch.inputs[i]!;
          let u = index.get(p);
          if (u === undefined) {
            u = unique.length;
            unique.push(p);
            index.set(p, u);
          }
          at[i] = u;
        }
        const out = new Float32Array(B * T * actions);
        if (unique.length === 0) {
          if (keep) kept = { c: { rows: [], prompts: 0, actions, mean: false }, chunks: [], at, T, B };
          return tf.tensor3d(out, [B, T, actions]);
        }
        const c = rowsOf(unique);
        const seqs = c.rows.map(rowSequence);
        const chunks = packedChunks(seqs, model.positionsPerPass);
        const s = await engineScores(model, c, seqs, chunks, keep);
        if (keep) kept = { c, chunks, at, T, B };
        for (let i = 0; i < B * T; i++) if (at[i]! >= 0) out.set(s.subarray(at[i]! * actions, (at[i]! + 1) * actions), i * actions);
        return tf.tensor3d(out, [B, T, actions]);
      },
      async backward(dlogits: Float32Array): Promise<tf.Tensor[]> {
        const k = kept;
        if (!k) throw new Error('engine candidate scoring: backward without a kept batch');
        try {
          if (k.chunks.length === 0) return model.weights.map((w) => tf.zeros(w.shape));
          // dL/ds(a, h) of each prompt: the sum over the positions it stands at
          const ds = new Float64Array(k.c.rows.length);
          for (let i = 0; i < k.B * k.T; i++) {
            const u = k.at[i]!;
            if (u < 0) continue;
            for (let a = 0; a < actions; a++) ds[u * actions + a]! += dlogits[i * actions + a]!;
          }
          // g on every position of candidate a: dL/ds (∂s/∂logp = 1, or 1 / its token count under 'mean')
          let r = 0;
          const g = k.chunks.map((chunk) =>
            chunk.map((seq) => {
              const row = k.c.rows[r]!;
              const v = k.c.mean ? ds[r]! / candidateLength(row) : ds[r]!;
              r++;
              return Float32Array.from(seq.mask, (m) => (m ? v : 0));
            }),
          );
          // the last pass is kept; the others are scored again, one at a time, each right before its backward
          let sum = await scorer.backward(g[g.length - 1]!);
          for (let j = 0; j < k.chunks.length - 1; j++) {
            await scorer.score(k.chunks[j]!, 1, true);
            const part = await scorer.backward(g[j]!);
            const prev = sum;
            sum = prev.map((x, i) => tf.add(x, part[i]!));
            tf.dispose([...prev, ...part]);
          }
          return sum;
        } finally {
          kept = undefined;
          scorer.release();
        }
      },
      release() {
        kept = undefined;
        scorer.release();
      },
    };
  },
};
