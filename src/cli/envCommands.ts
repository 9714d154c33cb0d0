// `agent-rl env check` — which sandbox isolation level works here and why the others do not; with a
// workspace config, that environment's tasks, tools and reward; with the calculator, its task sets.
// `agent-rl env run --env NAME --task ID --actions FILE` — replays scripted actions against an
// environment and prints every step as a JSON line, then the verified outcome.
import * as fs from 'node:fs';
import { ENV_NAMES, validateEnvOptions, validateEnvSelection, type CalculatorEnvOptions, type EnvName, type WorkspaceEnvOptions } from '../shared/runConfig';
import { jsonText, showInvisibles } from '../shared/untrustedText';
import { calculatorOptions } from '../rl/envs/calculator/calculatorEnv';
import { depthMix, expressionSets } from '../rl/envs/calculator/expressionSets';
import type { RunEnvironment, Task } from '../rl/envs/environment';
import { openEnvironment } from '../rl/envs/registry';
import { Rng } from '../rl/random';
import { detectLanguages, TOOLCHAIN_DIRS } from '../rl/sandbox/fusion/languages';
import { detectIsolation, GUARANTEE_LEGEND, ISOLATION_GUARANTEES, resolvePython } from '../rl/sandbox/isolation';
import { gymDescription } from '../rl/envs/reasoningGym/reasoningGymTasks';
import { renderPrompt } from '../rl/envs/workspace/toolCalls';
import { ToolSession } from '../rl/envs/workspace/toolSession';
import { prepareWorkspace, type PreparedWorkspace } from '../rl/envs/workspace/workspaceEnv';
import { defineCommand, defineGroup } from './command';
import { pct, table } from './format';
import { readConfigFile } from './runConfigArgs';
import { UsageError } from './usageError';

/** A workspace environment checked without training: its tasks, its tools (each tried on its example), its reward on a recorded episode. */
async function workspaceCheck(envOptions: WorkspaceEnvOptions): Promise<void> {
  const p = await prepareWorkspace(envOptions);
  try {
    await describeWorkspace(p);
  } finally {
    await p.close();
  }
}

/** What env check prints of a loaded workspace environment; its tools are tried in a session of its own sandbox. */
async function describeWorkspace(p: PreparedWorkspace): Promise<void> {
  const out = (s: string): void => {
    process.stdout.write(`${s}\n`);
  };
  const first = p.tasks.train[0]!;
  const from = p.gym ? showInvisibles(gymDescription(p.gym.set)) : `${showInvisibles(p.options.tasks)}, preset ${p.options.taskPreset}`;
  out(`\ntasks: ${p.tasks.train.length} training, ${p.tasks.heldOut.length} held out (${from})`);
  out(`  first: ${showInvisibles(first.id)} (${showInvisibles(String(first.data.source))}): ${jsonText(first.prompt)}`);
  out(`tools: ${p.tools.length === 0 ? 'none' : `${p.tools.length} in ${showInvisibles(p.toolFile!.name)}, format ${p.options.toolFormat}`}`);
  const session = p.toolFile ? new ToolSession(p.toolSandbox, p.toolFile) : undefined;
  try {
    for (const t of p.tools) {
      out(`  ${showInvisibles(t.signature)}${t.description ? ` — ${showInvisibles(t.description)}` : ''}`);
      out(`    schema: ${jsonText(t.parameters)}`);
      const example = p.examples[t.name];
      if (session && typeof example === 'object' && example !== null && !Array.isArray(example)) {
        const r = await session.call({ op: 'call', name: t.name, kwargs: example as Record<string, unknown> });
        out(
          `    example ${jsonText(example)} → ${r.ok ? jsonText(r.result ?? '') : `error (${r.kind ?? 'failed'}): ${jsonText(r.error ?? '')}`} in ${Math.round(r.durationMs)} ms`,
        );
      } else out('    example: none (EXAMPLES in the tool file gives one)');
    }
  } finally {
    session?.close();
  }
  const o = p.rewardCheck.outcome;
  out(
    `reward: ${showInvisibles(p.rewardFile?.name ?? p.options.reward)}, on a recorded episode of ${showInvisibles(p.rewardCheck.taskId)} (${first.data.demonstration ? 'its demonstration' : 'no actions: the task has no demonstration'}): reward ${o.reward}, success ${o.success}`,
  );
  out(`  details: ${jsonText(o.details ?? {})}`);
  out(
    `first observation the policy reads:\n${showInvisibles(p.tasks.train[0] ? renderPrompt(first.prompt, p.tools, p.options.toolFormat, p.options.toolsInPrompt) : '')}`,
  );
}

/**
 * What env check prints of the calculator's task sets: their sizes and each split's mix of expression
 * depths beside the generator's own, so a run's training and held-out success can be compared (both
 * splits have one mix; a depth below the generator's share ran out of distinct expressions).
 */
export function calculatorTaskSummary(options: CalculatorEnvOptions): string {
  const o = calculatorOptions(options);
  const sets = expressionSets({ train: o.trainTasks, heldOut: o.heldOutTasks }, o.generator);
  const train = depthMix(sets.train);
  const heldOut = depthMix(sets.heldOut);
  const depths = [...new Set([...sets.drawn.keys(), ...train.keys(), ...heldOut.keys()])].sort((a, b) => a - b);
  const share = (mix: Map<number, number>, total: number, d: number): string => `${mix.get(d) ?? 0} (${total > 0 ? pct((mix.get(d) ?? 0) / total) : '-'})`;
  const g = o.generator;
  const lines = [
    `calculator tasks: ${sets.train.length} training, ${sets.heldOut.length} held out (depth ${g.minDepth}–${g.maxDepth}, operands ${g.minOperand}–${g.maxOperand})`,
    "depth of each expression as written, per split (one mix in both; a depth below the generator's share ran out of distinct expressions):",
    table(
      ['depth', 'generator', 'training', 'held out'],
      depths.map((d) => [String(d), pct(sets.drawn.get(d) ?? 0), share(train, sets.train.length, d), share(heldOut, sets.heldOut.length, d)]),
    ),
  ];
  for (const [label, got, asked] of [
    ['training', sets.train.length, o.trainTasks],
    ['held-out', sets.heldOut.length, o.heldOutTasks],
  ] as const)
    if (got < asked)
      lines.push(
        `${label} tasks: ${got} of the ${asked} asked (too few distinct expressions at these options to keep the mix; widen the operand range or the depths)`,
      );
  return lines.join('\n');
}

async function envCheck(python: string | undefined, config?: Record<string, unknown>, envName?: string): Promise<number> {
  if (envName !== undefined && envName !== 'calculator' && envName !== config?.env)
    throw new UsageError(`env check --env takes calculator (a workspace environment is checked with --config FILE); got ${showInvisibles(envName)}`);
  if (config !== undefined && config.env === 'workspace') {
    const given = (config.envOptions ?? {}) as Record<string, unknown>;
    // --python wins over the config's interpreter, for the probe and for the tools alike
    const envOptions = validateEnvOptions('workspace', python !== undefined ? { ...given, python } : given);
    envCheckSandbox(python ?? (envOptions.python !== '' ? envOptions.python : undefined));
    await workspaceCheck(envOptions);
    process.stdout.write('workspace environment: ok\n');
    return 0;
  }
  if (envName === 'calculator' || config?.env === 'calculator') {
    const given = config?.env === 'calculator' ? ((config.envOptions ?? {}) as Record<string, unknown>) : {};
    const envOptions = validateEnvOptions('calculator', given);
    // the two ranges validateRunConfig checks across fields, which validateEnvOptions does not
    for (const [lo, hi] of [
      ['minDepth', 'maxDepth'],
      ['minOperand', 'maxOperand'],
    ] as const)
      if (envOptions[lo] > envOptions[hi])
        throw new UsageError(`envOptions.${lo} (${envOptions[lo]}) is greater than envOptions.${hi} (${envOptions[hi]}); make ${lo} ≤ ${hi}`);
    const code = envCheckSandbox(python);
    process.stdout.write(`\n${calculatorTaskSummary(envOptions)}\ncalculator environment: ok\n`);
    return code;
  }
  return envCheckSandbox(python);
}

function envCheckSandbox(python: string | undefined): number {
  const py = resolvePython(python);
  const statuses = detectIsolation(py);
  const best = statuses.find((s) => s.available);
  // the interpreter's path (from --python, or a workspace config's envOptions.python) and the probes'
  // reasons (which quote it) are shown with their invisible characters marked
  process.stdout.write(`python: ${showInvisibles(py)}\n`);
  process.stdout.write(
    `${showInvisibles(
      table(
        ['level', 'available', 'why'],
        statuses.map((s) => [s.level, s.available ? 'yes' : 'no', s.reason]),
      ),
    )}\n`,
  );
  if (!best) {
    // nothing can run model-written code here (Windows): say so, and the ways out, as the last line
    process.stdout.write(`auto selects: none — ${showInvisibles(statuses.at(-1)!.reason)}\n`);
    return 1;
  }
  process.stdout.write(`auto selects: ${best.level}\n`);
  process.stdout.write(
    `what ${best.level} guarantees against the code (${GUARANTEE_LEGEND}):\n${ISOLATION_GUARANTEES.map((g) => `  ${g.against}: ${g.held[best.level]}\n`).join('')}`,
  );
  // what `sandbox serve` answers besides Python, from the toolchains found here
  const languages = detectLanguages();
  process.stdout.write(
    `sandbox serve languages: python (${showInvisibles(py)})${languages
      .filter((l) => l.available)
      .map((l) => `, ${l.language} (${showInvisibles(l.detail)})`)
      .join('')}\n` +
      `  not here (no toolchain in ${TOOLCHAIN_DIRS.join(':')}): ${
        languages
          .filter((l) => !l.available)
          .map((l) => l.language)
          .join(', ') || 'none'
      }\n`,
  );
  return 0;
}

/** A JSON array of action strings, or one action per line (a line may be a JSON string, for newlines). */
export function readActions(file: string): string[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--actions ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)})`);
  }
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    const parsed: unknown = JSON.parse(trimmed);
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string'))
      throw new UsageError(`--actions ${file}: a JSON file must be an array of strings`);
    return parsed;
  }
  return trimmed
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (l.startsWith('"') ? (JSON.parse(l) as string) : l));
}

async function envRun(
  envName: string | undefined,
  taskId: string | undefined,
  actionsFile: string | undefined,
  givenOptions: Record<string, unknown> = {},
): Promise<number> {
  if (!envName || !(ENV_NAMES as readonly string[]).includes(envName)) throw new UsageError(`env run needs --env, one of: ${ENV_NAMES.join(', ')}`);
  if (!actionsFile) throw new UsageError('env run needs --actions FILE (a JSON array of action texts, or one per line)');
  const opened = await openEnvironment(validateEnvSelection(envName as EnvName, givenOptions));
  try {
    return await replay(opened, taskId, actionsFile);
  } finally {
    await opened.dispose();
  }
}

/** Replays the actions of `actionsFile` on a task of an opened environment, printing every step. */
async function replay(opened: RunEnvironment, taskId: string | undefined, actionsFile: string): Promise<number> {
  opened.preflight?.();
  const source = opened.tasks();
  const all = [...source.train, ...source.heldOut];
  let task: Task | undefined = taskId === undefined ? all[0] : all.find((t) => t.id === taskId);
  if (!task && taskId !== undefined && opened.taskFromId) task = opened.taskFromId(taskId);
  if (!task)
    throw new UsageError(
      `no task "${taskId}" in env ${opened.name}. Fix: use an id such as ${all
        .slice(0, 3)
        .map((t) => t.id)
        .join(', ')}`,
    );
  const env = opened.create();
  const write = (o: unknown): void => {
    process.stdout.write(`${jsonText(o)}\n`);
  };
  try {
    const first = await env.reset(task);
    write({ task: task.id, observation: first });
    let turn = 0;
    for (const text of readActions(actionsFile)) {
      const action = env.parseAction(text);
      const r = await env.step(action);
      write({ turn: turn++, action: text, parsed: action, observation: r.observation, done: r.done, ...(r.termination ? { termination: r.termination } : {}) });
      if (r.done) break;
    }
    write({ outcome: await env.verify(new Rng(0)) });
  } finally {
    await env.close();
  }
  return 0;
}

const envCheckCommand = defineCommand({
  name: 'env check',
  summary: 'which sandbox isolation level works here, and why',
  usage: `agent-rl env check [--python PATH] [--config FILE] [--env calculator]
  which sandbox isolation level works here, and why; with a workspace config: its tasks, tools (each
  tried) and reward; with the calculator (--env or a config): each task split's size and mix of
  expression depths
  --python      the interpreter to probe (default /usr/bin/python3, else python3 on PATH)
  --config      a run config (JSON): its environment is checked without training
  --env         calculator: its task sets (a workspace environment is checked with --config FILE)`,
  options: { python: { type: 'string' }, config: { type: 'string' }, env: { type: 'string' } },
  sets: [],
  positionals: { min: 0, max: 0, error: 'env check takes no further arguments' },
  run: ({ values: v }) => envCheck(v.python, v.config !== undefined ? readConfigFile(v.config) : undefined, v.env),
});

const envRunCommand = defineCommand({
  name: 'env run',
  summary: 'replay actions against an environment',
  usage: `agent-rl env run --env NAME [--task ID] --actions FILE [--config FILE]
  replay actions (JSON array, or one per line) against a task; every step is printed as a JSON line,
  then the verified outcome
  --env         the environment (${ENV_NAMES.join(', ')})
  --task        the task id (default: the first task)
  --actions     the actions: a JSON array of action texts, or one per line (a line may be a JSON string)
  --config      a run config (JSON) whose envOptions configure the environment`,
  options: { env: { type: 'string' }, task: { type: 'string' }, actions: { type: 'string' }, config: { type: 'string' } },
  sets: [],
  positionals: { min: 0, max: 0, error: 'env run takes no further arguments' },
  run: ({ values: v }) => {
    const fromFile = v.config !== undefined ? readConfigFile(v.config).envOptions : undefined;
    if (fromFile !== undefined && (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile)))
      throw new UsageError('--config: envOptions must be an object');
    return envRun(v.env, v.task, v.actions, (fromFile ?? {}) as Record<string, unknown>);
  },
});

/** `agent-rl env check` and `agent-rl env run`. */
export const envCommand = defineGroup({
  name: 'env',
  summary: 'check the sandbox and an environment, or replay actions against one',
  subcommands: [envCheckCommand, envRunCommand],
});
