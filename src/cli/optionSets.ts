// The option sets several commands share, each declared once and listed in the `sets` of the commands
// that take it (command.ts merges its flags and help lines in): the database and its busy timeout,
// --json, and the flags that set run-config fields (train and sft only). The busy timeout is parsed and
// validated here and nowhere else.
import * as path from 'node:path';
import type { ParseArgsOptionsConfig } from 'node:util';
import { DEFAULT_DB_PATH } from '../store/openStore';
import type { OptionSet } from './command';
import { ALGORITHM_FLAGS, CONFIG_FLAGS, POLICY_FLAGS } from './runConfigArgs';
import { UsageError } from './usageError';

/** How long a command waits for a database another process holds locked, unless --busy-timeout says (ms). */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

const DATABASE_OPTIONS = {
  db: { type: 'string' },
  'busy-timeout': { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

/** `--db FILE` and `--busy-timeout MS`: every command that opens the runs database. */
export const DATABASE: OptionSet<typeof DATABASE_OPTIONS> = {
  options: DATABASE_OPTIONS,
  help: [
    `  --db FILE     the runs database (default ${DEFAULT_DB_PATH} under the current folder)`,
    `  --busy-timeout MS  wait this long for a database another process holds locked (default ${DEFAULT_BUSY_TIMEOUT_MS})`,
  ],
};

/** The database a command opens: its absolute path and the busy timeout (ms), the one place --busy-timeout is read. */
export function databaseOf(values: Readonly<Record<string, unknown>>): { db: string; busyTimeoutMs: number } {
  const [db, busy] = [values.db, values['busy-timeout']];
  // parseArgs gives a string-typed flag's value as a string: anything else is not a value it can give
  if (busy !== undefined && (typeof busy !== 'string' || !/^\d+$/.test(busy)))
    throw new UsageError(`--busy-timeout ${typeof busy === 'string' ? busy : '(no value)'}: use a whole number of milliseconds ≥ 0`);
  return { db: path.resolve(typeof db === 'string' ? db : DEFAULT_DB_PATH), busyTimeoutMs: busy === undefined ? DEFAULT_BUSY_TIMEOUT_MS : Number(busy) };
}

const JSON_OPTIONS = { json: { type: 'boolean' } } as const satisfies ParseArgsOptionsConfig;

/** `--json`: the command's result as JSON on stdout, stored text escaped as \u sequences. */
export const JSON_OUTPUT: OptionSet<typeof JSON_OPTIONS> = {
  options: JSON_OPTIONS,
  help: ['  --json        print the result as JSON'],
};

/** The flags that set a run-config field (CONFIG_FLAGS, ALGORITHM_FLAGS, POLICY_FLAGS), all strings until validated. */
const RUN_CONFIG_OPTIONS = Object.fromEntries(
  [...Object.keys(CONFIG_FLAGS), ...Object.keys(ALGORITHM_FLAGS), ...Object.keys(POLICY_FLAGS)].map((k) => [k, { type: 'string' }] as const),
) as Record<string, { readonly type: 'string' }>;

/** train's and sft's flags over the --config file; the reference page's table says what each one sets. */
export const RUN_CONFIG: OptionSet<typeof RUN_CONFIG_OPTIONS> = {
  options: RUN_CONFIG_OPTIONS,
  help: [
    'Run-config flags (override the --config FILE, a JSON run config; docs/reference/options.md has every field):',
    '  --env E  --policy P  --method M  --name NAME  --seed N  --iterations N',
    '  --groups N        groups per iteration        --group-size N   trajectories per group',
    '  --lr X            algorithm.learningRate      --clip X         algorithm.clipLow (ratio clip ε_low)',
    '  --kl X            algorithm.klCoef            --epochs N       algorithm.epochs',
    '  --std population|sample                       --estimator grpo|dr-grpo|rloo',
    '  --policy-loss clip|gspo|cispo                 algorithm.policyLoss (the policy-gradient loss)',
    '  --eval-episodes N   --eval-seed N   --eval-interval N   --pass-k K (sampled pass@k of every evaluation)',
    '  --init DIR        start the transformer from a checkpoint  --backend auto|wasm|cpu|tensorflow|tensorflow-gpu',
    '  --tokenizer DIR   a Hugging Face tokenizer.json directory (default: character-level)',
    '  --model DIR       a local Hugging Face checkpoint (qwen2, qwen3, llama, gpt2) as the policy, LoRA rank 8 by default',
    '  --teacher DIR     a frozen Hugging Face checkpoint with the same tokenizer that scores every sampled token (--method distill)',
    '  --teacher-weight X  algorithm.teacherWeight: the teacher term per token (distill: 1; on a GRPO run, added to its advantage)',
    '  --weight-dtype auto|bf16|f32|q8   policyOptions.weightDtype (q8: Q8_0 blocks of 32 on the wasm engine, LoRA only)',
  ],
};
