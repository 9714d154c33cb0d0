// Run configs from the command line: the --config file and the flags merged over a command's defaults,
// then validated. Kept apart from main.ts, which runs the command when loaded.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { AlgorithmSettings } from '../shared/algorithm';
import { withConfigRoot } from '../shared/configRoot';
import { validateRunConfig, type RunConfig } from '../shared/runConfig';
import { UsageError } from './usageError';

/** Flag → config key, and whether it is numeric. */
export const CONFIG_FLAGS: Readonly<Record<string, [keyof RunConfig, boolean]>> = {
  env: ['env', false],
  policy: ['policy', false],
  method: ['method', false],
  name: ['name', false],
  seed: ['seed', true],
  iterations: ['iterations', true],
  groups: ['groupsPerIteration', true],
  'group-size': ['groupSize', true],
  'eval-episodes': ['evalEpisodes', true],
  'eval-seed': ['evalSeed', true],
  'eval-interval': ['evalInterval', true],
  'pass-k': ['evalPassK', true],
};

/** Flag → algorithm setting, and whether it is numeric. */
export const ALGORITHM_FLAGS: Readonly<Record<string, [keyof AlgorithmSettings, boolean]>> = {
  lr: ['learningRate', true],
  clip: ['clipLow', true],
  kl: ['klCoef', true],
  epochs: ['epochs', true],
  std: ['advantageStd', false],
  estimator: ['advantageEstimator', false],
  'policy-loss': ['policyLoss', false],
  'teacher-weight': ['teacherWeight', true],
};

/** Flag → policyOptions key (strings). */
export const POLICY_FLAGS: Readonly<Record<string, string>> = {
  init: 'init',
  backend: 'backend',
  tokenizer: 'tokenizer',
  model: 'model',
  teacher: 'teacher',
  'weight-dtype': 'weightDtype',
};
/** The policy flags that name a folder: resolved against the current one. */
const FOLDER_FLAGS: ReadonlySet<string> = new Set(['init', 'tokenizer', 'model', 'teacher']);

export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--config ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? String(e)}). Fix: check the path.`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--config ${file}: not valid JSON (${(e as Error).message}). Fix: correct the JSON syntax.`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--config ${file}: the top level must be a JSON object of run config keys.`);
  }
  const obj = withConfigRoot(parsed as Record<string, unknown>, path.dirname(path.resolve(file)), path);
  delete obj.$schema; // editors add it for completion
  return obj;
}

/** Merges `base`, the config file and flags (flags win, then the file) and validates the result. */
const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

export function configFromArgs(values: Record<string, string | boolean | undefined>, base: Record<string, unknown> = {}): RunConfig {
  const file = typeof values.config === 'string' ? readConfigFile(values.config) : {};
  const raw: Record<string, unknown> = { ...base, ...file };
  // a section the file gives merges over the base's (a preset's) key by key
  for (const section of ['algorithm', 'envOptions', 'policyOptions', 'demonstrations']) {
    const [b, f] = [base[section], file[section]];
    if (isRecord(b) && isRecord(f)) raw[section] = { ...b, ...f };
  }
  for (const [flag, [key, numeric]] of Object.entries(CONFIG_FLAGS)) {
    const v = values[flag];
    if (typeof v !== 'string') continue;
    raw[key] = numeric && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
  }
  for (const [flag, [key, numeric]] of Object.entries(ALGORITHM_FLAGS)) {
    const v = values[flag];
    if (typeof v !== 'string') continue;
    const given = raw.algorithm;
    raw.algorithm = {
      ...(typeof given === 'object' && given !== null ? given : {}),
      [key]: numeric && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v,
    };
  }
  for (const [flag, key] of Object.entries(POLICY_FLAGS)) {
    const v = values[flag];
    if (typeof v !== 'string') continue;
    const given = raw.policyOptions;
    raw.policyOptions = {
      ...(typeof given === 'object' && given !== null ? given : {}),
      [key]: FOLDER_FLAGS.has(flag) && v !== '' ? path.resolve(v) : v,
    };
  }
  // A preset's KL penalty is GRPO's: a method without one (rs-sft, sft: the control run from the same
  // preset) drops it, unless the file or a flag asks for it, which validation then refuses with why.
  const presetAlgo = base.algorithm;
  if (
    (raw.method === 'rs-sft' || raw.method === 'sft') &&
    isRecord(presetAlgo) &&
    presetAlgo.klCoef !== undefined &&
    !(isRecord(file.algorithm) && 'klCoef' in file.algorithm) &&
    typeof values.kl !== 'string' &&
    isRecord(raw.algorithm)
  ) {
    const algorithm = { ...raw.algorithm };
    delete algorithm.klCoef;
    raw.algorithm = algorithm;
  }
  return validateRunConfig(raw);
}
