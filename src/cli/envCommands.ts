// `agent-rl env check` — which sandbox isolation level works here and why the others do not.
// `agent-rl env run --env NAME --task ID --actions FILE` — replays scripted actions against an
// environment and prints every step as a JSON line, then the verified outcome.
import * as fs from 'node:fs';
import { ENV_NAMES, validateEnvOptions, type EnvName } from '../shared/runConfig';
import { jsonText } from '../shared/untrustedText';
import type { Task } from '../rl/envs/environment';
import { environmentFactory } from '../rl/envs/registry';
import { Rng } from '../rl/random';
import { detectIsolation, resolvePython } from '../rl/sandbox/isolation';
import { table } from './format';
import { UsageError } from './usageError';

export function envCheckCommand(python: string | undefined): number {
  const py = resolvePython(python);
  const statuses = detectIsolation(py);
  const best = statuses.find((s) => s.available)!;
  process.stdout.write(`python: ${py}\n`);
  process.stdout.write(`${table(['level', 'available', 'why'], statuses.map((s) => [s.level, s.available ? 'yes' : 'no', s.reason]))}\n`);
  process.stdout.write(`auto selects: ${best.level}\n`);
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
    if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) throw new UsageError(`--actions ${file}: a JSON file must be an array of strings`);
    return parsed;
  }
  return trimmed.split('\n').filter((l) => l.trim() !== '').map((l) => (l.startsWith('"') ? (JSON.parse(l) as string) : l));
}

export async function envRunCommand(
  envName: string | undefined, taskId: string | undefined, actionsFile: string | undefined, givenOptions: Record<string, unknown> = {},
): Promise<number> {
  if (!envName || !(ENV_NAMES as readonly string[]).includes(envName)) throw new UsageError(`env run needs --env, one of: ${ENV_NAMES.join(', ')}`);
  if (!actionsFile) throw new UsageError('env run needs --actions FILE (a JSON array of action texts, or one per line)');
  const envOptions = validateEnvOptions(envName as EnvName, givenOptions);
  const factory = environmentFactory(envName as EnvName);
  factory.preflight?.(envOptions);
  const source = factory.tasks(envOptions);
  const all = [...source.train, ...source.heldOut];
  let task: Task | undefined = taskId === undefined ? all[0] : all.find((t) => t.id === taskId);
  if (!task && taskId !== undefined && factory.taskFromId) task = factory.taskFromId(taskId, envOptions);
  if (!task) throw new UsageError(`no task "${taskId}" in env ${envName}. Fix: use an id such as ${all.slice(0, 3).map((t) => t.id).join(', ')}`);
  const env = factory.create(envOptions);
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
    await factory.dispose?.();
  }
  return 0;
}
