// Run presets offered by "Agent RL: Start Run": environment × policy × method, each a partial config.
import type { RunConfig } from './runConfig';

export interface Preset {
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly config: Partial<RunConfig>;
}

export const PRESETS: readonly Preset[] = [
  { id: 'binary-search-grpo', label: 'Binary search · table · GRPO', description: 'Seed 002: six tool actions, 100 iterations, about a second', config: { env: 'binary-search', policy: 'table', method: 'grpo' } },
  { id: 'binary-search-rs-sft', label: 'Binary search · table · RS-SFT', description: 'Seed 002 baseline: fine-tune on successful samples only', config: { env: 'binary-search', policy: 'table', method: 'rs-sft' } },
  { id: 'calculator-sft', label: 'Calculator · transformer · SFT', description: 'Warm start a small transformer on the reference agent\'s (imperfect: it guesses on most multiplications) tool-call demonstrations (minutes)', config: { env: 'calculator', policy: 'transformer', method: 'sft' } },
  { id: 'calculator-grpo', label: 'Calculator · transformer · GRPO', description: 'Token-level GRPO; set policyOptions.init to an SFT checkpoint first', config: { env: 'calculator', policy: 'transformer', method: 'grpo' } },
  { id: 'calculator-rs-sft', label: 'Calculator · transformer · RS-SFT', description: 'The control for GRPO: fine-tune on its own successes from the same checkpoint', config: { env: 'calculator', policy: 'transformer', method: 'rs-sft' } },
  { id: 'code-sft', label: 'Code · transformer · SFT', description: 'Warm start on sandboxed write-run-fix demonstrations', config: { env: 'code', policy: 'transformer', method: 'sft' } },
];
