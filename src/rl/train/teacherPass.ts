// The learner's distillation step (issue 51): the frozen teacher scores every training sequence's
// targets (the student's sampled token ids, one forward pass each, batched) and each sequence comes back
// carrying per-position advantages, its trajectory's advantage plus the teacher's term
// (rl/algo/distill.ts). Its metrics join the loss-metric map, so the dashboard charts them.
import { teacherTerm, type TeacherScorer } from '../algo/distill';
import type { TrainSequence } from '../algo/trainSequence';

/** The sequences with their per-token advantages, and the pass's metrics. */
export interface TeacherPass {
  readonly seqs: TrainSequence[];
  /** Per sequence, at its trained positions (mask 1, in order): log π_teacher and log π_student − log π_teacher (TokenStats.teacher, .reverseKl). */
  readonly tokens: { readonly teacher: Float32Array; readonly reverseKl: Float32Array }[];
  /** teacherReverseKl: mean log π_student − log π_teacher per trained token, before the update (nats); teacherMs: the teacher's scoring time. */
  readonly metrics: { readonly teacherReverseKl: number; readonly teacherMs: number };
}

/**
 * Scores `seqs` with `teacher` at the policy's `temperature` (the behaviour log-probs were taken at it)
 * and adds w × the teacher's term to each sequence's advantage at every trained position. Undefined
 * when there is nothing to do (w 0, no sequences).
 */
export async function teacherPass(teacher: TeacherScorer, seqs: readonly TrainSequence[], w: number, temperature: number): Promise<TeacherPass | undefined> {
  if (w === 0 || seqs.length === 0) return undefined;
  const t0 = Date.now();
  const scored = await teacher.score(seqs, temperature);
  const teacherMs = Date.now() - t0;
  let klSum = 0;
  let tokens = 0;
  const columns: TeacherPass['tokens'] = [];
  const out = seqs.map((s, i) => {
    const term = teacherTerm(s.behaviour, scored[i]!, s.mask, w, s.advantage);
    klSum += term.reverseKlSum;
    tokens += term.tokens;
    columns.push({ teacher: term.teacher, reverseKl: term.reverseKl });
    return { ...s, tokenAdvantages: term.advantages };
  });
  return { seqs: out, tokens: columns, metrics: { teacherReverseKl: tokens > 0 ? klSum / tokens : 0, teacherMs } };
}
