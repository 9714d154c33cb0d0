import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/** Bad command-line input: printed without a stack trace, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A subcommand's own arguments, parsed strictly against its option table (positionals allowed): a bad
 * flag is a UsageError with `usage` after it; `--help` prints `help` (default the usage) and gives
 * undefined, the command then exiting 0.
 */
export function parseCommandArgs<T extends ParseArgsOptionsConfig>(args: readonly string[], options: T, usage: string, help = usage) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n\n${usage}`);
  }
  if ((parsed.values as { help?: unknown }).help === true) {
    process.stdout.write(`${help}\n`);
    return undefined;
  }
  return parsed;
}
