// `agent-rl sandbox serve`: SandboxFusion's /run_code on our warm pool (see rl/sandbox/fusion).
import { defaultSlots } from '../rl/sandbox/fusion/admission';
import { FusionServerError, startFusionServer } from '../rl/sandbox/fusion/fusionServer';
import { servedLanguages } from '../rl/sandbox/fusion/languages';
import { chooseLevel, ISOLATION_LEVELS, resolvePython, type IsolationLevel } from '../rl/sandbox/isolation';
import { WarmPool } from '../rl/sandbox/warmPool';
import { fixed } from '../shared/format';
import { showInvisibles } from '../shared/untrustedText';
import { defineCommand } from './command';
import { UsageError } from './usageError';

/** Python servers `sandbox serve` starts first and keeps: a burst this size of sleeping programs is forks, not interpreter starts. */
const DEFAULT_WARM = 128;

/**
 * The usage; `slots` is this machine's default concurrency, left out where the text must read the same
 * on every machine (the generated docs/reference/cli.md).
 */
export const sandboxUsage = (
  slots: number | null = defaultSlots(),
): string => `agent-rl sandbox serve [--port N] [--host H] [--token T] [--concurrency K] [--warm W] [--queue Q] [--max-wait S]
                       [--level auto|strict|landlock|seatbelt|network|process] [--python PATH] [--max-timeout S]
                       [--memory-mb M] [--max-memory-mb M] [--output-cap BYTES]
  SandboxFusion's POST /run_code, for the tools and rewards export verl writes and verl's sandbox_fusion reward: Python, and
  C++, Java, Node.js, Bash, Go, Rust, Perl, Ruby, PHP, Lua where their toolchain is installed (env check lists them).
  --host       default 127.0.0.1; any other address needs --token (or AGENT_RL_SANDBOX_TOKEN)
  --port       default 8080 (0 = any free port; the URL is printed)
  --concurrency  executions at once, at most (default from memory: half of it over 40 MB each${slots === null ? '' : `, here ${slots}`});
               one per core starts at any load, more only while the CPU has time to spare
  --warm       Python servers started first and kept warm (default ${DEFAULT_WARM}, ≈ 9 MB each): an execution on a
               warm server is a fork (≈ 10 ms of CPU), one beyond them first starts a server (≈ 65 ms)
  --queue      requests waiting, at most (default 1024); --max-wait S: the longest one waits to start
               (default 5). Past either it is answered 504, which verl's client retries
  --level      isolation level (default auto: the strongest that works here); --python PATH: the interpreter
               (default /usr/bin/python3, else python3 on PATH)
  --max-timeout  longest run_timeout and compile_timeout honoured, in seconds (default 60; longer ones are cut to it)
  --memory-mb  memory of a request that sets none (default 1024); --max-memory-mb: the most one may ask for (default 4096)
  --output-cap stdout + stderr bytes after which the code is killed (default 8388608 = 8 MiB)`;

/** The flags, as strings until `serve` reads them. */
const SANDBOX_OPTIONS = Object.fromEntries(
  ['port', 'host', 'token', 'concurrency', 'warm', 'queue', 'max-wait', 'level', 'python', 'max-timeout', 'memory-mb', 'max-memory-mb', 'output-cap'].map(
    (k) => [k, { type: 'string' }] as const,
  ),
) as Record<
  'port' | 'host' | 'token' | 'concurrency' | 'warm' | 'queue' | 'max-wait' | 'level' | 'python' | 'max-timeout' | 'memory-mb' | 'max-memory-mb' | 'output-cap',
  { readonly type: 'string' }
>;

export const sandboxCommand = defineCommand({
  name: 'sandbox',
  summary: "SandboxFusion's /run_code on this machine's sandbox, for verl",
  // the same text on every machine (the reference page prints it); --help adds this machine's default concurrency
  usage: sandboxUsage(null),
  help: () => sandboxUsage(),
  options: SANDBOX_OPTIONS,
  sets: [],
  positionals: { min: 1, max: 1, error: 'sandbox needs the subcommand serve' },
  run: ({ values, positionals }) => serve(values, positionals),
});

async function serve(v: Readonly<Partial<Record<keyof typeof SANDBOX_OPTIONS, string>>>, positionals: readonly string[]): Promise<number> {
  if (positionals[0] !== 'serve') throw new UsageError(`sandbox needs the subcommand serve\n\n${sandboxUsage()}`);
  const num = (flag: string, value: string | undefined, d: number, min: number): number => {
    if (value === undefined) return d;
    const n = Number(value);
    if (!Number.isFinite(n) || n < min) throw new UsageError(`--${flag} ${value}: use a number ≥ ${min}`);
    return n;
  };
  const level = (v.level ?? 'auto') as IsolationLevel | 'auto';
  if (level !== 'auto' && !ISOLATION_LEVELS.includes(level)) throw new UsageError(`--level ${v.level}: use auto, ${ISOLATION_LEVELS.join(', ')}`);
  const python = resolvePython(v.python);
  const chosen = chooseLevel(level, python);
  const concurrency = Math.floor(num('concurrency', v.concurrency, defaultSlots(), 1));
  const warm = Math.min(concurrency, Math.floor(num('warm', v.warm, Math.min(DEFAULT_WARM, concurrency), 0)));
  const pool = new WarmPool(chosen, python, concurrency, warm);
  const token = v.token ?? process.env.AGENT_RL_SANDBOX_TOKEN;
  let server;
  try {
    server = await startFusionServer({
      host: v.host ?? '127.0.0.1',
      port: Math.floor(num('port', v.port, 8080, 0)),
      ...(token ? { token } : {}),
      concurrency,
      queueLimit: Math.floor(num('queue', v.queue, 1024, 0)),
      maxWaitMs: Math.round(num('max-wait', v['max-wait'], 5, 0) * 1000),
      executor: pool,
      maxRunTimeoutS: num('max-timeout', v['max-timeout'], 60, 0.1),
      defaultMemoryMB: Math.floor(num('memory-mb', v['memory-mb'], 1024, 32)),
      maxMemoryMB: Math.floor(num('max-memory-mb', v['max-memory-mb'], 4096, 32)),
      outputCapBytes: Math.floor(num('output-cap', v['output-cap'], 8 * 1024 * 1024, 1024)),
    });
  } catch (e) {
    await pool.close();
    if (e instanceof FusionServerError) throw new UsageError(e.message);
    throw e;
  }
  process.stdout.write(
    `SandboxFusion API on ${server.url}  level ${chosen}, ${showInvisibles(python)}, up to ${concurrency} at once${token ? ', token required' : ''}\n` +
      `languages: ${servedLanguages().join(', ')}\n`,
  );
  // requests are served meanwhile (an execution beyond the warm servers starts one of its own)
  const t0 = performance.now();
  void pool.prestart(warm).then(
    () => process.stdout.write(`${pool.servers} Python servers warm in ${fixed((performance.now() - t0) / 1000, 1)} s\n`),
    (e: Error) => process.stderr.write(`could not start the warm Python servers: ${e.message}\n`),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
  await pool.close();
  process.stdout.write(
    `stopped after ${server.stats.served} executions (at most ${server.admission.maxRunning} at once, ${server.admission.maxWaiting} waiting, ${server.stats.rejected} answered 504)\n`,
  );
  return 0;
}
