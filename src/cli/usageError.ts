/** Bad command-line input: printed without a stack trace, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  readonly exitCode = 2; // bad input, not a failure while running: agent-rl exits 2 (src/cli/exitCodes.ts)
}
