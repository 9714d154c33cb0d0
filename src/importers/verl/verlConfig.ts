// verl's resolved Hydra config (`.hydra/config.yaml` in the run's output folder): stored with the
// imported run as text and as parsed YAML, and read for the few settings the run row shows.
import * as fs from 'node:fs';
import { parse, YAMLParseError } from 'yaml';

export interface VerlConfigFile {
  readonly file: string;
  readonly text: string;
  readonly config: Record<string, unknown>;
}

export interface VerlRunSettings {
  readonly experimentName?: string;
  readonly advEstimator?: string;
  /** actor_rollout_ref.rollout.n: samples per prompt (the group size). */
  readonly groupSize?: number;
  readonly modelPath?: string;
  readonly totalTrainingSteps?: number;
  readonly seed?: number;
}

export class VerlConfigError extends Error {
  override name = 'VerlConfigError';
}

export function readVerlConfig(file: string): VerlConfigFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new VerlConfigError(
      `--config ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}). Fix: pass verl's resolved config, <output dir>/.hydra/config.yaml.`,
    );
  }
  let config: unknown;
  try {
    config = parse(text);
  } catch (e) {
    const where = e instanceof YAMLParseError && e.linePos ? `line ${e.linePos[0].line}, column ${e.linePos[0].col}` : 'somewhere';
    throw new VerlConfigError(
      `--config ${file}: not valid YAML at ${where} (${(e as Error).message.split('\n')[0]}). Fix: pass verl's resolved config, <output dir>/.hydra/config.yaml, unedited.`,
    );
  }
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new VerlConfigError(`--config ${file}: the YAML is not a mapping of settings. Fix: pass verl's resolved config, <output dir>/.hydra/config.yaml.`);
  }
  return { file, text, config: config as Record<string, unknown> };
}

/** The value at a dotted path (`a.b.c`), or undefined. */
export function at(config: Readonly<Record<string, unknown>> | undefined, dotted: string): unknown {
  let v: unknown = config;
  for (const k of dotted.split('.')) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' && !v.includes('${') ? v : undefined);
const int = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

export function runSettings(config: Readonly<Record<string, unknown>> | undefined): VerlRunSettings {
  return {
    experimentName: str(at(config, 'trainer.experiment_name')),
    advEstimator: str(at(config, 'algorithm.adv_estimator')),
    groupSize: int(at(config, 'actor_rollout_ref.rollout.n')),
    modelPath: str(at(config, 'actor_rollout_ref.model.path')),
    totalTrainingSteps: int(at(config, 'trainer.total_training_steps')),
    seed: int(at(config, 'data.seed')) ?? int(at(config, 'actor_rollout_ref.actor.data_loader_seed')),
  };
}
