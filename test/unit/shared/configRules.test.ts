// Each cross-field rule of the run config (src/shared/configRules.ts) with a config it accepts and one
// it refuses: the rule alone on the drafted config, and the validator's error naming the field, the
// value, the message and the fix in the words users have always read. A rule without a case here fails
// the first test, so a new rule comes with its own.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyDerivations, checkRules, CONFIG_DERIVATIONS, CONFIG_RULES, SECTION_RULES, type ConfigRule } from '../../../src/shared/configRules';
import { ConfigError, draftRunConfig, validateRunConfig } from '../../../src/shared/runConfig';

interface RuleCase {
  /** A config the rule accepts (and the validator too). */
  readonly pass: Record<string, unknown>;
  /** A config the rule refuses, with the one issue it reports. */
  readonly fail: Record<string, unknown>;
  readonly issue: { readonly field: string; readonly value: unknown; readonly message: string; readonly fix: string };
}

const LM = { env: 'calculator', policy: 'transformer' } as const;
const SCORE = { policy: 'transformer', policyOptions: { actionMode: 'score', model: '/models/qwen' } } as const;
const DISTILL = { ...LM, method: 'distill', policyOptions: { model: '/models/student', teacher: '/models/teacher' } } as const;
const AGENT = { env: 'agent', policy: 'transformer', envOptions: { command: ['node', 'agent.js'], tasks: 'tasks.jsonl' }, policyOptions: { model: '/m' } };

const JUDGE = { baseUrl: 'http://127.0.0.1:8080/v1', model: 'judge', rubric: 'shorter is better' } as const;

const CASES: Readonly<Record<string, RuleCase>> = {
  'demonstrations-for-sft-only': {
    pass: { ...LM, method: 'sft', demonstrations: { skipToolRate: 0.5 } },
    fail: { ...LM, demonstrations: { skipToolRate: 0.5 } },
    issue: {
      field: 'demonstrations',
      value: { skipToolRate: 0.5 },
      message: 'applies to method sft only (this run is grpo)',
      fix: 'remove it, or use method "sft"',
    },
  },
  'heads-divide-width': {
    pass: { ...LM, policyOptions: { dModel: 64, nHeads: 8 } },
    fail: { ...LM, policyOptions: { dModel: 64, nHeads: 6 } },
    issue: {
      field: 'policyOptions.nHeads',
      value: 6,
      message: 'does not divide policyOptions.dModel (64)',
      fix: 'choose nHeads so that dModel / nHeads is a whole number',
    },
  },
  'scoring-needs-checkpoint': {
    pass: SCORE,
    fail: { policy: 'transformer', policyOptions: { actionMode: 'score' } },
    issue: {
      field: 'policyOptions.actionMode',
      value: 'score',
      message: 'candidate scoring needs a language model checkpoint',
      fix: 'set policyOptions.model to a Hugging Face checkpoint folder, or use actionMode "generate"',
    },
  },
  'scoring-needs-action-set': {
    pass: SCORE,
    fail: { ...SCORE, env: 'calculator' },
    issue: {
      field: 'policyOptions.actionMode',
      value: 'score',
      message: 'env "calculator" has no fixed set of action strings to score',
      fix: 'use env "binary-search", or actionMode "generate"',
    },
  },
  'scoring-not-sft': {
    pass: { ...SCORE, method: 'rs-sft' },
    fail: { ...SCORE, method: 'sft' },
    issue: { field: 'method', value: 'sft', message: 'candidate scoring has no demonstrations to imitate', fix: 'use method "grpo" or "rs-sft"' },
  },
  'sft-needs-language-model': {
    pass: { ...LM, method: 'sft' },
    fail: { env: 'calculator', method: 'sft' },
    issue: {
      field: 'method',
      value: 'sft',
      message: 'sft trains a language model on reference demonstrations; the table policy has none',
      fix: 'use policy "transformer", or method "rs-sft" for the table baseline',
    },
  },
  'sft-needs-reference-agent': {
    pass: { env: 'code', policy: 'transformer', method: 'sft' },
    fail: { env: 'binary-search', policy: 'transformer', method: 'sft' },
    issue: {
      field: 'env',
      value: 'binary-search',
      message: 'binary-search has no reference agent to demonstrate',
      fix: 'use env "calculator" or "code" for sft',
    },
  },
  'table-needs-finite-state': {
    pass: { env: 'binary-search', policy: 'table' },
    fail: { env: 'code', policy: 'table' },
    issue: {
      field: 'policy',
      value: 'table',
      message: 'the table policy needs a finite visible state, which env "code" does not have',
      fix: 'use a language-model policy for this environment, or env "binary-search"',
    },
  },
  'depth-range-ordered': {
    pass: { ...LM, envOptions: { minDepth: 2, maxDepth: 2 } },
    fail: { ...LM, envOptions: { minDepth: 3, maxDepth: 2 } },
    issue: { field: 'envOptions.minDepth', value: 3, message: 'is greater than envOptions.maxDepth (2)', fix: 'make minDepth ≤ maxDepth' },
  },
  'operand-range-ordered': {
    pass: { ...LM, envOptions: { minOperand: 5, maxOperand: 5 } },
    fail: { ...LM, envOptions: { minOperand: 9, maxOperand: 1 } },
    issue: { field: 'envOptions.minOperand', value: 9, message: 'is greater than envOptions.maxOperand (1)', fix: 'make minOperand ≤ maxOperand' },
  },
  'group-has-spread': {
    pass: { method: 'rs-sft', groupSize: 1 },
    fail: { groupSize: 1 },
    issue: {
      field: 'groupSize',
      value: 1,
      message: 'GRPO normalises rewards within a group, and a group of one has no spread',
      fix: 'set groupSize ≥ 2 (seed 002 uses 8)',
    },
  },
  'kl-for-rl-only': {
    pass: { method: 'rs-sft', algorithm: { klCoef: 0 } },
    fail: { method: 'rs-sft', algorithm: { klCoef: 0.02 } },
    issue: {
      field: 'algorithm.klCoef',
      value: 0.02,
      message: 'rs-sft trains by negative log-likelihood and has no KL penalty',
      fix: 'remove algorithm.klCoef (or set it to 0) for method "rs-sft"',
    },
  },
  'async-not-sft': {
    pass: { ...LM, mode: 'async' },
    fail: { ...LM, mode: 'async', method: 'sft' },
    issue: {
      field: 'mode',
      value: 'async',
      message: 'sft learns from scripted demonstrations, which have no policy to be asynchronous with',
      fix: 'use mode "sync" for sft',
    },
  },
  'async-queue-holds-one-take': {
    pass: { mode: 'async', queueGroups: 4 },
    fail: { mode: 'async', queueGroups: 3 },
    issue: {
      field: 'queueGroups',
      value: 3,
      message: 'the learner takes 4 groups at a time (groupsPerIteration), more than the queue could ever hold',
      fix: 'use 0 (the default) or at least 4',
    },
  },
  'async-no-dynamic-sampling': {
    pass: { mode: 'sync', algorithm: { dynamicSampling: 2 } },
    fail: { mode: 'async', algorithm: { dynamicSampling: 2 } },
    issue: {
      field: 'algorithm.dynamicSampling',
      value: 2,
      message: 'replaces uninformative groups by sampling again within the iteration, which the asynchronous stream does not do',
      fix: 'set algorithm.dynamicSampling to 0, or use mode "sync"',
    },
  },
  'correction-needs-recomputed-old': {
    pass: { algorithm: { offPolicyCorrection: 'truncated-is', oldLogprobs: 'recompute' } },
    fail: { algorithm: { offPolicyCorrection: 'truncated-is' } },
    issue: {
      field: 'algorithm.offPolicyCorrection',
      value: 'truncated-is',
      message: 'weighs tokens by π_old/π_behaviour, which is 1 when π_old is the behaviour log-probs',
      fix: 'set algorithm.oldLogprobs to "recompute"',
    },
  },
  'dual-clip-above-one': {
    pass: { algorithm: { dualClip: 3 } },
    fail: { algorithm: { dualClip: 1 } },
    issue: {
      field: 'algorithm.dualClip',
      value: 1,
      message: "the dual-clip bound must be greater than 1 (it caps a negative-advantage token's loss at c·|A|)",
      fix: 'use 0 (off) or a value > 1 such as 3',
    },
  },
  'policy-loss-for-grpo-only': {
    pass: { algorithm: { policyLoss: 'cispo' } },
    fail: { method: 'rs-sft', algorithm: { policyLoss: 'gspo' } },
    issue: {
      field: 'algorithm.policyLoss',
      value: 'gspo',
      message: 'rs-sft trains by negative log-likelihood, which has no policy loss to replace',
      fix: 'remove algorithm.policyLoss (or set it to "clip") for method "rs-sft", or use method "grpo" or "distill"',
    },
  },
  'policy-loss-no-dual-clip': {
    pass: { algorithm: { policyLoss: 'clip', dualClip: 3 } },
    fail: { algorithm: { policyLoss: 'cispo', dualClip: 3 } },
    issue: {
      field: 'algorithm.dualClip',
      value: 3,
      message: 'bounds the clip loss\'s negative-advantage tokens; policyLoss "cispo" has no such branch',
      fix: 'set algorithm.dualClip to 0, or use policyLoss "clip"',
    },
  },
  'gspo-sequence-mean': {
    pass: { algorithm: { policyLoss: 'gspo' } },
    fail: { algorithm: { policyLoss: 'gspo', lossAggregation: 'token-mean' } },
    issue: {
      field: 'algorithm.lossAggregation',
      value: 'token-mean',
      message: "GSPO's loss is a mean over sequences of each sequence's token mean (its gradient is that of the sequence ratio)",
      fix: 'use lossAggregation "seq-mean-token-mean" with policyLoss "gspo"',
    },
  },
  'distill-needs-language-model': {
    pass: DISTILL,
    fail: { ...DISTILL, policyOptions: { teacher: '/models/teacher' } },
    issue: {
      field: 'policyOptions.model',
      value: '',
      message: "distillation needs the student as a Hugging Face checkpoint folder, whose tokenizer the teacher's is checked against",
      fix: 'name it (policyOptions.model, or --model DIR; `agent-rl model new --out DIR` writes a fresh one)',
    },
  },
  'teacher-term-needs-teacher': {
    pass: { ...LM, policyOptions: { model: '/models/student', teacher: '/models/teacher' }, algorithm: { teacherWeight: 0.1 } },
    fail: { ...LM, policyOptions: { model: '/models/student' }, algorithm: { teacherWeight: 0.1 } },
    issue: {
      field: 'policyOptions.teacher',
      value: '',
      message: "GRPO's teacher term (algorithm.teacherWeight) needs a teacher to score the sampled tokens",
      fix: 'name a Hugging Face checkpoint folder with the same tokenizer (policyOptions.teacher, or --teacher DIR)',
    },
  },
  'teacher-weight-positive': {
    pass: { ...DISTILL, algorithm: { teacherWeight: 0.5 } },
    fail: { ...DISTILL, algorithm: { teacherWeight: 0 } },
    issue: {
      field: 'algorithm.teacherWeight',
      value: 0,
      message: "distillation's advantage is the teacher's term, which weight 0 removes",
      fix: 'remove it (the default is 1) or set it > 0',
    },
  },
  'distill-no-group-shaping': {
    pass: { ...DISTILL, algorithm: { overlongFilter: true } },
    fail: { ...DISTILL, algorithm: { dynamicSampling: 2 } },
    issue: {
      field: 'algorithm.dynamicSampling',
      value: 2,
      message: "resamples groups whose rewards were all equal, and distillation's advantages do not come from rewards",
      fix: 'set it to 0 for method "distill"',
    },
  },
  'teacher-for-policy-gradient-only': {
    pass: { ...LM, method: 'rs-sft', policyOptions: { model: '/models/student' } },
    fail: { ...LM, method: 'rs-sft', policyOptions: { model: '/models/student', teacher: '/models/teacher' } },
    issue: {
      field: 'policyOptions.teacher',
      value: '/models/teacher',
      message: 'rs-sft trains by negative log-likelihood: no token is scored by a teacher',
      fix: 'remove it, or use method "distill" or "grpo" with algorithm.teacherWeight > 0',
    },
  },
  'workspace-needs-tasks': {
    pass: { env: 'workspace', policy: 'transformer', envOptions: { tasks: 'tasks.jsonl' } },
    fail: { env: 'workspace', policy: 'transformer' },
    issue: {
      field: 'envOptions.tasks',
      value: '',
      message: 'a workspace environment needs its task file(s)',
      fix: 'name them, e.g. "tasks.jsonl" or "data/*.parquet" (relative to the config file), or a generated set in envOptions.taskSet, e.g. "reasoning-gym:basic_arithmetic"',
    },
  },
  'workspace-task-set': {
    pass: { env: 'workspace', policy: 'transformer', envOptions: { taskSet: 'reasoning-gym:word_sorting', taskConfig: { size: 50 } } },
    fail: { env: 'workspace', policy: 'transformer', envOptions: { tasks: 'tasks.jsonl', heldOutConfig: { seed: 3 } } },
    issue: {
      field: 'envOptions.heldOutConfig',
      value: { seed: 3 },
      message: 'configures a generated task set, and envOptions.taskSet is empty',
      fix: 'name the set, e.g. "reasoning-gym:basic_arithmetic", or remove it',
    },
  },
  'agent-needs-command': {
    pass: AGENT,
    fail: { ...AGENT, envOptions: { command: [], tasks: 'tasks.jsonl' } },
    issue: {
      field: 'envOptions.command',
      value: [],
      message: 'an agent environment needs the program to run',
      fix: 'name it with its arguments, e.g. ["node", "agent.ts"] (run in the config file\'s folder)',
    },
  },
  'verifiers-needs-module': {
    pass: { env: 'verifiers', policy: 'transformer', envOptions: { module: 'vf_gsm8k' }, policyOptions: { model: '/m' } },
    fail: { env: 'verifiers', policy: 'transformer', policyOptions: { model: '/m' } },
    issue: {
      field: 'envOptions.module',
      value: '',
      message: 'a verifiers environment needs its Python module',
      fix: 'name it, e.g. "vf_gsm8k" for vf_gsm8k.py beside the config file (or a module installed in envOptions.python)',
    },
  },
  'openenv-url-or-command': {
    pass: { env: 'openenv', policy: 'transformer', envOptions: { url: 'http://127.0.0.1:8000' } },
    fail: { env: 'openenv', policy: 'transformer' },
    issue: {
      field: 'envOptions.url',
      value: '',
      message: 'an OpenEnv environment needs its server',
      fix: 'give the url of a running one (e.g. "http://127.0.0.1:8000"), or envOptions.command that starts one with {port} in its arguments',
    },
  },
  'agent-needs-tasks': {
    pass: AGENT,
    fail: { ...AGENT, envOptions: { command: ['node', 'agent.js'] } },
    issue: {
      field: 'envOptions.tasks',
      value: '',
      message: 'an agent environment needs its task file(s)',
      fix: 'name them, e.g. "tasks.jsonl" (relative to the config file)',
    },
  },
  'q8-lora-only': {
    pass: { ...LM, policyOptions: { model: '/m', weightDtype: 'q8' } },
    fail: { ...LM, policyOptions: { model: '/m', weightDtype: 'q8', loraRank: 0 } },
    issue: {
      field: 'policyOptions.weightDtype',
      value: 'q8',
      message: 'holds the base as frozen 8-bit blocks, and full fine-tuning (loraRank 0) updates every weight in float32',
      fix: 'train LoRA adapters over the 8-bit base (policyOptions.loraRank 8), or weightDtype "f32" for full fine-tuning',
    },
  },
  'q8-on-the-engine': {
    pass: { ...LM, policyOptions: { model: '/m', weightDtype: 'q8', backend: 'wasm' } },
    fail: { ...LM, policyOptions: { model: '/m', weightDtype: 'q8', backend: 'tensorflow' } },
    issue: {
      field: 'policyOptions.weightDtype',
      value: 'q8',
      message: 'runs on the wasm engine, and backend "tensorflow" runs the tfjs decoder, which holds float32 weights',
      fix: 'use backend "wasm", or weightDtype "auto" on this backend',
    },
  },
  'agent-needs-chat-model': {
    pass: AGENT,
    fail: { ...AGENT, policyOptions: {} },
    issue: {
      field: 'policyOptions.model',
      value: '',
      message: 'an agent program talks to a chat model',
      fix: 'name a Hugging Face instruct checkpoint folder (policyOptions.model, or --model DIR; Start Run offers the ones in the cache)',
    },
  },
  'agent-reward-kind': {
    pass: { ...AGENT, envOptions: { ...AGENT.envOptions, reward: 'score.py' } },
    fail: { ...AGENT, envOptions: { ...AGENT.envOptions, reward: 'score.txt' } },
    issue: {
      field: 'envOptions.reward',
      value: 'score.txt',
      message: 'is neither empty (the program prints its reward), exact_match, nor a Python file',
      fix: 'name a .py file defining reward(task, trajectory) (relative to the config file), or leave it empty',
    },
  },
  'judge-needs-endpoint-model-rubric': {
    pass: { reward: { judge: JUDGE } },
    fail: { reward: { judge: { ...JUDGE, baseUrl: '' } } },
    issue: {
      field: 'reward.judge.baseUrl',
      value: '',
      message: 'a judge needs the endpoint it asks',
      fix: 'name the OpenAI-compatible endpoint up to /v1, e.g. "http://127.0.0.1:8080/v1"',
    },
  },
  'judge-key-env-name': {
    pass: { reward: { judge: { ...JUDGE, apiKeyEnv: 'MY_JUDGE_KEY' } } },
    fail: { reward: { judge: { ...JUDGE, apiKeyEnv: 'sk-live-1234' } } },
    issue: {
      field: 'reward.judge.apiKeyEnv',
      value: '(hidden)',
      message: "is not an environment variable's name (letters, digits and _, not starting with a digit)",
      fix: 'name the variable that holds the key, e.g. "AGENT_RL_JUDGE_API_KEY", and set the key there',
    },
  },
  'judge-url-no-credentials': {
    pass: { reward: { judge: { ...JUDGE, baseUrl: 'https://api.example.com/v1' } } },
    fail: { reward: { judge: { ...JUDGE, baseUrl: 'https://user:sk-canary@api.example.com/v1?api_key=sk-canary' } } },
    issue: {
      field: 'reward.judge.baseUrl',
      value: '(hidden)',
      message: 'holds a user name and a password and a query (?…), which can carry a credential that would be stored with the run',
      fix: 'name the endpoint alone up to /v1 (e.g. "https://api.example.com/v1") and put the key in the variable reward.judge.apiKeyEnv names (or Agent RL: Set Judge API Key)',
    },
  },
  'judge-for-grpo-only': {
    pass: { method: 'grpo', reward: { judge: JUDGE } },
    fail: { method: 'rs-sft', reward: { judge: JUDGE } },
    issue: { field: 'reward.judge', value: '{…}', message: 'method rs-sft does not train on the reward', fix: 'remove reward.judge, or use method "grpo"' },
  },
};

const RULES: readonly ConfigRule[] = [...SECTION_RULES, ...CONFIG_RULES];

/** The rule alone on a config drafted by the validator's first half (key and section checks, no rules but the section ones). */
function checkOne(rule: ConfigRule, input: Record<string, unknown>) {
  const { config, written } = draftRunConfig(input);
  return rule.check(config, written);
}

describe('config rules', () => {
  it('every rule has a stable, unique id, a description and a case below', () => {
    const ids = RULES.map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const r of RULES) assert.ok(r.description.length > 10, r.id);
    assert.deepEqual(ids.filter((id) => !(id in CASES)).sort(), []);
    assert.deepEqual(
      Object.keys(CASES).filter((id) => !ids.includes(id)),
      [],
    );
  });

  for (const rule of RULES) {
    const c = CASES[rule.id];
    if (c === undefined) continue; // reported above
    it(`${rule.id}: accepts its passing config`, () => {
      assert.deepEqual(checkOne(rule, c.pass), []);
      assert.doesNotThrow(() => validateRunConfig(c.pass));
    });
    it(`${rule.id}: refuses its failing config, naming the field, the value and the fix`, () => {
      assert.deepEqual(checkOne(rule, c.fail), [c.issue]);
      let error: unknown;
      try {
        validateRunConfig(c.fail);
      } catch (e) {
        error = e;
      }
      assert.ok(error instanceof ConfigError, `${rule.id}: the validator accepted ${JSON.stringify(c.fail)}`);
      // (a config this rule refuses may break another too: scoring with sft is also sft on binary-search)
      assert.deepEqual(
        error.issues.filter((i) => i.field === c.issue.field && i.message === c.issue.message),
        [c.issue],
        error.message,
      );
      assert.ok(error.message.includes(`  - ${c.issue.field} = ${JSON.stringify(c.issue.value)}: ${c.issue.message}. Fix: ${c.issue.fix}`), error.message);
    });
  }

  it('group-has-spread: the sample standard deviation needs two as well, whatever the method', () => {
    const rule = RULES.find((r) => r.id === 'group-has-spread')!;
    assert.deepEqual(checkOne(rule, { method: 'rs-sft', groupSize: 1, algorithm: { advantageStd: 'sample' } }), [
      { field: 'groupSize', value: 1, message: 'the sample standard deviation needs at least 2 trajectories', fix: 'set groupSize ≥ 2' },
    ]);
  });

  it('weightDtype q8 with llama.cpp sampling is accepted: llama.cpp samples a Q8_0 GGUF of the same blocks (issue 50, item 7)', () => {
    const config = validateRunConfig({ ...LM, policyOptions: { model: '/m', weightDtype: 'q8', rolloutEngine: 'llama.cpp', loraRank: 8 } });
    const po = config.policyOptions as { weightDtype?: string; rolloutEngine?: string };
    assert.deepEqual([po.weightDtype, po.rolloutEngine], ['q8', 'llama.cpp']);
  });

  it('agent-needs-chat-model: an agent program on the table policy is told to use a language model', () => {
    const rule = RULES.find((r) => r.id === 'agent-needs-chat-model')!;
    assert.deepEqual(checkOne(rule, { ...AGENT, policy: 'table', policyOptions: {} }), [
      {
        field: 'policy',
        value: 'table',
        message: 'an agent program talks to a language model',
        fix: 'use policy "transformer" with a Hugging Face checkpoint (policyOptions.model)',
      },
    ]);
  });

  it("the teacher rules' other branches: a table policy, a GRPO teacher without a weight, sft with a weight; distill's defaults", () => {
    const problems = (input: Record<string, unknown>): string[] => {
      try {
        validateRunConfig(input);
        return [];
      } catch (err) {
        return (err as ConfigError).issues.map((i) => `${i.field}: ${i.message}`);
      }
    };
    assert.deepEqual(problems({ method: 'distill' }), ["policy: distillation scores the policy's sampled tokens with a teacher language model"]);
    assert.deepEqual(problems({ ...LM, method: 'distill', policyOptions: { model: '/models/student' } }), [
      'policyOptions.teacher: distillation needs a teacher to score the sampled tokens',
    ]);
    assert.deepEqual(problems({ ...LM, policyOptions: { model: '/m', teacher: '/t' } }), [
      'policyOptions.teacher: the teacher would be loaded and score every token, and algorithm.teacherWeight 0 adds nothing of it',
    ]);
    assert.deepEqual(problems({ ...DISTILL, algorithm: { negativeAdvantageScale: 0 } }), [
      "algorithm.negativeAdvantageScale: scales negative group advantages, and distillation's are the teacher's per-token term",
    ]);
    assert.deepEqual(problems({ ...LM, method: 'sft', algorithm: { teacherWeight: 1 } }), [
      'algorithm.teacherWeight: sft trains by negative log-likelihood: there is no advantage to add a teacher term to',
    ]);
    // a warm start of a checkpoint folder is a student too; distillation takes w = 1 and no KL to the start
    const c = validateRunConfig({ ...LM, method: 'distill', policyOptions: { init: '/runs/run-1', teacher: '/t' } });
    assert.deepEqual([c.algorithm.teacherWeight, c.algorithm.klCoef, c.algorithm.policyLoss], [1, 0, 'clip']);
    assert.equal(validateRunConfig({ ...LM, policyOptions: { model: '/m' } }).algorithm.teacherWeight, 0);
  });

  it('a value already refused by its own field trips no rule (no second, confusing error)', () => {
    const e = (() => {
      try {
        validateRunConfig({ env: 'calculator', policy: 'transformer', envOptions: { minDepth: 'deep', maxDepth: 2 }, algorithm: { dualClip: 'x' } });
      } catch (err) {
        return err as ConfigError;
      }
      return assert.fail('expected a ConfigError');
    })();
    assert.deepEqual(e.issues.map((i) => i.field).sort(), ['algorithm.dualClip', 'envOptions.minDepth']);
    assert.ok(e.issues.every((i) => /must be a finite/.test(i.message)));
  });
});

describe('config derivations (defaults that follow another field)', () => {
  const derived = (input: Record<string, unknown>) => validateRunConfig(input).algorithm;

  it('every derivation is named and described', () => {
    assert.deepEqual(
      CONFIG_DERIVATIONS.map((d) => d.id),
      ['table-clip-high-follows-clip-low', 'async-recomputes-old-logprobs', 'llama-cpp-recomputes-old-logprobs'],
    );
    for (const d of CONFIG_DERIVATIONS) assert.ok(d.description.length > 10, d.id);
  });

  it("table-clip-high-follows-clip-low: the table's one ε moves both bounds unless clipHigh is given; a language model keeps its own", () => {
    assert.deepEqual([derived({ algorithm: { clipLow: 0.3 } }).clipHigh, derived({ algorithm: { clipLow: 0.3, clipHigh: 0.4 } }).clipHigh], [0.3, 0.4]);
    assert.equal(derived({ ...LM, algorithm: { clipLow: 0.3 } }).clipHigh, 0.28);
  });

  it('async-recomputes-old-logprobs: asynchronous runs recompute π_old with truncated IS, unless the config says otherwise', () => {
    const a = derived({ mode: 'async' });
    assert.deepEqual([a.oldLogprobs, a.offPolicyCorrection], ['recompute', 'truncated-is']);
    const b = derived({ mode: 'async', algorithm: { oldLogprobs: 'behaviour' } });
    assert.deepEqual([b.oldLogprobs, b.offPolicyCorrection], ['behaviour', 'none']);
    const c = derived({});
    assert.deepEqual([c.oldLogprobs, c.offPolicyCorrection], ['behaviour', 'none']);
  });

  it('llama-cpp-recomputes-old-logprobs: another engine sampling recomputes π_old with truncated IS, unless the config says otherwise', () => {
    const a = derived({ ...LM, policyOptions: { rolloutEngine: 'llama.cpp' } });
    assert.deepEqual([a.oldLogprobs, a.offPolicyCorrection], ['recompute', 'truncated-is']);
    const b = derived({ ...LM, policyOptions: { rolloutEngine: 'llama.cpp' }, algorithm: { offPolicyCorrection: 'none' } });
    assert.deepEqual([b.oldLogprobs, b.offPolicyCorrection], ['recompute', 'none']);
    const c = derived(LM);
    assert.deepEqual([c.oldLogprobs, c.offPolicyCorrection], ['behaviour', 'none']);
  });

  it('checkRules only checks: the derived defaults come from applyDerivations alone', () => {
    const { config, written } = draftRunConfig({ mode: 'async', algorithm: { clipLow: 0.3 } });
    const before = structuredClone(config);
    checkRules(config, written);
    assert.deepEqual(config, before);
    applyDerivations(config, written);
    assert.deepEqual([config.algorithm.clipHigh, config.algorithm.oldLogprobs, config.algorithm.offPolicyCorrection], [0.3, 'recompute', 'truncated-is']);
  });
});
