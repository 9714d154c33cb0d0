// The agent-rl command's dispatch: the registry of commands (each declared once, in its own file, with
// command.ts's defineCommand), the top-level usage generated from them, and the one place an error
// becomes exit code and message. main.ts runs it as the process entry; tests run it in-process over
// many argument lists (the hostile-text matrix), so nothing here touches process.exitCode or exits.
// Exit codes: 0 ok, 1 failure while running, 2 bad input (usage, config, database), 130 cancelled.
import { showInvisibles } from '../shared/untrustedText';
import { DEFAULT_DB_PATH } from '../store/openStore';
import { formsOf, type Command } from './command';
import { envCommand } from './envCommands';
import { carriedExitCode } from './exitCodes';
import { exportCommand } from './exportCommand';
import { importCommand } from './importCommand';
import { modelCommand } from './modelCommand';
import { runsCommand, showCommand, trajectoryCommand } from './queryCommands';
import { healthCommand } from './healthCommand';
import { requestCommand } from './requestCommand';
import { rescoreCommand } from './rescoreCommand';
import { sandboxCommand } from './sandboxCommand';
import { serveCommand } from './serveCommand';
import { trainCommands } from './trainCommands';
import { UsageError } from './usageError';

/** Every command, in the order the usage lists them. */
export const COMMANDS: readonly Command[] = [
  ...trainCommands,
  runsCommand,
  showCommand,
  trajectoryCommand,
  healthCommand,
  envCommand,
  rescoreCommand,
  requestCommand,
  serveCommand,
  importCommand,
  sandboxCommand,
  exportCommand,
  modelCommand,
];

/** A command's entries in the top-level usage: each of its forms (a group: each subcommand's), then its summary. */
function usageEntry(c: Command): string[] {
  if (c.subcommands) return c.subcommands.flatMap(usageEntry);
  return [...formsOf(c).map((f) => `  ${f}`), `        ${c.summary}`];
}

/** What `agent-rl`, `agent-rl help` and an unknown command print. */
export const USAGE = [
  'agent-rl — train and inspect agentic RL runs',
  '',
  'Usage:',
  ...COMMANDS.flatMap(usageEntry),
  '',
  "agent-rl COMMAND --help: the command's flags and what they mean (train --help and sft --help also list every",
  'algorithm setting with the default that run would use and what it trades).',
  `Database: ${DEFAULT_DB_PATH} under the current folder unless --db is given.`,
  'Exit codes: 0 ok, 1 failure while running, 2 bad input (usage, config, database), 130 cancelled.',
].join('\n');

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new UsageError(`unknown command "${name}"\n\n${USAGE}`);
  return command.invoke(rest);
}

/**
 * A thrown error as agent-rl reports it, on stderr: one that carries its exit code (bad input,
 * exitCodes.ts) as its message, any other with its stack (exit 1). Gives the exit code.
 */
export function reportError(e: unknown): number {
  const code = carriedExitCode(e);
  const text = code !== undefined ? (e as Error).message : e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`agent-rl: ${showInvisibles(text)}\n`);
  return code ?? 1;
}

/** Runs one agent-rl command line: its exit code; a thrown error is reported by reportError. */
export async function runCli(argv: readonly string[]): Promise<number> {
  try {
    return await main(argv);
  } catch (e) {
    return reportError(e);
  }
}
