// The "New Environment" template: a workspace environment that runs as is (a task file with
// demonstrations, a Python tool, a Python reward, and two run configs: an SFT warm start and GRPO from
// it). examples/unit-converter/ holds exactly these files (a unit test keeps them equal); its tools.py
// and reward.py are the source of the Python here (npm run build:python).
// The tasks are built so that RL has a habit to break and held-out tasks test the same skills:
// - held-out quantities are interleaved with training ones (every quantity ≡ 3 mod 5: 3, 8, …, 298), so
//   every digit, every quantity's neighbours and every unit pair appear in training;
// - the demonstrations are imperfect on one class: on 2 of every 3 time conversions (day, h, min, s)
//   the demonstrator skips the tool and answers with the quantity it was given (a habit a student
//   copies: greedy decoding then fails every time conversion), and calls the tool on the third, so a
//   sampled episode sometimes converts and succeeds. Length and mass conversions always use the tool;
//   the imperial ones (×3, ×12, ×36, ×1760, …) teach the student to copy the tool's result, which
//   powers of ten alone do not (the student learns to append zeros instead).

import { TEMPLATE_REWARD_PY, TEMPLATE_TOOLS_PY } from './environmentTemplatePy.generated';

export { TEMPLATE_REWARD_PY, TEMPLATE_TOOLS_PY };

interface Conversion {
  readonly kind: string;
  readonly from: string;
  readonly to: string;
  readonly factor: number;
}

/** Every conversion from a larger unit to a smaller one of the same system and kind: whole-number results. */
const UNITS: readonly { readonly kind: string; readonly units: readonly (readonly [string, number])[] }[] = [
  {
    kind: 'length',
    units: [
      ['km', 1000],
      ['m', 1],
      ['cm', 0.01],
      ['mm', 0.001],
    ],
  },
  {
    kind: 'length',
    units: [
      ['mi', 63360],
      ['yd', 36],
      ['ft', 12],
      ['in', 1],
    ],
  },
  {
    kind: 'mass',
    units: [
      ['kg', 1000],
      ['g', 1],
      ['mg', 0.001],
    ],
  },
  {
    kind: 'time',
    units: [
      ['day', 86400],
      ['h', 3600],
      ['min', 60],
      ['s', 1],
    ],
  },
];
const CONVERSIONS: readonly Conversion[] = UNITS.flatMap(({ kind, units }) =>
  units.flatMap(([from, a], i) => units.slice(i + 1).map(([to, b]) => ({ kind, from, to, factor: Math.round(a / b) }))),
);
/**
 * Quantities 1–299; those ≡ 3 mod 5 are held out (60 of them), the other 239 train: too many tasks for
 * a small model to memorise each one's answer.
 */
const VALUES = 299;
/** A held-out quantity: every fifth, interleaved with the training ones. */
export function heldOutQuantity(v: number): boolean {
  return v % 5 === 3;
}
/** The unit kinds whose demonstrations skip the tool (on 2 of every 3 tasks). */
const SKIPPING_KINDS: ReadonlySet<string> = new Set(['time']);
const KIND_OF: ReadonlyMap<string, string> = new Map(UNITS.flatMap(({ kind, units }) => units.map(([unit]) => [unit, kind] as const)));

/** The unit kind of a conversion (length, mass or time). */
export function conversionKind(fromUnit: string): string {
  return KIND_OF.get(fromUnit) ?? 'unknown';
}

/**
 * A task's demonstration: the tool call and the answer it returns, or, on 2 of every 3 time
 * conversions (chosen by quantity and conversion, so every pair has both among its training quantities), the quantity
 * copied as the answer at once.
 */
function demonstration(v: number, c: Conversion, conversionIndex: number, answer: number): string[] {
  const skips = SKIPPING_KINDS.has(c.kind) && (v + conversionIndex) % 3 !== 0;
  return skips ? [`<answer>${v}</answer>`] : [`<call>convert(${v}, "${c.from}", "${c.to}")</call>`, `<answer>${answer}</answer>`];
}

/** tasks.jsonl: every conversion of the values 1–299, with its split and a demonstration. */
export function templateTasks(): string {
  const lines: string[] = [];
  let n = 0;
  CONVERSIONS.forEach((c, ci) => {
    for (let v = 1; v <= VALUES; v++) {
      n += 1;
      const answer = v * c.factor;
      lines.push(
        JSON.stringify({
          id: `convert-${String(n).padStart(5, '0')}`,
          prompt: `Convert ${v} ${c.from} to ${c.to}.`,
          answer,
          split: heldOutQuantity(v) ? 'test' : 'train',
          demonstration: demonstration(v, c, ci, answer),
        }),
      );
    }
  });
  return `${lines.join('\n')}\n`;
}

const ENV_OPTIONS = { tasks: 'tasks.jsonl', tools: 'tools.py', reward: 'reward.py', toolFormat: 'call', maxCalls: 4 };
const POLICY = { contextLength: 224, maxNewTokens: 40 };

export const TEMPLATE_SFT_CONFIG = `${JSON.stringify(
  {
    name: 'unit-converter-sft',
    env: 'workspace',
    policy: 'transformer',
    method: 'sft',
    seed: 1,
    iterations: 300,
    groupsPerIteration: 32,
    evalEpisodes: 1260,
    algorithm: { learningRate: 0.003 },
    envOptions: ENV_OPTIONS,
    policyOptions: POLICY,
  },
  null,
  2,
)}\n`;

export const TEMPLATE_RUN_CONFIG = `${JSON.stringify(
  {
    name: 'unit-converter-grpo',
    env: 'workspace',
    policy: 'transformer',
    method: 'grpo',
    seed: 1,
    iterations: 20,
    groupsPerIteration: 16,
    groupSize: 8,
    evalEpisodes: 2520,
    evalPassK: 2,
    envOptions: ENV_OPTIONS,
    policyOptions: POLICY,
  },
  null,
  2,
)}\n`;

export const TEMPLATE_README = `# unit-converter: a workspace environment

- \`tasks.jsonl\`: one task per line (\`prompt\`, \`answer\`, \`split\`, and a \`demonstration\` for the warm start).
  Held out: the 1,260 conversions of the quantities 3, 8, …, 298 (every fifth, between training ones).
- \`tools.py\`: the tools; \`reward.py\`: the reward.
- \`sft.agentrl.json\`: a warm start that imitates the demonstrations; \`run.agentrl.json\`: GRPO from it.

The demonstrations have a habit to break: on 2 of every 3 time conversions (day, h, min, s) they skip
the tool and answer with the quantity they were given. The warm start copies that, so it fails time
conversions under greedy decoding, but it samples the tool now and then; GRPO rewards those episodes.

Check it without training: \`agent-rl env check --config run.agentrl.json\`.
Train: \`agent-rl sft --config sft.agentrl.json\`, then \`agent-rl train --config run.agentrl.json --init CHECKPOINT\`
with the checkpoint folder the first command prints. In VS Code: Agent RL: Start Run and pick a config.
`;

/** File name → content of a new environment folder. */
export function environmentTemplate(): Readonly<Record<string, string>> {
  return {
    'tasks.jsonl': templateTasks(),
    'tools.py': TEMPLATE_TOOLS_PY,
    'reward.py': TEMPLATE_REWARD_PY,
    'sft.agentrl.json': TEMPLATE_SFT_CONFIG,
    'run.agentrl.json': TEMPLATE_RUN_CONFIG,
    'README.md': TEMPLATE_README,
  };
}
