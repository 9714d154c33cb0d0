// A fork's config: the parent's stored config with a JSON of changes merged over it, then validated.
// A fork starts from the parent's saved policy state and random streams, so only settings that the
// state does not fix may change: the learning rate, clipping, the KL coefficient, sampling, the number
// of iterations and the like. What the state was made with (the environment and its tasks, the policy
// and its model, the method, the seeds, the schedule mode) is refused with the reason.
import { ConfigError, FIELD_SPECS, validateRunConfig, type ConfigIssue, type RunConfig, type RunConfigKey } from './runConfig';

/** Top-level settings a fork may change; every `algorithm.*` setting may change too. */
export const FORKABLE_SETTINGS: readonly RunConfigKey[] = [
  'name',
  'iterations',
  'optimizerSteps',
  'groupsPerIteration',
  'groupSize',
  'evalEpisodes',
  'evalInterval',
  'evalPassK',
  'checkpointEvery',
  'maxInFlight',
  'maxNonFiniteIterations',
  'maxTurns',
];

/** policyOptions a fork may change: how actions are sampled, not what the model is. */
export const FORKABLE_POLICY_OPTIONS: readonly string[] = ['temperature', 'topK', 'topP', 'maxNewTokens'];

/** Why each refused top-level key cannot change at a fork. */
const FIXED_WHY: Readonly<Partial<Record<RunConfigKey, string>>> = {
  env: "the saved state was trained in the parent's environment",
  envOptions: 'the tasks and rewards the saved state was trained on come from them',
  demonstrations: 'they belong to the method the parent ran',
  policy: "the saved state holds the parent's policy parameters",
  method: "the optimizer and the learner's state belong to the parent's method",
  seed: "a fork continues the parent's random streams from the saved state",
  evalSeed: "evaluations compare with the parent's only on the same stream",
  mode: 'resume points are exact for the sync schedule only',
  maxStaleness: 'it belongs to the async schedule, which is not forked',
  queueGroups: 'it belongs to the async schedule, which is not forked',
};

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** Keys of `changes` a fork may not change, each as a ConfigIssue (empty: all may). Values equal to the parent's are allowed. */
export function forbiddenForkChanges(parent: RunConfig, changes: Record<string, unknown>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
  for (const [key, value] of Object.entries(changes)) {
    if ((FORKABLE_SETTINGS as readonly string[]).includes(key) || key === 'algorithm') continue;
    if (!(key in FIELD_SPECS)) continue; // an unknown or moved key: the validator names it with a hint
    if (key === 'policyOptions' && isObject(value)) {
      const options = parent.policyOptions as Record<string, unknown>;
      for (const [k, v] of Object.entries(value)) {
        if (FORKABLE_POLICY_OPTIONS.includes(k) || same(v, options[k])) continue;
        issues.push({
          field: `policyOptions.${k}`,
          value: v,
          message: "cannot change at a fork: the saved state holds the parent's model",
          fix: `remove it (a fork may change policyOptions ${FORKABLE_POLICY_OPTIONS.join(', ')}); start a new run to change the model`,
        });
      }
      continue;
    }
    if (same(value, (parent as unknown as Record<string, unknown>)[key])) continue;
    const why = FIXED_WHY[key as RunConfigKey];
    issues.push({
      field: key,
      value,
      message: why ? `cannot change at a fork: ${why}` : 'is not a setting a fork can change',
      fix: `remove it; a fork may change ${FORKABLE_SETTINGS.join(', ')}, algorithm.* and policyOptions ${FORKABLE_POLICY_OPTIONS.join(', ')}`,
    });
  }
  return issues;
}

/**
 * The fork's config: `changes` (a RunConfig fragment; sections merge key by key) over the parent's,
 * validated. `at` is the fork iteration: the fork must plan more iterations than that. Throws
 * ConfigError naming every refused or invalid field.
 */
export function forkConfig(parent: RunConfig, changes: unknown, at: number): RunConfig {
  if (!isObject(changes)) {
    throw new ConfigError([{ field: '(changes)', value: changes, message: 'must be a JSON object', fix: 'write the changes as { "key": value, ... }' }]);
  }
  const issues = forbiddenForkChanges(parent, changes);
  if (issues.length > 0) throw new ConfigError(issues);
  const merged: Record<string, unknown> = { ...parent, ...changes };
  for (const section of ['algorithm', 'policyOptions'] as const) {
    const given = changes[section];
    if (isObject(given)) merged[section] = { ...parent[section], ...given };
  }
  const config = validateRunConfig(merged);
  if (config.iterations <= at) {
    throw new ConfigError([
      {
        field: 'iterations',
        value: config.iterations,
        message: `leaves nothing to train after the fork iteration ${at}`,
        fix: `give "iterations" above ${at} in the changes (the fork counts on from the parent's iterations)`,
      },
    ]);
  }
  return config;
}

/** The changes typed in Fork Run from Here: '' = none; otherwise a JSON object, or why it is not one. */
export function parseForkChanges(text: string): { readonly changes: Record<string, unknown> } | { readonly error: string } {
  if (text.trim() === '') return { changes: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { error: `not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
  return isObject(parsed) ? { changes: parsed } : { error: 'write the changes as a JSON object, e.g. {"algorithm": {"learningRate": 0.001}}' };
}
