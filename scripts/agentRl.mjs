// What the experiment scripts share: reading `--name value` flags, and running the built agent-rl CLI
// (dist/cli.js) as a child process with its stdout captured and its stderr (progress) passed through.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = path.join(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..'), 'dist', 'cli.js');

/** The value after `--name` on this script's command line, or `fallback`. */
export function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
}

/**
 * Runs `agent-rl ARGS`; returns its stdout and wall time. `echo` copies stdout to stderr as it is read.
 * A non-zero exit throws an error carrying the exit `status`, after the stdout has been written out.
 */
export function runAgentRl(args, { echo = false } = {}) {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (echo || r.status !== 0) process.stderr.write(r.stdout);
  if (r.status !== 0) throw Object.assign(new Error(`agent-rl ${args.join(' ')} exited with ${r.status}`), { status: r.status ?? 1 });
  return { stdout: r.stdout, seconds: (Date.now() - t0) / 1000 };
}
