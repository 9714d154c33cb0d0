// The "New Environment" template: a workspace environment that runs as is (a task file with
// demonstrations, a Python tool, a Python reward, and two run configs: an SFT warm start and GRPO from
// it). examples/unit-converter/ holds exactly these files (a unit test keeps them equal).
// Held-out tasks convert quantities (81–99) no training task converts: evaluation asks for more than recall.

interface Conversion {
  readonly from: string;
  readonly to: string;
  readonly factor: number;
}

/** Every conversion from a larger unit to a smaller one of the same kind: whole-number results. */
const UNITS: readonly (readonly [string, number][])[] = [
  [['km', 1000], ['m', 1], ['cm', 0.01], ['mm', 0.001]],
  [['kg', 1000], ['g', 1], ['mg', 0.001]],
  [['day', 86400], ['h', 3600], ['min', 60], ['s', 1]],
];
const CONVERSIONS: readonly Conversion[] = UNITS.flatMap((kind) => kind.flatMap(([from, a], i) => kind.slice(i + 1).map(([to, b]) => ({ from, to, factor: Math.round(a / b) }))));
/** Training quantities are 1–80; held-out ones 81–99, quantities no training task converts. */
const TRAIN_VALUES = 80;
const VALUES = 99;

export const TEMPLATE_TOOLS_PY = `"""Tools of the unit-converter environment: every public function here is a tool.

Type hints and the docstring become the tool's JSON schema; EXAMPLES lets \`agent-rl env check\` try each tool.
Each episode gets its own process, so module state (the history below) lasts for the episode.
"""

FACTORS = {
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0), "km": ("length", 1000.0),
    "mg": ("mass", 0.001), "g": ("mass", 1.0), "kg": ("mass", 1000.0),
    "s": ("time", 1.0), "min": ("time", 60.0), "h": ("time", 3600.0), "day": ("time", 86400.0),
}
_history = []


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert a quantity from one unit to another of the same kind.

    Args:
        value: the quantity to convert
        from_unit: its unit (mm, cm, m, km, mg, g, kg, s, min, h, day)
        to_unit: the unit wanted
    """
    if from_unit not in FACTORS or to_unit not in FACTORS:
        raise ValueError("unknown unit; use one of " + ", ".join(FACTORS))
    (kind_a, a), (kind_b, b) = FACTORS[from_unit], FACTORS[to_unit]
    if kind_a != kind_b:
        raise ValueError(f"cannot convert {kind_a} to {kind_b}")
    result = value * a / b
    _history.append((value, from_unit, to_unit))
    return int(round(result)) if abs(result - round(result)) < 1e-9 else round(result, 6)


def conversions_so_far() -> int:
    """How many conversions this episode has made."""
    return len(_history)


EXAMPLES = {"convert": {"value": 2, "from_unit": "km", "to_unit": "m"}, "conversions_so_far": {}}
`;

export const TEMPLATE_REWARD_PY = `"""Reward of the unit-converter environment, run in the sandbox after each episode.

task: {"id", "prompt", "ground_truth", "public_tests", "private_tests", "metadata"}
trajectory: {"turns": [{"action", "tool", "observation", "error"}], "answer", "code", "tool_calls", "invalid_calls"}
Return a number, or {"score": number, ...extras}: the extras are stored per episode and plotted.
"""


def reward(task, trajectory):
    answer = trajectory["answer"]
    try:
        correct = answer is not None and abs(float(answer) - float(task["ground_truth"])) < 1e-6
    except ValueError:
        correct = False
    return {"score": 1.0 if correct else 0.0, "answered": answer is not None, "invalid_calls": trajectory["invalid_calls"]}
`;

/** tasks.jsonl: every conversion of the values 1–99, with its split and a demonstration. */
export function templateTasks(): string {
  const lines: string[] = [];
  let n = 0;
  for (const c of CONVERSIONS) {
    for (let v = 1; v <= VALUES; v++) {
      n += 1;
      const answer = v * c.factor;
      lines.push(JSON.stringify({
        id: `convert-${String(n).padStart(4, '0')}`,
        prompt: `Convert ${v} ${c.from} to ${c.to}.`,
        answer,
        split: v > TRAIN_VALUES ? 'test' : 'train',
        demonstration: [`<call>convert(${v}, "${c.from}", "${c.to}")</call>`, `<answer>${answer}</answer>`],
      }));
    }
  }
  return `${lines.join('\n')}\n`;
}

const ENV_OPTIONS = { tasks: 'tasks.jsonl', tools: 'tools.py', reward: 'reward.py', toolFormat: 'call', maxCalls: 4 };
const POLICY = { contextLength: 224, maxNewTokens: 40 };

export const TEMPLATE_SFT_CONFIG = `${JSON.stringify({
  name: 'unit-converter-sft', env: 'workspace', policy: 'transformer', method: 'sft', seed: 1,
  iterations: 300, groupsPerIteration: 32, evalEpisodes: 285,
  algorithm: { learningRate: 0.003 },
  envOptions: ENV_OPTIONS, policyOptions: POLICY,
}, null, 2)}\n`;

export const TEMPLATE_RUN_CONFIG = `${JSON.stringify({
  name: 'unit-converter-grpo', env: 'workspace', policy: 'transformer', method: 'grpo', seed: 1,
  iterations: 20, groupsPerIteration: 16, groupSize: 8, evalEpisodes: 1140, evalPassK: 4,
  envOptions: ENV_OPTIONS, policyOptions: POLICY,
}, null, 2)}\n`;

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
    'tasks.jsonl': templateTasks(), 'tools.py': TEMPLATE_TOOLS_PY, 'reward.py': TEMPLATE_REWARD_PY,
    'sft.agentrl.json': TEMPLATE_SFT_CONFIG, 'run.agentrl.json': TEMPLATE_RUN_CONFIG, 'README.md': TEMPLATE_README,
  };
}
