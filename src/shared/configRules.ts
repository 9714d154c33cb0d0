// The run config's cross-field rules: what no single field's spec can say (an impossible combination, a
// bound between two fields, a value a choice requires), each a named function that returns the
// problems it finds with the field, the value and the fix. draftRunConfig runs SECTION_RULES before the
// section they concern is checked; validateRunConfig then applies the defaults that follow another
// field (CONFIG_DERIVATIONS, applyDerivations) and runs CONFIG_RULES in this order (checkRules), after
// every field and section has been checked on its own, so the error lists a config's problems in the
// same order every time.
// (Comparisons are written so that a value that is not a number, already reported by its own field,
// trips no rule: `!(a > b)` rather than `a <= b`.)
import { issue, nonEmpty, policyGradient, type ConfigRule, type WrittenConfig } from './configRule';
import { DISTILL_RULES } from './distillRules';
import { JUDGE_RULES } from './judgeRules';
import { optionDefaults, type ConfigIssue } from './fieldSpec';
import { DEMONSTRATION_SPECS } from './demonstrationSpecs';
import { ENV_CAPABILITIES, type EnvName } from './optionSpecs';
import { isObject as isRecord } from './protocol/guards';
import type { ConfigDraft } from './runSettings';

export type { ConfigRule, WrittenConfig } from './configRule';

/** A default that follows another field's value (what a table cell cannot say): applied before the rules. */
export interface ConfigDerivation {
  readonly id: string;
  readonly description: string;
  apply(config: ConfigDraft, written: WrittenConfig): void;
}

/** π_old recomputed with a truncated importance correction, where the config does not say otherwise. */
function recomputeOldLogprobs(config: ConfigDraft, written: WrittenConfig): void {
  if (written.algorithm.oldLogprobs === undefined) config.algorithm.oldLogprobs = 'recompute';
  // (with π_old given as the behaviour log-probs there is nothing to correct: the clip alone guards)
  if (written.algorithm.offPolicyCorrection === undefined && config.algorithm.oldLogprobs === 'recompute')
    config.algorithm.offPolicyCorrection = 'truncated-is';
}

export const CONFIG_DERIVATIONS: readonly ConfigDerivation[] = [
  {
    id: 'table-clip-high-follows-clip-low',
    description: "The table's clip is seed 002's one ε for both bounds: a given clipLow moves clipHigh with it, unless clipHigh is given too.",
    apply(config, written) {
      if (config.policy === 'table' && written.algorithm.clipLow !== undefined && written.algorithm.clipHigh === undefined)
        config.algorithm.clipHigh = config.algorithm.clipLow;
    },
  },
  {
    id: 'async-recomputes-old-logprobs',
    description:
      'Asynchronous samples are off-policy: π_old is recomputed and each token weighed by truncated importance sampling, unless the config says otherwise.',
    apply(config, written) {
      if (config.mode === 'async') recomputeOldLogprobs(config, written);
    },
  },
  {
    id: 'llama-cpp-recomputes-old-logprobs',
    description:
      "Another engine samples (llama.cpp): its tokens' log-probs come from other kernels than the trainer's, so π_old is recomputed on the trainer and weighed by truncated importance sampling, unless the config says otherwise.",
    apply(config, written) {
      if (config.policy === 'transformer' && config.policyOptions.rolloutEngine === 'llama.cpp') recomputeOldLogprobs(config, written);
    },
  },
];

/**
 * Rules on whether a section applies at all: run before that section's own options are checked, so
 * that the error says so before it lists the section's options.
 */
export const SECTION_RULES: readonly ConfigRule[] = [
  {
    id: 'demonstrations-for-sft-only',
    description: 'Demonstration settings other than the defaults apply to method sft only.',
    check(config, written) {
      // A validated config holds the defaults filled in: read back from the store (resume, fork) they must
      // validate again, so only demonstration settings other than the defaults are refused.
      const defaults: Readonly<Record<string, unknown>> = optionDefaults(DEMONSTRATION_SPECS[config.env] ?? {});
      const given = Object.entries(written.demonstrations).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(defaults[k]));
      if (config.method === 'sft' || given.length === 0) return [];
      return issue('demonstrations', written.demonstrations, `applies to method sft only (this run is ${config.method})`, 'remove it, or use method "sft"');
    },
  },
];

export const CONFIG_RULES: readonly ConfigRule[] = [
  {
    id: 'heads-divide-width',
    description: "A fresh model's attention heads divide its width.",
    check({ policyOptions: po }) {
      if (typeof po.dModel !== 'number' || typeof po.nHeads !== 'number' || po.dModel % po.nHeads === 0) return [];
      return issue(
        'policyOptions.nHeads',
        po.nHeads,
        `does not divide policyOptions.dModel (${po.dModel})`,
        'choose nHeads so that dModel / nHeads is a whole number',
      );
    },
  },
  {
    id: 'scoring-needs-checkpoint',
    description: 'Candidate scoring (actionMode score) needs a language model checkpoint.',
    check({ policyOptions: po }) {
      if (po.actionMode !== 'score' || nonEmpty(po.model)) return [];
      return issue(
        'policyOptions.actionMode',
        'score',
        'candidate scoring needs a language model checkpoint',
        'set policyOptions.model to a Hugging Face checkpoint folder, or use actionMode "generate"',
      );
    },
  },
  {
    id: 'scoring-needs-action-set',
    description: 'Candidate scoring needs an environment with a fixed set of action strings.',
    check({ policyOptions: po, env }) {
      if (po.actionMode !== 'score' || (ENV_CAPABILITIES[env] as (typeof ENV_CAPABILITIES)[EnvName] | undefined)?.tabular) return [];
      return issue(
        'policyOptions.actionMode',
        'score',
        `env "${env}" has no fixed set of action strings to score`,
        'use env "binary-search", or actionMode "generate"',
      );
    },
  },
  {
    id: 'scoring-not-sft',
    description: 'Candidate scoring has no demonstrations to imitate (no method sft).',
    check({ policyOptions: po, method }) {
      if (po.actionMode !== 'score' || method !== 'sft') return [];
      return issue('method', 'sft', 'candidate scoring has no demonstrations to imitate', 'use method "grpo" or "rs-sft"');
    },
  },
  {
    id: 'sft-needs-language-model',
    description: 'Method sft trains a language model: not the table policy.',
    check({ method, policy }) {
      if (method !== 'sft' || policy !== 'table') return [];
      return issue(
        'method',
        'sft',
        'sft trains a language model on reference demonstrations; the table policy has none',
        'use policy "transformer", or method "rs-sft" for the table baseline',
      );
    },
  },
  {
    id: 'sft-needs-reference-agent',
    description: 'Method sft needs an environment with a reference agent (not binary-search, verifiers or openenv).',
    check({ method, env }) {
      if (method !== 'sft' || (env !== 'binary-search' && env !== 'verifiers' && env !== 'openenv')) return [];
      return issue(
        'env',
        env,
        env === 'binary-search'
          ? 'binary-search has no reference agent to demonstrate'
          : `${env === 'verifiers' ? 'a verifiers' : 'an OpenEnv'} environment has no demonstrations the workbench reads`,
        env !== 'binary-search'
          ? 'warm-start with sft on a workspace task file, then train here with policyOptions.init'
          : 'use env "calculator" or "code" for sft',
      );
    },
  },
  {
    id: 'table-needs-finite-state',
    description: 'The table policy needs an environment with a finite visible state.',
    check({ policy, env }) {
      const caps = ENV_CAPABILITIES[env] as (typeof ENV_CAPABILITIES)[EnvName] | undefined;
      if (policy !== 'table' || !caps || caps.tabular) return [];
      return issue(
        'policy',
        policy,
        `the table policy needs a finite visible state, which env "${env}" does not have`,
        'use a language-model policy for this environment, or env "binary-search"',
      );
    },
  },
  {
    id: 'depth-range-ordered',
    description: "The calculator's smallest expression depth is at most its largest.",
    check({ envOptions: eo }) {
      if (typeof eo.minDepth !== 'number' || typeof eo.maxDepth !== 'number' || !(eo.minDepth > eo.maxDepth)) return [];
      return issue('envOptions.minDepth', eo.minDepth, `is greater than envOptions.maxDepth (${eo.maxDepth})`, 'make minDepth ≤ maxDepth');
    },
  },
  {
    id: 'operand-range-ordered',
    description: "The calculator's smallest literal is at most its largest.",
    check({ envOptions: eo }) {
      if (typeof eo.minOperand !== 'number' || typeof eo.maxOperand !== 'number' || !(eo.minOperand > eo.maxOperand)) return [];
      return issue('envOptions.minOperand', eo.minOperand, `is greater than envOptions.maxOperand (${eo.maxOperand})`, 'make minOperand ≤ maxOperand');
    },
  },
  {
    id: 'group-has-spread',
    description: 'GRPO, and the sample standard deviation, need groups of at least 2.',
    check({ method, groupSize, algorithm }) {
      if (typeof groupSize !== 'number' || !(groupSize < 2)) return [];
      if (method === 'grpo')
        return issue('groupSize', groupSize, 'GRPO normalises rewards within a group, and a group of one has no spread', 'set groupSize ≥ 2 (seed 002 uses 8)');
      if (algorithm.advantageStd === 'sample')
        return issue('groupSize', groupSize, 'the sample standard deviation needs at least 2 trajectories', 'set groupSize ≥ 2');
      return [];
    },
  },
  {
    id: 'kl-for-rl-only',
    description: 'RS-SFT and SFT train by negative log-likelihood: a KL coefficient other than 0 is refused.',
    check({ method }, written) {
      const kl = written.algorithm.klCoef;
      if ((method !== 'rs-sft' && method !== 'sft') || kl === undefined || kl === 0) return [];
      return issue(
        'algorithm.klCoef',
        kl,
        `${method} trains by negative log-likelihood and has no KL penalty`,
        `remove algorithm.klCoef (or set it to 0) for method "${method}"`,
      );
    },
  },
  {
    id: 'async-not-sft',
    description: 'SFT learns from scripted demonstrations: it runs in mode sync.',
    check({ mode, method }) {
      if (mode !== 'async' || method !== 'sft') return [];
      return issue('mode', 'async', 'sft learns from scripted demonstrations, which have no policy to be asynchronous with', 'use mode "sync" for sft');
    },
  },
  {
    id: 'async-queue-holds-one-take',
    description: "In mode async, a bounded queue holds at least one learner's take (groupsPerIteration).",
    check({ mode, queueGroups, groupsPerIteration }) {
      if (mode !== 'async' || !(queueGroups > 0 && queueGroups < groupsPerIteration)) return [];
      return issue(
        'queueGroups',
        queueGroups,
        `the learner takes ${groupsPerIteration} groups at a time (groupsPerIteration), more than the queue could ever hold`,
        `use 0 (the default) or at least ${groupsPerIteration}`,
      );
    },
  },
  {
    id: 'async-no-dynamic-sampling',
    description: 'Dynamic sampling resamples within an iteration, which the asynchronous stream does not do.',
    check({ mode, algorithm }) {
      if (mode !== 'async' || !(algorithm.dynamicSampling > 0)) return [];
      return issue(
        'algorithm.dynamicSampling',
        algorithm.dynamicSampling,
        'replaces uninformative groups by sampling again within the iteration, which the asynchronous stream does not do',
        'set algorithm.dynamicSampling to 0, or use mode "sync"',
      );
    },
  },
  {
    id: 'correction-needs-recomputed-old',
    description: 'Truncated importance sampling weighs by π_old/π_behaviour: it needs π_old recomputed.',
    check({ algorithm }) {
      if (algorithm.offPolicyCorrection !== 'truncated-is' || algorithm.oldLogprobs === 'recompute') return [];
      return issue(
        'algorithm.offPolicyCorrection',
        'truncated-is',
        'weighs tokens by π_old/π_behaviour, which is 1 when π_old is the behaviour log-probs',
        'set algorithm.oldLogprobs to "recompute"',
      );
    },
  },
  {
    id: 'dual-clip-above-one',
    description: 'The dual-clip bound is 0 (off) or greater than 1.',
    check({ algorithm }) {
      const dual = algorithm.dualClip;
      if (typeof dual !== 'number' || !(dual > 0 && dual <= 1)) return [];
      return issue(
        'algorithm.dualClip',
        dual,
        "the dual-clip bound must be greater than 1 (it caps a negative-advantage token's loss at c·|A|)",
        'use 0 (off) or a value > 1 such as 3',
      );
    },
  },
  // GSPO and CISPO replace GRPO's clipped surrogate: nothing for a negative log-likelihood to replace
  {
    id: 'policy-loss-for-grpo-only',
    description: 'A policy loss other than clip (gspo, cispo) runs with a policy-gradient method only (grpo, distill).',
    check({ method, algorithm }) {
      const loss = algorithm.policyLoss;
      if ((loss !== 'gspo' && loss !== 'cispo') || policyGradient(method)) return [];
      return issue(
        'algorithm.policyLoss',
        loss,
        `${method} trains by negative log-likelihood, which has no policy loss to replace`,
        `remove algorithm.policyLoss (or set it to "clip") for method "${method}", or use method "grpo" or "distill"`,
      );
    },
  },
  {
    id: 'policy-loss-no-dual-clip',
    description: "The dual clip bounds the clip loss's negative-advantage tokens: gspo and cispo have no such branch.",
    check({ method, algorithm }) {
      const loss = algorithm.policyLoss;
      const dual = algorithm.dualClip;
      if ((loss !== 'gspo' && loss !== 'cispo') || !policyGradient(method) || !(typeof dual === 'number' && dual > 0)) return [];
      return issue(
        'algorithm.dualClip',
        dual,
        `bounds the clip loss's negative-advantage tokens; policyLoss "${loss}" has no such branch`,
        'set algorithm.dualClip to 0, or use policyLoss "clip"',
      );
    },
  },
  {
    id: 'gspo-sequence-mean',
    description: "GSPO's loss is a mean over sequences of each sequence's token mean (lossAggregation seq-mean-token-mean).",
    check({ method, algorithm }) {
      if (!policyGradient(method) || algorithm.policyLoss !== 'gspo' || algorithm.lossAggregation === 'seq-mean-token-mean') return [];
      return issue(
        'algorithm.lossAggregation',
        algorithm.lossAggregation,
        "GSPO's loss is a mean over sequences of each sequence's token mean (its gradient is that of the sequence ratio)",
        'use lossAggregation "seq-mean-token-mean" with policyLoss "gspo"',
      );
    },
  },
  ...DISTILL_RULES,
  ...JUDGE_RULES,
  {
    id: 'workspace-needs-tasks',
    description: 'A workspace environment names its task file(s) or a generated task set (taskSet), not both.',
    check({ env, envOptions: eo }) {
      if (env !== 'workspace') return [];
      if (nonEmpty(eo.tasks) && nonEmpty(eo.taskSet))
        return issue(
          'envOptions.taskSet',
          eo.taskSet,
          `generates the tasks, and envOptions.tasks names task files ("${eo.tasks}") too`,
          'keep one: the task files (remove taskSet) or the generated set (remove tasks)',
        );
      if (nonEmpty(eo.tasks) || nonEmpty(eo.taskSet)) return [];
      return issue(
        'envOptions.tasks',
        eo.tasks,
        'a workspace environment needs its task file(s)',
        'name them, e.g. "tasks.jsonl" or "data/*.parquet" (relative to the config file), or a generated set in envOptions.taskSet, e.g. "reasoning-gym:basic_arithmetic"',
      );
    },
  },
  {
    id: 'workspace-task-set',
    description: 'A workspace task set is "reasoning-gym:<dataset>"; taskConfig and heldOutConfig belong to one, and reward score_answer needs one.',
    check({ env, envOptions: eo }) {
      if (env !== 'workspace') return [];
      const set = eo.taskSet;
      if (nonEmpty(set) && !/^reasoning-gym:[A-Za-z0-9_]+$/.test(set))
        return issue(
          'envOptions.taskSet',
          set,
          'is not a task set this knows',
          'write "reasoning-gym:<dataset>" with the dataset\'s name, e.g. "reasoning-gym:basic_arithmetic" (docs/reasoning-gym.md), or leave it empty for task files',
        );
      const configs = (['taskConfig', 'heldOutConfig'] as const).filter((k) => isRecord(eo[k]) && Object.keys(eo[k]).length > 0);
      if (!nonEmpty(set) && configs.length > 0)
        return issue(
          `envOptions.${configs[0]!}`,
          eo[configs[0]!],
          'configures a generated task set, and envOptions.taskSet is empty',
          'name the set, e.g. "reasoning-gym:basic_arithmetic", or remove it',
        );
      if (!nonEmpty(set) && eo.reward === 'score_answer')
        return issue(
          'envOptions.reward',
          'score_answer',
          "is a reasoning-gym dataset's own scoring, and envOptions.taskSet is empty",
          'name a reasoning-gym task set in envOptions.taskSet, or use exact_match or a reward file with task files',
        );
      return [];
    },
  },
  {
    id: 'agent-needs-command',
    description: 'An agent environment names the program to run.',
    check({ env, envOptions: eo }) {
      if (env !== 'agent' || (Array.isArray(eo.command) && eo.command.length > 0 && eo.command[0] !== '')) return [];
      return issue(
        'envOptions.command',
        eo.command,
        'an agent environment needs the program to run',
        'name it with its arguments, e.g. ["node", "agent.ts"] (run in the config file\'s folder)',
      );
    },
  },
  {
    id: 'agent-needs-tasks',
    description: 'An agent environment names its task file(s).',
    check({ env, envOptions: eo }) {
      if (env !== 'agent' || nonEmpty(eo.tasks)) return [];
      return issue('envOptions.tasks', eo.tasks, 'an agent environment needs its task file(s)', 'name them, e.g. "tasks.jsonl" (relative to the config file)');
    },
  },
  {
    id: 'verifiers-needs-module',
    description: 'A verifiers environment names the Python module that defines load_environment.',
    check({ env, envOptions: eo }) {
      if (env !== 'verifiers' || nonEmpty(eo.module)) return [];
      return issue(
        'envOptions.module',
        eo.module,
        'a verifiers environment needs its Python module',
        'name it, e.g. "vf_gsm8k" for vf_gsm8k.py beside the config file (or a module installed in envOptions.python)',
      );
    },
  },
  {
    id: 'openenv-url-or-command',
    description: 'An OpenEnv environment names its server: the url of a running one, or the command that starts one (not both).',
    check({ env, envOptions: eo }) {
      if (env !== 'openenv') return [];
      const command = Array.isArray(eo.command) && eo.command.length > 0;
      if (nonEmpty(eo.url) !== command) return [];
      return command
        ? issue('envOptions.url', eo.url, 'and envOptions.command both name a server', 'give one: the url of a running server, or the command that starts one')
        : issue(
            'envOptions.url',
            eo.url,
            'an OpenEnv environment needs its server',
            'give the url of a running one (e.g. "http://127.0.0.1:8000"), or envOptions.command that starts one with {port} in its arguments',
          );
    },
  },
  {
    id: 'q8-lora-only',
    description: 'Q8_0 weights (weightDtype q8) are a frozen base: LoRA only, never full fine-tuning.',
    check({ policyOptions: po }) {
      if (po.weightDtype !== 'q8' || po.loraRank !== 0) return [];
      return issue(
        'policyOptions.weightDtype',
        'q8',
        'holds the base as frozen 8-bit blocks, and full fine-tuning (loraRank 0) updates every weight in float32',
        'train LoRA adapters over the 8-bit base (policyOptions.loraRank 8), or weightDtype "f32" for full fine-tuning',
      );
    },
  },
  {
    id: 'q8-on-the-engine',
    description: "Q8_0 weights run on the wasm engine only: not on the tfjs decoder's backends.",
    check({ policyOptions: po }) {
      if (po.weightDtype !== 'q8' || po.backend === 'wasm' || po.backend === 'auto') return [];
      return issue(
        'policyOptions.weightDtype',
        'q8',
        `runs on the wasm engine, and backend "${String(po.backend)}" runs the tfjs decoder, which holds float32 weights`,
        'use backend "wasm", or weightDtype "auto" on this backend',
      );
    },
  },
  {
    id: 'agent-needs-chat-model',
    description: 'An agent program (or a verifiers environment) talks to a language model: policy transformer with a checkpoint.',
    check({ env, policy, policyOptions: po }) {
      if (env !== 'agent' && env !== 'verifiers') return [];
      if (policy !== 'transformer')
        return issue(
          'policy',
          policy,
          'an agent program talks to a language model',
          'use policy "transformer" with a Hugging Face checkpoint (policyOptions.model)',
        );
      if (po.model !== '' || po.init !== '') return [];
      return issue(
        'policyOptions.model',
        '',
        'an agent program talks to a chat model',
        'name a Hugging Face instruct checkpoint folder (policyOptions.model, or --model DIR; Start Run offers the ones in the cache)',
      );
    },
  },
  {
    id: 'agent-reward-kind',
    description: "An agent environment's reward is empty (the program's own), exact_match, or a Python file.",
    check({ env, envOptions: eo }) {
      const reward = eo.reward;
      if (env !== 'agent' || !nonEmpty(reward) || reward === 'exact_match' || reward.endsWith('.py')) return [];
      return issue(
        'envOptions.reward',
        reward,
        'is neither empty (the program prints its reward), exact_match, nor a Python file',
        'name a .py file defining reward(task, trajectory) (relative to the config file), or leave it empty',
      );
    },
  },
];

/** The problems of the rules on whether the sections apply (SECTION_RULES), in their order. */
export function checkSectionRules(config: ConfigDraft, written: WrittenConfig): ConfigIssue[] {
  return SECTION_RULES.flatMap((rule) => rule.check(config, written));
}

/** Fills the defaults that follow another field (CONFIG_DERIVATIONS), in their order: changes `config` in place. */
export function applyDerivations(config: ConfigDraft, written: WrittenConfig): void {
  for (const d of CONFIG_DERIVATIONS) d.apply(config, written);
}

/** Every rule's problems (CONFIG_RULES), in the rules' order; changes nothing (apply the derivations first). */
export function checkRules(config: Readonly<ConfigDraft>, written: WrittenConfig): ConfigIssue[] {
  return CONFIG_RULES.flatMap((rule) => rule.check(config, written));
}
