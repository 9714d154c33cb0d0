// How a thrown error becomes agent-rl's exit code. A user-facing error class says it itself with
// `readonly exitCode = 2` where it is declared (bad input: usage, config, database, a model or task file
// that cannot be used), so a new one needs no edit here; any other error is a failure while running (1).
// Exit codes: 0 ok, 1 failure while running, 2 bad input (usage, config, database), 130 cancelled.
/** The exit codes an error may carry: 0 and 130 are not an error's (success, and a cancel the command reports itself). */
const ERROR_EXIT_CODES: ReadonlySet<number> = new Set([1, 2]);

/**
 * The exit code `e` carries, or undefined for an error that carries none (a bug or a failure while
 * running: exit 1, printed with its stack).
 */
export function carriedExitCode(e: unknown): number | undefined {
  const code = e instanceof Error ? (e as { exitCode?: unknown }).exitCode : undefined;
  return typeof code === 'number' && ERROR_EXIT_CODES.has(code) ? code : undefined;
}
