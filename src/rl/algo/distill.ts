// On-policy distillation's signal (issue 51): a frozen teacher scores every token the policy sampled,
// and each token's advantage is the negated reverse KL at that token,
//   A_t = −w·(log π_student(y_t) − log π_teacher(y_t)),
// with log π_student the behaviour log-prob recorded at sampling (what drew y_t). Summed over the
// sampled tokens its expectation is −w·KL(π_student ‖ π_teacher), so the policy-gradient loss on these
// advantages descends the reverse KL: mode-seeking, it pushes down the student's tokens the teacher
// finds unlikely and up those it finds likelier than the student did.
//
// No discounting over the turn: a token's advantage is its own term, not a sum of the later ones.
// That is the Tinker cookbook's recipe (thinking-machines-lab/tinker-cookbook,
// tinker_cookbook/distillation/train_on_policy.py: `kl_discount_factor: float = 0.0`; with it 0,
// `incorporate_kl_penalty` adds −kl_penalty_coef·mask·(log p − log q) to each token's advantage as it
// is), and the blog post "On-Policy Distillation" (Thinking Machines, 2025) reports no gain from a
// discount: the teacher's log-prob of y_t already scores the whole continuation it leads to.
//
// On a GRPO run the term is added to the trajectory's (shaped) group advantage at every token, as the
// cookbook adds it to the environment's advantages. Shapes: every array [L] over a sequence's positions.
import type { TrainSequence } from './trainSequence';

/** A frozen model that scores sequences' targets, token in, token out (policies/teacher.ts). */
export interface TeacherScorer {
  /** Per sequence [L]: log π_teacher of each target at `temperature` (one forward pass per sequence, batched). */
  score(seqs: readonly TrainSequence[], temperature: number): Promise<Float32Array[]>;
  /** What computes it, for the run's record. */
  readonly describe: string;
  dispose(): Promise<void>;
}

/** A sequence's per-token advantages with the teacher's term, and its reverse KL summed over trained positions. */
export interface TeacherTerm {
  /** [L] base + w·(log π_teacher − log π_student) at mask 1, 0 elsewhere. */
  readonly advantages: number[];
  /** Σ over mask-1 positions of log π_student − log π_teacher (nats). */
  readonly reverseKlSum: number;
  /** Positions with mask 1. */
  readonly tokens: number;
  /** At the mask-1 positions, in order [tokens]: log π_teacher, and log π_student − log π_teacher (stored with the trajectory). */
  readonly teacher: Float32Array;
  readonly reverseKl: Float32Array;
}

/**
 * The per-token advantages of one sequence. `behaviour`: log π_student at sampling [L]; `teacher`:
 * log π_teacher of the same targets [L]; `weight`: w (algorithm.teacherWeight); `base`: the
 * trajectory's advantage every token starts from (GRPO's shaped group advantage; 0 for distill).
 * Positions with mask 0 (prompt, observation, template) get 0 and add nothing to the KL.
 */
export function teacherTerm(behaviour: readonly number[], teacher: ArrayLike<number>, mask: readonly number[], weight: number, base: number): TeacherTerm {
  const L = mask.length;
  if (behaviour.length !== L || teacher.length !== L) {
    throw new Error(`teacherTerm: behaviour (${behaviour.length}), teacher (${teacher.length}) and mask (${L}) must have one entry per position`);
  }
  const advantages = new Array<number>(L).fill(0);
  let reverseKlSum = 0;
  let tokens = 0;
  const trained = mask.reduce((n, m) => n + (m === 1 ? 1 : 0), 0);
  const teacherAt = new Float32Array(trained);
  const reverseKlAt = new Float32Array(trained);
  for (let t = 0; t < L; t++) {
    if (mask[t] !== 1) continue;
    const reverseKl = behaviour[t]! - teacher[t]!; // log π_student − log π_teacher at the sampled token
    advantages[t] = base - weight * reverseKl;
    reverseKlSum += reverseKl;
    teacherAt[tokens] = teacher[t]!;
    reverseKlAt[tokens] = reverseKl;
    tokens += 1;
  }
  return { advantages, reverseKlSum, tokens, teacher: teacherAt, reverseKl: reverseKlAt };
}
