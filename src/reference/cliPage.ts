// docs/reference/cli.md: every agent-rl command and flag, from the command declarations cli.ts
// dispatches to (src/cli/command.ts): each command's usage as its --help prints it and the option table
// its parser reads (a flag no declaration lists is refused, so these are all of them).
import type { ParseArgsOptionsConfig } from 'node:util';
import { ALGORITHM_SPECS } from '../shared/algorithm';
import type { DescribedSpec } from '../shared/fieldSpec';
import { FIELD_SPECS, TRANSFORMER_OPTION_SPECS } from '../shared/runConfig';
import { COMMANDS, USAGE } from '../cli/cli';
import type { Command } from '../cli/command';
import { ALGORITHM_FLAGS, CONFIG_FLAGS, POLICY_FLAGS } from '../cli/runConfigArgs';
import { cell, code, codeBlock, githubSlug, table } from './markdown';
import { OPTIONS_PAGE, rangeText } from './optionsPage';

export const CLI_PAGE = 'docs/reference/cli.md';
export const CLI_SOURCES = ['src/cli/cli.ts', 'src/cli/optionSets.ts', 'src/cli/runConfigArgs.ts', 'src/cli/*Command*.ts'] as const;

/** One command's argument parser (a group's: each subcommand's): the command word, its usage as --help prints it, the flags it accepts. */
export interface CliParser {
  /** The section heading ("agent-rl env check"). */
  readonly heading: string;
  /** The first word of the command line that reaches it. */
  readonly commands: readonly string[];
  readonly usage: string;
  readonly options: ParseArgsOptionsConfig;
}

const parsersOf = (c: Command): CliParser[] =>
  c.subcommands ? c.subcommands.flatMap(parsersOf) : [{ heading: `agent-rl ${c.name}`, commands: [c.name.split(' ')[0]!], usage: c.usage, options: c.options }];

/** Every parser of the command line, from the command declarations cli.ts dispatches to. */
export const CLI_PARSERS: readonly CliParser[] = COMMANDS.flatMap(parsersOf);

const flagName = (name: string, o: ParseArgsOptionsConfig[string]): string =>
  `${code(`--${name}`)}${o.short ? ` / ${code(`-${o.short}`)}` : ''}${o.type === 'boolean' ? ' (switch)' : ''}${o.multiple ? ' (repeatable)' : ''}`;

const optionsLink = (heading: string, text: string): string => `[${code(text)}](${OPTIONS_PAGE.split('/').pop()}#${githubSlug(heading)})`;

function trainFlagRows(): string[][] {
  const row = (flag: string, target: string, spec: DescribedSpec, heading: string): string[] => [
    code(`--${flag}`),
    optionsLink(heading, target),
    rangeText(spec) || cell(spec.kind),
    cell(spec.description),
  ];
  return [
    ...Object.entries(CONFIG_FLAGS).map(([flag, [key]]) => row(flag, key, FIELD_SPECS[key], 'Top-level settings')),
    ...Object.entries(ALGORITHM_FLAGS).map(([flag, [key]]) => row(flag, `algorithm.${key}`, ALGORITHM_SPECS[key], 'algorithm')),
    ...Object.entries(POLICY_FLAGS).map(([flag, key]) =>
      row(flag, `policyOptions.${key}`, TRANSFORMER_OPTION_SPECS[key as keyof typeof TRANSFORMER_OPTION_SPECS], 'transformer policy'),
    ),
  ];
}

export function renderCliPage(header: string): string {
  return [
    '# Command line: agent-rl',
    '',
    header,
    '',
    'In a checkout, `npm run build` makes it and `npx agent-rl` runs it. The first section is what',
    "`agent-rl --help` prints; each section after it is what that command's `--help` prints.",
    '',
    `- [Usage](#${githubSlug('Usage')})`,
    ...CLI_PARSERS.map((p) => `- [${p.heading}](#${githubSlug(p.heading)})`),
    `- [Train flags that set run-config fields](#${githubSlug('Train flags that set run-config fields')})`,
    `- [Every flag, by command](#${githubSlug('Every flag, by command')})`,
    '',
    '## Usage',
    '',
    codeBlock(USAGE),
    '',
    ...CLI_PARSERS.flatMap((p) => [`## ${p.heading}`, '', codeBlock(p.usage), '']),
    '## Train flags that set run-config fields',
    '',
    'A flag overrides the same field of the `--config` file (`agent-rl train` and `agent-rl sft`); the',
    'options page has its default and why.',
    '',
    table(['flag', 'sets', 'values', 'what it does'], trainFlagRows()),
    '',
    '## Every flag, by command',
    '',
    'Each command accepts these flags and no other: any other flag is refused (exit 2) with a message naming it and',
    "the command's usage.",
    '',
    table(
      ['command', 'flags'],
      CLI_PARSERS.map((p) => [
        code(p.heading.replace(/^agent-rl /, '')),
        Object.entries(p.options)
          .map(([name, o]) => flagName(name, o))
          .join(', '),
      ]),
    ),
    '',
  ].join('\n');
}
