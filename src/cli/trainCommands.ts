// `agent-rl train` and `agent-rl sft` declared: a new run from the flags and the --config file (or a
// preset), a stopped run continued (--resume), a run forked from a saved iteration (--fork, train only).
// trainCommand.ts runs them; this file turns the command line into what it runs.
import { PRESETS, presetById } from '../shared/presets';
import { algorithmHelp } from './algorithmHelp';
import { defineCommand, type Command } from './command';
import { DATABASE, databaseOf, RUN_CONFIG } from './optionSets';
import { configFromArgs, readConfigFile } from './runConfigArgs';
import { trainCommand } from './trainCommand';
import { UsageError } from './usageError';

type Values = Readonly<Record<string, string | boolean | undefined>>;

/** The algorithm table for the env, policy and method the flags and the --config file name. */
function trainHelp(command: 'train' | 'sft', v: Values): string {
  const file = typeof v.config === 'string' ? readConfigFile(v.config) : {};
  const pick = (flag: string, fallback: string): string => (typeof v[flag] === 'string' ? v[flag] : typeof file[flag] === 'string' ? file[flag] : fallback);
  const sft = command === 'sft';
  const given = typeof file.algorithm === 'object' && file.algorithm !== null ? (file.algorithm as Record<string, never>) : {};
  return algorithmHelp(
    pick('env', sft ? 'calculator' : 'binary-search'),
    pick('policy', sft ? 'transformer' : 'table'),
    sft ? 'sft' : pick('method', 'grpo'),
    given,
  );
}

/** The flags given besides `allowed`: a continued or forked run refuses them rather than ignoring them. */
const givenBesides = (v: Values, allowed: readonly string[]): string[] =>
  Object.keys(v)
    .filter((k) => v[k] !== undefined && !allowed.includes(k))
    .map((k) => `--${k}`);

/** `agent-rl train --fork RUN --at N [--config CHANGES.json]`: the changes come from the file only, so a flag is refused, not ignored. */
function fork(v: Values): Promise<number> {
  if (typeof v.fork !== 'string' || typeof v.at !== 'string')
    throw new UsageError('--fork RUN and --at N go together: the run to fork and the iteration to fork after');
  if (!/^\d+$/.test(v.at)) throw new UsageError(`--at ${v.at}: give the iteration to fork after, a whole number ≥ 1`);
  const changing = givenBesides(v, ['fork', 'at', 'config', 'db', 'output', 'busy-timeout', 'python']);
  if (changing.length > 0)
    throw new UsageError(
      `--fork takes the settings to change from --config CHANGES.json (e.g. {"algorithm": {"learningRate": 0.01}}); drop ${changing.join(', ')}`,
    );
  return trainCommand(undefined, {
    ...databaseOf(v),
    output: v.output as string | undefined,
    fork: { run: v.fork, at: Number(v.at), changes: typeof v.config === 'string' ? readConfigFile(v.config) : {} },
    ...(typeof v.python === 'string' ? { python: v.python } : {}),
  });
}

/** A new run, a continued one or (train only) a fork, from `agent-rl train|sft` flags. */
function train(command: 'train' | 'sft', v: Values): Promise<number> {
  const database = databaseOf(v);
  const output = v.output as string | undefined;
  if (typeof v.resume === 'string') {
    // the stored run's own config continues: flags that would change it are refused, not ignored
    const changing = givenBesides(v, ['resume', 'db', 'output', 'busy-timeout', 'python']);
    if (changing.length > 0) throw new UsageError(`--resume continues a stored run with its own config; drop ${changing.join(', ')}`);
    return trainCommand(undefined, { ...database, output, resume: v.resume, ...(typeof v.python === 'string' ? { python: v.python } : {}) });
  }
  if (command === 'train' && (v.fork !== undefined || v.at !== undefined)) return fork(v);
  if (v.python !== undefined)
    throw new UsageError(
      `--python goes with --resume${command === 'train' ? ' or --fork' : ''}; a new run's interpreter is envOptions.python in the --config file`,
    );
  // `agent-rl sft` = `agent-rl train --method sft`, on the calculator with the transformer policy unless
  // a flag or the --config file says otherwise
  if (command === 'sft' && v.method !== undefined && v.method !== 'sft')
    throw new UsageError('agent-rl sft always uses method sft; use agent-rl train for other methods');
  const base: Record<string, unknown> = command === 'sft' ? { env: 'calculator', policy: 'transformer' } : {};
  if (typeof v.preset === 'string') {
    let preset;
    try {
      preset = presetById(v.preset);
    } catch (e) {
      throw new UsageError(`--preset: ${(e as Error).message}`);
    }
    Object.assign(base, structuredClone(preset.config));
    if (preset.needsModel && typeof v.model !== 'string' && typeof v.init !== 'string')
      throw new UsageError(
        `--preset ${preset.id} runs a local Hugging Face checkpoint: give its folder with --model DIR (config.json, model.safetensors, tokenizer.json; nothing is downloaded)`,
      );
  }
  return trainCommand(configFromArgs(command === 'sft' ? { ...v, method: 'sft' } : v, base), { ...database, output });
}

const NEW_RUN_FLAGS = {
  config: { type: 'string' },
  output: { type: 'string' },
  preset: { type: 'string' },
  resume: { type: 'string' },
  python: { type: 'string' },
} as const;

const commonHelp = (command: 'train' | 'sft'): string => `  --config FILE a JSON run config; the flags below override its fields
  --output FILE write the run's record (config, runtime, every iteration and evaluation) as JSON
  --preset ID   start from a Start Run preset (seed000 needs --model DIR); a --config file goes over it
                (its algorithm, envOptions and policyOptions key by key). Presets: ${PRESETS.map((p) => p.id).join(', ')}
  --resume RUN  continue a stopped, failed or killed run from its last resume point, with its stored
                config (a code run uses your interpreter and the strongest sandbox, never the stored ones)
  --python PATH with --resume${command === 'train' ? ' or --fork' : ''}: the interpreter a code or workspace run uses`;

/** After the flags: what --help adds (the algorithm table trainHelp prints). */
const HELP_NOTE = `--help with --env E --policy P --method M or --config FILE also lists every algorithm setting with
the default that run would use and what it trades.`;

const TRAIN_USAGE = `agent-rl train [--env binary-search] [--policy table] [--method grpo|rs-sft] [--seed N] [--iterations N]
               [--config FILE] [--preset ID] [--name NAME] [--output FILE] [--db FILE] [run-config flags below]
agent-rl train --resume RUN [--db FILE] [--output FILE] [--python PATH]
agent-rl train --fork RUN --at N [--config CHANGES.json] [--db FILE] [--output FILE] [--python PATH]
${commonHelp('train')}
  --fork RUN --at N  a new run from RUN's saved state after iteration N (kept every checkpointEvery
                iterations), with RUN's config and the settings in CHANGES.json merged over it (the
                learning rate, clipping, KL coefficient, temperature, iterations...; not the env,
                policy, method or seeds); no changes = it continues exactly as RUN did`;

const SFT_USAGE = `agent-rl sft [--env calculator|code] [--seed N] [--iterations N] [...]
               = agent-rl train --method sft --policy transformer; the final checkpoint is written under
               the database's folder (continue with train --init DIR)
${commonHelp('sft')}`;

/** `agent-rl train` and `agent-rl sft`. */
export const trainCommands: readonly Command[] = (['train', 'sft'] as const).map((command) =>
  defineCommand({
    name: command,
    summary:
      command === 'train'
        ? 'train a policy (GRPO, RS-SFT or SFT), continue a stopped run, or fork one from a saved iteration'
        : 'supervised fine-tuning of a language model on demonstrations (train --method sft)',
    usage: command === 'train' ? TRAIN_USAGE : SFT_USAGE,
    options: command === 'train' ? { ...NEW_RUN_FLAGS, fork: { type: 'string' }, at: { type: 'string' } } : NEW_RUN_FLAGS,
    sets: [DATABASE, RUN_CONFIG],
    notes: HELP_NOTE,
    positionals: { min: 0, max: 0, error: `${command} takes no positional arguments` },
    help: ({ values }, usage) => `${usage}\n\n${trainHelp(command, values)}`,
    run: ({ values }) => train(command, values),
  }),
);
