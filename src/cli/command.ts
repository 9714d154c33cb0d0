// One agent-rl command, declared once: its name, a one-line summary, the usage its --help prints, its
// own flags (node:util parseArgs option config), how many positionals it takes, and what it runs. The
// dispatcher (cli.ts), the top-level usage and docs/reference/cli.md are all built from these
// declarations, so a command's flags, help and reference entry cannot drift apart.
// Parsing is strict: a flag the command does not declare is a UsageError naming the flag and ending in
// the command's usage (exit 2), never accepted and ignored.
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { UsageError } from './usageError';

/** A group of flags several commands take (the database, --json, …): declared once, its help lines beside it. */
export interface OptionSet<O extends ParseArgsOptionsConfig = ParseArgsOptionsConfig> {
  readonly options: O;
  /** Lines appended to the usage of every command that takes the set ("  --db FILE  the database …"). */
  readonly help: readonly string[];
}

/** Every command takes -h / --help: its usage on stdout, exit 0. */
export const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const satisfies ParseArgsOptionsConfig;

type Parsed<O extends ParseArgsOptionsConfig> = ReturnType<typeof parseArgs<{ options: O; allowPositionals: true; strict: true }>>;

type Intersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;
/** The flags of a command's own table and of every set it takes, as one table type. */
type AllOptions<O extends ParseArgsOptionsConfig, S extends readonly OptionSet[]> = O & Intersection<S[number]['options']> & typeof HELP_OPTION;

/** What a command's run receives: its flags' values (typed from its option table) and its positionals. */
export interface CommandArgs<O extends ParseArgsOptionsConfig> {
  readonly values: Parsed<O>['values'];
  readonly positionals: readonly string[];
}

/** How many positionals a command takes; `error` is the message when the count is wrong (the usage follows it). */
export interface PositionalSpec {
  readonly min: number;
  readonly max: number;
  readonly error: string;
}

/** A command's declaration, before its shared option sets are merged in. */
export interface CommandSpec<O extends ParseArgsOptionsConfig, S extends readonly OptionSet[]> {
  /** The words that select it: "show", or "env check" for a subcommand of a group. */
  readonly name: string;
  /** One line, shown under the command in the top-level usage. */
  readonly summary: string;
  /** What --help prints: its forms (lines starting "agent-rl "), then what its positionals and flags mean. */
  readonly usage: string;
  /** Its own flags. */
  readonly options: O;
  /** Option sets it shares with other commands: their flags join `options`, their help lines the usage. */
  readonly sets: S;
  /** Text after the flags (the sets' help lines included), if any. */
  readonly notes?: string;
  readonly positionals: PositionalSpec;
  /** What --help prints, given the whole usage (default: the usage; train adds the algorithm table of the run the flags describe). */
  readonly help?: (args: CommandArgs<AllOptions<O, S>>, usage: string) => string;
  run(args: CommandArgs<AllOptions<O, S>>): Promise<number> | number;
}

/** A declared command with its types erased, as the registry holds it. */
export interface Command {
  readonly name: string;
  readonly summary: string;
  /** The whole --help text (the sets' help lines included). */
  readonly usage: string;
  /** Every flag it accepts, --help included. */
  readonly options: ParseArgsOptionsConfig;
  /** A group's subcommands (env: check, run); absent for a plain command. */
  readonly subcommands?: readonly Command[];
  /** Parses `args` (the words after the command's name) and runs it: the exit code. */
  invoke(args: readonly string[]): Promise<number>;
}

/** The forms of a command: the lines of its usage that start with "agent-rl " (what the top-level usage lists). */
export const formsOf = (c: Command): string[] => c.usage.split('\n').filter((l) => l.startsWith('agent-rl '));

export function defineCommand<O extends ParseArgsOptionsConfig, const S extends readonly OptionSet[]>(spec: CommandSpec<O, S>): Command {
  const options = Object.assign({}, spec.options, ...spec.sets.map((s) => s.options), HELP_OPTION) as AllOptions<O, S>;
  const usage = [spec.usage, ...spec.sets.flatMap((s) => s.help), ...(spec.notes !== undefined ? [spec.notes] : [])].join('\n');
  return {
    name: spec.name,
    summary: spec.summary,
    usage,
    options,
    async invoke(args) {
      let parsed: Parsed<AllOptions<O, S>>;
      try {
        parsed = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
      } catch (e) {
        throw new UsageError(`${spec.name}: ${(e as Error).message}\n\n${usage}`);
      }
      const given: CommandArgs<AllOptions<O, S>> = { values: parsed.values, positionals: parsed.positionals };
      if ((parsed.values as { help?: unknown }).help === true) {
        process.stdout.write(`${spec.help ? spec.help(given, usage) : usage}\n`);
        return 0;
      }
      const n = parsed.positionals.length;
      if (n < spec.positionals.min || n > spec.positionals.max) throw new UsageError(`${spec.positionals.error}\n\n${usage}`);
      return spec.run(given);
    },
  };
}

/**
 * A command of subcommands (`env check`, `env run`): the first positional word picks one, wherever it
 * stands among the flags, and that subcommand parses the rest with its own flags.
 */
export function defineGroup(spec: { readonly name: string; readonly summary: string; readonly subcommands: readonly Command[] }): Command {
  const names = spec.subcommands.map((s) => s.name.slice(spec.name.length + 1));
  const usage = spec.subcommands.map((s) => s.usage).join('\n');
  const options = Object.assign({}, HELP_OPTION, ...spec.subcommands.map((s) => s.options)) as ParseArgsOptionsConfig;
  return {
    name: spec.name,
    summary: spec.summary,
    usage,
    options,
    subcommands: spec.subcommands,
    async invoke(args) {
      // the subcommand's word: the first positional when read with every subcommand's flags (a flag's
      // value is not mistaken for it); unknown flags are left for the subcommand to refuse
      const { tokens } = parseArgs({ args: [...args], options, allowPositionals: true, strict: false, tokens: true });
      const word = tokens.find((t) => t.kind === 'positional');
      const sub = word ? spec.subcommands[names.indexOf(word.value)] : undefined;
      if (!word && tokens.some((t) => t.kind === 'option' && t.name === 'help')) {
        process.stdout.write(`${usage}\n`);
        return 0;
      }
      if (!word || !sub) throw new UsageError(`${spec.name} needs a subcommand: ${names.join(', ')}${word ? ` (got ${word.value})` : ''}\n\n${usage}`);
      return sub.invoke([...args.slice(0, word.index), ...args.slice(word.index + 1)]);
    },
  };
}
