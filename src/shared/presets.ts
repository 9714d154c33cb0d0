// Run presets offered by "Agent RL: Start Run": environment × policy × method, each a partial config.
import type { RunConfigInput } from './runConfig';

export interface Preset {
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly config: RunConfigInput;
  /** The preset runs a local Hugging Face checkpoint: policyOptions.model must be given (Start Run asks for the folder). */
  readonly needsModel?: boolean;
}

export const PRESETS: readonly Preset[] = [
  {
    id: 'binary-search-grpo',
    label: 'Binary search · table · GRPO',
    description: 'Seed 002: six tool actions, 100 iterations, about a second',
    config: { env: 'binary-search', policy: 'table', method: 'grpo' },
  },
  {
    id: 'binary-search-rs-sft',
    label: 'Binary search · table · RS-SFT',
    description: 'Seed 002 baseline: fine-tune on successful samples only',
    config: { env: 'binary-search', policy: 'table', method: 'rs-sft' },
  },
  {
    id: 'calculator-sft',
    label: 'Calculator · transformer · SFT',
    description: "Warm start a small transformer on the reference agent's (imperfect: it guesses on most multiplications) tool-call demonstrations (minutes)",
    config: { env: 'calculator', policy: 'transformer', method: 'sft' },
  },
  {
    id: 'calculator-grpo',
    label: 'Calculator · transformer · GRPO',
    description: 'Token-level GRPO; set policyOptions.init to an SFT checkpoint first',
    config: { env: 'calculator', policy: 'transformer', method: 'grpo' },
  },
  {
    id: 'calculator-rs-sft',
    label: 'Calculator · transformer · RS-SFT',
    description: 'The control for GRPO: fine-tune on its own successes from the same checkpoint',
    config: { env: 'calculator', policy: 'transformer', method: 'rs-sft' },
  },
  {
    id: 'code-sft',
    label: 'Code · transformer · SFT',
    description: 'Warm start on sandboxed write-run-fix demonstrations',
    config: { env: 'code', policy: 'transformer', method: 'sft' },
  },
  {
    id: 'seed000',
    label: 'Seed 000 · your Hugging Face model · GRPO (LoRA)',
    needsModel: true,
    description:
      "Seed 000's experiment on a local checkpoint folder (e.g. Qwen2.5-0.5B-Instruct, which you choose): code tasks with its three among them, 3 prompts × group 4, at most 3 turns, KL 0.04 (k3), lr 5e-5, 30 steps, 1,024-token contexts; LoRA rank 8 (the seed fine-tunes every weight: policyOptions.loraRank 0 where memory allows)",
    config: {
      env: 'code',
      policy: 'transformer',
      method: 'grpo',
      iterations: 30,
      groupsPerIteration: 3,
      groupSize: 4,
      maxTurns: 3,
      evalEpisodes: 60,
      algorithm: {
        learningRate: 5e-5,
        klCoef: 0.04,
        klEstimator: 'k3',
        advantageStd: 'sample',
        warmupSteps: 0,
        clipLow: 0.2,
        clipHigh: 0.2,
        epochs: 1,
        minibatchSize: 0,
        skipZeroAdvantage: false,
        maxGradNorm: 0,
      },
      // seed 000's prompt, three turns of up to 256 tokens and their observations
      policyOptions: { temperature: 1, maxNewTokens: 256, contextLength: 1024 },
    },
  },
];

/** A preset by id, with the fix when there is none. */
export function presetById(id: string): Preset {
  const p = PRESETS.find((x) => x.id === id);
  if (!p) throw new Error(`preset ${JSON.stringify(id)} does not exist; the presets: ${PRESETS.map((x) => x.id).join(', ')}`);
  return p;
}
