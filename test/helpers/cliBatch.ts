// Runs many agent-rl command lines in one process: the same dispatch and the same error path as
// dist/cli.js (src/cli/cli.ts runCli), each command's stdout and stderr captured as the strings it wrote
// (before any encoding: a lone surrogate stays visible to the checks). One process start instead of
// one per command is what lets the hostile-text matrix run hundreds of commands inside `npm test`.
//   node out/test/helpers/cliBatch.js JOBS.json RESULTS.json
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runCli } from '../../src/cli/cli';

export interface CliJob {
  /** What the caller calls this command line (a key into the results). */
  readonly id: string;
  readonly argv: readonly string[];
  readonly cwd?: string;
}

export interface CliJobResult {
  readonly id: string;
  readonly argv: readonly string[];
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

type Write = typeof process.stdout.write;

/** Runs the jobs one after another in this process (each with its own captured output). */
async function runJobs(jobs: readonly CliJob[]): Promise<CliJobResult[]> {
  const results: CliJobResult[] = [];
  const home = process.cwd();
  for (const job of jobs) {
    let stdout = '';
    let stderr = '';
    const capture =
      (append: (s: string) => void): Write =>
      (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
        append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        const cb = rest.find((r): r is () => void => typeof r === 'function');
        cb?.();
        return true;
      };
    const out = process.stdout.write.bind(process.stdout);
    const err = process.stderr.write.bind(process.stderr);
    process.stdout.write = capture((s) => (stdout += s));
    process.stderr.write = capture((s) => (stderr += s));
    const t0 = performance.now();
    let code: number;
    try {
      if (job.cwd) process.chdir(job.cwd);
      code = await runCli(job.argv);
    } catch (e) {
      stderr += `cliBatch: runCli threw ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`;
      code = -1;
    } finally {
      process.stdout.write = out;
      process.stderr.write = err;
      process.chdir(home);
    }
    results.push({ id: job.id, argv: job.argv, code, stdout, stderr, ms: performance.now() - t0 });
  }
  return results;
}

/** Runs `jobs` in one child process (this file as its entry) and returns every result. */
export function runCliBatch(jobs: readonly CliJob[], workDir: string, timeoutMs = 600_000): CliJobResult[] {
  const jobsFile = path.join(workDir, `cli-jobs-${process.pid}-${Date.now()}.json`);
  const resultsFile = `${jobsFile}.results.json`;
  fs.writeFileSync(jobsFile, JSON.stringify(jobs));
  const r = spawnSync(process.execPath, [__filename, jobsFile, resultsFile], { encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0 || !fs.existsSync(resultsFile)) throw new Error(`cliBatch exited with ${r.status} ${r.signal ?? ''}: ${(r.stderr ?? '').slice(-3000)}`);
  return JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as CliJobResult[];
}

if (require.main === module) {
  const [jobsFile, resultsFile] = process.argv.slice(2);
  const jobs = JSON.parse(fs.readFileSync(jobsFile!, 'utf8')) as CliJob[];
  runJobs(jobs).then(
    (results) => {
      fs.writeFileSync(resultsFile!, JSON.stringify(results));
      // commands may leave pools or timers behind (a tool session being closed): the results are written
      process.exit(0);
    },
    (e: unknown) => {
      process.stderr.write(`cliBatch: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}
