// docs/reference/sandbox.md: the sandbox's isolation levels and what each guarantees on each operating
// system, from the tables in src/rl/sandbox/isolation.ts that env check prints from.
import {
  EVERY_LEVEL_LIMITS,
  GUARANTEE_LEGEND,
  ISOLATION_GUARANTEES,
  ISOLATION_LEVEL_INFO,
  ISOLATION_LEVELS,
  landlockReason,
  WINDOWS_REASON,
} from '../rl/sandbox/isolation';
import { SANDBOX_LEVELS } from '../shared/optionSpecs';
import { cell, code, table } from './markdown';

export const SANDBOX_PAGE = 'docs/reference/sandbox.md';
export const SANDBOX_SOURCES = ['src/rl/sandbox/isolation.ts'] as const;

/** The Landlock ABI versions whose guarantees differ: 3 is the least the level takes, 6 scopes signals. */
const LANDLOCK_ABIS = [
  { abi: 3, label: '3 to 5' },
  { abi: 6, label: '6 or newer' },
] as const;

export function renderSandboxPage(header: string): string {
  const levels = ISOLATION_LEVELS.map((l) => ({ level: l, ...ISOLATION_LEVEL_INFO[l] }));
  return [
    '# Sandbox isolation levels',
    '',
    header,
    '',
    `Model-written code (the code environment, a workspace's tools and reward, \`agent-rl sandbox serve\`)`,
    `runs at one of these levels, strongest first. The level is ${SANDBOX_LEVELS.map((l) => code(l)).join(', ')}`,
    '(`envOptions.sandbox`, the `agentRl.sandboxLevel` setting, `sandbox serve --level`); `auto` takes the',
    'first available. `agent-rl env check` says which work on this machine and why the others do not, and',
    "what the chosen one guarantees; a run's record names the level that ran its code.",
    '',
    '## Levels',
    '',
    table(
      ['level', 'runs on', 'how', 'what it isolates'],
      levels.map((l) => [code(l.level), cell(l.runsOn), cell(l.how), cell(l.holds)]),
    ),
    '',
    '## Guarantees',
    '',
    cell(`What each level guarantees against the code it runs: ${GUARANTEE_LEGEND}.`),
    '',
    table(
      ['', ...levels.map((l) => cell(`${l.level} (${l.runsOn})`))],
      ISOLATION_GUARANTEES.map((g) => [cell(g.against), ...levels.map((l) => cell(g.held[l.level]))]),
    ),
    '',
    cell(`At every level: ${EVERY_LEVEL_LIMITS}`),
    '',
    ...levels.filter((l) => l.knownLimits !== undefined).flatMap((l) => [cell(`Known limits of ${l.level}: ${l.knownLimits}`), '']),
    '## Landlock by ABI version',
    '',
    "What env check and a run's record say the landlock level holds at a kernel's Landlock ABI:",
    '',
    table(
      ['Landlock ABI', 'holds'],
      LANDLOCK_ABIS.map((a) => [a.label, cell(landlockReason(a.abi))]),
    ),
    '',
    '## Windows',
    '',
    cell(`${WINDOWS_REASON}.`),
    '',
  ].join('\n');
}
