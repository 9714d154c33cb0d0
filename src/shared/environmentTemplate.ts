// The "New Environment" template: a workspace environment that runs as is (a task file with
// demonstrations, a Python tool, a Python reward, and two run configs: an SFT warm start and GRPO from
// it). examples/unit-converter/ holds exactly these files (a unit test keeps them equal); its tools.py
// and reward.py are the source of the Python here (npm run build:python).
// Held-out tasks convert quantities (81–99) no training task converts: evaluation asks for more than recall.

import { TEMPLATE_REWARD_PY, TEMPLATE_TOOLS_PY } from './environmentTemplatePy.generated';

export { TEMPLATE_REWARD_PY, TEMPLATE_TOOLS_PY };

interface Conversion {
  readonly from: string;
  readonly to: string;
  readonly factor: number;
}

/** Every conversion from a larger unit to a smaller one of the same kind: whole-number results. */
const UNITS: readonly (readonly [string, number][])[] = [
  [
    ['km', 1000],
    ['m', 1],
    ['cm', 0.01],
    ['mm', 0.001],
  ],
  [
    ['kg', 1000],
    ['g', 1],
    ['mg', 0.001],
  ],
  [
    ['day', 86400],
    ['h', 3600],
    ['min', 60],
    ['s', 1],
  ],
];
const CONVERSIONS: readonly Conversion[] = UNITS.flatMap((kind) =>
  kind.flatMap(([from, a], i) => kind.slice(i + 1).map(([to, b]) => ({ from, to, factor: Math.round(a / b) }))),
);
/** Training quantities are 1–80; held-out ones 81–99, quantities no training task converts. */
const TRAIN_VALUES = 80;
const VALUES = 99;

/** tasks.jsonl: every conversion of the values 1–99, with its split and a demonstration. */
export function templateTasks(): string {
  const lines: string[] = [];
  let n = 0;
  for (const c of CONVERSIONS) {
    for (let v = 1; v <= VALUES; v++) {
      n += 1;
      const answer = v * c.factor;
      lines.push(
        JSON.stringify({
          id: `convert-${String(n).padStart(4, '0')}`,
          prompt: `Convert ${v} ${c.from} to ${c.to}.`,
          answer,
          split: v > TRAIN_VALUES ? 'test' : 'train',
          demonstration: [`<call>convert(${v}, "${c.from}", "${c.to}")</call>`, `<answer>${answer}</answer>`],
        }),
      );
    }
  }
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
    evalEpisodes: 285,
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
    evalEpisodes: 1140,
    evalPassK: 4,
    envOptions: ENV_OPTIONS,
    policyOptions: POLICY,
  },
  null,
  2,
)}\n`;

export const TEMPLATE_README = `# unit-converter: a workspace environment

- \`tasks.jsonl\`: one task per line (\`prompt\`, \`answer\`, \`split\`, and a \`demonstration\` for the warm start).
- \`tools.py\`: the tools; \`reward.py\`: the reward.
- \`sft.agentrl.json\`: a warm start that imitates the demonstrations; \`run.agentrl.json\`: GRPO from it.

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
