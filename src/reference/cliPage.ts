// docs/reference/cli.md: every agent-rl command and flag, from the usage texts the CLI prints and the
// option tables its parsers read (a flag no parser lists is refused, so these are all of them).
import type { ParseArgsOptionsConfig } from 'node:util';
import { ALGORITHM_SPECS } from '../shared/algorithm';
import type { DescribedSpec } from '../shared/fieldSpec';
import { FIELD_SPECS, TRANSFORMER_OPTION_SPECS } from '../shared/runConfig';
import { MAIN_OPTIONS, USAGE } from '../cli/cli';
import { EXPORT_OPTIONS, EXPORT_USAGE } from '../cli/exportCommand';
import { IMPORT_OPTIONS, IMPORT_USAGE } from '../cli/importCommand';
import { MODEL_EXPORT_USAGE, MODEL_LIST_USAGE, MODEL_NEW_USAGE, MODEL_OPTIONS, MODEL_USAGE } from '../cli/modelCommand';
import { RESCORE_OPTIONS, RESCORE_USAGE } from '../cli/rescoreCommand';
import { REQUEST_OPTIONS, REQUEST_USAGE } from '../cli/requestCommand';
import { ALGORITHM_FLAGS, CONFIG_FLAGS, POLICY_FLAGS } from '../cli/runConfigArgs';
import { SANDBOX_OPTIONS, sandboxUsage } from '../cli/sandboxCommand';
import { cell, code, codeBlock, githubSlug, table } from './markdown';
import { OPTIONS_PAGE, rangeText } from './optionsPage';

export const CLI_PAGE = 'docs/reference/cli.md';
export const CLI_SOURCES = ['src/cli/cli.ts', 'src/cli/runConfigArgs.ts', 'src/cli/*Command.ts'] as const;

/** One argument parser of agent-rl: the commands it reads, their usage as printed, the flags it accepts. */
export interface CliParser {
  /** The section heading ("agent-rl import"); the main parser's usage is the page's first section. */
  readonly heading: string;
  readonly commands: readonly string[];
  readonly usage: string;
  readonly options: ParseArgsOptionsConfig;
}

/** Every parser of the command line (cli.ts hands each command after the first word to one of them). */
export const CLI_PARSERS: readonly CliParser[] = [
  { heading: 'Usage', commands: ['train', 'sft', 'runs', 'show', 'trajectory', 'env'], usage: USAGE, options: MAIN_OPTIONS },
  { heading: 'agent-rl rescore', commands: ['rescore'], usage: RESCORE_USAGE, options: RESCORE_OPTIONS },
  { heading: 'agent-rl request', commands: ['request'], usage: REQUEST_USAGE, options: REQUEST_OPTIONS },
  { heading: 'agent-rl import', commands: ['import'], usage: IMPORT_USAGE, options: IMPORT_OPTIONS },
  // the usage without this machine's default concurrency, which `sandbox serve --help` adds
  { heading: 'agent-rl sandbox serve', commands: ['sandbox'], usage: sandboxUsage(null), options: SANDBOX_OPTIONS },
  { heading: 'agent-rl export verl', commands: ['export'], usage: EXPORT_USAGE, options: EXPORT_OPTIONS },
  {
    heading: 'agent-rl model',
    commands: ['model'],
    usage: [MODEL_USAGE, MODEL_NEW_USAGE, MODEL_LIST_USAGE, MODEL_EXPORT_USAGE].join('\n'),
    options: MODEL_OPTIONS,
  },
];

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
  const [main, ...own] = CLI_PARSERS;
  return [
    '# Command line: agent-rl',
    '',
    header,
    '',
    'In a checkout, `npm run build` makes it and `npx agent-rl` runs it; each section below is what the',
    "command's `--help` prints.",
    '',
    `- [Usage](#${githubSlug('Usage')}): ${main!.commands.map((c) => code(c)).join(', ')}`,
    ...own.map((p) => `- [${p.heading}](#${githubSlug(p.heading)})`),
    `- [Train flags that set run-config fields](#${githubSlug('Train flags that set run-config fields')})`,
    `- [Every flag, by parser](#${githubSlug('Every flag, by parser')})`,
    '',
    `## ${main!.heading}`,
    '',
    codeBlock(main!.usage),
    '',
    ...own.flatMap((p) => [`## ${p.heading}`, '', codeBlock(p.usage), '']),
    '## Train flags that set run-config fields',
    '',
    'A flag overrides the same field of the `--config` file (`agent-rl train` and `agent-rl sft`); the',
    'options page has its default and why.',
    '',
    table(['flag', 'sets', 'values', 'what it does'], trainFlagRows()),
    '',
    '## Every flag, by parser',
    '',
    'Each command reads its flags with one of these parsers; any other flag is refused with the usage.',
    '',
    table(
      ['commands', 'flags'],
      CLI_PARSERS.map((p) => [
        p.commands.map((c) => code(c)).join(', '),
        Object.entries(p.options)
          .map(([name, o]) => flagName(name, o))
          .join(', '),
      ]),
    ),
    '',
  ].join('\n');
}
