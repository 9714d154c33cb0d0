// The sandbox's isolation levels and the options every environment that runs Python shares (kind,
// range and default written once; each environment's table says them in its own words).
import type { OptionSpec } from './fieldSpec';

/** The sandbox's isolation levels, strongest first (src/rl/sandbox/isolation.ts says what each holds). */
export const ISOLATION_LEVELS = ['strict', 'landlock', 'seatbelt', 'network', 'process'] as const;
export type IsolationLevel = (typeof ISOLATION_LEVELS)[number];
export const SANDBOX_LEVELS = ['auto', ...ISOLATION_LEVELS] as const;
/** How strongly model-written code is isolated ('auto' = the strongest this machine has). */
export type SandboxLevel = (typeof SANDBOX_LEVELS)[number];
export const isSandboxLevel = (s: unknown): s is SandboxLevel => typeof s === 'string' && (SANDBOX_LEVELS as readonly string[]).includes(s);

/** The kind, range and default of the sandbox options of every environment that runs Python (written once; each table says them in its words). */
export const SANDBOX_RANGES = {
  sandbox: { kind: 'enum', values: SANDBOX_LEVELS, default: 'auto' },
  timeoutMs: { kind: 'integer', min: 100, max: 600_000, default: 5000 },
  tailBytes: { kind: 'integer', min: 256, max: 1_048_576, default: 4096 },
  outputCapBytes: { kind: 'integer', min: 1024, max: 1_073_741_824, default: 1_048_576 },
  poolSize: { kind: 'integer', min: 1, max: 64, default: 2 },
} as const;

/** The interpreter of every environment that runs Python in the sandbox. */
export const PYTHON_OPTION = {
  kind: 'string',
  maxLength: 4096,
  default: '',
  description: 'Python 3 interpreter path (empty = /usr/bin/python3, else python3 on PATH).',
  reason: 'the system interpreter is the one the strict sandbox can see',
} as const satisfies OptionSpec;
