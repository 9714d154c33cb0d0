// The run config's rules on on-policy distillation's teacher (issue 51), in the order configRules.ts
// checks them: the teacher scores the student's token ids, so both are language models read from
// folders; whether their tokenizers agree needs the files, which the teacher checks when it loads
// (rl/policies/teacher.ts). Each has its case in test/unit/shared/configRules.test.ts.
import { issue, nonEmpty, policyGradient, type ConfigRule } from './configRule';

export const DISTILL_RULES: readonly ConfigRule[] = [
  {
    id: 'distill-needs-language-model',
    description: 'Method distill trains a language model from a checkpoint folder (policyOptions.model, or a warm start of one).',
    check({ method, policy, policyOptions: po }) {
      if (method !== 'distill') return [];
      if (policy !== 'transformer')
        return issue(
          'policy',
          policy,
          "distillation scores the policy's sampled tokens with a teacher language model",
          'use policy "transformer" with policyOptions.model',
        );
      if (nonEmpty(po.model) || nonEmpty(po.init)) return [];
      return issue(
        'policyOptions.model',
        po.model,
        "distillation needs the student as a Hugging Face checkpoint folder, whose tokenizer the teacher's is checked against",
        'name it (policyOptions.model, or --model DIR; `agent-rl model new --out DIR` writes a fresh one)',
      );
    },
  },
  {
    id: 'teacher-term-needs-teacher',
    description: 'Method distill, and a GRPO run with algorithm.teacherWeight > 0, name the teacher (policyOptions.teacher).',
    check({ method, policy, policyOptions: po, algorithm }) {
      const wants = method === 'distill' || (method === 'grpo' && algorithm.teacherWeight > 0);
      if (!wants || policy !== 'transformer' || nonEmpty(po.teacher)) return [];
      return issue(
        'policyOptions.teacher',
        po.teacher,
        `${method === 'distill' ? 'distillation' : "GRPO's teacher term (algorithm.teacherWeight)"} needs a teacher to score the sampled tokens`,
        'name a Hugging Face checkpoint folder with the same tokenizer (policyOptions.teacher, or --teacher DIR)',
      );
    },
  },
  {
    id: 'teacher-weight-positive',
    description: "Method distill trains on the teacher's term alone: algorithm.teacherWeight > 0.",
    check({ method, policy, algorithm }) {
      // (a policy other than the language model is refused by distill-needs-language-model already)
      if (method !== 'distill' || policy !== 'transformer' || !(algorithm.teacherWeight === 0)) return [];
      return issue(
        'algorithm.teacherWeight',
        0,
        "distillation's advantage is the teacher's term, which weight 0 removes",
        'remove it (the default is 1) or set it > 0',
      );
    },
  },
  {
    id: 'distill-no-group-shaping',
    description:
      "Distillation has no group advantages: GRPO's dynamic sampling (groups with equal rewards resampled) and negativeAdvantageScale (negative group advantages scaled) have nothing to act on.",
    check({ method, algorithm }) {
      if (method !== 'distill') return [];
      if (algorithm.dynamicSampling > 0)
        return issue(
          'algorithm.dynamicSampling',
          algorithm.dynamicSampling,
          "resamples groups whose rewards were all equal, and distillation's advantages do not come from rewards",
          'set it to 0 for method "distill"',
        );
      if (algorithm.negativeAdvantageScale < 1)
        return issue(
          'algorithm.negativeAdvantageScale',
          algorithm.negativeAdvantageScale,
          "scales negative group advantages, and distillation's are the teacher's per-token term",
          'set it to 1 for method "distill" (a smaller algorithm.teacherWeight scales the whole term)',
        );
      return [];
    },
  },
  {
    id: 'teacher-for-policy-gradient-only',
    description:
      'A teacher (policyOptions.teacher, algorithm.teacherWeight) scores sampled tokens for distill or grpo: sft and rs-sft have none, and a GRPO run with a teacher weighs its term (teacherWeight > 0).',
    check({ method, policy, policyOptions: po, algorithm }) {
      const teacher = policy === 'transformer' && nonEmpty(po.teacher);
      if (!policyGradient(method)) {
        if (teacher)
          return issue(
            'policyOptions.teacher',
            po.teacher,
            `${method} trains by negative log-likelihood: no token is scored by a teacher`,
            'remove it, or use method "distill" or "grpo" with algorithm.teacherWeight > 0',
          );
        if (algorithm.teacherWeight > 0)
          return issue(
            'algorithm.teacherWeight',
            algorithm.teacherWeight,
            `${method} trains by negative log-likelihood: there is no advantage to add a teacher term to`,
            'remove it, or use method "distill" or "grpo"',
          );
        return [];
      }
      if (method === 'grpo' && teacher && algorithm.teacherWeight === 0)
        return issue(
          'policyOptions.teacher',
          po.teacher,
          'the teacher would be loaded and score every token, and algorithm.teacherWeight 0 adds nothing of it',
          'set algorithm.teacherWeight > 0 (e.g. 0.1, --teacher-weight 0.1), remove the teacher, or use method "distill"',
        );
      return [];
    },
  },
];
