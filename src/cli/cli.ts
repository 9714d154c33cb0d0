// The agent-rl command's dispatch: every subcommand, and the one place an error becomes exit code and
// message. main.ts runs it as the process entry; tests run it in-process over many argument lists (the
// hostile-text matrix), so nothing here touches process.exitCode or exits.
// Exit codes: 0 ok, 1 failure while running, 2 bad input (usage, config, database), 130 cancelled.
import * as path from 'node:path';
import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';
import { ConfigError } from '../shared/runConfig';
import { showInvisibles } from '../shared/untrustedText';
import { IsolationUnavailableError, PythonNotFoundError } from '../rl/sandbox/isolation';
import { SchemaTooNewError } from '../store/migrations';
import { DEFAULT_DB_PATH, StoreError } from '../store/openStore';
import { ResumeError } from '../store/resume';
import { RescoreError } from '../store/rescoreRun';
import { ResendError } from '../store/resendRequest';
import { ModelLoadError } from '../rl/policies/hf/hfConfig';
import { EngineMemoryError } from '../rl/policies/hf/engine/engineMemory';
import { BackendAllocationError } from '../rl/backendHealth';
import { TokenizerError } from '../rl/policies/transformer/tokenizer';
import { BackendUnavailableError } from '../rl/policies/transformer/backend';
import { TaskFileError } from '../rl/envs/workspace/taskFiles';
import { ToolLoadError } from '../rl/envs/workspace/toolSession';
import { WorkspaceEnvError } from '../rl/envs/workspace/workspaceEnv';
import { PRESETS, presetById } from '../shared/presets';
import { algorithmHelp } from './algorithmHelp';
import { envCheckCommand, envRunCommand } from './envCommands';
import { EXPORT_USAGE, exportCommand } from './exportCommand';
import { IMPORT_USAGE, importCommand } from './importCommand';
import { MODEL_EXPORT_USAGE, MODEL_LIST_USAGE, MODEL_NEW_USAGE, MODEL_USAGE, modelCommand } from './modelCommand';
import { RESCORE_USAGE, rescoreCommand } from './rescoreCommand';
import { REQUEST_USAGE, requestCommand } from './requestCommand';
import { sandboxCommand, sandboxUsage } from './sandboxCommand';
import { runsCommand, showCommand, trajectoryCommand } from './queryCommands';
import { trainCommand } from './trainCommand';
import { ALGORITHM_FLAGS, CONFIG_FLAGS, configFromArgs, POLICY_FLAGS, readConfigFile } from './runConfigArgs';
import { UsageError } from './usageError';

export const USAGE = `agent-rl — train and inspect agentic RL runs

Usage:
  agent-rl train [--env binary-search] [--policy table] [--method grpo|rs-sft] [--seed N] [--iterations N]
                 [--config FILE] [--name NAME] [--output FILE] [--db FILE] [more flags below]
  agent-rl train --resume RUN [--db FILE] [--output FILE] [--python PATH]
                 continue a stopped, failed or killed run from its last resume point, with its stored
                 config (a code run uses your interpreter and the strongest sandbox, never the stored ones)
  agent-rl train --fork RUN --at N [--config CHANGES.json] [--db FILE] [--output FILE] [--python PATH]
                 a new run from RUN's saved state after iteration N (kept every checkpointEvery
                 iterations), with RUN's config and the settings in CHANGES.json merged over it (the
                 learning rate, clipping, KL coefficient, temperature, iterations...; not the env,
                 policy, method or seeds); no changes = it continues exactly as RUN did
  agent-rl sft   [--env calculator|code] [--seed N] [--iterations N] [...]   = train --method sft --policy transformer
                 (the final checkpoint is written under the database's folder; continue with train --init DIR)
  agent-rl runs  [--db FILE] [--json]
  agent-rl show  RUN [--db FILE] [--json]          RUN = run id or name
  agent-rl trajectory ID [--db FILE] [--json]     every turn of a trajectory, in full
  agent-rl env check [--python PATH] [--config FILE] [--env calculator]
                                                  which sandbox isolation level works here, and why; with a
                                                  workspace config: its tasks, tools (each tried) and reward;
                                                  with the calculator (--env or a config): each task split's
                                                  size and mix of expression depths
  agent-rl env run --env NAME [--task ID] --actions FILE [--config FILE]
                                                  replay actions (JSON array, or one per line); JSON lines out;
                                                  envOptions come from the --config file
  ${RESCORE_USAGE.split('\n')[0]}
                                                  score stored trajectories again with the reward file as it is
                                                  now (or another) without training; --trajectory ID
                                                  --final-answer TEXT scores an edited copy
  ${REQUEST_USAGE.split('\n')[0]}
                                                  send an agent program's stored request again to the run's
                                                  policy as it is now; no program runs
  ${IMPORT_USAGE.split('\n')[0]}
  ${sandboxUsage().split('\n')[0]}
  ${EXPORT_USAGE.split('\n')[0]}
  ${MODEL_USAGE.split('\n')[0]}
  ${MODEL_NEW_USAGE.split('\n')[0]}
  ${MODEL_LIST_USAGE.split('\n')[0]}
  ${MODEL_EXPORT_USAGE.split('\n')[0]}

Train flags (override --config FILE, a JSON run config):
  --groups N        groups per iteration        --group-size N   trajectories per group
  --lr X            algorithm.learningRate      --clip X         algorithm.clipLow (ratio clip ε_low)
  --kl X            algorithm.klCoef            --epochs N       algorithm.epochs
  --std population|sample                       --estimator grpo|dr-grpo|rloo
  --eval-episodes N   --eval-seed N   --eval-interval N   --pass-k K (sampled pass@k of every evaluation)
  --init DIR        start the transformer from a checkpoint  --backend auto|wasm|cpu|tensorflow|tensorflow-gpu
  --tokenizer DIR   a Hugging Face tokenizer.json directory (default: character-level)
  --model DIR       a local Hugging Face checkpoint (qwen2, qwen3, llama, gpt2) as the policy, LoRA rank 8 by default
  --preset ID       start from a Start Run preset (${PRESETS.map((p) => p.id).join(', ')}); seed000 needs --model DIR;
                    a --config file goes over it (its algorithm, envOptions and policyOptions key by key)
  --busy-timeout MS wait for a locked database (default 5000)
Database: ${DEFAULT_DB_PATH} under the current folder unless --db is given.
agent-rl train --help [--env E --policy P --method M | --config FILE] lists every algorithm setting
with the default that run would use and what it trades.
Exit codes: 0 ok, 1 failure while running, 2 bad input (usage, config, database), 130 cancelled.`;

/** The flags of train, sft, runs, show, trajectory and env (the commands that share this parser). */
export const MAIN_OPTIONS = {
  db: { type: 'string' },
  output: { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean' },
  resume: { type: 'string' },
  fork: { type: 'string' },
  at: { type: 'string' },
  'busy-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  preset: { type: 'string' },
  task: { type: 'string' },
  actions: { type: 'string' },
  python: { type: 'string' },
  ...Object.fromEntries([...Object.keys(CONFIG_FLAGS), ...Object.keys(ALGORITHM_FLAGS), ...Object.keys(POLICY_FLAGS)].map((k) => [k, { type: 'string' }])),
} as const satisfies ParseArgsOptionsConfig;

/** The algorithm table for the env, policy and method the flags and the --config file name. */
function trainHelp(command: 'train' | 'sft', v: Record<string, string | boolean | undefined>): string {
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

/** `agent-rl train --fork RUN --at N [--config CHANGES.json]`: the changes come from the file only, so a flag is refused, not ignored. */
function forkArgs(
  command: string,
  v: Record<string, string | boolean | undefined>,
  o: { db: string; output: string | undefined; busyTimeoutMs: number },
): Promise<number> {
  if (command !== 'train') throw new UsageError('--fork is an option of agent-rl train');
  if (typeof v.fork !== 'string' || typeof v.at !== 'string')
    throw new UsageError('--fork RUN and --at N go together: the run to fork and the iteration to fork after');
  if (!/^\d+$/.test(v.at)) throw new UsageError(`--at ${v.at}: give the iteration to fork after, a whole number ≥ 1`);
  const changing = Object.keys(v).filter((k) => v[k] !== undefined && !['fork', 'at', 'config', 'db', 'output', 'busy-timeout', 'python'].includes(k));
  if (changing.length > 0)
    throw new UsageError(
      `--fork takes the settings to change from --config CHANGES.json (e.g. {"algorithm": {"learningRate": 0.01}}); drop ${changing.map((k) => `--${k}`).join(', ')}`,
    );
  return trainCommand(undefined, {
    ...o,
    fork: { run: v.fork, at: Number(v.at), changes: typeof v.config === 'string' ? readConfigFile(v.config) : {} },
    ...(typeof v.python === 'string' ? { python: v.python } : {}),
  });
}

async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Commands with options of their own parse their own arguments.
  if (command === 'import') return importCommand(rest);
  if (command === 'sandbox') return sandboxCommand(rest);
  if (command === 'export') return exportCommand(rest);
  if (command === 'model') return modelCommand(rest);
  if (command === 'rescore') return rescoreCommand(rest);
  if (command === 'request') return requestCommand(rest);
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: MAIN_OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\n\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    if (command === 'train' || command === 'sft') process.stdout.write(`\n${trainHelp(command, values)}\n`);
    return 0;
  }
  const db = path.resolve(values.db ?? DEFAULT_DB_PATH);
  const busy = values['busy-timeout'];
  const busyTimeoutMs = busy === undefined ? 5000 : Number(busy);
  if (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0) throw new UsageError(`--busy-timeout ${busy}: use a whole number of milliseconds ≥ 0`);
  switch (command) {
    case 'train':
    case 'sft': {
      if (positionals.length > 0) throw new UsageError(`${command} takes no positional arguments (got ${positionals.join(' ')})`);
      const v = values as Record<string, string | boolean | undefined>;
      // `agent-rl sft` = `agent-rl train --method sft`, on the calculator with the transformer policy
      // unless a flag or the --config file says otherwise
      const args = command === 'sft' ? { ...v, method: 'sft' } : v;
      if (command === 'sft' && v.method !== undefined && v.method !== 'sft')
        throw new UsageError('agent-rl sft always uses method sft; use agent-rl train for other methods');
      if (typeof values.resume === 'string') {
        // the stored run's own config continues: flags that would change it are refused, not ignored
        const changing = Object.keys(v).filter((k) => v[k] !== undefined && !['resume', 'db', 'output', 'busy-timeout', 'python'].includes(k));
        if (changing.length > 0) throw new UsageError(`--resume continues a stored run with its own config; drop ${changing.map((k) => `--${k}`).join(', ')}`);
        return trainCommand(undefined, {
          db,
          output: values.output,
          busyTimeoutMs,
          resume: values.resume,
          ...(values.python !== undefined ? { python: values.python } : {}),
        });
      }
      if (typeof values.fork === 'string' || values.at !== undefined) return forkArgs(command, v, { db, output: values.output, busyTimeoutMs });
      const base: Record<string, unknown> = command === 'sft' ? { env: 'calculator', policy: 'transformer' } : {};
      if (typeof values.preset === 'string') {
        let preset;
        try {
          preset = presetById(values.preset);
        } catch (e) {
          throw new UsageError(`--preset: ${(e as Error).message}`);
        }
        Object.assign(base, structuredClone(preset.config));
        if (preset.needsModel && typeof v.model !== 'string' && typeof v.init !== 'string')
          throw new UsageError(
            `--preset ${preset.id} runs a local Hugging Face checkpoint: give its folder with --model DIR (config.json, model.safetensors, tokenizer.json; nothing is downloaded)`,
          );
      }
      return trainCommand(configFromArgs(args, base), { db, output: values.output, busyTimeoutMs });
    }
    case 'runs':
      return runsCommand({ db, json: values.json === true, busyTimeoutMs });
    case 'show': {
      const ref = positionals[0];
      if (ref === undefined || positionals.length > 1) throw new UsageError('show needs exactly one RUN (a run id or name); `agent-rl runs` lists them');
      return showCommand(ref, { db, json: values.json === true, busyTimeoutMs });
    }
    case 'trajectory': {
      const ref = positionals[0];
      if (ref === undefined || positionals.length > 1)
        throw new UsageError('trajectory needs exactly one trajectory ID (the inspector and the Markdown document show it)');
      return trajectoryCommand(ref, { db, json: values.json === true, busyTimeoutMs });
    }
    case 'env': {
      const [sub, ...extra] = positionals;
      if (extra.length > 0) throw new UsageError(`env ${sub ?? ''} takes no further arguments (got ${extra.join(' ')})`);
      if (sub === 'check')
        return envCheckCommand(
          values.python,
          typeof values.config === 'string' ? readConfigFile(values.config) : undefined,
          (values as Record<string, string | undefined>).env,
        );
      if (sub === 'run') {
        const fromFile = typeof values.config === 'string' ? readConfigFile(values.config).envOptions : undefined;
        if (fromFile !== undefined && (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile)))
          throw new UsageError('--config: envOptions must be an object');
        return envRunCommand((values as Record<string, string | undefined>).env, values.task, values.actions, (fromFile ?? {}) as Record<string, unknown>);
      }
      throw new UsageError('env needs a subcommand: check or run');
    }
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}

/** Runs one agent-rl command line: its exit code; a thrown error is printed here, on stderr, as text. */
export async function runCli(argv: readonly string[]): Promise<number> {
  try {
    return await main(argv);
  } catch (e) {
    const known =
      e instanceof UsageError ||
      e instanceof ConfigError ||
      e instanceof StoreError ||
      e instanceof SchemaTooNewError ||
      e instanceof PythonNotFoundError ||
      e instanceof IsolationUnavailableError ||
      e instanceof ResumeError ||
      e instanceof RescoreError ||
      e instanceof ResendError ||
      e instanceof TaskFileError ||
      e instanceof ToolLoadError ||
      e instanceof WorkspaceEnvError ||
      e instanceof ModelLoadError ||
      e instanceof BackendUnavailableError ||
      e instanceof TokenizerError ||
      e instanceof EngineMemoryError ||
      e instanceof BackendAllocationError;
    process.stderr.write(`agent-rl: ${showInvisibles(known ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e))}\n`);
    return known ? 2 : 1;
  }
}
